//! `cmux-tray wrap -- COMMAND ARGS…`: runs a command with its terminal untouched and, when it ran
//! longer than a threshold, posts one notice with its command line, exit status and duration.
//!
//! stdin, stdout and stderr are inherited; the exit code is the command's (128 + N when a signal
//! N ended it, as shells report it). Ctrl-C reaches the command through the terminal's process
//! group; the wrapper itself survives it so it can report, and forwards SIGTERM and SIGHUP
//! (`process::Relay`).

use std::time::{Duration, Instant};

use crate::notify::Post;
use crate::process::{Relay, ended_by_signal};

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
        body: format!("{} · {}", command.join(" "), human(elapsed)),
    });
    Finished { code, post }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_like_a_person_would_say_them() {
        assert_eq!(human(Duration::from_millis(7400)), "7 s");
        assert_eq!(human(Duration::from_secs(185)), "3 min 05 s");
        assert_eq!(human(Duration::from_secs(3720)), "1 h 02 min");
    }
}
