//! A cap on the memory one piece of work may hold: the process's allocator counts what a capped
//! thread holds and stops that thread, without unwinding, once it passes its cap.
//!
//! For work whose memory a file decides, such as a model's chat template (Jinja has loops,
//! recursion and string concatenation, and no limit of its own on what they build).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

/// The system allocator, counting the bytes a capped thread holds.
pub struct CappedAlloc;

thread_local! {
    /// The cap of this thread in bytes; 0 for an uncapped thread.
    static CAP: Cell<usize> = const { Cell::new(0) };
    /// What this thread has allocated and not freed since its cap was set.
    static HELD: Cell<usize> = const { Cell::new(0) };
    /// Raised when the thread passes its cap; owned by `run_capped`, which outlives the thread's use of it.
    static OVER: Cell<*const AtomicBool> = const { Cell::new(std::ptr::null()) };
}

fn charge(bytes: usize) {
    let cap = CAP.try_with(Cell::get).unwrap_or(0);
    if cap == 0 {
        return;
    }
    let held = HELD.with(|held| {
        let now = held.get().saturating_add(bytes);
        held.set(now);
        now
    });
    if held > cap {
        OVER.with(|over| {
            // SAFETY: set by `run_capped` to an `AtomicBool` its closure keeps alive.
            if let Some(flag) = unsafe { over.get().as_ref() } {
                flag.store(true, Ordering::SeqCst);
            }
        });
        // An allocator may not unwind and must not fail here (the caller would abort the
        // process): the thread sleeps for good, holding at most its cap, and the caller
        // carries on with an error.
        loop {
            std::thread::sleep(Duration::from_secs(3600));
        }
    }
}

fn refund(bytes: usize) {
    if CAP.try_with(Cell::get).unwrap_or(0) != 0 {
        HELD.with(|held| held.set(held.get().saturating_sub(bytes)));
    }
}

// SAFETY: every call is passed on to `System` unchanged; only counting is added.
unsafe impl GlobalAlloc for CappedAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        charge(layout.size());
        System.alloc(layout)
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        charge(layout.size());
        System.alloc_zeroed(layout)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        refund(layout.size());
        System.dealloc(ptr, layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > layout.size() {
            charge(new_size - layout.size());
        } else {
            refund(layout.size() - new_size);
        }
        System.realloc(ptr, layout, new_size)
    }
}

/// The work passed its memory cap; its thread was stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OverCap;

/// Runs `work` on a thread of its own that may hold at most `cap_bytes`. Past the cap the
/// thread is left asleep (holding at most the cap) and `Err(OverCap)` is returned. A panic in
/// `work` is passed on.
pub fn run_capped<T: Send + 'static>(
    cap_bytes: usize,
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, OverCap> {
    let over = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&over);
    let (sender, receiver) = mpsc::channel();
    let worker = std::thread::spawn(move || {
        OVER.with(|over| over.set(Arc::as_ptr(&flag)));
        HELD.with(|held| held.set(0));
        CAP.with(|cap| cap.set(cap_bytes.max(1)));
        let result = work();
        CAP.with(|cap| cap.set(0));
        let _ = sender.send(result);
        drop(flag);
    });
    loop {
        match receiver.recv_timeout(Duration::from_millis(5)) {
            Ok(result) => return Ok(result),
            Err(mpsc::RecvTimeoutError::Timeout) if over.load(Ordering::SeqCst) => {
                return Err(OverCap)
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => match worker.join() {
                Err(panic) => std::panic::resume_unwind(panic),
                Ok(()) => unreachable!("the worker sends its result before it ends"),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Truth: a change — work under its cap returns its result; work that keeps doubling a
    /// string is stopped at the cap and the caller gets on.
    #[test]
    fn work_past_its_cap_is_stopped_and_work_under_it_finishes() {
        assert_eq!(run_capped(1 << 20, || "x".repeat(1000).len()), Ok(1000));
        let doubling = run_capped(8 << 20, || {
            let mut text = String::from("x");
            for _ in 0..64 {
                text = format!("{text}{text}");
            }
            text.len()
        });
        assert_eq!(doubling, Err(OverCap));
        // This thread is not capped: it may still allocate more than the cap.
        assert_eq!(vec![0u8; 16 << 20].len(), 16 << 20);
    }
}
