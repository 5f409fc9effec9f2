//! `cmux-tray wrap -- COMMAND ARGS…`: runs a command with its terminal untouched and, when it ran
//! longer than a threshold, posts one notice with its command line, exit status and duration.
//!
//! stdin, stdout and stderr are inherited; the exit code is the command's (128 + N when a signal
//! N ended it, as shells report it). Ctrl-C reaches the command through the terminal's process
//! group; the wrapper itself survives it so it can report, and forwards SIGTERM and SIGHUP
//! (`process::Relay`).

use std::time::{Duration, Instant};

use std::process::ExitCode;

use cmux_tray_engine::config::Paths;

use crate::args::{Cli, Command};
use crate::notify::{self, Post};
use crate::process::{Relay, ended_by_signal};
use crate::{environment, notify_config};

pub struct Finished {
    pub code: i32,
    pub post: Option<Post>,
}

/// Runs the command; `post` is set when it ran at least `threshold`.
pub async fn run(command: &[String], threshold: Duration) -> Finished {
    let Some((program, args)) = command.split_first() else {
        eprintln!("cmux-tray wrap: no command given (usage: cmux-tray wrap -- COMMAND ARGS…)");
        return Finished { code: 2, post: None };
    };
    let relay = Relay::install();
    let started = Instant::now();
    let mut child = match tokio::process::Command::new(program).args(args).spawn() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("cmux-tray wrap: cannot run {program}: {e}");
            let code = if e.kind() == std::io::ErrorKind::NotFound { 127 } else { 126 };
            return Finished { code, post: None };
        }
    };
    let status = relay.wait(&mut child).await;
    let elapsed = started.elapsed();
    let (code, outcome) = match status {
        Ok(s) => match (s.code(), ended_by_signal(&s)) {
            (Some(0), _) => (0, "Command finished".to_string()),
            (Some(c), _) => (c, format!("Command failed (exit {c})")),
            (None, Some(sig)) => (128 + sig, format!("Command ended by {}", signal_name(sig))),
            (None, None) => (1, "Command ended".to_string()),
        },
        Err(e) => {
            eprintln!("cmux-tray wrap: waiting for {program}: {e}");
            (1, "Command ended".to_string())
        }
    };
    let post = (elapsed >= threshold).then(|| Post {
        title: outcome,
        subtitle: std::env::current_dir().map(|d| crate::notify::project_of(&d)).unwrap_or_default(),
        body: format!("{} · {}", shown(command), human(elapsed)),
        needs_you: false,
    });
    Finished { code, post }
}

/// The command as a shell would take it back, its quoting kept (`git commit -m 'fix it'`);
/// words no shell can quote (a NUL) are shown plainly.
fn shown(command: &[String]) -> String {
    shlex::try_join(command.iter().map(String::as_str)).unwrap_or_else(|_| command.join(" "))
}

fn signal_name(sig: i32) -> String {
    match sig {
        1 => "SIGHUP".into(),
        2 => "SIGINT".into(),
        3 => "SIGQUIT".into(),
        9 => "SIGKILL".into(),
        15 => "SIGTERM".into(),
        n => format!("signal {n}"),
    }
}

/// "7 s", "3 min 05 s", "1 h 02 min".
pub fn human(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..60 => format!("{s} s"),
        60..3600 => format!("{} min {:02} s", s / 60, s % 60),
        _ => format!("{} h {:02} min", s / 3600, (s % 3600) / 60),
    }
}

pub(crate) fn wrap_main(cli: Cli) -> ExitCode {
    let Command::Wrap { threshold, session, command } = cli.command else { unreachable!() };
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("cmux-tray wrap: cannot start: {e}");
            return ExitCode::from(1);
        }
    };
    let code = runtime.block_on(async {
        let paths = Paths::from_env().ok();
        let threshold = threshold
            .or_else(|| paths.as_ref().and_then(|p| notify_config(p).wrap_threshold))
            .filter(|t: &f64| t.is_finite() && *t >= 0.0)
            .unwrap_or(cmux_tray_engine::local::client::DEFAULT_WRAP_THRESHOLD.as_secs_f64());
        let caller = notify::Caller::new(environment());
        if let (Some(session), Some(paths)) = (&session, &paths)
            && let Err(why) = notify::attach(paths, &caller, session).await
        {
            eprintln!("cmux-tray wrap: session not reported: {why}");
        }
        let finished = run(&command, Duration::from_secs_f64(threshold)).await;
        if let (Some(post), Some(paths)) = (&finished.post, &paths)
            && let Err(why) = notify::send(paths, &caller, &notify::Overrides::default(), post).await
        {
            eprintln!("cmux-tray wrap: notice not sent: {why}");
        }
        finished.code
    });
    runtime.shutdown_timeout(Duration::from_millis(200));
    ExitCode::from(code.clamp(0, 255) as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_like_a_person_would_say_them() {
        assert_eq!(human(Duration::from_millis(7400)), "7 s");
        assert_eq!(human(Duration::from_secs(185)), "3 min 05 s");
        assert_eq!(human(Duration::from_secs(3720)), "1 h 02 min");
    }

    #[test]
    fn the_command_is_shown_with_its_quoting_kept() {
        let words = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(shown(&words(&["git", "commit", "-m", "fix it"])), "git commit -m 'fix it'");
        assert_eq!(shown(&words(&["cargo", "build"])), "cargo build");
        assert_eq!(shown(&words(&["echo", "a\0b"])), "echo a\0b", "a NUL no shell can quote: shown plainly");
    }
}
