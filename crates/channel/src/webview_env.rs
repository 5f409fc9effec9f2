//! The windows process's environment for its web engine, declared once for both programs and for
//! the bench's bare WebKitGTK window (row 3's floor, which must start as the windows do).

/// Set by the windows process for itself and its web processes alone, unless the person set them
/// (their value wins); a tray it starts gets the environment as it was (docs/architecture.md
/// "Private files, no secret in a child"). `GDK_GL`: on X11, GTK 3 probes OpenGL (GLX) as it
/// opens the display, and the windows never draw with GDK's GL. `WEBKIT_DISABLE_DMABUF_RENDERER`:
/// WebKit's GPU compositor had each new window wait for an EGL display here before the web
/// process started; the pages, a list and forms, are drawn in software instead
/// (docs/benchmarks.md, "A new window's own costs").
#[cfg(target_os = "linux")]
pub const OWN: &[(&str, &str)] = &[("GDK_GL", "disable"), ("WEBKIT_DISABLE_DMABUF_RENDERER", "1")];
#[cfg(not(target_os = "linux"))]
pub const OWN: &[(&str, &str)] = &[];

/// What the tray tells a windows process it starts while no accessibility bus runs, so that
/// nothing in it starts one: GTK 3's bridge off; WebKit's web processes given no bus; and
/// WebKit's own question for the bus's address (which D-Bus answers by starting the bus)
/// answered with a socket that is not there.
pub const NO_ACCESSIBILITY_BUS: [(&str, &str); 3] =
    [("NO_AT_BRIDGE", "1"), ("WEBKIT_A11Y_BUS_ADDRESS", ""), ("AT_SPI_BUS_ADDRESS", "unix:path=/dev/null")];
