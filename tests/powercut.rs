//! A real power cut: the daemon runs in a small Debian VM (scripts/powercut-vm makes it) while
//! Runs end at the simulator on this machine and an agent in the VM posts notices to the
//! daemon's socket; then the VM's power is pulled (SIGKILL to qemu), which loses whatever the
//! guest's kernel had not yet written to the virtual disk, as a power cut loses a machine's page
//! cache. The same disk boots again, and again, one cut after another; a last boot settles.
//!
//! The host learns what happened before each cut from the VM's serial ports, written as it
//! happens: every `Notify` the recording notification server took, every `OK` the agent was
//! answered, and the daemon's log ("told" once a told mark is saved). Per cut it counts the local
//! notices answered `OK` and lost, the cloud Run ends never told, and the banners told again
//! (cloud and local), split by whether the daemon had saved the told mark before the cut. It
//! asserts what docs/architecture.md ("Durable on return") and docs/local-socket.md promise.
//!
//! `#[ignore]`: it needs root, qemu-system-x86 and the VM image, and a cut and its boot take
//! about a minute in an emulated CPU, so 50 cuts take about an hour: `scripts/powercut-vm [CUTS]`.

// Linux only, as the whole end-to-end suite (support/lib.rs says why).
#![cfg(target_os = "linux")]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use cmux_cloud_sim::RunChange;
use cmux_tray_e2e::{BUS_CONFIG, Cloud, bin, support_file, wait_until};
use rand::{Rng, SeedableRng};

/// Runs that end while each boot lives.
const ENDS_PER_BOOT: usize = 3;
/// How long a boot may take to serve its socket (an emulated CPU, a debug build).
const BOOT_LIMIT: Duration = Duration::from_secs(240);

/// The VM scripts/powercut-vm made: its kernel, initrd and root folder.
fn vm_dir() -> PathBuf {
    let dir = std::env::var_os("CMUX_TRAY_VM_DIR")
        .map(PathBuf::from)
        .expect("CMUX_TRAY_VM_DIR names the VM scripts/powercut-vm makes: run this test through scripts/powercut-vm");
    assert!(dir.join("vmlinuz").exists() && dir.join("root").is_dir(), "{} holds no VM: run scripts/powercut-vm --image", dir.display());
    dir
}

/// The disk: the VM's root with this checkout's daemon, the guest's programs, the simulator's
/// port and the account's token, and a config with one banner per notice.
fn make_disk(vm: &Path, work: &Path, port: u16, token: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let root = vm.join("root");
    let opt = root.join("opt/powercut");
    let _ = std::fs::remove_dir_all(&opt);
    std::fs::create_dir_all(&opt).unwrap();
    for (from, name) in [
        (bin("cmux-tray"), "cmux-tray"),
        (support_file("powercut/init"), "init"),
        (support_file("powercut/agent.py"), "agent.py"),
        (support_file("notification-recorder.py"), "notification-recorder.py"),
    ] {
        std::fs::copy(&from, opt.join(name)).unwrap_or_else(|e| panic!("{}: {e}", from.display()));
    }
    std::fs::set_permissions(opt.join("init"), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(opt.join("bus.conf"), BUS_CONFIG).unwrap();
    std::fs::write(opt.join("env"), format!("PORT={port}\nTOKEN={token}\n")).unwrap();
    std::fs::set_permissions(opt.join("env"), std::fs::Permissions::from_mode(0o600)).unwrap();
    let config = root.join("root/.config/cmux-tray");
    std::fs::create_dir_all(&config).unwrap();
    for dir in [root.join("root/.config"), config.clone()] {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    }
    // One banner per notice: bursts would coalesce them.
    std::fs::write(config.join("config.toml"), "[delivery]\ncoalesce_count = 1000\n").unwrap();
    let disk = work.join("disk.img");
    let made = Command::new("mkfs.ext4").args(["-q", "-F", "-d"]).arg(&root).arg(&disk).arg("2G").status();
    // The token stays in the disk alone, not in the folder kept between runs.
    std::fs::remove_file(opt.join("env")).unwrap();
    assert!(made.expect("mkfs.ext4 runs (package e2fsprogs)").success(), "mkfs.ext4 -d {} failed", root.display());
    disk
}

/// A boot of the VM: qemu, its four serial ports written to files in `logs`.
struct Vm {
    qemu: Child,
    logs: PathBuf,
}

impl Vm {
    fn boot(vm: &Path, disk: &Path, logs: &Path, boot: usize, agent: &str) -> Vm {
        std::fs::create_dir_all(logs).unwrap();
        // kvm where it runs a stock kernel; tcg (an emulated CPU) otherwise: on this project's
        // machines /dev/kvm is PVM, which boots no stock Debian kernel.
        let accel = std::env::var("CMUX_TRAY_VM_ACCEL").unwrap_or_else(|_| "tcg".into());
        let serial = |name: &str| format!("file:{}", logs.join(name).display());
        let qemu = Command::new("qemu-system-x86_64")
            .args(["-accel", &accel, "-m", "512", "-smp", "1", "-nodefaults", "-display", "none", "-no-reboot"])
            .arg("-kernel")
            .arg(vm.join("vmlinuz"))
            .arg("-initrd")
            .arg(vm.join("initrd.img"))
            .arg("-append")
            .arg(format!(
                // no_timer_check: an emulated CPU on a loaded machine fails the kernel's check of
                // its timer ("IO-APIC + timer doesn't work") and panics before the disk is mounted.
                "root=/dev/vda rw init=/opt/powercut/init console=ttyS0 quiet net.ifnames=0 no_timer_check panic=-1 cmux.boot={boot} cmux.agent={agent}"
            ))
            // cache=none: what the guest wrote to the disk is on this machine's disk at once;
            // what its kernel still holds in its page cache goes with the power.
            .arg("-drive")
            .arg(format!("file={},format=raw,if=virtio,cache=none", disk.display()))
            // The guest reaches this machine's loopback (the simulator) at 10.0.2.2, nothing else.
            .args(["-netdev", "user,id=n0", "-device", "virtio-net-pci,netdev=n0"])
            .args(["-serial", &serial("console.log"), "-serial", &serial("banners.log")])
            .args(["-serial", &serial("agent.log"), "-serial", &serial("daemon.log")])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(logs.join("qemu.err")).unwrap())
            .spawn()
            .expect("qemu-system-x86_64 starts (package qemu-system-x86)");
        Vm { qemu, logs: logs.to_path_buf() }
    }

    /// Whether the agent has listed the store: the daemon serves its socket. A guest that
    /// stopped before (its kernel panicked) fails here with its console's last lines.
    fn serving(&mut self) -> bool {
        if let Ok(Some(status)) = self.qemu.try_wait() {
            panic!("the VM stopped ({status}) before its socket served: {}", self.lines("console.log").join("\n"));
        }
        self.lines("agent.log").iter().any(|l| l == "listed-end")
    }

    /// The lines of a serial port that ended before now (a line cut short is not one).
    fn lines(&self, port: &str) -> Vec<String> {
        lines_of(&self.logs.join(port))
    }

    /// Pulls the power: SIGKILL, nothing of the guest runs after it. Returns its logs' folder.
    fn pull_the_plug(mut self) -> PathBuf {
        let _ = self.qemu.kill();
        let _ = self.qemu.wait();
        self.logs.clone()
    }
}

impl Drop for Vm {
    fn drop(&mut self) {
        let _ = self.qemu.kill();
        let _ = self.qemu.wait();
    }
}

fn lines_of(path: &Path) -> Vec<String> {
    let text = String::from_utf8_lossy(&std::fs::read(path).unwrap_or_default()).into_owned();
    let whole = match text.rfind('\n') {
        Some(end) => &text[..end],
        None => "",
    };
    whole.lines().map(plain).collect()
}

/// A line without its terminal colours (the daemon's log colours itself on a serial port).
fn plain(line: &str) -> String {
    let mut out = String::new();
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            chars.by_ref().find(|c| c.is_ascii_alphabetic());
        } else if !c.is_control() {
            out.push(c);
        }
    }
    out
}

/// What one boot's serial ports held when its power went.
#[derive(Default)]
struct Boot {
    /// Every `Notify`, in order: the notice's key and its title.
    shown: Vec<(String, String)>,
    /// The keys whose told mark the daemon saved (its "told" line comes after the save).
    marked: BTreeSet<String>,
    /// The agent's notices answered `OK`, by title.
    acked: Vec<String>,
    /// The titles the store held when the daemon started (the agent lists them first).
    listed: BTreeSet<String>,
    listed_whole: bool,
}

impl Boot {
    fn read(logs: &Path) -> Boot {
        let mut boot = Boot::default();
        for line in lines_of(&logs.join("banners.log")) {
            let Ok(event) = serde_json::from_str::<serde_json::Value>(&line) else { continue };
            if event["event"] == "notify" {
                let key = event["hints"]["x-cmux-tray-notice"].as_str().unwrap_or("").to_string();
                boot.shown.push((key, event["summary"].as_str().unwrap_or("").to_string()));
            }
        }
        for line in lines_of(&logs.join("daemon.log")) {
            if let Some(rest) = line.split(" told key=").nth(1) {
                boot.marked.insert(rest.split_whitespace().next().unwrap_or("").to_string());
            }
        }
        for line in lines_of(&logs.join("agent.log")) {
            if let Some(title) = line.strip_prefix("ack ") {
                boot.acked.push(title.to_string());
            } else if let Some(title) = line.strip_prefix("listed ") {
                boot.listed.insert(title.to_string());
            } else if line == "listed-end" {
                boot.listed_whole = true;
            }
        }
        boot
    }

    fn keys(&self) -> BTreeSet<String> {
        self.shown.iter().map(|(k, _)| k.clone()).collect()
    }
}

/// A banner's kind: a cloud Run's end, or an agent's notice.
fn is_cloud(key: &str) -> bool {
    key.starts_with("run:")
}

/// What one cut did, counted at the boot after it.
#[derive(Default, Debug)]
struct CutCount {
    acked: usize,
    ended: usize,
    local_lost: usize,
    cloud_told_again: usize,
    cloud_told_again_marked: usize,
    local_told_again: usize,
    local_told_again_marked: usize,
}

#[test]
#[ignore = "needs root, qemu-system-x86 and the VM scripts/powercut-vm makes; about 40 minutes: scripts/powercut-vm"]
fn a_real_power_cut_loses_no_ok_and_repeats_no_saved_banner() {
    let cuts_n: usize = std::env::var("CMUX_TRAY_POWER_CUTS").ok().and_then(|s| s.parse().ok()).unwrap_or(50);
    let seed: u64 = std::env::var("CRASH_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(rand::random);
    println!("power cut seed {seed} (CRASH_SEED={seed} repeats it), {cuts_n} cuts");
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let vm_dir = vm_dir();
    // The last run's disk and serial logs stay for a look (target/powercut-vm/last-run, or the
    // folder CMUX_TRAY_VM_RUN names there, so that two runs can go side by side).
    let work = vm_dir.join(std::env::var("CMUX_TRAY_VM_RUN").unwrap_or_else(|_| "last-run".into()));
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).unwrap();

    let cloud = Cloud::start();
    let sim = cloud.sim().clone();
    let port: u16 = cloud.origin().rsplit(':').next().and_then(|p| p.trim_end_matches('/').parse().ok()).expect("the simulator's port");
    let user = sim.add_user("ada@example.com");
    let mut runs: Vec<String> = (0..cuts_n * ENDS_PER_BOOT).map(|i| sim.create_run(&user.user_id, &format!("Run {i}"))).collect();
    let disk = make_disk(&vm_dir, &work, port, &user.access_token);

    let mut boots: Vec<Boot> = Vec::new();
    let mut ended: Vec<Vec<String>> = Vec::new();
    let mut lived: Vec<Duration> = Vec::new();
    for b in 1..=cuts_n {
        let mut vm = Vm::boot(&vm_dir, &disk, &work.join(format!("boot-{b}")), b, "post");
        wait_until(&format!("boot {b} serves its socket ({})", vm.logs.display()), BOOT_LIMIT, || vm.serving());
        if b == 1 {
            wait_until("every Run followed", BOOT_LIMIT, || runs.iter().all(|id| sim.held_waits(id) > 0));
        }
        // The cut falls at a random moment: while the daemon tells what the last cut left
        // untold, while Runs end, while the agent's notices are saved and told.
        let live = Duration::from_millis(rng.random_range(300..8000));
        let mut at: Vec<Duration> = (0..ENDS_PER_BOOT).map(|_| live.mul_f64(rng.random_range(0.0..1.0))).collect();
        at.sort();
        let start = Instant::now();
        let mut these = Vec::new();
        for when in at {
            std::thread::sleep(when.saturating_sub(start.elapsed()));
            let id = runs.swap_remove(rng.random_range(0..runs.len()));
            sim.update_run(&id, RunChange::status(["succeeded", "failed"][these.len() % 2]));
            these.push(format!("run:{id}"));
        }
        std::thread::sleep(live.saturating_sub(start.elapsed()));
        // Read after the cut: what the ports hold was written before it.
        boots.push(Boot::read(&vm.pull_the_plug()));
        ended.push(these);
        lived.push(live);
    }

    // The last boot: nothing more ends, the agent only lists; everything untold is told.
    let all_ended: BTreeSet<String> = ended.iter().flatten().cloned().collect();
    let settle = Vm::boot(&vm_dir, &disk, &work.join("settle"), cuts_n + 1, "list");
    let shown_before: BTreeSet<String> = boots.iter().flat_map(Boot::keys).collect();
    let titles_before: BTreeSet<String> = boots.iter().flat_map(|b| b.shown.iter().map(|(_, t)| t.clone())).collect();
    let settled = |vm: &Vm| {
        let now = Boot::read(&vm.logs);
        let keys: BTreeSet<String> = shown_before.union(&now.keys()).cloned().collect();
        let titles: BTreeSet<String> = titles_before.iter().cloned().chain(now.shown.iter().map(|(_, t)| t.clone())).collect();
        now.listed_whole && all_ended.iter().all(|k| keys.contains(k)) && now.listed.iter().all(|t| titles.contains(t))
    };
    let start = Instant::now();
    while !settled(&settle) && start.elapsed() < BOOT_LIMIT {
        std::thread::sleep(Duration::from_millis(200));
    }
    // What the settle boot tells after this is not counted: a second's wait for a straggler.
    std::thread::sleep(Duration::from_secs(1));
    let last = Boot::read(&settle.pull_the_plug());
    assert!(last.listed_whole, "the settle boot never listed the store: {}", work.join("settle").display());
    boots.push(last);

    // Counted per cut, at the boot after it.
    let store: &BTreeSet<String> = &boots.last().unwrap().listed;
    let mut counts: Vec<CutCount> = Vec::new();
    let (mut shown, mut marked) = (BTreeSet::new(), BTreeSet::new());
    let mut twice_in_a_boot = Vec::new();
    for (i, boot) in boots.iter().enumerate() {
        let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
        for (key, _) in &boot.shown {
            *seen.entry(key).or_default() += 1;
        }
        twice_in_a_boot.extend(seen.iter().filter(|(_, n)| **n > 1).map(|(k, n)| format!("boot {}: {k} ×{n}", i + 1)));
        if i > 0 {
            let cut = &mut counts[i - 1];
            for key in boot.keys().intersection(&shown) {
                let was_marked = marked.contains(key);
                match (is_cloud(key), was_marked) {
                    (true, m) => {
                        cut.cloud_told_again += 1;
                        cut.cloud_told_again_marked += usize::from(m);
                    }
                    (false, m) => {
                        cut.local_told_again += 1;
                        cut.local_told_again_marked += usize::from(m);
                    }
                }
            }
        }
        if i < cuts_n {
            counts.push(CutCount {
                acked: boot.acked.len(),
                ended: ended[i].len(),
                local_lost: boot.acked.iter().filter(|t| !store.contains(*t)).count(),
                ..CutCount::default()
            });
        }
        shown.extend(boot.keys());
        marked.extend(boot.marked.iter().cloned());
    }
    let shown_titles: BTreeSet<&str> = boots.iter().flat_map(|b| b.shown.iter().map(|(_, t)| t.as_str())).collect();
    let never_shown: Vec<&String> = boots.iter().flat_map(|b| &b.acked).filter(|t| !shown_titles.contains(t.as_str())).collect();
    let cloud_lost: Vec<&String> = all_ended.iter().filter(|k| !shown.contains(*k)).collect();

    for (i, c) in counts.iter().enumerate() {
        println!(
            "power cut {:>2} after {:>4} ms: {:>3} OK, {} ended; lost {} OK'd; told again: cloud {} ({} marked told), local {} ({} marked told)",
            i + 1,
            lived[i].as_millis(),
            c.acked,
            c.ended,
            c.local_lost,
            c.cloud_told_again,
            c.cloud_told_again_marked,
            c.local_told_again,
            c.local_told_again_marked
        );
    }
    let sum = |f: fn(&CutCount) -> usize| counts.iter().map(f).sum::<usize>();
    let with = |f: fn(&CutCount) -> usize| counts.iter().filter(|c| f(c) > 0).count();
    println!(
        "power cut: {cuts_n} cuts; local notices answered OK {}, lost {} (in {} cuts), never shown {}; cloud Run ends {}, lost {}; \
         told again: cloud {} ({} with the told mark saved, in {} cuts), local {} ({} with the told mark saved, in {} cuts); \
         twice within one boot {}",
        sum(|c| c.acked),
        sum(|c| c.local_lost),
        with(|c| c.local_lost),
        never_shown.len(),
        all_ended.len(),
        cloud_lost.len(),
        sum(|c| c.cloud_told_again),
        sum(|c| c.cloud_told_again_marked),
        with(|c| c.cloud_told_again_marked),
        sum(|c| c.local_told_again),
        sum(|c| c.local_told_again_marked),
        with(|c| c.local_told_again_marked),
        twice_in_a_boot.len()
    );
    // Not vacuous: the agent was answered (a cut may fall before its first OK, not every time).
    assert!(sum(|c| c.acked) >= cuts_n, "the agent got fewer OKs than there were cuts: is it posting?");
    // docs/local-socket.md, "What OK promises": an OK'd notice is on the disk.
    assert_eq!(sum(|c| c.local_lost), 0, "notices answered OK and lost by a power cut");
    assert!(never_shown.is_empty(), "notices answered OK and never told: {never_shown:?}");
    // docs/notices.md §2: a Run's end is never lost (read again from the cloud if need be).
    assert!(cloud_lost.is_empty(), "Run ends never told: {cloud_lost:?}");
    // docs/architecture.md, "Durable on return": a told mark the daemon saved stays saved; what
    // a cut may repeat is the banner posted while its mark was being saved.
    assert_eq!(
        sum(|c| c.cloud_told_again_marked) + sum(|c| c.local_told_again_marked),
        0,
        "banners told again after their told mark was saved"
    );
    assert!(twice_in_a_boot.is_empty(), "told twice within one boot: {twice_in_a_boot:?}");
}
