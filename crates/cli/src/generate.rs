//! `cmux-tray generate`: the shell completions and the man page, from the clap declaration.

use std::process::ExitCode;

use clap::CommandFactory;

use crate::args::{Cli, Generated};

/// Completions and the man page, from the clap definition itself (clap_complete, clap_mangen).
pub(crate) fn generate(what: Generated) -> ExitCode {
    let mut command = Cli::command();
    let mut out = std::io::stdout().lock();
    let shell = match what {
        Generated::Bash => clap_complete::Shell::Bash,
        Generated::Zsh => clap_complete::Shell::Zsh,
        Generated::Fish => clap_complete::Shell::Fish,
        Generated::Man => {
            return match clap_mangen::Man::new(command).render(&mut out) {
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
