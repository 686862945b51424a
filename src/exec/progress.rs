//! Progress of a run (`run` and `bench`) on stderr: a bar on a terminal, else (CI logs, `tee`) a plain line at most
//! every [`LINE_INTERVAL`] with units done, rate and time left.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

/// Plain lines come at most this often.
pub const LINE_INTERVAL: Duration = Duration::from_secs(10);

pub struct Progress {
    bar: Option<ProgressBar>,
    /// Plain lines: when the run started and when the last line was printed.
    lines: Option<(Instant, Instant)>,
    done: u64,
    total: u64,
}

impl Progress {
    /// Progress over `total` units when `shown`: a bar if stderr is a terminal, plain lines if not.
    /// The bar counts its units as `noun` ("samples", "entries").
    pub fn new(shown: bool, total: usize, noun: &str) -> Self {
        let total = total as u64;
        let mut progress = Progress {
            bar: None,
            lines: None,
            done: 0,
            total,
        };
        if !shown {
            return progress;
        }
        if std::io::stderr().is_terminal() {
            let bar = ProgressBar::new(total);
            bar.set_style(
                ProgressStyle::with_template(&format!(
                    "{{bar:30}} {{pos}}/{{len}} {noun}  {{per_sec}}  ETA {{eta}}  {{msg}}"
                ))
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            progress.bar = Some(bar);
        } else {
            let now = Instant::now();
            progress.lines = Some((now, now));
        }
        progress
    }

    /// One more unit done; `message` names it on the bar.
    pub fn inc(&mut self, message: String) {
        self.done += 1;
        if let Some(bar) = &self.bar {
            bar.set_message(message);
            bar.inc(1);
        }
        if let Some((started, last)) = &mut self.lines {
            let now = Instant::now();
            if now.duration_since(*last) >= LINE_INTERVAL {
                *last = now;
                let line = plain_line(self.done, self.total, now.duration_since(*started));
                eprintln!("{line}");
            }
        }
    }

    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// "progress: 12/60 units · 0.40 units/s · ETA 2m00s" after `elapsed` (per minute when slow).
pub fn plain_line(done: u64, total: u64, elapsed: Duration) -> String {
    let secs = elapsed.as_secs_f64();
    let per_sec = if secs > 0.0 { done as f64 / secs } else { 0.0 };
    let eta = if per_sec > 0.0 {
        clock(total.saturating_sub(done) as f64 / per_sec)
    } else {
        "-".to_string()
    };
    // Slow runs (a loaded machine, a large model) read better per minute.
    let rate = if per_sec > 0.0 && per_sec < 0.1 {
        format!("{:.1} units/min", per_sec * 60.0)
    } else {
        format!("{per_sec:.2} units/s")
    };
    format!("progress: {done}/{total} units · {rate} · ETA {eta}")
}

/// Whole seconds as "45s", "2m05s" or "1h02m".
fn clock(secs: f64) -> String {
    let s = secs.round() as u64;
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_gives_count_rate_and_time_left() {
        // 12 of 60 units in 30 s: 0.4 units/s, 48 left take 120 s.
        assert_eq!(
            plain_line(12, 60, Duration::from_secs(30)),
            "progress: 12/60 units · 0.40 units/s · ETA 2m00s"
        );
        assert_eq!(
            plain_line(1, 10_000, Duration::from_secs(1)),
            "progress: 1/10000 units · 1.00 units/s · ETA 2h46m"
        );
        // 3 units in 150 s: 1.2 per minute, 3 left take 150 s.
        assert_eq!(
            plain_line(3, 6, Duration::from_secs(150)),
            "progress: 3/6 units · 1.2 units/min · ETA 2m30s"
        );
        assert_eq!(
            plain_line(0, 5, Duration::from_secs(10)),
            "progress: 0/5 units · 0.00 units/s · ETA -"
        );
    }
}
