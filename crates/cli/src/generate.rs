//! `cmux-tray generate`: the shell completions and the man page, from the clap declaration.

use std::process::ExitCode;

use clap::CommandFactory;

use crate::args::{Cli, Generated};

/// Completions and the man page, from the clap definition itself (clap_complete, clap_mangen).
pub(crate) fn generate(what: Generated) -> ExitCode {
    let mut command = with_candidates(Cli::command());
    let mut out = std::io::stdout().lock();
    let shell = match what {
        Generated::Bash => clap_complete::Shell::Bash,
        Generated::Zsh => clap_complete::Shell::Zsh,
        Generated::Fish => clap_complete::Shell::Fish,
        Generated::Man => {
            return match man(command, &mut out) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("cmux-tray generate man: {e}");
                    ExitCode::FAILURE
                }
            };
        }
    };
    clap_complete::generate(shell, &mut command, "cmux-tray", &mut out);
    ExitCode::SUCCESS
}

/// The pauses a completion offers (docs/configuration.md's examples; any jiff duration is read).
const PAUSES: &[&str] = &["1h", "30m", "1h30m", "2h", "tomorrow", "indefinitely"];

/// The command line with the values a completion offers: the config keys after `config get` and
/// `config set`, the pauses after `pause`. Only for what is generated: the parser itself takes
/// any key (an unknown one is told with the list) and any duration ("90 minutes").
fn with_candidates(command: clap::Command) -> clap::Command {
    use cmux_tray_engine::setting_keys::{self, Key};
    let keys: Vec<&'static str> = setting_keys::settable().map(Key::as_str).collect();
    let key = |a: clap::Arg| a.value_parser(clap::builder::PossibleValuesParser::new(keys.clone()));
    command
        .mut_subcommand("config", |c| c.mut_subcommand("get", |g| g.mut_arg("key", key)).mut_subcommand("set", |s| s.mut_arg("key", key)))
        .mut_subcommand("pause", |p| p.mut_arg("until", |a| a.value_parser(clap::builder::PossibleValuesParser::new(PAUSES))))
}

/// What the man page says beyond the options: the environment, the files, the exit codes
/// (docs/configuration.md says the same at length).
const ENVIRONMENT: &[(&str, &str)] = &[
    ("CMUX_TRAY_TOKEN", "An access token, held in memory only (never written)."),
    ("CMUX_TRAY_API_URL, CMUX_TRAY_AUTH_URL", "The cloud's origins (config: cloud.api_url, cloud.auth_url)."),
    ("CMUX_TRAY_TEAM", "The team followed with CMUX_TRAY_TOKEN."),
    ("CMUX_TRAY_HTTP", "\"2\" (the default) or \"1.1\": how the waits reach the cloud."),
    ("HTTPS_PROXY, HTTP_PROXY, ALL_PROXY, NO_PROXY", "The proxy, as curl reads them (config: cloud.proxy)."),
    ("CMUX_SOCKET_PATH, CMUX_SOCKET", "The local socket a client sends to."),
    ("CMUX_SOCKET_PASSWORD", "The local socket's password, when it has one."),
    ("CMUX_WORKSPACE_ID, CMUX_SURFACE_ID", "Set by cmux in its terminals: where a notice was sent from."),
    ("CMUX_TRAY_LOG", "What is logged (tracing's filter syntax; default info)."),
    (
        "LC_ALL, LC_MESSAGES, LC_TIME, LANG",
        "The language of the tray, the windows and the banners (English, German), and the clock and date order of their times; config general.language overrides the language. This command's own output stays English.",
    ),
];

const FILES: &[(&str, &str)] = &[
    ("$XDG_CONFIG_HOME/cmux-tray/config.toml", "The settings (cmux-tray config get|set)."),
    ("$XDG_DATA_HOME/cmux-tray/state.sqlite3", "The follows and notices."),
    ("$XDG_DATA_HOME/cmux-tray/secrets.json", "The sign-in, where no keyring is reachable (mode 0600)."),
    ("$XDG_RUNTIME_DIR/cmux-tray/cmux.sock", "The local socket."),
    ("$XDG_STATE_HOME/cmux-tray/logs/", "The tray's log, a file a day, a week kept."),
];

/// The exit codes, besides 0 (done) and 1 (failed, said on stderr).
const EXIT_STATUS: &[(u8, &str)] = &[
    (0, "Done."),
    (1, "Failed; stderr says why."),
    (2, "The command line was not understood."),
    (crate::EXIT_NO_ENGINE, "The command needs the running engine and none answers: start the tray or cmux-tray daemon."),
    (crate::EXIT_CANNOT_START, "The daemon cannot start until something is changed (another engine runs, the config is refused)."),
];

/// The pages SEE ALSO names: only pages the package ships (docs/architecture.md, "The package").
const SEE_ALSO: &[(&str, &str)] = &[("cmux-tray-app(1)", "The tray app: the same engine, with a tray icon and windows.")];

/// clap_mangen's sections, then SUBCOMMANDS, ENVIRONMENT, FILES, EXIT STATUS and SEE ALSO.
fn man(command: clap::Command, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    // The commands as one writes them: clap_mangen names a page per command (cmux-tray-status(1)),
    // and no such pages ship.
    let commands: Vec<(String, String)> = command
        .get_subcommands()
        .filter(|c| !c.is_hide_set() && c.get_name() != "help")
        .map(|c| (format!("cmux-tray {}", c.get_name()), c.get_about().map(|a| a.to_string()).unwrap_or_default()))
        .collect();
    let man = clap_mangen::Man::new(command);
    man.render_title(out)?;
    man.render_name_section(out)?;
    man.render_synopsis_section(out)?;
    man.render_description_section(out)?;
    man.render_options_section(out)?;
    let mut roff = roff::Roff::new();
    let mut section = |title: &str, rows: &mut dyn Iterator<Item = (String, &str)>| {
        roff.control("SH", [title]);
        for (term, text) in rows {
            roff.control("TP", []).text([roff::bold(term)]).text([roff::roman(text)]);
        }
    };
    section("SUBCOMMANDS", &mut commands.iter().map(|(k, v)| (k.clone(), v.as_str())));
    section("ENVIRONMENT", &mut ENVIRONMENT.iter().map(|(k, v)| (k.to_string(), *v)));
    section("FILES", &mut FILES.iter().map(|(k, v)| (k.to_string(), *v)));
    section("EXIT STATUS", &mut EXIT_STATUS.iter().map(|(k, v)| (k.to_string(), *v)));
    section("SEE ALSO", &mut SEE_ALSO.iter().map(|(k, v)| (k.to_string(), *v)));
    roff.to_writer(out)?;
    man.render_version_section(out)
}

#[cfg(test)]
mod tests {
    /// The completions offer the config keys and the pauses; the parser still takes any.
    #[test]
    fn completions_offer_config_keys_and_pauses() {
        let mut command = super::with_candidates(<crate::args::Cli as clap::CommandFactory>::command());
        let mut script = Vec::new();
        clap_complete::generate(clap_complete::Shell::Bash, &mut command, "cmux-tray", &mut script);
        let script = String::from_utf8(script).unwrap();
        for word in ["delivery.quiet_hours.windows", "notify.wrap_threshold", "cloud.api_url", "tomorrow", "indefinitely"] {
            assert!(script.contains(word), "{word} in the bash completion");
        }
        let parsed = <crate::args::Cli as clap::Parser>::try_parse_from(["cmux-tray", "pause", "90", "minutes"]);
        assert!(parsed.is_ok(), "the parser takes any duration");
    }

    /// The sections docs/configuration.md ("Exit status") points to, with its codes.
    #[test]
    fn the_man_page_has_environment_files_and_exit_status() {
        let mut page = Vec::new();
        super::man(<crate::args::Cli as clap::CommandFactory>::command(), &mut page).unwrap();
        let page = String::from_utf8(page).unwrap();
        for section in [".SH ENVIRONMENT", ".SH FILES", ".SH \"EXIT STATUS\"", ".SH OPTIONS", ".SH SUBCOMMANDS"] {
            assert!(page.contains(section), "{section}");
        }
        for code in ["\\fB69\\fR", "\\fB78\\fR", "CMUX_TRAY_TOKEN", "config.toml"] {
            assert!(page.contains(code), "{code} in the man page");
        }
        // Every page it names ships: no per-command pages (cmux-tray-status(1)), the tray's own.
        let named: Vec<&str> = page.split(|c: char| c.is_whitespace() || c == ']' || c == '[').filter(|w| w.ends_with("(1)")).collect();
        assert!(named.iter().all(|w| w.contains("cmux\\-tray\\-app(1)") || w.contains("cmux-tray-app(1)")), "{named:?}");
        assert!(page.contains("cmux\\-tray hook"), "the commands as one types them");
    }
}
