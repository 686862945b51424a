//! Everything skilleval prints on stdout goes through here. Once the reader has gone
//! (`skilleval report … | head -1`), the rest is dropped: the command still finishes its work
//! (a recording, a merged folder, the stubs) and exits with its own status, where a failed
//! `println!` would have ended it midway. Any other failed write (a full disk, `> /dev/full`)
//! loses output the user asked for: the command finishes its work, then [`lost_output`] makes
//! its exit an error.

use std::io::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

static READER_GONE: AtomicBool = AtomicBool::new(false);
/// The first write error that was not a closed pipe.
static FAILED: Mutex<Option<String>> = Mutex::new(None);

/// Writes `text` to stdout, or drops it once a write has failed (the pipe's reader closed it,
/// or the file cannot take more).
pub fn print(text: std::fmt::Arguments) {
    if READER_GONE.load(Ordering::Relaxed) {
        return;
    }
    if let Err(e) = std::io::stdout().lock().write_fmt(text) {
        gone(&e);
    }
}

fn gone(error: &std::io::Error) {
    READER_GONE.store(true, Ordering::Relaxed);
    if error.kind() != std::io::ErrorKind::BrokenPipe {
        let mut failed = FAILED.lock().unwrap_or_else(|e| e.into_inner());
        failed.get_or_insert_with(|| error.to_string());
    }
}

/// Flushes stdout; then why output was lost, when a write failed for another reason than a
/// closed pipe (which stays quiet, as documented).
pub fn lost_output() -> Option<String> {
    if !READER_GONE.load(Ordering::Relaxed) {
        if let Err(e) = std::io::stdout().lock().flush() {
            gone(&e);
        }
    }
    FAILED.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// `println!` on stdout through [`print`].
#[macro_export]
macro_rules! outln {
    () => {
        $crate::base::stdout::print(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::base::stdout::print(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `print!` on stdout through [`print`].
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::base::stdout::print(format_args!($($arg)*))
    };
}
