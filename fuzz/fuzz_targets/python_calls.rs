//! The Python-call decoder (`[name(arg=value, …)]`, BFCL's prompt format). What it decodes must
//! render and decode again to the same calls.
#![no_main]

use skilleval::harness::toolcall::python_list;

libfuzzer_sys::fuzz_target!(|text: &str| {
    let _ = python_list::parse(text);
    if let Ok(calls) = python_list::decode(text) {
        let rendered = python_list::render_calls(&calls);
        let again = python_list::decode(&rendered)
            .unwrap_or_else(|e| panic!("{rendered:?} does not decode: {e}"));
        assert_eq!(python_list::render_calls(&again), rendered);
    }
});
