//! Runs a run's units, one at a time on the caller's backend or several at once on threads, each
//! with its own handle on a backend that serves many callers (one model, one context,
//! continuous batching).
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

use crate::harness::backend::Backend;

/// Runs `work` on every item: in order on `backend` itself when `parallel` is 1, else on
/// `parallel` handles forked from it (see [`run_parallel`]). `on_done` sees each result on the
/// caller's thread as it finishes, with the item's index; its first error stops the run and is
/// returned.
pub fn run_units<I, T, W, D>(
    backend: &mut dyn Backend,
    parallel: usize,
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
    if parallel > 1 {
        return run_parallel(handles(backend, parallel)?, items, work, on_done);
    }
    for (i, item) in items.iter().enumerate() {
        on_done(i, work(backend, item))?;
    }
    Ok(())
}

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
