//! What a run or a benchmark does with each finished unit. The scheduler runs the units and
//! hands every result, as it finishes, to each sink in turn: the journal, the profile, the
//! progress line, a check that stops the run. The runner decides what runs; the sinks decide
//! what is kept and shown, and `run` and `bench` share the ones they have in common.

use super::progress::Progress;
use super::scheduler;
use crate::harness::backend::Backend;

/// One finished unit: its index in the run's list of units, its result and its time.
pub struct Finished<'a, T> {
    pub index: usize,
    pub result: &'a T,
    pub secs: f64,
}

pub trait Sink<T> {
    /// Sees one finished unit; an error stops the run (no further unit starts).
    fn finished(&mut self, unit: Finished<'_, T>) -> anyhow::Result<()>;
}

/// Progress on stderr as a sink: one step per unit, named by `label`.
pub struct ProgressSink<F> {
    pub progress: Progress,
    pub label: F,
}

impl<T, F: FnMut(&T) -> String> Sink<T> for ProgressSink<F> {
    fn finished(&mut self, unit: Finished<'_, T>) -> anyhow::Result<()> {
        let label = (self.label)(unit.result);
        self.progress.inc(label);
        Ok(())
    }
}

/// The results of a run of units, in the units' order: `None` for a unit that had not finished
/// when a sink stopped the run, with the sink's error.
pub struct Ran<T> {
    pub results: Vec<Option<T>>,
    pub outcome: anyhow::Result<()>,
}

/// Runs `work` on every item (one at a time on `backend`, or at once on `parallel` handles
/// forked from it), times each, and hands each result to every sink as it finishes, on the
/// caller's thread. The first sink error stops the run and is returned in [`Ran::outcome`].
pub fn run_into<I, T, W>(
    backend: &mut dyn Backend,
    parallel: usize,
    items: &[I],
    work: W,
    sinks: &mut [&mut dyn Sink<T>],
) -> Ran<T>
where
    I: Sync,
    T: Send,
    W: Fn(&mut dyn Backend, &I) -> T + Sync,
{
    // Each unit timed on its own thread: the same work whether units run one by one or at once.
    let timed = |backend: &mut dyn Backend, item: &I| {
        let started = std::time::Instant::now();
        let result = work(backend, item);
        (result, started.elapsed().as_secs_f64())
    };
    // Kept by index, so that results come out in the units' order whatever finished first.
    let mut results: Vec<Option<T>> = (0..items.len()).map(|_| None).collect();
    let outcome = scheduler::run_units(backend, parallel, items, timed, |index, (result, secs)| {
        let seen = sinks.iter_mut().try_for_each(|sink| {
            sink.finished(Finished {
                index,
                result: &result,
                secs,
            })
        });
        results[index] = Some(result);
        seen
    });
    Ran { results, outcome }
}
