//! Everything skilleval prints on stdout goes through here. Once the reader has gone
//! (`skilleval report … | head -1`), the rest is dropped: the command still finishes its work
//! (a recording, a merged folder, the stubs) and exits with its own status, where a failed
//! `println!` would have ended it midway.

use std::io::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};

static READER_GONE: AtomicBool = AtomicBool::new(false);

/// Writes `text` to stdout, or drops it once a write has failed (the pipe's reader closed it).
pub fn print(text: std::fmt::Arguments) {
    if READER_GONE.load(Ordering::Relaxed) {
        return;
    }
    if std::io::stdout().lock().write_fmt(text).is_err() {
        READER_GONE.store(true, Ordering::Relaxed);
    }
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
