//! The idle tray gives back the pages that only start-up or a closed window needed.
//!
//! WebKit, GTK and the app are linked in, so starting them touches far more of their code than
//! the idle tray runs again: about 40 MiB of the tray's 73 MiB resident were such pages (README,
//! "Benchmarks", row 3). They are mapped from files and unchanged, so the kernel may reclaim them
//! at any time; `MADV_PAGEOUT` asks it to now rather than under memory pressure, once start-up is
//! over and again once the last window is gone (never while a window is open: it uses them). A
//! page needed later is read back on its first touch.
//! The kernel leaves pages that another process maps too (libc, GLib), and writable mappings are
//! not asked about: their changed pages have no file to return to.

use std::time::Duration;

use tauri::{AppHandle, Manager};

/// Start-up is over well within this: the tray registered, the follows restored and asked.
const AFTER_START: Duration = Duration::from_secs(10);

/// Gives back the clean pages once start-up is over, unless a window is open then: it is using
/// WebKit's pages, and its closing gives them back (`webkit`).
pub fn give_back_after_start(app: &AppHandle) {
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        tokio::time::sleep(AFTER_START).await;
        if app.webview_windows().is_empty() {
            give_back().await;
        }
    });
}

/// Gives back the clean pages now, off the runtime: the walk and the advice take a few
/// milliseconds of system time.
pub async fn give_back() {
    let _ = tokio::task::spawn_blocking(give_back_now).await;
}

/// Asks the kernel to reclaim the pages of every read-only file mapping, and logs the resident
/// memory before and after.
#[cfg(target_os = "linux")]
fn give_back_now() {
    let before = resident_kib();
    let maps = match std::fs::read_to_string("/proc/self/maps") {
        Ok(maps) => maps,
        Err(e) => return tracing::debug!("pages not given back: /proc/self/maps: {e}"),
    };
    let mut advised = 0usize;
    for (start, end) in read_only_file_mappings(&maps) {
        // SAFETY: the range is one of our own mappings, as /proc/self/maps listed it. The advice
        // never changes what memory holds (a page is read back on its next touch), so a mapping
        // unmapped or replaced meanwhile loses nothing either: madvise fails, or a page is swapped.
        if unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_PAGEOUT) } == 0 {
            advised += end - start;
        }
    }
    tracing::info!(
        advised_mib = advised >> 20,
        resident_before_mib = before >> 10,
        resident_after_mib = resident_kib() >> 10,
        "gave back the pages only start-up or a window needed"
    );
}

/// Elsewhere the system's own web views live in processes of their own.
#[cfg(not(target_os = "linux"))]
fn give_back_now() {}

/// The (start, end) addresses of the file mappings in `maps` (/proc/PID/maps's format) that
/// cannot be written: code and read-only data of the binary and its libraries, read-only mapped
/// files. Anonymous memory, the stack, `[vdso]` and writable mappings are left out.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn read_only_file_mappings(maps: &str) -> Vec<(usize, usize)> {
    maps.lines()
        .filter_map(|line| {
            let mut fields = line.split_ascii_whitespace();
            let (start, end) = fields.next()?.split_once('-')?;
            let perms = fields.next()?;
            let inode = fields.nth(2)?;
            let file = inode != "0" && fields.next().is_some_and(|path| path.starts_with('/'));
            let writable = perms.as_bytes().get(1) != Some(&b'-');
            (file && !writable).then_some(())?;
            Some((usize::from_str_radix(start, 16).ok()?, usize::from_str_radix(end, 16).ok()?))
        })
        .collect()
}

/// This process's resident memory in KiB (/proc/self/statm's second field, in pages).
#[cfg(target_os = "linux")]
fn resident_kib() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: usize = statm.split_whitespace().nth(1).and_then(|p| p.parse().ok()).unwrap_or(0);
    // SAFETY: sysconf with a valid name reads a constant.
    pages * unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize / 1024
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_read_only_file_mappings_are_chosen() {
        let maps = "\
5581a000-5581c000 r--p 00000000 fe:01 1234 /usr/bin/cmux-tray-app
5581c000-5582c000 r-xp 00002000 fe:01 1234 /usr/bin/cmux-tray-app
5582c000-5582d000 rw-p 00012000 fe:01 1234 /usr/bin/cmux-tray-app
55830000-55851000 rw-p 00000000 00:00 0 [heap]
7f0000000000-7f0000021000 rw-p 00000000 00:00 0
7f1000000000-7f1000100000 r--s 00000000 fe:01 99 /home/a/.cache/fontconfig/x.cache-8
7f2000000000-7f2000010000 rw-s 00000000 fe:01 77 /home/a/.local/share/cmux-tray/notices.db-shm
7fff0000-7fff2000 r-xp 00000000 00:00 0 [vdso]
7fff3000-7fff4000 r--p 00000000 00:00 0 [vvar]
";
        assert_eq!(
            read_only_file_mappings(maps),
            vec![(0x5581a000, 0x5581c000), (0x5581c000, 0x5582c000), (0x7f1000000000, 0x7f1000100000)]
        );
    }

    /// A file mapped and read is resident; given back, its pages leave this process. The file
    /// lies beside the test binary, on a disk (a tmpfs file's pages could only be swapped), and
    /// only this test maps it.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_read_file_mapping_leaves_the_resident_set() {
        use std::io::Write;
        let beside = std::env::current_exe().expect("the test binary");
        let dir = tempfile::tempdir_in(beside.parent().expect("its folder")).expect("a folder beside it");
        let path = dir.path().join("pages");
        let len = 8 << 20;
        std::fs::File::create(&path).and_then(|mut f| f.write_all(&vec![7u8; len])).expect("the file");
        let file = std::fs::File::open(&path).expect("opened");
        // SAFETY: a fresh private read-only mapping of a file only this test has, unmapped below.
        let at = unsafe {
            use std::os::fd::AsRawFd;
            libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ, libc::MAP_PRIVATE, file.as_raw_fd(), 0)
        };
        assert_ne!(at, libc::MAP_FAILED);
        // SAFETY: reads inside the mapping.
        let sum: usize = (0..len).step_by(4096).map(|i| unsafe { *(at as *const u8).add(i) } as usize).sum();
        assert_eq!(sum, 7 * len / 4096);
        let resident = || mapping_rss_kib(at as usize);
        let before = resident();
        give_back_now();
        let after = resident();
        // SAFETY: the mapping made above.
        unsafe { libc::munmap(at, len) };
        assert!(before >= 8 * 1024 - 64, "the read pages were resident: {before} KiB");
        assert!(after < before / 4, "given back: {before} KiB resident before, {after} KiB after");
    }

    /// The Rss line of the mapping starting at `start`, from /proc/self/smaps.
    #[cfg(target_os = "linux")]
    fn mapping_rss_kib(start: usize) -> usize {
        let smaps = std::fs::read_to_string("/proc/self/smaps").expect("smaps");
        let head = format!("{start:x}-");
        let mut lines = smaps.lines().skip_while(|l| !l.starts_with(&head));
        lines.find_map(|l| l.strip_prefix("Rss:")).and_then(|v| v.split_whitespace().next()?.parse().ok()).expect("the mapping's Rss")
    }
}
