//! What a process costs, read from /proc: memory (RSS, PSS), CPU time, descriptors, sockets,
//! context switches (each a wake-up), and its children.

use std::path::PathBuf;

fn proc(pid: u32, file: &str) -> PathBuf {
    PathBuf::from(format!("/proc/{pid}/{file}"))
}

/// Resident and proportional set size, in KiB (`smaps_rollup`).
pub fn rss_pss_kib(pid: u32) -> (u64, u64) {
    let m = memory_kib(pid);
    (m.rss, m.pss)
}

/// A process's memory in KiB, from `smaps_rollup`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Memory {
    pub rss: u64,
    pub pss: u64,
    /// Private (USS): pages no other process maps, clean or dirty; what ending it gives back.
    pub uss: u64,
}

pub fn memory_kib(pid: u32) -> Memory {
    let text = std::fs::read_to_string(proc(pid, "smaps_rollup")).unwrap_or_default();
    let field = |name: &str| {
        text.lines().find(|l| l.starts_with(name)).and_then(|l| l.split_whitespace().nth(1)).and_then(|v| v.parse().ok()).unwrap_or(0)
    };
    Memory { rss: field("Rss:"), pss: field("Pss:"), uss: field("Private_Clean:") + field("Private_Dirty:") }
}

/// Where a process's resident memory is, in KiB, largest first: each mapped file by its name,
/// and `[anon]` (heap, stacks and anonymous maps together), from /proc/PID/smaps.
pub fn rss_by_mapping(pid: u32) -> Vec<(String, u64)> {
    let text = std::fs::read_to_string(proc(pid, "smaps")).unwrap_or_default();
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
    out
}

/// User + system CPU time, in clock ticks (USER_HZ, 100 on Linux).
pub fn cpu_ticks(pid: u32) -> u64 {
    // utime and stime are /proc/PID/stat's 14th and 15th fields.
    let [user, system] = stat_fields(pid, [14, 15]);
    user + system
}

/// Page faults that had to read the page back (majflt): pages given back and touched again.
pub fn major_faults(pid: u32) -> u64 {
    let [majflt] = stat_fields(pid, [12]);
    majflt
}

/// Fields `ns` (1-based, as proc(5) numbers them) of one read of /proc/PID/stat, 0 when unreadable.
fn stat_fields<const N: usize>(pid: u32, ns: [usize; N]) -> [u64; N] {
    let text = std::fs::read_to_string(proc(pid, "stat")).unwrap_or_default();
    // The command (field 2) may hold spaces: fields are counted after its closing parenthesis.
    let rest: Vec<&str> = text.rsplit_once(')').map(|(_, r)| r).unwrap_or("").split_whitespace().collect();
    ns.map(|n| rest.get(n - 3).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0))
}

pub const TICKS_PER_SEC: f64 = 100.0;

/// The whole machine's CPU time so far, in ticks: all of it, and what the hypervisor took
/// (steal: time this virtual machine's CPUs wanted and were not given). /proc/stat's `cpu` line.
pub fn machine_ticks() -> (u64, u64) {
    let text = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let ticks: Vec<u64> = text.lines().next().unwrap_or("").split_whitespace().skip(1).filter_map(|v| v.parse().ok()).collect();
    // user nice system idle iowait irq softirq steal (guest time is counted in user already).
    (ticks.iter().take(8).sum(), ticks.get(7).copied().unwrap_or(0))
}

/// Open descriptors, and how many of them are sockets.
pub fn descriptors(pid: u32) -> (usize, usize) {
    let Ok(dir) = std::fs::read_dir(proc(pid, "fd")) else { return (0, 0) };
    let mut all = 0;
    let mut sockets = 0;
    for e in dir.flatten() {
        all += 1;
        if std::fs::read_link(e.path()).is_ok_and(|t| t.to_string_lossy().starts_with("socket:")) {
            sockets += 1;
        }
    }
    (all, sockets)
}

/// Established TCP connections to `port` on loopback, counted from /proc/net/tcp (v4).
pub fn tcp_connections_to(port: u16) -> usize {
    let text = std::fs::read_to_string("/proc/net/tcp").unwrap_or_default();
    let want = format!(":{port:04X}");
    text.lines()
        .skip(1)
        .filter(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            f.len() > 3 && f[2].ends_with(&want) && f[3] == "01"
        })
        .count()
}

/// Voluntary + involuntary context switches of each live thread (each a wake-up or a
/// preemption), by thread id.
pub fn context_switches(pid: u32) -> std::collections::BTreeMap<u32, u64> {
    let mut by = std::collections::BTreeMap::new();
    let Ok(dir) = std::fs::read_dir(proc(pid, "task")) else { return by };
    for t in dir.flatten() {
        let Some(tid) = t.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        let text = std::fs::read_to_string(t.path().join("status")).unwrap_or_default();
        let n: u64 = text
            .lines()
            .filter(|l| l.starts_with("voluntary_ctxt_switches:") || l.starts_with("nonvoluntary_ctxt_switches:"))
            .filter_map(|l| l.split_whitespace().nth(1).and_then(|v| v.parse::<u64>().ok()))
            .sum();
        by.insert(tid, n);
    }
    by
}

/// The context switches between two readings of [`context_switches`]: each thread's own, a
/// thread born since counted whole. A thread that ended meanwhile takes its count with it (a
/// sum over live threads alone would even go down), so this is a floor.
pub fn switches_between(before: &std::collections::BTreeMap<u32, u64>, after: &std::collections::BTreeMap<u32, u64>) -> u64 {
    after.iter().map(|(tid, n)| n.saturating_sub(before.get(tid).copied().unwrap_or(0))).sum()
}

/// Every descendant of `pid` (children, their children …).
pub fn descendants(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    let mut todo = vec![pid];
    while let Some(p) = todo.pop() {
        let Ok(tasks) = std::fs::read_dir(proc(p, "task")) else { continue };
        for t in tasks.flatten() {
            let children = std::fs::read_to_string(t.path().join("children")).unwrap_or_default();
            for c in children.split_whitespace().filter_map(|c| c.parse::<u32>().ok()) {
                out.push(c);
                todo.push(c);
            }
        }
    }
    out
}

/// The command name of a process.
pub fn comm(pid: u32) -> String {
    std::fs::read_to_string(proc(pid, "comm")).unwrap_or_default().trim().to_owned()
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
