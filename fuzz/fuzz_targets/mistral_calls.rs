//! Mistral's `[TOOL_CALLS]` calls, with `<think>` blocks, on any text a model could write.
#![no_main]

libfuzzer_sys::fuzz_target!(|text: &str| {
    let _ = skilleval::harness::toolcall::mistral::parse(text);
    let _ = skilleval::harness::toolcall::parse(
        skilleval::harness::toolcall::CallFormat::Mistral,
        text,
    );
});
