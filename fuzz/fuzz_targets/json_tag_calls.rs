//! The JSON-tag call grammar (`<tool_call>{…}</tool_call>`) on any text a model could write.
#![no_main]

libfuzzer_sys::fuzz_target!(|text: &str| {
    let _ = skilleval::harness::toolcall::json_tag::parse(text);
    let _ = skilleval::harness::toolcall::parse(
        skilleval::harness::toolcall::CallFormat::JsonTag,
        text,
    );
});
