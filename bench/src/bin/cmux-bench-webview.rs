//! `cmux-bench-webview TITLE`: a bare WebKitGTK window, the floor under row 3's new window. GTK,
//! one webview, a page of a few lines given as a string, the window shown once the page loaded (as
//! the windows process shows its own), the windows process's environment for its web engine
//! (`cmux_tray_channel::webview_env`). No Tauri, no tray, no channel, no data: what any
//! WebKitGTK app pays for a window on this machine. It ends when its window is closed.

#[cfg(target_os = "linux")]
fn main() {
    use gtk::prelude::*;
    use webkit2gtk::{LoadEvent, WebViewExt};

    // A history page's bones: a heading, a short list, the pages' font.
    const PAGE: &str = "<!doctype html><html><head><meta charset=\"utf-8\"><style>body{font-family:system-ui,sans-serif;margin:16px}</style></head>\
        <body><h1>History</h1><ul><li>Fix the flaky login test — Run finished</li><li>Idle hand-off — done</li></ul></body></html>";

    let title = std::env::args().nth(1).unwrap_or_else(|| "cmux-bench-webview".into());
    cmux_tray_channel::start::start_with(cmux_tray_channel::webview_env::OWN);
    // Three tries 100 ms apart, as the windows process opens its display (Xvfb refuses a
    // connection now and then while others come and go).
    if !(0..3).any(|attempt| {
        if attempt > 0 {
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        gtk::init().is_ok()
    }) {
        eprintln!("cmux-bench-webview: GTK could not open the display (3 tries)");
        std::process::exit(1);
    }
    let window = gtk::Window::new(gtk::WindowType::Toplevel);
    window.set_title(&title);
    // The history window's size (src-tauri/src/page_windows.rs).
    window.set_default_size(640, 680);
    let view = webkit2gtk::WebView::new();
    window.add(&view);
    let shown = window.clone();
    view.connect_load_changed(move |_, event| {
        if event == LoadEvent::Finished {
            shown.show_all();
        }
    });
    window.connect_destroy(|_| gtk::main_quit());
    view.load_html(PAGE, None);
    gtk::main();
}

#[cfg(not(target_os = "linux"))]
fn main() {
    eprintln!("cmux-bench-webview: WebKitGTK is the Linux web engine");
    std::process::exit(2);
}
