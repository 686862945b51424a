//! Llama 3.1's JSON calls (`{"name": …, "parameters": …}`, `<|python_tag|>`), with `<think>` blocks, on any text a model could write.
#![no_main]

libfuzzer_sys::fuzz_target!(|text: &str| {
    let _ = skilleval::harness::toolcall::llama_json::parse(text);
    let _ = skilleval::harness::toolcall::parse(
        skilleval::harness::toolcall::CallFormat::LlamaJson,
        text,
    );
});
