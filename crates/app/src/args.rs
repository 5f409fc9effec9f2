//! The tray's command line: `--hidden` (at login: the tray alone), `--demo`, `--open PAGE`, and
//! `cmux-tray://` links (what a browser or `xdg-open` hands over).

use cmux_tray_engine::channel::Page;

#[derive(Debug, Default, PartialEq)]
pub struct Args {
    pub demo: bool,
    /// A window to show at start (a launcher, a test, a second launch handed over).
    pub open: Option<Page>,
    pub links: Vec<String>,
}

impl Args {
    pub fn parse(argv: &[String]) -> Args {
        let mut args = Args::default();
        let mut words = argv.iter().skip(1);
        while let Some(word) = words.next() {
            match word.as_str() {
                "--demo" => args.demo = true,
                "--open" => match words.next() {
                    Some(page) => {
                        args.open = Page::parse(page);
                        if args.open.is_none() {
                            tracing::warn!("--open {page}: expected history, settings or signin");
                        }
                    }
                    None => tracing::warn!("--open needs a page: history, settings or signin"),
                },
                link if link.starts_with("cmux-tray:") => args.links.push(link.to_string()),
                // `--hidden` starts the tray alone, as a start without `--open` does.
                "--hidden" => {}
                other => tracing::warn!("ignored an argument: {other:?}"),
            }
        }
        args
    }

    /// What a launch with these arguments shows when the tray already runs: its links, else the
    /// window it asked for, else the history (a launcher's click brings the app forward).
    pub fn handed_over(&self) -> Option<Page> {
        if self.links.is_empty() { Some(self.open.unwrap_or(Page::History)) } else { None }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(words: &[&str]) -> Args {
        Args::parse(&std::iter::once("cmux-tray-app").chain(words.iter().copied()).map(String::from).collect::<Vec<_>>())
    }

    #[test]
    fn each_argument_is_read_and_a_bad_page_is_none() {
        assert_eq!(parse(&["--hidden"]), Args::default());
        assert_eq!(parse(&["--demo", "--open", "settings"]), Args { demo: true, open: Some(Page::Settings), links: vec![] });
        assert_eq!(parse(&["--open", "about"]).open, None);
        assert_eq!(parse(&["cmux-tray://follow/run/r1"]).links, vec!["cmux-tray://follow/run/r1".to_string()]);
    }

    #[test]
    fn a_second_launch_shows_its_links_or_a_window() {
        assert_eq!(parse(&[]).handed_over(), Some(Page::History));
        assert_eq!(parse(&["--open", "signin"]).handed_over(), Some(Page::SignIn));
        assert_eq!(parse(&["cmux-tray://open/x"]).handed_over(), None);
    }
}
