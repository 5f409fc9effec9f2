//! What `synchronous = FULL` (the product's) costs the store's commits, beside `NORMAL`,
//! on this disk (docs/architecture.md, "Durable on return"). Each notice is two commits, as in
//! the product: saved untold (an end recorded), then marked told (a banner posted). Prints a
//! Markdown table.
//!
//! `cargo bench -p cmux-tray-engine --bench store_commit` (NOTICES=N to change the count).

use std::time::{Duration, Instant};

use cmux_tray_engine::cloud::{Outcome, RunId};
use cmux_tray_engine::notice::{Item, Notice, NoticeStatus};
use cmux_tray_engine::policy::Reason;
use cmux_tray_engine::store::Store;

fn notice(i: usize) -> Notice {
    let item = Item::Run(RunId::parse(&format!("run_{i:020x}")).unwrap());
    Notice {
        key: item.key(),
        item,
        status: NoticeStatus::Run(Outcome::Finished),
        title: format!("Run {i}"),
        body: "Run finished".into(),
        urgent: false,
        local: None,
        session_id: None,
        host: None,
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn main() {
    let count: usize = std::env::var("NOTICES").ok().and_then(|n| n.parse().ok()).unwrap_or(2000);
    // Beside the target directory: the same disk the person's data folder would be on here.
    let base = std::env::current_dir().unwrap();
    println!("| synchronous | commits | p50 | p99 | max | per notice (2 commits) | total |");
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    for full in [false, true] {
        let dir = tempfile::tempdir_in(&base).unwrap();
        let store = Store::open(&dir.path().join("state.sqlite3")).unwrap();
        store.set_synchronous_full(full).unwrap();
        let mut commits = Vec::with_capacity(count * 2);
        let start = Instant::now();
        for i in 0..count {
            let n = notice(i);
            let t = Instant::now();
            store.record_notice(&n, i as i64).unwrap();
            commits.push(t.elapsed());
            let t = Instant::now();
            store.mark_told(&n.key, Some(i as u32), Reason::Shown, false, i as i64).unwrap();
            commits.push(t.elapsed());
        }
        let total = start.elapsed();
        commits.sort();
        let ms = |d: Duration| format!("{:.3} ms", d.as_secs_f64() * 1000.0);
        println!(
            "| {} | {} | {} | {} | {} | {} | {} |",
            if full { "FULL" } else { "NORMAL" },
            commits.len(),
            ms(percentile(&commits, 0.5)),
            ms(percentile(&commits, 0.99)),
            ms(*commits.last().unwrap()),
            ms(total / count as u32),
            ms(total)
        );
    }
}
