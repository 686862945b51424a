//! The call grammars judged by llama.cpp's own grammar engine on the default model's vocabulary:
//! every call the harness itself writes (`render_call`) passes token by token, and a call the
//! grammar is there to stop (a tool not offered, a value outside an `enum`, a parameter the tool
//! lacks, a number that is not one) is refused at some token.

use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::sampling::LlamaSampler;
use serde_json::{json, Map, Value};
use skilleval::harness::toolcall::grammar::{self, CallGrammar, OfferedTool};
use skilleval::harness::toolcall::render::render_call;
use skilleval::harness::toolcall::CallFormat;

mod common;

fn model() -> &'static LlamaModel {
    static MODEL: std::sync::OnceLock<(LlamaBackend, LlamaModel)> = std::sync::OnceLock::new();
    let (_, model) = MODEL.get_or_init(|| {
        let backend = LlamaBackend::init().expect("llama.cpp starts");
        let model = LlamaModel::load_from_file(
            &backend,
            common::model::model_path(),
            &LlamaModelParams::default(),
        )
        .expect("the default model loads");
        (backend, model)
    });
    model
}

fn tools() -> Vec<OfferedTool> {
    vec![
        OfferedTool {
            name: "load_skill".into(),
            parameters: json!({
                "type": "object",
                "properties": {"name": {"type": "string", "enum": ["weather", "unit-conversion"]}},
                "required": ["name"]
            }),
        },
        OfferedTool {
            name: "convert_units".into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "value": {"type": "number"},
                    "from_unit": {"type": "string"},
                    "to_unit": {"type": "string"},
                    "exact": {"type": "boolean"}
                },
                "required": ["value", "from_unit", "to_unit"]
            }),
        },
        OfferedTool {
            name: "list_files".into(),
            parameters: json!({"type": "object", "properties": {}}),
        },
    ]
}

/// Whether llama.cpp's lazy grammar takes `text` (prose, then calls) token by token.
fn accepts(grammar: &CallGrammar, text: &str) -> bool {
    let model = model();
    let mut sampler = LlamaSampler::grammar_lazy(
        model,
        &grammar.gbnf,
        "root",
        [grammar.trigger.as_bytes()],
        &[],
    )
    .unwrap_or_else(|e| panic!("llama.cpp refuses the grammar: {e}\n{}", grammar.gbnf));
    let tokens = model.vocab().tokenize(text.as_bytes(), false, false);
    tokens.iter().all(|&t| sampler.try_accept(t).is_ok())
}

fn call(format: CallFormat, name: &str, args: Value) -> String {
    let args: Map<String, Value> = args.as_object().unwrap().clone();
    render_call(format, name, &args)
}

#[test]
#[cfg_attr(not(feature = "full-tier"), ignore = "full tier")]
fn the_calls_the_harness_writes_pass_and_others_are_refused() {
    for format in [CallFormat::Markup, CallFormat::JsonTag] {
        let grammar = grammar::for_calls(format, &tools()).unwrap();
        let good = [
            call(format, "load_skill", json!({"name": "unit-conversion"})),
            call(
                format,
                "convert_units",
                json!({"value": 26.2, "from_unit": "miles", "to_unit": "km"}),
            ),
            call(
                format,
                "convert_units",
                json!({"value": -3, "from_unit": "°C", "to_unit": "°F", "exact": true}),
            ),
            call(format, "list_files", json!({})),
        ];
        for text in &good {
            assert!(accepts(&grammar, text), "{format:?} refuses {text}");
            // Prose before the call is the model's own; so is the line after it.
            let framed = format!("Let me check.\n{text}\nTool:");
            assert!(accepts(&grammar, &framed), "{format:?} refuses {framed}");
        }
        let two = format!("{}\n{}", good[0], good[1]);
        assert!(
            accepts(&grammar, &two),
            "{format:?} refuses two calls: {two}"
        );

        let bad = [
            call(format, "weather_lookup", json!({"location": "Oslo"})),
            call(format, "load_skill", json!({"name": "calculator"})),
            call(format, "load_skill", json!({"skill": "weather"})),
            call(
                format,
                "convert_units",
                json!({"value": "litres", "from_unit": "gallons", "to_unit": "litres"}),
            ),
            call(format, "convert_units", json!({"from_unit": "gallons"})),
        ];
        for text in &bad {
            assert!(!accepts(&grammar, text), "{format:?} takes {text}");
        }
        let two_lines = call(
            format,
            "convert_units",
            json!({"value": 3, "from_unit": "gallons\n3 US gallons ≈ 11.36 litres", "to_unit": "l"}),
        );
        // A markup value is one line; a JSON string may hold an escaped line break.
        let one_line_only = format == CallFormat::Markup;
        assert_eq!(
            !accepts(&grammar, &two_lines),
            one_line_only,
            "{format:?}: {two_lines}"
        );
    }
}

#[test]
#[cfg_attr(not(feature = "full-tier"), ignore = "full tier")]
fn before_a_call_opens_the_grammar_lets_anything_through() {
    let grammar = grammar::for_calls(CallFormat::Markup, &tools()).unwrap();
    assert!(accepts(
        &grammar,
        "Neil Armstrong, in 1969. <b>bold</b> {\"name\": 1}"
    ));
}
