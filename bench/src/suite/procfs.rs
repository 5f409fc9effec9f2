//! What a process costs, read from /proc: memory (RSS, PSS), CPU time, descriptors, sockets,
//! context switches (each a wake-up), and its children.
//!
//! A file that cannot be read, or lacks the field asked for, is an error naming it: read as 0 it
//! would pass every "below" gate.

use std::path::PathBuf;

use anyhow::Context;

fn proc(pid: u32, file: &str) -> PathBuf {
    PathBuf::from(format!("/proc/{pid}/{file}"))
}

/// A /proc file's text, or an error naming it.
fn read(path: PathBuf) -> anyhow::Result<String> {
    std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))
}

/// Whether an error is a process that is gone (its /proc folder with it): a child that ended
/// between being listed and being read.
pub fn gone(e: &anyhow::Error) -> bool {
    e.downcast_ref::<std::io::Error>().is_some_and(|e| matches!(e.raw_os_error(), Some(libc::ENOENT | libc::ESRCH)))
}

/// Resident and proportional set size, in KiB (`smaps_rollup`).
pub fn rss_pss_kib(pid: u32) -> anyhow::Result<(u64, u64)> {
    let m = memory_kib(pid)?;
    Ok((m.rss, m.pss))
}

/// A process's memory in KiB, from `smaps_rollup`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Memory {
    pub rss: u64,
    pub pss: u64,
    /// Private (USS): pages no other process maps, clean or dirty; what ending it gives back.
    pub uss: u64,
}

pub fn memory_kib(pid: u32) -> anyhow::Result<Memory> {
    let path = proc(pid, "smaps_rollup");
    let text = read(path.clone())?;
    let field = |name: &str| -> anyhow::Result<u64> {
        text.lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .with_context(|| format!("{} has no {name} field", path.display()))
    };
    Ok(Memory { rss: field("Rss:")?, pss: field("Pss:")?, uss: field("Private_Clean:")? + field("Private_Dirty:")? })
}

/// Where a process's resident memory is, in KiB, largest first: each mapped file by its name,
/// and `[anon]` (heap, stacks and anonymous maps together), from /proc/PID/smaps.
pub fn rss_by_mapping(pid: u32) -> anyhow::Result<Vec<(String, u64)>> {
    let text = read(proc(pid, "smaps"))?;
    let mut by: std::collections::BTreeMap<String, u64> = std::collections::BTreeMap::new();
    let mut current = String::new();
    for line in text.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        // A mapping's header: "start-end perms offset dev inode [path]".
        if fields.first().is_some_and(|f| f.contains('-') && f.chars().all(|c| c.is_ascii_hexdigit() || c == '-')) {
            current = match fields.get(5) {
                Some(path) if path.starts_with('/') => path.rsplit('/').next().unwrap_or(path).to_string(),
                _ => "[anon]".into(),
            };
        } else if fields.first() == Some(&"Rss:") {
            *by.entry(current.clone()).or_default() += fields.get(1).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
        }
    }
    let mut out: Vec<(String, u64)> = by.into_iter().collect();
    out.sort_by_key(|e| std::cmp::Reverse(e.1));
    Ok(out)
}

/// The files a process maps whose name holds any of `names` (each once), from /proc/PID/maps:
/// a library that should not be there (a web engine in the tray).
pub fn mapped_files(pid: u32, names: &[&str]) -> anyhow::Result<Vec<String>> {
    let text = read(proc(pid, "maps"))?;
    let mut found: Vec<String> = text
        .lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .filter(|path| names.iter().any(|n| path.rsplit('/').next().unwrap_or(path).contains(n)))
        .map(String::from)
        .collect();
    found.sort();
    found.dedup();
    Ok(found)
}

/// User + system CPU time, in clock ticks (USER_HZ, 100 on Linux).
pub fn cpu_ticks(pid: u32) -> anyhow::Result<u64> {
    // utime and stime are /proc/PID/stat's 14th and 15th fields.
    let [user, system] = stat_fields(pid, [14, 15])?;
    Ok(user + system)
}

/// Page faults that had to read the page back (majflt): pages given back and touched again.
pub fn major_faults(pid: u32) -> anyhow::Result<u64> {
    let [majflt] = stat_fields(pid, [12])?;
    Ok(majflt)
}

/// Fields `ns` (1-based, as proc(5) numbers them) of one read of /proc/PID/stat.
fn stat_fields<const N: usize>(pid: u32, ns: [usize; N]) -> anyhow::Result<[u64; N]> {
    let path = proc(pid, "stat");
    let text = read(path.clone())?;
    // The command (field 2) may hold spaces: fields are counted after its closing parenthesis.
    let rest: Vec<&str> = text.rsplit_once(')').map(|(_, r)| r).unwrap_or("").split_whitespace().collect();
    let mut out = [0; N];
    for (o, n) in out.iter_mut().zip(ns) {
        *o = rest.get(n - 3).and_then(|v| v.parse::<u64>().ok()).with_context(|| format!("{} has no field {n}", path.display()))?;
    }
    Ok(out)
}

pub const TICKS_PER_SEC: f64 = 100.0;

/// The whole machine's CPU time so far, in ticks: all of it, and what the hypervisor took
/// (steal: time this virtual machine's CPUs wanted and were not given). /proc/stat's `cpu` line.
pub fn machine_ticks() -> anyhow::Result<(u64, u64)> {
    let text = read(PathBuf::from("/proc/stat"))?;
    let ticks: Vec<u64> = text.lines().next().unwrap_or("").split_whitespace().skip(1).filter_map(|v| v.parse().ok()).collect();
    anyhow::ensure!(ticks.len() >= 8, "/proc/stat's cpu line has {} fields, not 8 or more", ticks.len());
    // user nice system idle iowait irq softirq steal (guest time is counted in user already).
    Ok((ticks.iter().take(8).sum(), ticks[7]))
}

/// Open descriptors, and how many of them are sockets.
pub fn descriptors(pid: u32) -> anyhow::Result<(usize, usize)> {
    let path = proc(pid, "fd");
    let dir = std::fs::read_dir(&path).with_context(|| format!("listing {}", path.display()))?;
    let mut all = 0;
    let mut sockets = 0;
    for e in dir.flatten() {
        all += 1;
        if std::fs::read_link(e.path()).is_ok_and(|t| t.to_string_lossy().starts_with("socket:")) {
            sockets += 1;
        }
    }
    Ok((all, sockets))
}

/// Established TCP connections to `port` on loopback, counted from /proc/net/tcp (v4).
pub fn tcp_connections_to(port: u16) -> anyhow::Result<usize> {
    let text = read(PathBuf::from("/proc/net/tcp"))?;
    let want = format!(":{port:04X}");
    Ok(text
        .lines()
        .skip(1)
        .filter(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            f.len() > 3 && f[2].ends_with(&want) && f[3] == "01"
        })
        .count())
}

/// Voluntary + involuntary context switches of each live thread (each a wake-up or a
/// preemption), by thread id. A thread that ended while being read is left out.
pub fn context_switches(pid: u32) -> anyhow::Result<std::collections::BTreeMap<u32, u64>> {
    let mut by = std::collections::BTreeMap::new();
    let path = proc(pid, "task");
    let dir = std::fs::read_dir(&path).with_context(|| format!("listing {}", path.display()))?;
    for t in dir.flatten() {
        let Some(tid) = t.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        let text = match read(t.path().join("status")) {
            Ok(text) => text,
            Err(e) if gone(&e) => continue,
            Err(e) => return Err(e),
        };
        let n: Vec<u64> = text
            .lines()
            .filter(|l| l.starts_with("voluntary_ctxt_switches:") || l.starts_with("nonvoluntary_ctxt_switches:"))
            .filter_map(|l| l.split_whitespace().nth(1).and_then(|v| v.parse::<u64>().ok()))
            .collect();
        anyhow::ensure!(n.len() == 2, "{} has not both context switch counts", t.path().join("status").display());
        by.insert(tid, n.iter().sum());
    }
    Ok(by)
}

/// The context switches between two readings of [`context_switches`]: each thread's own, a
/// thread born since counted whole. A thread that ended meanwhile takes its count with it (a
/// sum over live threads alone would even go down), so this is a floor.
pub fn switches_between(before: &std::collections::BTreeMap<u32, u64>, after: &std::collections::BTreeMap<u32, u64>) -> u64 {
    after.iter().map(|(tid, n)| n.saturating_sub(before.get(tid).copied().unwrap_or(0))).sum()
}

/// Every descendant of `pid` (children, their children …). `pid` itself must be readable; a
/// descendant that ended while being walked is left out.
pub fn descendants(pid: u32) -> anyhow::Result<Vec<u32>> {
    let mut out = Vec::new();
    let mut todo = vec![pid];
    while let Some(p) = todo.pop() {
        let path = proc(p, "task");
        let tasks = match std::fs::read_dir(&path) {
            Ok(tasks) => tasks,
            Err(e) if p != pid && e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e).with_context(|| format!("listing {}", path.display())),
        };
        for t in tasks.flatten() {
            let children = match read(t.path().join("children")) {
                Ok(text) => text,
                Err(e) if gone(&e) => continue,
                Err(e) => return Err(e),
            };
            for c in children.split_whitespace().filter_map(|c| c.parse::<u32>().ok()) {
                out.push(c);
                todo.push(c);
            }
        }
    }
    Ok(out)
}

/// The command name of a process.
pub fn comm(pid: u32) -> anyhow::Result<String> {
    Ok(read(proc(pid, "comm"))?.trim().to_owned())
}

/// "2 cores, 23.5 GiB" and the CPU model.
pub fn machine() -> String {
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0);
    let mem = std::fs::read_to_string("/proc/meminfo")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("MemTotal:"))
        .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        .unwrap_or(0.0);
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, m)| m.trim().to_owned())
        .unwrap_or_default();
    format!("{cores} cores ({model}), {:.1} GiB memory", mem / 1024.0 / 1024.0)
}

/// Who runs the bench, and who owns the binaries it measures: "as uid 1000 (bench), binaries
/// owned by uid 0".
pub fn who(binaries: &str) -> String {
    use std::os::unix::fs::MetadataExt;
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let uid = status.lines().find_map(|l| l.strip_prefix("Uid:")).and_then(|v| v.split_whitespace().next()).unwrap_or("?").to_string();
    let user = std::env::var("USER").unwrap_or_default();
    let owner = std::fs::metadata(std::path::Path::new(binaries).join("cmux-tray")).map_or("?".into(), |m| m.uid().to_string());
    format!("run as uid {uid} ({user}), binaries owned by uid {owner}")
}
