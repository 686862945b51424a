//! What an interrupted run says on its way out. The journal is flushed after every unit, so
//! Ctrl-C loses at most the units running; without a word, though, the user cannot tell which
//! run to `--resume`. The note is set once the run folder exists; SIGINT then writes it to
//! stderr and ends the process with status 130, as a shell expects of an interrupt.

use std::sync::OnceLock;

static NOTE: OnceLock<Vec<u8>> = OnceLock::new();

const SIGINT: i32 = 2;
const INTERRUPTED_STATUS: i32 = 130;

extern "C" {
    fn signal(signum: i32, handler: usize) -> usize;
    fn write(fd: i32, buf: *const u8, count: usize) -> isize;
    fn _exit(status: i32) -> !;
}

extern "C" fn on_sigint(_: i32) {
    // Only async-signal-safe calls here: write(2) and _exit(2).
    if let Some(note) = NOTE.get() {
        // SAFETY: the buffer is a static the handler only reads.
        unsafe {
            write(2, note.as_ptr(), note.len());
        }
    }
    // SAFETY: ends the process at once, as the default action would.
    unsafe { _exit(INTERRUPTED_STATUS) }
}

/// From now on, Ctrl-C prints `note` (one line) before the process ends. Only the first note
/// of a process counts: one process runs one run.
pub fn say_on_interrupt(note: &str) {
    if NOTE.set(format!("\n{note}\n").into_bytes()).is_ok() {
        // SAFETY: installs a handler that only reads the note set above.
        unsafe {
            signal(SIGINT, on_sigint as *const () as usize);
        }
    }
}
