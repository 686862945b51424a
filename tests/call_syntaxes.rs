//! The call syntaxes instruct models write natively, read from replies shaped as those models
//! write them (`tests/data/call_syntaxes.json`), and every parser run on arbitrary text.

use serde::Deserialize;
use serde_json::{json, Map, Value};
use skilleval::harness::toolcall::render::render_call;
use skilleval::harness::toolcall::{markup, parse, CallFormat};

#[derive(Deserialize)]
struct Case {
    format: CallFormat,
    shape: String,
    reply: String,
    calls: Vec<ExpectedCall>,
    prose: String,
}

#[derive(Deserialize)]
struct ExpectedCall {
    name: String,
    arguments: Map<String, Value>,
}

fn cases() -> Vec<Case> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/call_syntaxes.json");
    serde_json::from_str(&std::fs::read_to_string(path).expect("the table is readable"))
        .expect("the table is valid")
}

/// Truth: a person's labels — each reply in the table was written in the shape its model's own
/// chat template and model card show, and its calls and prose were written down by hand. The
/// rows whose shape starts with `seed grammar` are the seed README's own grammar examples, held
/// to the readings its grammar section states (before that reading, each ran no call).
#[test]
fn each_native_syntax_reads_as_its_models_write_it() {
    let cases = cases();
    for format in CallFormat::ALL {
        assert!(
            cases
                .iter()
                .any(|c| c.format == format && !c.calls.is_empty()),
            "{format:?} has no reply with a call in the table"
        );
    }
    for case in &cases {
        let outcome = parse(case.format, &case.reply);
        let calls: Vec<(&str, &Map<String, Value>)> = outcome
            .calls
            .iter()
            .map(|c| (c.name.as_str(), &c.arguments))
            .collect();
        let expected: Vec<(&str, &Map<String, Value>)> = case
            .calls
            .iter()
            .map(|c| (c.name.as_str(), &c.arguments))
            .collect();
        assert_eq!(calls, expected, "{}: {:?}", case.shape, outcome.problems);
        assert_eq!(outcome.prose, case.prose, "{}", case.shape);
    }
}

/// Truth: the templates themselves — each family's template names its syntax.
#[test]
fn the_syntax_is_picked_from_the_template() {
    let picks = [
        ("{%- if message.tool_calls %}[TOOL_CALLS]{{ tool_calls|tojson }}", Some(CallFormat::Mistral)),
        ("<tool_call>\\n{\"name\": \"{{ tool_call.name }}\"", Some(CallFormat::JsonTag)),
        ("{{- '<|python_tag|>' + tool_call.name }}", Some(CallFormat::LlamaJson)),
        ("<|start_header_id|>{{- '{\"name\": \"' + tool_call.name + '\", ' }}{{- '\"parameters\": ' }}", Some(CallFormat::LlamaJson)),
        ("wrapped in ```tool_code", Some(CallFormat::ToolCode)),
        ("<|im_start|>{{ message['role'] }}", None),
    ];
    for (template, format) in picks {
        assert_eq!(CallFormat::from_template(template), format, "{template}");
    }
}

/// A small deterministic generator, so that a failure names a seed that repeats it.
struct Draws(u64);

impl Draws {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

/// Pieces of every syntax, to build text that starts calls, breaks them and nests them.
const FRAGMENTS: &[&str] = &[
    "<tool_call>",
    "</tool_call>",
    "<function=",
    ">",
    "<parameter=",
    "</parameter>",
    "</function>",
    "<|python_tag|>",
    ".call(",
    "[TOOL_CALLS]",
    "[ARGS]",
    "[CALL_ID]",
    "```tool_code\n",
    "```",
    "print(",
    "<think>",
    "</think>",
    "{",
    "}",
    "[",
    "]",
    "(",
    ")",
    "\"name\": ",
    "\"parameters\": ",
    "\"arguments\": ",
    "\"f\"",
    ", ",
    ";",
    "=",
    "\"",
    "\\",
    "\n",
    " ",
    "x",
    "1",
    "é",
    "漢",
    "\u{0}",
];

/// Truth: a change — no parser may panic, and none may hand back more text than it was given.
#[test]
fn no_syntax_panics_on_arbitrary_text() {
    let mut draws = Draws(0x5eed_0063);
    for _ in 0..4000 {
        let len = draws.below(24);
        let text: String = (0..len).map(|_| draws.pick(FRAGMENTS)).collect();
        for format in CallFormat::ALL {
            let outcome = parse(format, &text);
            assert!(outcome.prose.len() <= text.len(), "{format:?}: {text:?}");
            assert!(
                outcome.calls.iter().all(|c| !c.name.is_empty()),
                "{format:?}: {text:?}"
            );
        }
    }
}

/// Truth: a change — a call the harness writes in a syntax (for a skill's examples, and for the
/// model's own calls in the history) reads back as the same call.
#[test]
fn every_native_syntax_reads_back_what_is_written_in_it() {
    let alphabet = [
        "a", "Z", "0", " ", "\"", "'", "\\", "\n", "{", "}", "[", "]", "(", ")", ",", ";", "=",
        "é", "漢",
    ];
    let mut draws = Draws(0x0063_5eed);
    for _ in 0..500 {
        let mut arguments = Map::new();
        for key in ["city", "note", "days", "metric", "tags"]
            .iter()
            .take(draws.below(6))
        {
            let text: String = (0..draws.below(12))
                .map(|_| draws.pick(&alphabet))
                .collect();
            let value = match draws.below(4) {
                0 => json!(text),
                1 => json!(draws.below(1000) as i64 - 500),
                2 => json!(draws.below(2) == 1),
                _ => json!([text, {"k": null}]),
            };
            arguments.insert(key.to_string(), value);
        }
        for format in [
            CallFormat::JsonTag,
            CallFormat::LlamaJson,
            CallFormat::Mistral,
            CallFormat::ToolCode,
            CallFormat::PythonList,
        ] {
            let written = render_call(format, "get_weather", &arguments);
            let outcome = parse(format, &written);
            assert_eq!(
                outcome.calls.len(),
                1,
                "{format:?}: {written}\n{:?}",
                outcome.problems
            );
            assert_eq!(outcome.calls[0].name, "get_weather");
            assert_eq!(
                outcome.calls[0].arguments, arguments,
                "{format:?}: {written}"
            );
            assert_eq!(outcome.prose, "", "{format:?}: {written}");
        }
    }
}

/// Truth: the seed README's grammar section, on generated names and values (the markup fuzz
/// target checks the same on libFuzzer's texts): in a closed block with a nested opener the
/// first lowercase `<function=` names the one call, and an unclosed parameter inside a closed
/// call leaves the call standing with its other arguments.
#[test]
fn the_seed_grammar_readings_hold_on_generated_text() {
    let mut draws = Draws(0x5eed_0064);
    let (mut names, mut values) = (0, 0);
    for _ in 0..4000 {
        let len = draws.below(8);
        let text: String = (0..len).map(|_| draws.pick(FRAGMENTS)).collect();
        let plain = !text.contains(['<', '>']);
        let a_name = plain
            && !text.is_empty()
            && text.chars().count() <= 64
            && !text.contains(char::is_whitespace);
        let nested = format!("<function=a><function={text}><parameter=k>v</parameter></function>");
        let upper = format!("<FUNCTION=a><function={text}></function>");
        if a_name {
            names += 1;
            let outcome = markup::parse(&nested);
            assert_eq!(outcome.calls.len(), 1, "{nested:?}: {:?}", outcome.problems);
            assert_eq!(outcome.calls[0].name, "a", "{nested:?}");
            assert_eq!(outcome.calls[0].arguments["k"], "v", "{nested:?}");
            let outcome = markup::parse(&upper);
            assert_eq!(outcome.calls.len(), 1, "{upper:?}");
            assert_eq!(outcome.calls[0].name, text, "{upper:?}");
        }
        let unclosed =
            format!("<function=f><parameter=a>1</parameter><parameter=k>{text}</function>");
        if plain {
            values += 1;
            let outcome = markup::parse(&unclosed);
            assert_eq!(
                outcome.calls.len(),
                1,
                "{unclosed:?}: {:?}",
                outcome.problems
            );
            assert_eq!(outcome.calls[0].arguments.len(), 1, "{unclosed:?}");
        }
    }
    assert!(
        names > 100 && values > 100,
        "{names} names, {values} values"
    );
}
