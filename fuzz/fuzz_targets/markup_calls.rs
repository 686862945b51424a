//! The markup call grammar (`<function=name><parameter=…>…</parameter></function>`) on any
//! text a model could write: it may refuse, never panic.
#![no_main]

libfuzzer_sys::fuzz_target!(|text: &str| {
    let _ = skilleval::harness::toolcall::markup::parse(text);
    let _ = skilleval::harness::toolcall::parse(
        skilleval::harness::toolcall::CallFormat::Markup,
        text,
    );
});
