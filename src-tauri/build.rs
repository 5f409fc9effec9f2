//! Tauri's build step, with a permission per app command (`allow-<command>`), so each window is
//! given only the commands its page uses (capabilities/*.json): the history page cannot set the
//! cloud origin, the sign-in page cannot read the history.
fn main() {
    let manifest = tauri_build::AppManifest::new().commands(&[
        "view",
        "history_view",
        "notice",
        "card",
        "handoff_card",
        "settings_view",
        "time_zones",
        "set_setting",
        "set_quiet_windows",
        "pause",
        "resume",
        "mark_all_read",
        "open_notice",
        "open_item",
        "viewing",
        "sign_in_start",
        "sign_in_wait",
        "open_sign_in_page",
        "open_at_login",
        "set_open_at_login",
        "connection",
        "log_dir",
        "restart",
        "open_window",
        "account",
        "choose_team",
        "sign_out",
        "sign_in_with_token",
        "page_words",
        "languages",
        "install_update",
        "quit",
    ]);
    tauri_build::try_build(tauri_build::Attributes::new().app_manifest(manifest)).expect("the Tauri build step");
}
