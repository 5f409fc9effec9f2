//! Seed 000's acceptance bullets, one test each.

use super::*;

fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

fn table(text: &str) -> NotifyConfig {
    let t: toml::Table = text.parse().unwrap();
    NotifyConfig::from_table(t["notify"].as_table().unwrap()).unwrap()
}

#[test]
fn reads_every_key_of_the_notify_table_from_a_table_and_from_a_file() {
    let text = "[notify]\nenabled = true\nsocket_path = \"/config/cmux.sock\"\nsurface_id = \"S\"\nworkspace_id = \"W\"\ntimeout = 2\n";
    let c = table(text);
    assert_eq!(
        c,
        NotifyConfig {
            enabled: Some(true),
            socket_path: Some("/config/cmux.sock".into()),
            surface_id: Some("S".into()),
            workspace_id: Some("W".into()),
            timeout: Some(2.0),
            ..Default::default()
        }
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    std::fs::write(&path, text).unwrap();
    assert_eq!(NotifyConfig::load(&path).unwrap(), c);
    assert_eq!(NotifyConfig::load(&dir.path().join("absent.toml")).unwrap(), NotifyConfig::default());
    std::fs::write(&path, "[notify]\nenabled = \"yes\"\n").unwrap();
    let err = NotifyConfig::load(&path).unwrap_err();
    assert!(err.contains("notify.enabled") && err.contains("config.toml"), "{err}");
}

#[test]
fn the_environment_wins_against_the_config_for_the_socket_and_both_ids() {
    let c = table("[notify]\nsocket_path = \"/config/cmux.sock\"\nsurface_id = \"config-surface\"\nworkspace_id = \"config-ws\"\n");
    let r = resolve(
        &env(&[("CMUX_SOCKET_PATH", "/env/cmux.sock"), ("CMUX_SURFACE_ID", "env-surface"), ("CMUX_WORKSPACE_ID", "env-ws")]),
        &c,
        None,
    );
    assert_eq!(r.socket, Some(PathBuf::from("/env/cmux.sock")));
    assert_eq!((r.surface_id.as_deref(), r.workspace_id.as_deref()), (Some("env-surface"), Some("env-ws")));
    // Value by value: an environment without ids keeps the config's.
    let r = resolve(&env(&[("CMUX_SOCKET_PATH", "/env/cmux.sock")]), &c, None);
    assert_eq!((r.surface_id.as_deref(), r.workspace_id.as_deref()), (Some("config-surface"), Some("config-ws")));
    // Both spellings of the ids are read.
    let r = resolve(&env(&[("CMUX_PANEL_ID", "panel"), ("CMUX_TAB_ID", "tab")]), &c, None);
    assert_eq!((r.surface_id.as_deref(), r.workspace_id.as_deref()), (Some("panel"), Some("tab")));
}

#[test]
fn enabled_true_alone_is_not_enough() {
    let r = resolve(&env(&[]), &table("[notify]\nenabled = true\n"), None);
    assert!(r.enabled);
    assert_eq!(r.socket, None);
    assert_eq!(r.deliverable().unwrap_err(), Undeliverable::NoSocket);
}

#[test]
fn a_falsey_value_counts_as_absent_in_every_spelling() {
    for falsey in ["0", "false", "FALSE", "False", "no", "NO", "off", "Off", "", "  "] {
        for var in ["CMUX_SOCKET_PATH", "CMUX_SOCKET", "CMUX"] {
            let r = resolve(&env(&[(var, falsey)]), &NotifyConfig::default(), None);
            assert_eq!(r.socket, None, "{var}={falsey:?}");
            assert!(!r.enabled, "{var}={falsey:?} must not switch notices on");
        }
        let r = resolve(&env(&[("CMUX_SURFACE_ID", falsey), ("CMUX_PANEL_ID", "panel")]), &NotifyConfig::default(), None);
        assert_eq!(r.surface_id.as_deref(), Some("panel"), "CMUX_SURFACE_ID={falsey:?}");
    }
}

#[test]
fn the_socket_is_read_in_order_and_cmux_only_when_it_looks_like_a_path() {
    let all = [("CMUX_SOCKET_PATH", "/a.sock"), ("CMUX_SOCKET", "/b.sock"), ("CMUX", "/c.sock")];
    assert_eq!(resolve(&env(&all), &NotifyConfig::default(), None).socket, Some("/a.sock".into()));
    assert_eq!(resolve(&env(&all[1..]), &NotifyConfig::default(), None).socket, Some("/b.sock".into()));
    assert_eq!(resolve(&env(&all[2..]), &NotifyConfig::default(), None).socket, Some("/c.sock".into()));
    // CMUX=1 resolves no socket and cannot switch notifications on.
    let r = resolve(&env(&[("CMUX", "1")]), &NotifyConfig::default(), None);
    assert_eq!((r.socket, r.enabled), (None, false));
}

#[test]
fn a_falsey_variable_is_skipped_and_the_search_goes_on() {
    // As a real cmux shell exports them: CMUX_SOCKET empty beside a populated CMUX_SOCKET_PATH.
    let r = resolve(&env(&[("CMUX_SOCKET", ""), ("CMUX_SOCKET_PATH", "/run/cmux.sock")]), &NotifyConfig::default(), None);
    assert_eq!(r.socket, Some("/run/cmux.sock".into()));
    let r = resolve(&env(&[("CMUX_SOCKET_PATH", "off"), ("CMUX_SOCKET", "/b.sock")]), &NotifyConfig::default(), None);
    assert_eq!(r.socket, Some("/b.sock".into()));
    assert!(r.enabled);
}

#[test]
fn every_variable_falsey_falls_through_to_the_config() {
    let c = table("[notify]\nenabled = true\nsocket_path = \"/config/cmux.sock\"\n");
    let r = resolve(&env(&[("CMUX_SOCKET_PATH", "0"), ("CMUX_SOCKET", "no"), ("CMUX", "false")]), &c, None);
    assert_eq!(r.socket, Some("/config/cmux.sock".into()));
    assert_eq!(r.deliverable().unwrap(), Path::new("/config/cmux.sock"));
    // … and then to this app's own socket.
    let r = resolve(&env(&[("CMUX_SOCKET_PATH", "0")]), &NotifyConfig::default(), Some(Path::new("/run/own.sock")));
    assert_eq!((r.socket, r.enabled), (Some("/run/own.sock".into()), true));
}

#[test]
fn a_timeout_of_2_and_of_0_5_both_read_and_0_or_negative_fall_back() {
    assert_eq!(resolve(&env(&[]), &table("[notify]\ntimeout = 2\n"), None).timeout, Duration::from_secs(2));
    assert_eq!(resolve(&env(&[]), &table("[notify]\ntimeout = 0.5\n"), None).timeout, Duration::from_millis(500));
    for bad in ["0", "-1", "-0.5", "0.0"] {
        let r = resolve(&env(&[]), &table(&format!("[notify]\ntimeout = {bad}\n")), None);
        assert_eq!(r.timeout, DEFAULT_TIMEOUT, "timeout = {bad}");
    }
    let t: toml::Table = "[notify]\ntimeout = \"soon\"\n".parse().unwrap();
    assert!(NotifyConfig::from_table(t["notify"].as_table().unwrap()).unwrap_err().contains("notify.timeout"));
}

#[test]
fn enabled_is_tri_state() {
    let inside = env(&[("CMUX_SOCKET_PATH", "/run/cmux.sock")]);
    // Absent: nobody said; a socket in the environment switches notices on.
    assert!(resolve(&inside, &NotifyConfig::default(), None).enabled);
    assert!(!resolve(&env(&[]), &NotifyConfig::default(), None).enabled);
    // false is somebody turning them off, and beats the terminal (and this app's socket).
    let off = table("[notify]\nenabled = false\n");
    let r = resolve(&inside, &off, Some(Path::new("/run/own.sock")));
    assert!(!r.enabled);
    assert_eq!(r.deliverable().unwrap_err(), Undeliverable::TurnedOff);
    // Nobody said, and no socket is live: no engine runs (`notify` exits 69 for it).
    assert_eq!(resolve(&env(&[]), &NotifyConfig::default(), None).deliverable().unwrap_err(), Undeliverable::NoEngine);
    // true with a socket from the config.
    let on = table("[notify]\nenabled = true\nsocket_path = \"/c.sock\"\n");
    assert!(resolve(&env(&[]), &on, None).deliverable().is_ok());
    // A config socket alone (enabled absent) does not switch them on outside a terminal.
    assert!(!resolve(&env(&[]), &table("[notify]\nsocket_path = \"/c.sock\"\n"), None).enabled);
}
