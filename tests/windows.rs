//! The app's three windows (settings, history, sign-in) driven through WebDriver (tauri-driver
//! over WebKitWebDriver) as a person uses them: the quiet-hours editor, switches that apply
//! without a Save, the history's filter and search, the sign-in's states; an axe-core audit of
//! each window in light and dark, and (with `CMUX_TRAY_SCREENSHOTS=1`) their screenshots in
//! `test-artifacts/`.

// Linux only, as the whole end-to-end suite (support/lib.rs says why).
#![cfg(target_os = "linux")]

use std::time::Duration;

use cmux_cloud_sim::RunChange;
use cmux_tray_e2e::webdriver::WebDriver;
use cmux_tray_e2e::{Cloud, DesktopSession, Home, wait_until};
use serde_json::{Value, json};

const LIMIT: Duration = Duration::from_secs(60);
const TAB: &str = "\u{E004}";
const ENTER: &str = "\u{E007}";

/// A simulator with Ada's account on it, and a home pointed at it and at `desktop`'s bus.
fn ada(desktop: DesktopSession) -> (DesktopSession, Cloud, cmux_cloud_sim::SimUser, Home) {
    let cloud = Cloud::start();
    let user = cloud.sim().add_user("ada@example.com");
    let home = Home::new(&cloud.origin(), &desktop.address);
    (desktop, cloud, user, home)
}

/// The app with one window open, signed in as `user` (a token in memory), in `theme` (GTK's
/// theme variant, which WebKit turns into `prefers-color-scheme`).
fn app(desktop: &DesktopSession, home: &Home, user: Option<&cmux_cloud_sim::SimUser>, page: &str, theme: &str) -> WebDriver {
    let token = user.map(|u| u.access_token.as_str()).unwrap_or("");
    WebDriver::start(home, desktop.display.as_deref().unwrap(), &["--open", page], &[("CMUX_TRAY_TOKEN", token), ("GTK_THEME", theme)])
}

/// `cmux-tray config get KEY`, as a person checks a setting from a terminal.
fn config_get(home: &Home, key: &str) -> String {
    let out = home.run(&["config", "get", key]);
    assert!(out.status.success(), "config get {key}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn css(id: &str) -> String {
    format!(r#"[id="{id}"]"#)
}

/// Waits until the element's rendered text (`innerText`: what is laid out, the words kept for
/// screen readers included) satisfies `ok`, and returns it.
fn text_until(wd: &WebDriver, selector: &str, what: &str, ok: impl Fn(&str) -> bool) -> String {
    let mut text = String::new();
    wait_until(what, LIMIT, || {
        text =
            wd.run("return document.querySelector(arguments[0])?.innerText ?? '';", json!([selector])).as_str().unwrap_or("").to_string();
        ok(&text)
    });
    text
}

#[test]
fn quiet_hours_drawn_in_the_editor_are_kept_and_hold_a_banner_and_switches_apply_without_a_save() {
    let (desktop, _cloud, user, home) = ada(DesktopSession::start_with_display());
    let wd = app(&desktop, &home, Some(&user), "settings", "Adwaita");
    text_until(&wd, "#account", "signed in", |t| t == "Signed in as ada@example.com");

    // A switch applies as it is flipped: no Save, and `config get` has it at once.
    assert_eq!(config_get(&home, "delivery.runs.sound"), "true");
    wd.click(&wd.find(&css("delivery.runs.sound")));
    text_until(&wd, "#switch-said", "the switch said", |t| t == "Sounds for Cloud Runs off");
    assert_eq!(config_get(&home, "delivery.runs.sound"), "false");
    assert!(!wd.exists("button[id^=save-]"), "no Save button anywhere");

    // `delivery.remote_tmux` is a switch too, labelled as docs/configuration.md's table says.
    let label = text_until(&wd, r#"label[for="delivery.remote_tmux"]"#, "the remote tmux switch", |t| !t.is_empty());
    assert!(label.starts_with("Over cmux-tray ssh: a click selects the remote tmux pane"), "{label}");
    assert_eq!(config_get(&home, "delivery.remote_tmux"), "false");
    wd.click(&wd.find(&css("delivery.remote_tmux")));
    wait_until("the remote tmux switch applied", LIMIT, || config_get(&home, "delivery.remote_tmux") == "true");

    // A bad number is refused beside its control with `config set`'s words; the file keeps the good one.
    let count = wd.find(&css("delivery.coalesce_count"));
    wd.type_into(&count, "0");
    wd.keys(&count, TAB);
    let said = text_until(&wd, "#burst-row .said", "refused", |t| !t.is_empty());
    assert!(said.contains("delivery.coalesce_count") && said.contains("1 to 1000"), "{said}");
    assert_eq!(wd.property(&count, "ariaInvalid"), "true");
    assert_eq!(config_get(&home, "delivery.coalesce_count"), "4");

    // A window drawn with the editor, around now in UTC, every day.
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    let hhmm = |secs: u64| format!("{:02}:{:02}", secs / 3600 % 24, secs / 60 % 60);
    let (from, to) = (hhmm(now - 3600), hhmm(now + 2 * 3600));
    wd.click(&wd.find("#add-window"));
    text_until(&wd, "#windows-said", "the new window saved", |t| t == "Quiet hours saved");
    assert_eq!(config_get(&home, "delivery.quiet_hours.windows"), "mon-fri 22:00-07:00", "a new window starts as weeknights");
    for day in ["5", "6"] {
        wd.click(&wd.find(&format!(r#"#windows .window:last-child button[data-day="{day}"]"#)));
    }
    wait_until("every day saved", LIMIT, || config_get(&home, "delivery.quiet_hours.windows") == "daily 22:00-07:00");
    for (class, value) in [("from", &from), ("to", &to)] {
        let field = wd.find(&format!("#windows .window:last-child input.{class}"));
        wd.type_into(&field, value);
        wd.keys(&field, TAB);
    }
    let drawn = format!("daily {from}-{to}");
    wait_until("the drawn window saved", LIMIT, || config_get(&home, "delivery.quiet_hours.windows") == drawn);
    wd.click(&wd.find(r#"#time-zone option[value="UTC"]"#));
    wait_until("the zone saved", LIMIT, || config_get(&home, "delivery.quiet_hours.time_zone") == "UTC");
    assert_eq!(config_get(&home, "delivery.quiet_hours.enabled"), "true");
    // The live line says quiet hours are on now, and until when.
    let line = text_until(&wd, "#quiet-now", "quiet now", |t| t.starts_with("Quiet now, until "));
    assert!(line.contains(&to), "{line}");
    // A window refused by the editor is named, and nothing is saved.
    let field = wd.find("#windows .window:last-child input.to");
    wd.type_into(&field, &from);
    wd.keys(&field, TAB);
    let said = text_until(&wd, "#windows-said", "refused", |t| t.starts_with("Window 1"));
    assert!(said.contains("same time"), "{said}");
    assert_eq!(config_get(&home, "delivery.quiet_hours.windows"), drawn);
    wd.screenshot("settings-quiet-hours-drawn");

    // Pause for an hour: said in the window, and the engine holds it.
    wd.click(&wd.find("#pause-hour"));
    text_until(&wd, "#pause-line", "paused", |t| t.starts_with("Paused until "));
    assert!(home.status()["paused"].is_string(), "{}", home.status()["paused"]);
    assert_eq!(wd.property(&wd.find("#resume"), "hidden"), false);
    wd.click(&wd.find("#resume"));
    text_until(&wd, "#pause-line", "resumed", |t| t == "Not paused.");

    // It takes effect: a terminal's notice now is held, with no banner.
    let out = home.command(&["notify", "--title", "Build finished", "--body", "in 4 min"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    wait_until("the notice decided", LIMIT, || {
        home.status()["notices"].as_array().unwrap().iter().any(|n| n["title"] == "Build finished" && n["state"] == "told")
    });
    let notice = home.status()["notices"].as_array().unwrap().iter().find(|n| n["title"] == "Build finished").cloned().unwrap();
    assert_eq!(notice["delivery"], "quiet hours", "{notice}");
    assert!(desktop.notifications().iter().all(|n| n["summary"] != "Build finished"), "no banner during quiet hours");

    // The history says why in words.
    wd.run("window.__TAURI__.core.invoke('open_window', {page: 'history'}); return 1;", json!([]));
    wd.switch_to("cmux-tray — History");
    let row = text_until(&wd, "#notices", "the held notice listed", |t| t.contains("Build finished"));
    assert!(row.contains("No banner: quiet hours were on"), "{row}");
}

#[test]
fn the_history_filter_and_search_narrow_the_rows_and_a_row_says_why_it_had_no_banner() {
    let (mut desktop, cloud, user, home) = ada(DesktopSession::start_with_display());
    // A window manager gives the window the keyboard's focus, as a desktop does.
    desktop.start_window_manager();
    let run = cloud.sim().create_run(&user.user_id, "Ship the release notes");
    let wd = app(&desktop, &home, Some(&user), "history", "Adwaita");
    text_until(&wd, "#follows", "the Run followed", |t| t.contains("Ship the release notes") && t.contains("Running for"));
    cloud.sim().update_run(&run, RunChange { status: Some("succeeded".into()), ..Default::default() });
    for (title, body) in [("Tests passed", "412 green"), ("Release build done", "v1.4 is ready")] {
        let out = home.command(&["notify", "--title", title, "--body", body]).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    // A terminal whose banners are off: its notice is kept, and says why it had none.
    assert!(home.run(&["config", "set", "delivery.local.banner", "false"]).status.success());
    assert!(home.command(&["notify", "--title", "Lint clean"]).output().unwrap().status.success());
    let rows = || {
        wd.run("return [...document.querySelectorAll('#notices button.notice')].map(b => b.dataset.kind + ': ' + b.querySelector('.title').textContent.replace(/^.*?: /, ''));", json!([]))
    };
    let titles = |v: Value| -> Vec<String> { v.as_array().unwrap().iter().map(|t| t.as_str().unwrap().to_string()).collect() };
    wait_until("four notices listed", LIMIT, || rows().as_array().is_some_and(|a| a.len() == 4));
    let all = titles(rows());
    wd.screenshot("history-light");
    assert!(all.contains(&"run: Ship the release notes".to_string()), "{all:?}");
    wait_until("the last notice decided", LIMIT, || {
        home.status()["notices"].as_array().unwrap().iter().any(|n| n["title"] == "Lint clean" && n["state"] == "told")
    });
    let lint = text_until(&wd, "#notices ul li:first-child button.notice", "its reason", |t| !t.contains("Not shown yet"));
    assert!(lint.contains("Lint clean") && lint.contains("No banner: banners for terminals were off"), "{lint}");
    let days = wd.run("return [...document.querySelectorAll('#notices h3')].map(h => h.textContent);", json!([]));
    assert_eq!(days, json!(["Today"]), "rows group by day");
    assert!(wd.text(&wd.find("#notices")).contains("just now"), "relative times");

    // The kind filter, by keyboard: from the search box, Shift+Tab twice to "Terminals", and
    // Enter; the focus shows where the keyboard is.
    let search = wd.find("#search");
    wd.click(&search);
    wd.press(&[(TAB, true), (TAB, true)]);
    let focused = wd.run("const e = document.activeElement; return [e.dataset.kind ?? e.id, getComputedStyle(e).outlineStyle];", json!([]));
    assert_eq!(focused, json!(["terminal", "solid"]), "the Terminals filter has the focus, with a visible ring");
    wd.press(&[(ENTER, false)]);
    wait_until("terminals only", LIMIT, || titles(rows()).iter().all(|t| t.starts_with("terminal: ")) && titles(rows()).len() == 3);
    // And the search, on top: one row.
    wd.keys(&search, "release");
    wait_until("one terminal row matches", LIMIT, || titles(rows()) == ["terminal: Release build done"]);
    // Every kind, the same words: the Run's notice matches too.
    wd.click(&wd.find(r#"#filters button[data-kind="all"]"#));
    wait_until("the Run's notice and the terminal's", LIMIT, || titles(rows()).len() == 2);
    // Nothing matches: the list says so.
    wd.keys(&search, " zebra");
    text_until(&wd, "#empty", "the empty line", |t| t == "Nothing matches “release zebra”.");
    wd.screenshot("history-search-nothing");
}

#[test]
fn the_sign_in_window_shows_the_code_and_says_waiting_expired_and_done() {
    let (desktop, cloud, user, home) = ada(DesktopSession::start_with_display());
    let (browser, _pages) = home.browser();
    let wd = WebDriver::start(
        &home,
        desktop.display.as_deref().unwrap(),
        &["--open", "signin"],
        &[("BROWSER", browser.to_str().unwrap()), ("GTK_THEME", "Adwaita")],
    );
    let code = text_until(&wd, "#code", "the code", |t| t.len() > 3 && t != "…");
    assert_eq!(Some(code.clone()), cloud.sim().last_user_code());
    let state = || wd.property(&wd.find("#state"), "className");
    wait_until("waiting", LIMIT, || state() == "state waiting");
    assert!(wd.text(&wd.find("#state")).contains("Waiting for you to confirm the code in your browser"));
    assert_eq!(wd.property(&wd.find("#again"), "hidden"), true);

    // The code runs out: said so, with a way to get a new one.
    assert!(cloud.sim().expire_device(&code));
    wait_until("expired", LIMIT, || state() == "state expired");
    assert!(wd.text(&wd.find("#state")).contains("This code expired before it was confirmed."));
    wd.click(&wd.find("#again"));
    wait_until("a new code", LIMIT, || cloud.sim().last_user_code().is_some_and(|c| c != code));
    let code = cloud.sim().last_user_code().unwrap();
    text_until(&wd, "#code", "the new code shown", |t| t == code);
    wait_until("waiting again", LIMIT, || state() == "state waiting");

    // Confirmed in the browser: done.
    assert!(cloud.sim().approve_device(&code, &user.user_id));
    wait_until("done", LIMIT, || state() == "state done");
    assert!(wd.text(&wd.find("#state")).contains("Signed in as ada@example.com."));
    wd.screenshot("signin-done");

    // No keyring on this bus: the settings say where the sign-in went in a sentence, and why
    // behind "Why?". Opened as a second launch does it (it reaches this instance).
    let status = home
        .program(&cmux_tray_e2e::bin("cmux-tray-app"), &["--open", "settings"])
        .env("DISPLAY", desktop.display.as_deref().unwrap())
        .status()
        .unwrap();
    assert!(status.success(), "the second launch hands over and exits");
    wd.switch_to("cmux-tray — Settings");
    let sentence = text_until(&wd, "#kept-in", "where the sign-in is kept", |t| !t.is_empty());
    assert_eq!(sentence, "Your sign-in is kept in a private file, because the system keyring could not be reached.");
    assert_eq!(wd.property(&wd.find("#why-detail"), "hidden"), true, "the detail is folded");
    wd.click(&wd.find("#why"));
    let why = text_until(&wd, "#why-detail", "the detail", |t| !t.is_empty());
    assert!(why.starts_with("The keyring said: ") && why.contains("readable by you alone"), "{why}");
}

/// With no tray host (stock GNOME) the menu is out of reach, and the windows do what it does
/// (docs/architecture.md, "No tray host"): the history opens the settings and a followed Run as
/// the menu's line opens it (its card, nothing told about it yet); the settings pause, resume,
/// open the history and quit the app.
#[test]
fn with_no_tray_host_the_windows_do_what_the_menu_does() {
    let (desktop, cloud, user, home) = ada(DesktopSession::start_with_display_and_no_tray_host());
    let run = cloud.sim().create_run(&user.user_id, "Fix the flaky login test");
    let wd = app(&desktop, &home, Some(&user), "history", "Adwaita");
    let follow = format!(r#"button.follow[data-item="run:{run}"]"#);
    wd.click(&wd.find(&follow));
    text_until(&wd, "#run-card", "the Run's card", |t| t.contains("Fix the flaky login test"));

    wd.click(&wd.find("#open-settings"));
    wd.switch_to("cmux-tray — Settings");
    wd.click(&wd.find("#pause-hour"));
    wait_until("paused from the settings", LIMIT, || home.status()["paused"].is_string());
    wait_until("Resume now offered", LIMIT, || wd.property(&wd.find("#resume"), "hidden") == false);
    wd.click(&wd.find("#resume"));
    wait_until("resumed from the settings", LIMIT, || home.status()["paused"].is_null());
    wd.click(&wd.find("#open-history"));
    wait_until("the history shown again", LIMIT, || desktop.window_titled("cmux-tray — History"));

    wd.switch_to("cmux-tray — Settings");
    wd.click(&wd.find("#quit"));
    wait_until("the tray quit", LIMIT, || home.pids_of("cmux-tray-app").is_empty());
    wait_until("the windows ended with it", LIMIT, || home.pids_of("cmux-tray-windows").is_empty());
    assert!(!home.socket().exists(), "a clean quit removes the socket");
}

/// axe-core's serious and critical violations on the current page, one line each.
fn axe_violations(wd: &WebDriver) -> Vec<String> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("a11y/node_modules/axe-core/axe.min.js");
    let axe = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (scripts/setup installs axe-core from the npm registry)", path.display()));
    let loaded = wd.run(&format!("{axe}\n;return typeof axe;"), json!([]));
    assert_eq!(loaded, "object", "axe-core injected");
    let result = wd.run_async(
        "axe.run(document, {resultTypes: ['violations']}).then(r => done(r.violations.filter(v => v.impact === 'serious' || v.impact === 'critical')\
         .map(v => v.impact + ' ' + v.id + ': ' + v.help + ' — ' + v.nodes.map(n => n.target.join(' ')).join(', '))), e => done(['axe failed: ' + e]));",
    );
    result.as_array().unwrap_or_else(|| panic!("axe answered {result}")).iter().map(|v| v.as_str().unwrap_or("?").to_string()).collect()
}

/// What a window says, in the language under test, that the audit waits for.
struct Said {
    /// `LANG` of the app, as the person's session sets it.
    lang: &'static str,
    signed_in: &'static str,
    /// The three windows' titles: settings, history, sign-in.
    titles: [&'static str; 3],
    /// The screenshots' names end so.
    suffix: &'static str,
}

const ENGLISH: Said = Said {
    lang: "C.UTF-8",
    signed_in: "Signed in as ada@example.com",
    titles: ["cmux-tray — Settings", "cmux-tray — History", "cmux-tray — Sign in"],
    suffix: "",
};

// docs/languages.md: German, from lang/de.ftl.
const GERMAN: Said = Said {
    lang: "de_DE.UTF-8",
    signed_in: "Angemeldet als ada@example.com",
    titles: ["cmux-tray — Einstellungen", "cmux-tray — Verlauf", "cmux-tray — Anmelden"],
    suffix: "-de",
};

/// The three windows with rows in the history and a Run still followed, each audited by
/// axe-core (and screenshotted); returns the serious and critical violations, and what each
/// window's page said (its `<html lang>` and its text).
fn audit_three_windows(theme: &str, scheme: &str, said: &Said) -> (Vec<String>, Vec<(String, String)>) {
    let mut found = Vec::new();
    let mut pages = Vec::new();
    // A desktop of its own per app (one app per session bus).
    let (desktop, cloud, user, home) = ada(DesktopSession::start_with_display());
    let done = cloud.sim().create_run(&user.user_id, "Ship the release notes");
    cloud.sim().create_run(&user.user_id, "Refactor the parser");
    let token = user.access_token.as_str();
    let wd = WebDriver::start(
        &home,
        desktop.display.as_deref().unwrap(),
        &["--open", "settings"],
        &[("CMUX_TRAY_TOKEN", token), ("GTK_THEME", theme), ("LANG", said.lang)],
    );
    text_until(&wd, "#account", "signed in", |t| t == said.signed_in);
    // The page sees the desktop's scheme: the audit below checks the colours people see.
    let dark = wd.run("return matchMedia('(prefers-color-scheme: dark)').matches;", json!([]));
    assert_eq!(dark, scheme == "dark", "{theme}: prefers-color-scheme");
    cloud.sim().update_run(&done, RunChange { status: Some("succeeded".into()), ..Default::default() });
    assert!(home.command(&["notify", "--title", "Tests passed", "--body", "412 green"]).output().unwrap().status.success());
    wd.click(&wd.find("#add-window"));
    text_until(&wd, "#windows-said", "a window", |t| !t.is_empty());
    for ((page, ready), title) in
        [("settings", "#quiet-now"), ("history", "#notices button.notice"), ("signin", "#state.waiting")].into_iter().zip(said.titles)
    {
        if page != "settings" {
            wd.switch_to(said.titles[0]);
            wd.run(&format!("window.__TAURI__.core.invoke('open_window', {{page: '{page}'}}); return 1;"), json!([]));
        }
        wd.switch_to(title);
        wd.find(ready);
        found.extend(axe_violations(&wd).into_iter().map(|v| format!("{page} ({scheme}{}): {v}", said.suffix)));
        let size = wd.run(
            "return [innerWidth, innerHeight, document.documentElement.scrollWidth, document.documentElement.scrollHeight];",
            json!([]),
        );
        eprintln!("{page} ({scheme}{}): window {} x {}, page {} x {}", said.suffix, size[0], size[1], size[2], size[3]);
        assert!(size[2].as_i64() <= size[0].as_i64(), "{page}: nothing wider than its window ({size})");
        let lang = wd.run("return document.documentElement.lang;", json!([])).as_str().unwrap_or("").to_string();
        let text = text_until(&wd, "body", "the page's text", |t| !t.is_empty());
        pages.push((lang, text));
        wd.screenshot(&format!("{page}-{scheme}{}", said.suffix));
    }
    (found, pages)
}

#[test]
fn the_three_windows_pass_an_axe_audit_in_light_and_dark() {
    let mut found = Vec::new();
    for (theme, scheme) in [("Adwaita", "light"), ("Adwaita:dark", "dark")] {
        let (violations, pages) = audit_three_windows(theme, scheme, &ENGLISH);
        found.extend(violations);
        assert!(pages.iter().all(|(lang, _)| lang == "en"), "{pages:?}");
    }
    assert!(found.is_empty(), "serious or critical accessibility violations:\n{}", found.join("\n"));
}

/// In a German session every window speaks German (docs/languages.md), its `<html lang>` says
/// so for screen readers, and it passes the same audit.
#[test]
fn in_a_german_session_the_windows_speak_german_and_pass_the_same_audit() {
    let (found, pages) = audit_three_windows("Adwaita", "light", &GERMAN);
    assert!(found.is_empty(), "serious or critical accessibility violations:\n{}", found.join("\n"));
    let [(settings_lang, settings), (history_lang, history), (signin_lang, signin)] = &pages[..] else { panic!("{pages:?}") };
    assert_eq!([settings_lang, history_lang, signin_lang], ["de", "de", "de"]);
    for word in [
        "Konto",
        "Benachrichtigungen",
        "Ruhezeiten",
        "Zeitfenster hinzufügen",
        "Allgemein",
        "Sprache",
        "Bei der Anmeldung öffnen",
        "Über cmux-tray ssh: ein Klick wählt den tmux-Bereich",
    ] {
        assert!(settings.contains(word), "settings says {word:?}: {settings}");
    }
    for word in ["Verlauf", "Verfolgt", "Meldungen", "Alle als gelesen markieren", "Läuft seit", "Run abgeschlossen"] {
        assert!(history.contains(word), "history says {word:?}: {history}");
    }
    // A day's heading is drawn in capitals (style.css), which `innerText` gives as drawn; notices
    // made just before midnight are under "Gestern" once the page is read after it.
    assert!(history.contains("HEUTE") || history.contains("GESTERN"), "history says the day in German: {history}");
    for word in ["Bei cmux anmelden", "Code kopieren", "Oder ein Token einfügen"] {
        assert!(signin.contains(word), "sign-in says {word:?}: {signin}");
    }
    // None of the English it replaced is left on a page.
    for english in ["Notifications", "Quiet hours", "Mark all read", "Following", "Copy code", "Sign in to cmux"] {
        assert!(pages.iter().all(|(_, text)| !text.contains(english)), "{english:?} left in German: {pages:?}");
    }
}

/// In a session whose clock has twelve hours (en_US), the settings say quiet hours' times so.
/// A newer version is said there too, with no "Install" on Linux, where the package manager
/// updates (docs/configuration.md, "Updates").
#[test]
fn the_settings_in_a_twelve_hour_session_say_am_and_pm_and_offer_no_install_on_linux() {
    let (desktop, _cloud, _user, home) = ada(DesktopSession::start_with_display());
    let (feed, _) = cmux_tray_e2e::serve_release_feed("9.9.9");
    assert!(home.run(&["config", "set", "updates.feed", &feed]).status.success());
    let wd = WebDriver::start(&home, desktop.display.as_deref().unwrap(), &["--open", "settings"], &[("LANG", "en_US.UTF-8")]);
    text_until(&wd, "#update", "the update line", |t| t == "Version 9.9.9 is available");
    assert_eq!(wd.run("return document.getElementById('update-row').hidden;", json!([])), true, "no Install on Linux");
    let refused = wd.run_async("window.__TAURI__.core.invoke('install_update').then(() => done('installed'), e => done(String(e)));");
    assert_eq!(refused, "On Linux the package manager updates cmux-tray (apt, dnf).");
    wd.click(&wd.find("#add-window"));
    // The editor's first window: Monday to Friday, 22:00 to 07:00.
    let now = text_until(&wd, "#quiet-now", "the quiet-hours line", |t| t.contains("AM") || t.contains("PM"));
    assert!(now.contains("10:00\u{202f}PM") || now.contains("7:00\u{202f}AM"), "a 12-hour clock: {now:?}");
    assert!(!now.contains("22:00") && !now.contains("07:00"), "no 24-hour time: {now:?}");
}

/// The pages fill `{name}` slots with what the tray sent (a team's name, a Run's title): a
/// value is put in as it is, `$&` and a `{slot}` inside it included, in one pass.
#[test]
fn a_pages_words_take_their_values_as_they_are() {
    let (desktop, _cloud, user, home) = ada(DesktopSession::start_with_display());
    let wd = app(&desktop, &home, Some(&user), "settings", "Adwaita");
    wd.find("#account");
    let filled = wd.run("return t('{a} and {b}', {a: \"$& $` {b}\", b: 'x'});", json!([]));
    assert_eq!(filled, "$& $` {b} and x");
}
