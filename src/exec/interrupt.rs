//! What an interrupted run says on its way out. The journal is flushed after every unit, so
//! Ctrl-C loses at most the units running; without a word, though, the user cannot tell which
//! run to `--resume`. The note is set once the run folder exists; SIGINT then kills every
//! child process group still running (`base::child`), writes the note to stderr and ends the
//! process with status 130, as a shell expects of an interrupt.

/// From now on, Ctrl-C prints `note` (one line) before the process ends. Only the first note
/// of a process counts: one process runs one run.
pub fn say_on_interrupt(note: &str) {
    crate::base::child::say_on_interrupt(note);
}
