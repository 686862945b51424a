//! The journal reader on any bytes, as a kill or a full disk may leave them: entries, a torn
//! last line, or an error naming a line; never a panic.
#![no_main]

use skilleval::eval::journal;

libfuzzer_sys::fuzz_target!(|bytes: &[u8]| {
    if let Ok((entries, torn)) = journal::parse(bytes) {
        if let Some(torn) = torn {
            assert!(torn.offset + torn.bytes <= bytes.len());
        }
        let _ = entries.len();
    }
});
