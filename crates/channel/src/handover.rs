//! The person's secrets handed to a tray another of the app's processes starts (a windows
//! process finding none, Settings → Restart): on its standard input (`--secrets-on-stdin`),
//! before the channel's key, never in its environment, which `/proc/PID/environ` shows for the
//! process's whole life.

use std::collections::BTreeMap;
use std::io::BufRead;

use crate::start::SECRET_VARS;

/// The tray's flag that says the secrets come on its standard input.
pub const SECRETS_ON_STDIN: &str = "--secrets-on-stdin";

/// At most this much is read for the secrets (a token is a few KiB).
const MOST: u64 = 64 * 1024;

/// `environment` without the secrets: what a started tray gets as its environment.
pub fn without_secrets(environment: &BTreeMap<String, String>) -> impl Iterator<Item = (&String, &String)> {
    environment.iter().filter(|(name, _)| !SECRET_VARS.contains(&name.as_str()))
}

/// The secrets of `environment` as written to a started tray's standard input: a
/// `NAME=value` line each, then an empty line. A value holding a line break cannot be written
/// as a line; it is left out, and the new tray goes without it (said in the log, by name).
pub fn secrets_block(environment: &BTreeMap<String, String>) -> String {
    let mut block = String::new();
    for name in SECRET_VARS {
        match environment.get(*name) {
            Some(value) if value.contains(['\n', '\r']) => tracing::warn!("{name} holds a line break: not handed to the new tray"),
            Some(value) => block.push_str(&format!("{name}={value}\n")),
            None => {}
        }
    }
    block.push('\n');
    block
}

/// The secrets [`secrets_block`] wrote, read from `from` up to its empty line; a line that is
/// not one of [`SECRET_VARS`] is refused by its number and name (never its value).
pub fn read_secrets(from: impl BufRead) -> std::io::Result<Vec<(String, String)>> {
    let invalid = |why: String| std::io::Error::new(std::io::ErrorKind::InvalidData, why);
    let mut secrets = Vec::new();
    for (number, line) in from.take(MOST).lines().enumerate() {
        let line = line?;
        if line.is_empty() {
            return Ok(secrets);
        }
        let (name, value) =
            line.split_once('=').ok_or_else(|| invalid(format!("the secrets on standard input, line {}: no '='", number + 1)))?;
        if !SECRET_VARS.contains(&name) {
            return Err(invalid(format!("the secrets on standard input, line {}: {name:?} is not one of {SECRET_VARS:?}", number + 1)));
        }
        secrets.push((name.to_string(), value.to_string()));
    }
    Err(invalid("the secrets on standard input end before their empty line".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn the_secrets_go_on_standard_input_and_come_back_whole() {
        let environment = env(&[("HOME", "/home/ada"), ("CMUX_TRAY_TOKEN", "t=o=k"), ("CMUX_SOCKET_PASSWORD", "correct horse")]);
        let names: Vec<&String> = without_secrets(&environment).map(|(name, _)| name).collect();
        assert_eq!(names, ["HOME"]);
        let block = secrets_block(&environment);
        let mut read = read_secrets(block.as_bytes()).unwrap();
        read.sort();
        assert_eq!(read, [("CMUX_SOCKET_PASSWORD".into(), "correct horse".into()), ("CMUX_TRAY_TOKEN".into(), "t=o=k".into())]);
        // Nothing past the empty line is taken: the channel's key comes next.
        let mut input = std::io::Cursor::new(format!("{block}{}\n", "a".repeat(64)));
        read_secrets(&mut input).unwrap();
        assert_eq!(std::io::read_to_string(input).unwrap(), format!("{}\n", "a".repeat(64)));
    }

    #[test]
    fn no_secret_is_an_empty_line_and_anything_else_is_refused_by_name() {
        assert_eq!(read_secrets(secrets_block(&env(&[("HOME", "/")])).as_bytes()).unwrap(), []);
        assert!(!secrets_block(&env(&[("CMUX_SOCKET_PASSWORD", "two\nlines")])).contains("two"));
        let refused = read_secrets("LD_PRELOAD=/tmp/x.so\n\n".as_bytes()).unwrap_err().to_string();
        assert!(refused.contains("line 1") && refused.contains("LD_PRELOAD"), "{refused}");
        assert!(read_secrets("CMUX_TRAY_TOKEN=t\n".as_bytes()).is_err(), "no empty line");
    }
}
