//! `pack.toml`: any text loads or is refused with a message; nothing panics.
#![no_main]

use std::path::Path;

use skilleval::eval::pack::Pack;

libfuzzer_sys::fuzz_target!(|text: &str| {
    let _ = Pack::parse(text, Path::new("fuzz/pack.toml"));
});
