//! The two things only root may do for a bench that runs as a person does (a normal user, the
//! binaries owned by root): drop the page cache before a cold start (row 5), and page out a
//! process's memory, as the kernel does to an app left idle for an hour while others ran (row 3).
//!
//! `scripts/bench`, run as root, starts `cmux-tray-bench helper DIR --uid UID` as root and the
//! bench itself as that user; the bench asks over `DIR/helper.sock`, a line each way. The helper
//! pages out only processes of that user. A bench run as root does both itself; one run as a
//! user with no helper says what it could not measure.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};

/// Where a bench run as a user finds the helper: the folder holding `helper.sock`.
const HELPER_ENV: &str = "CMUX_TRAY_BENCH_HELPER";

/// A request to the helper.
enum Ask {
    DropCaches,
    PageOut(u32),
}

impl Ask {
    fn line(&self) -> String {
        match self {
            Ask::DropCaches => "drop-caches".into(),
            Ask::PageOut(pid) => format!("page-out {pid}"),
        }
    }

    fn parse(line: &str) -> anyhow::Result<Ask> {
        match line.trim().split_once(' ') {
            None if line.trim() == "drop-caches" => Ok(Ask::DropCaches),
            Some(("page-out", pid)) => Ok(Ask::PageOut(pid.parse()?)),
            _ => anyhow::bail!("unknown request {line:?}"),
        }
    }
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Drops the page cache (after `sync`). `Ok(false)` when neither this process nor a helper may.
pub fn drop_caches() -> anyhow::Result<bool> {
    ask_or_do(Ask::DropCaches)
}

/// Pages out what the kernel may of `pid`'s memory: its clean file pages (the binaries' and
/// libraries' code) and, where there is swap, its anonymous memory. `Ok(false)` when not allowed.
pub fn page_out(pid: u32) -> anyhow::Result<bool> {
    ask_or_do(Ask::PageOut(pid))
}

fn ask_or_do(ask: Ask) -> anyhow::Result<bool> {
    if is_root() {
        carry_out(&ask)?;
        return Ok(true);
    }
    let Some(dir) = std::env::var_os(HELPER_ENV) else { return Ok(false) };
    let mut stream = UnixStream::connect(PathBuf::from(dir).join("helper.sock"))?;
    stream.write_all(format!("{}\n", ask.line()).as_bytes())?;
    let mut answer = String::new();
    BufReader::new(stream).read_line(&mut answer)?;
    anyhow::ensure!(answer.trim() == "ok", "the bench's helper answered {:?} to {:?}", answer.trim(), ask.line());
    Ok(true)
}

fn carry_out(ask: &Ask) -> anyhow::Result<()> {
    match ask {
        Ask::DropCaches => {
            // SAFETY: sync has no preconditions.
            unsafe { libc::sync() };
            std::fs::write("/proc/sys/vm/drop_caches", "3")?;
        }
        Ask::PageOut(pid) => page_out_now(*pid)?,
    }
    Ok(())
}

/// `process_madvise(MADV_PAGEOUT)` over every mapping of `pid`, one at a time (a mapping the
/// kernel refuses, say a locked one, stops a call that holds several).
fn page_out_now(pid: u32) -> anyhow::Result<()> {
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps"))?;
    // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor or -1.
    let pidfd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0) };
    anyhow::ensure!(pidfd >= 0, "pidfd_open({pid}): {}", std::io::Error::last_os_error());
    let pidfd = pidfd as libc::c_int;
    for line in maps.lines() {
        let Some((start, end)) = line.split_whitespace().next().and_then(|r| r.split_once('-')) else { continue };
        let (Ok(start), Ok(end)) = (usize::from_str_radix(start, 16), usize::from_str_radix(end, 16)) else { continue };
        if line.ends_with("[vsyscall]") {
            continue;
        }
        let range = libc::iovec { iov_base: start as *mut libc::c_void, iov_len: end - start };
        // SAFETY: the iovec names a range of the other process; the kernel checks it.
        unsafe { libc::syscall(libc::SYS_process_madvise, pidfd, &range as *const libc::iovec, 1usize, libc::MADV_PAGEOUT, 0u32) };
    }
    // SAFETY: pidfd is ours and closed once.
    unsafe { libc::close(pidfd) };
    Ok(())
}

/// The helper: serves requests on `dir/helper.sock` until killed, paging out only the
/// processes of `uid`.
pub fn serve(dir: &Path, uid: u32) -> anyhow::Result<()> {
    anyhow::ensure!(is_root(), "the bench's helper runs as root (it drops the page cache and pages out others' memory)");
    let path = dir.join("helper.sock");
    let _ = std::fs::remove_file(&path);
    let listener = UnixListener::bind(&path)?;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666))?;
    for stream in listener.incoming() {
        let mut stream = stream?;
        let mut line = String::new();
        BufReader::new(&stream).read_line(&mut line)?;
        let answer = match Ask::parse(&line).and_then(|ask| {
            if let Ask::PageOut(pid) = ask {
                anyhow::ensure!(owner(pid)? == uid, "process {pid} is not the bench user's");
            }
            carry_out(&ask)
        }) {
            Ok(()) => "ok".to_string(),
            Err(e) => format!("error: {e}"),
        };
        let _ = stream.write_all(format!("{answer}\n").as_bytes());
    }
    Ok(())
}

/// The real user id a process runs as (`Uid:` in /proc/PID/status).
fn owner(pid: u32) -> anyhow::Result<u32> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    let uid = status.lines().find_map(|l| l.strip_prefix("Uid:")).and_then(|v| v.split_whitespace().next());
    Ok(uid.ok_or_else(|| anyhow::anyhow!("no Uid in /proc/{pid}/status"))?.parse()?)
}
