//! Run ids: the name of a run's output folder, from the time it started.

use std::path::Path;

/// `<date>-<time>-<name>` in UTC, to the second: run folders sort by when they started.
pub fn new_run_id(name: &str) -> String {
    let (y, m, d, rem) = utc_now();
    format!(
        "{y:04}{m:02}{d:02}-{:02}{:02}{:02}-{name}",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60
    )
}

/// Now in UTC as RFC 3339 to the second (`2026-12-02T19:48:40Z`), for what a record keeps.
pub fn utc_timestamp() -> String {
    let (y, m, d, rem) = utc_now();
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60
    )
}

/// Today's civil date in UTC and the seconds since midnight.
fn utc_now() -> (i64, i64, i64, u64) {
    let secs = crate::base::clock::now_secs();
    let (y, m, d) = crate::base::clock::civil_from_days((secs / 86_400) as i64);
    (y, m, d, secs % 86_400)
}

/// `id`, or `id-2`, `id-3`… when runs started in the same second share an output folder.
pub fn unused_run_id(output_root: &Path, id: &str) -> String {
    let mut candidate = id.to_string();
    let mut n = 2;
    while output_root.join(&candidate).exists() {
        candidate = format!("{id}-{n}");
        n += 1;
    }
    candidate
}
