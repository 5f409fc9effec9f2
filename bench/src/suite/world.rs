//! One benchmark's world: a private session bus with the in-process recorder on it, the
//! simulator on loopback (in this process), a sandboxed home and `cmux-tray daemon` signed in,
//! following what the account has open.

use std::time::{Duration, Instant};

use cmux_cloud_sim::SimUser;
use cmux_cloud_sim::state::NewHandoff;
use cmux_tray_e2e::faults::{FaultRelay, Toxics};
use cmux_tray_e2e::network::{Front, Nginx, TestCa};
use cmux_tray_e2e::{Cloud, Daemon, DesktopSession, Home};

use crate::suite::recorder::Recorder;
use crate::suite::socket::Client;

/// How the daemon reaches the simulator.
#[derive(Clone, Copy, Debug)]
pub enum Way {
    /// Straight, over loopback (h2c, or HTTP/1.1).
    Loopback,
    /// As over a real network to a real cloud: TLS with ALPN h2 through nginx (the tests' front,
    /// support/network.rs), with latency and jitter added each way by the fault relay.
    Nginx { latency: Duration, jitter: Duration },
}

/// What stands between the daemon and the simulator, kept while the world lives.
struct OnTheWay {
    _nginx: Nginx,
    relay: FaultRelay,
    _dir: tempfile::TempDir,
}

pub struct World {
    pub recorder: Recorder,
    pub daemon: Daemon,
    pub home: Home,
    pub user: SimUser,
    pub cloud: Cloud,
    /// The private bus, kept while the world lives.
    _desktop: DesktopSession,
    /// The items open before the daemon signed in (all followed at its sign-in).
    pub runs: Vec<String>,
    pub handoffs: Vec<String>,
    on_the_way: Option<OnTheWay>,
}

impl World {
    /// `runs` Runs and `handoffs` hand-offs open in the account; `env` for the daemon (e.g. its
    /// transport). Returns once every one of them has a wait held at the simulator.
    pub fn start(runs: usize, handoffs: usize, env: &[(&str, &str)]) -> anyhow::Result<World> {
        World::start_by(Way::Loopback, runs, handoffs, env, |_| {})
    }

    /// [`Self::start`], the daemon reaching the simulator `way`; `prepare` is given the
    /// simulator before anything is followed.
    pub fn start_by(
        way: Way,
        runs: usize,
        handoffs: usize,
        env: &[(&str, &str)],
        prepare: impl FnOnce(&cmux_cloud_sim::Sim),
    ) -> anyhow::Result<World> {
        let desktop = DesktopSession::start_without_server();
        let cloud = Cloud::start();
        prepare(cloud.sim());
        let recorder = cloud.rt.block_on(Recorder::start(&desktop.address))?;
        let user = cloud.sim().add_user("bench@example.com");
        let runs: Vec<String> = (0..runs).map(|i| cloud.sim().create_run(&user.user_id, &format!("Background run {i}"))).collect();
        let handoffs: Vec<String> = (0..handoffs)
            .map(|i| {
                cloud.sim().create_handoff(NewHandoff {
                    owner: user.user_id.clone(),
                    title: Some(format!("Background hand-off {i}")),
                    ..NewHandoff::default()
                })
            })
            .collect();
        let (origin, on_the_way, ca) = match way {
            Way::Loopback => (cloud.origin(), None, None),
            Way::Nginx { latency, jitter } => {
                let dir = tempfile::tempdir()?;
                let ca = TestCa::new(dir.path(), &[]);
                let nginx = Nginx::start(dir.path(), cloud.running.addr, &ca, Front::default());
                let relay = FaultRelay::start(std::net::SocketAddr::from(([127, 0, 0, 1], nginx.port)));
                relay.set(Toxics { latency, jitter, ..Toxics::default() });
                let origin = format!("https://localhost:{}", relay.port);
                (origin, Some(OnTheWay { _nginx: nginx, relay, _dir: dir }), Some(ca.ca.display().to_string()))
            }
        };
        let mut home = Home::new(&origin, &desktop.address);
        home.env.extend(ca.map(|ca| ("SSL_CERT_FILE".to_string(), ca)));
        let daemon = home.daemon_with(&user.access_token, env);
        let world = World { recorder, daemon, home, user, cloud, _desktop: desktop, runs, handoffs, on_the_way };
        world.wait_all_held(Duration::from_secs(300))?;
        Ok(world)
    }

    /// `n` new items (half Runs, half hand-offs) made in the account and handed to the daemon
    /// with `cloud.follow` on the socket (pipelined, 500 at a time). Returns their ids.
    pub fn follow_new(&self, n: usize) -> anyhow::Result<(Vec<String>, Vec<String>)> {
        let sim = self.cloud.sim();
        let user = &self.user.user_id;
        let runs: Vec<String> = (0..n / 2).map(|i| sim.create_run(user, &format!("Scale run {i}"))).collect();
        let handoffs: Vec<String> = (0..n - n / 2)
            .map(|i| {
                sim.create_handoff(NewHandoff { owner: user.clone(), title: Some(format!("Scale hand-off {i}")), ..Default::default() })
            })
            .collect();
        let mut client = self.client()?;
        let requests: Vec<String> = runs
            .iter()
            .map(|id| ("run", id))
            .chain(handoffs.iter().map(|id| ("handoff", id)))
            .map(|(kind, id)| serde_json::json!({"id": 1, "method": "cloud.follow", "params": {"kind": kind, "id": id}}).to_string())
            .collect();
        for chunk in requests.chunks(500) {
            let ok = client.pipeline(chunk)?;
            anyhow::ensure!(ok == chunk.len(), "{} follows refused", chunk.len() - ok);
        }
        Ok((runs, handoffs))
    }

    pub fn client(&self) -> anyhow::Result<Client> {
        Client::connect(&self.home.socket())
    }

    /// Waits until every open item has a wait held at the simulator.
    pub fn wait_all_held(&self, limit: Duration) -> anyhow::Result<()> {
        self.wait_held(self.runs.iter().chain(&self.handoffs), limit)
    }

    /// Waits until each of these items has a wait held at the simulator.
    pub fn wait_held<'a>(&self, ids: impl Iterator<Item = &'a String>, limit: Duration) -> anyhow::Result<()> {
        let start = Instant::now();
        let sim = self.cloud.sim();
        let mut pending: Vec<&String> = ids.collect();
        while !pending.is_empty() {
            pending.retain(|id| sim.held_waits(id) == 0);
            anyhow::ensure!(start.elapsed() < limit, "{} items have no wait held after {limit:?}", pending.len());
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(())
    }

    pub fn pid(&self) -> u32 {
        self.daemon.pid()
    }

    /// The port the daemon connects to: the simulator's, or the front's on the way to it.
    pub fn port(&self) -> u16 {
        self.on_the_way.as_ref().map_or(self.cloud.running.addr.port(), |w| w.relay.port)
    }
}

/// Past the 0.5 s chain gap of docs/notices.md §3, with a margin: a notice this long after the
/// last banner is alone, so its banner is a leading edge.
pub const ISOLATION: Duration = Duration::from_millis(520);

/// Polls `cond` every millisecond until it holds, or fails after `limit`.
pub fn wait_for(what: &str, limit: Duration, mut cond: impl FnMut() -> bool) -> anyhow::Result<()> {
    let start = Instant::now();
    while !cond() {
        anyhow::ensure!(start.elapsed() < limit, "not within {limit:?}: {what}");
        std::thread::sleep(Duration::from_millis(1));
    }
    Ok(())
}
