//! Run ids: the name of a run's output folder, from the time it started.

use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

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
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d, rem)
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
