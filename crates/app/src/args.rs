//! The tray's command line (clap): `--hidden`, `--demo`, `--open PAGE`, and `cmux-tray://` links
//! (what a browser or `xdg-open` hands over). `--help` and `--version` print and exit before
//! anything starts; `--man` prints the man page the packages ship.

use clap::Parser;
use cmux_tray_channel::Page;

#[derive(Debug, Default, PartialEq, Parser)]
#[command(
    name = "cmux-tray-app",
    version,
    about = "cmux-tray in the tray: one native banner when a cloud Run, a hand-off or an agent in a terminal needs you",
    after_long_help = "\
The tray follows the signed-in account's Runs and hand-offs and serves cmux's local notification \
socket; the headless engine without a tray is `cmux-tray daemon`. A launch while the tray runs \
hands its arguments to it (one tray per user). The windows are cmux-tray-windows, started when \
one is asked for.

The tray, its windows and its banners speak the session's language (LC_ALL, LC_MESSAGES, LANG: \
English or German) and say times in its locale's clock (LC_TIME); general.language in the \
settings overrides the language.

Logs: $XDG_STATE_HOME/cmux-tray/logs (a file a day, a week kept). Settings: \
$XDG_CONFIG_HOME/cmux-tray/config.toml. See cmux-tray(1) for the command line."
)]
pub struct Args {
    /// Start in the tray alone, with no window (what "Open at login" starts).
    #[arg(long)]
    pub hidden: bool,
    /// A one-minute story without an account: the cloud simulator inside the app, its state in a
    /// folder of its own.
    #[arg(long)]
    pub demo: bool,
    /// Open a window at start (or in the running tray).
    #[arg(long, value_name = "PAGE", value_parser = page())]
    pub open: Option<Page>,
    /// cmux-tray:// links: follow/run/<id>, follow/handoff/<id>, open/<notice>.
    #[arg(value_name = "LINK")]
    pub links: Vec<String>,
    /// Print the man page and exit (the packages ship it).
    #[arg(long, hide = true)]
    pub man: bool,
    /// The channel's key is the first line of standard input (a windows process that started
    /// this tray made it; docs/architecture.md "Two processes").
    #[arg(long, hide = true)]
    pub key_on_stdin: bool,
    /// The person's secrets come first on standard input, before any key (the app's own
    /// process that started this tray had them; cmux_tray_channel::handover).
    #[arg(long, hide = true)]
    pub secrets_on_stdin: bool,
}

/// A page by its word; `--help` lists the words.
fn page() -> impl clap::builder::TypedValueParser<Value = Page> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(Page::ALL.iter().map(|p| p.as_str())).map(|word| Page::parse(&word).expect("one of the words"))
}

impl Args {
    /// What a launch with these arguments shows when the tray already runs: its links, else the
    /// window it asked for, else the history (a launcher's click brings the app forward).
    pub fn handed_over(&self) -> Option<Page> {
        if self.links.is_empty() { Some(self.open.unwrap_or(Page::History)) } else { None }
    }
}

/// The man page, from the definition above (clap_mangen, as `cmux-tray generate man`).
pub fn man() -> std::io::Result<()> {
    use clap::CommandFactory;
    let mut out = std::io::stdout().lock();
    clap_mangen::Man::new(Args::command()).render(&mut out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(words: &[&str]) -> Result<Args, clap::Error> {
        Args::try_parse_from(std::iter::once("cmux-tray-app").chain(words.iter().copied()))
    }

    #[test]
    fn each_argument_is_read_and_a_bad_page_is_refused_by_name() {
        assert_eq!(parse(&["--hidden"]).unwrap(), Args { hidden: true, ..Args::default() });
        assert_eq!(parse(&["--demo", "--open", "settings"]).unwrap(), Args { demo: true, open: Some(Page::Settings), ..Args::default() });
        let bad = parse(&["--open", "about"]).unwrap_err().to_string();
        assert!(bad.contains("about") && bad.contains("history") && bad.contains("signin"), "{bad}");
        assert_eq!(parse(&["cmux-tray://follow/run/r1"]).unwrap().links, vec!["cmux-tray://follow/run/r1".to_string()]);
    }

    #[test]
    fn a_second_launch_shows_its_links_or_a_window() {
        assert_eq!(parse(&[]).unwrap().handed_over(), Some(Page::History));
        assert_eq!(parse(&["--open", "signin"]).unwrap().handed_over(), Some(Page::SignIn));
        assert_eq!(parse(&["cmux-tray://open/x"]).unwrap().handed_over(), None);
    }

    #[test]
    fn help_and_version_are_clap_s_own() {
        assert_eq!(parse(&["--version"]).unwrap_err().kind(), clap::error::ErrorKind::DisplayVersion);
        let help = parse(&["--help"]).unwrap_err().to_string();
        for option in ["--hidden", "--demo", "--open", "[LINK]"] {
            assert!(help.contains(option), "{option} in {help}");
        }
        assert!(!help.contains("--man"), "--man is for the packages");
    }
}
