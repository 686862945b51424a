//! Runs a plan's units on several threads at once, each with its own handle on a backend that
//! serves many callers (one model, one context, continuous batching), and measures the run.
//!
//! Worker k starts with unit k, then each takes the next unit in plan order from a shared counter
//! when it is done; finished units come back to the caller's thread in order of completion, so
//! the journal keeps every unit that finished even if the run stops. On lockstep handles (the
//! batched engine's forks) workers take turns between generations, so which worker takes which
//! unit, and so every batch, is the same from run to run: a run replays exactly at the same
//! `--parallel`.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;

use anyhow::{anyhow, bail};
use serde::{Deserialize, Serialize};

use super::journal::JournalEntry;
use crate::harness::backend::batched::{peak_memory_bytes, EngineStats};
use crate::harness::backend::Backend;

/// `count` handles on `backend`, one per worker.
pub fn handles(
    backend: &dyn Backend,
    count: usize,
) -> anyhow::Result<Vec<Box<dyn Backend + Send>>> {
    (0..count)
        .map(|_| {
            backend.fork().ok_or_else(|| {
                anyhow!(
                    "--parallel {count}: the {} backend serves one caller at a time; use --parallel 1",
                    backend.info().name
                )
            })
        })
        .collect()
}

/// Runs `work` on every item, on one thread per handle. `on_done` sees each result on the
/// caller's thread as it finishes, with the item's index. When `on_done` fails, no further item
/// starts, the ones running are waited for and dropped, and its error is returned.
pub fn run_parallel<I, T, W, D>(
    handles: Vec<Box<dyn Backend + Send>>,
    items: &[I],
    work: W,
    mut on_done: D,
) -> anyhow::Result<()>
where
    I: Sync,
    T: Send,
    W: Fn(&mut dyn Backend, &I) -> T + Sync,
    D: FnMut(usize, T) -> anyhow::Result<()>,
{
    if handles.is_empty() {
        bail!("no backend handle to run on");
    }
    let next = AtomicUsize::new(handles.len());
    let stop = AtomicBool::new(false);
    let (sender, results) = mpsc::channel::<(usize, T)>();
    std::thread::scope(|scope| {
        for (first, mut handle) in handles.into_iter().enumerate() {
            let sender = sender.clone();
            let (next, stop, work) = (&next, &stop, &work);
            scope.spawn(move || {
                let mut i = first;
                while !stop.load(Ordering::Relaxed) {
                    let Some(item) = items.get(i) else {
                        break;
                    };
                    let value = work(handle.as_mut(), item);
                    if sender.send((i, value)).is_err() {
                        break;
                    }
                    i = next.fetch_add(1, Ordering::Relaxed);
                }
            });
        }
        // The workers hold the only senders left: the loop ends when the last one finishes.
        drop(sender);
        let mut outcome = Ok(());
        for (i, value) in results {
            if outcome.is_ok() {
                outcome = on_done(i, value);
                if outcome.is_err() {
                    stop.store(true, Ordering::Relaxed);
                }
            }
        }
        outcome
    })
}

/// Where a run's time and tokens went. Token rates are over the run's wall time, so they compare
/// across `--parallel` settings; the phase split sums each unit's own time, which overlaps with
/// other units' when they run at once.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Profile {
    pub parallel: usize,
    pub units: usize,
    pub wall_secs: f64,
    pub samples_per_sec: f64,
    pub generations: u64,
    pub prompt_tokens: u64,
    /// Prompt tokens taken from the prefix cache instead of computed.
    pub cached_prompt_tokens: u64,
    /// Generations that reused a cached prefix.
    pub prefix_hits: u64,
    pub generated_tokens: u64,
    /// Computed prompt tokens per second of wall time.
    pub prefill_tokens_per_sec: f64,
    /// Generated tokens per second of wall time.
    pub decode_tokens_per_sec: f64,
    /// Peak resident memory of the process (Linux `VmHWM`).
    pub peak_memory_bytes: Option<u64>,
    pub prefill_secs: f64,
    pub decode_secs: f64,
    pub tool_secs: f64,
    /// Judging and everything else a unit does outside the harness loop.
    pub judge_secs: f64,
    /// The batched engine's own figures, when it served the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<EngineStats>,
}

impl Profile {
    pub fn new(parallel: usize) -> Self {
        Profile {
            parallel,
            ..Profile::default()
        }
    }

    /// Counts one finished unit that took `unit_secs` in all.
    pub fn add(&mut self, entry: &JournalEntry, unit_secs: f64) {
        let m = &entry.transcript.metrics;
        self.units += 1;
        for round in &entry.transcript.rounds {
            self.generations += 1;
            self.cached_prompt_tokens += u64::from(round.metrics.cached_prompt_tokens);
            self.prefix_hits += u64::from(round.metrics.cached_prompt_tokens > 0);
        }
        self.prompt_tokens += u64::from(m.prompt_tokens);
        self.generated_tokens += u64::from(m.generated_tokens);
        self.prefill_secs += m.prefill_secs;
        self.decode_secs += m.decode_secs;
        self.tool_secs += m.tool_secs;
        self.judge_secs += (unit_secs - m.wall_secs).max(0.0);
    }

    /// Sets the figures that need the run's wall time.
    pub fn finish(&mut self, wall_secs: f64) {
        self.wall_secs = wall_secs;
        let per_sec = |n: u64| {
            if wall_secs > 0.0 {
                n as f64 / wall_secs
            } else {
                0.0
            }
        };
        self.samples_per_sec = per_sec(self.units as u64);
        self.prefill_tokens_per_sec =
            per_sec(self.prompt_tokens.saturating_sub(self.cached_prompt_tokens));
        self.decode_tokens_per_sec = per_sec(self.generated_tokens);
        self.peak_memory_bytes = peak_memory_bytes();
    }

    /// One line for the run summary.
    pub fn line(&self) -> String {
        format!(
            "{} units in {:.1}s ({:.2}/s) · parallel {} · prefill {:.0} tok/s · decode {:.0} tok/s · prefix cache {}/{} generations, {} of {} prompt tokens",
            self.units,
            self.wall_secs,
            self.samples_per_sec,
            self.parallel,
            self.prefill_tokens_per_sec,
            self.decode_tokens_per_sec,
            self.prefix_hits,
            self.generations,
            self.cached_prompt_tokens,
            self.prompt_tokens
        )
    }

    /// Where the time went, for `--profile` (the summary line is `line`).
    pub fn table(&self) -> String {
        let phases = [
            ("prefill", self.prefill_secs),
            ("decode", self.decode_secs),
            ("tools", self.tool_secs),
            ("judging and other", self.judge_secs),
        ];
        let total: f64 = phases.iter().map(|(_, s)| s).sum();
        let mut out = String::new();
        if let Some(bytes) = self.peak_memory_bytes {
            out.push_str(&format!(
                "peak memory {:.0} MiB\n",
                bytes as f64 / (1024.0 * 1024.0)
            ));
        }
        out.push_str("time per phase, summed over units:\n");
        for (name, secs) in phases {
            let share = if total > 0.0 {
                100.0 * secs / total
            } else {
                0.0
            };
            out.push_str(&format!("  {name:<18} {secs:>9.1}s {share:>5.1}%\n"));
        }
        out
    }
}
