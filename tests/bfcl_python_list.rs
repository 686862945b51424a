//! The Python call-list decoder, through the crate's public paths.

use skilleval::harness::toolcall::python_list::{decode, parse, render_calls, PyValue};

#[test]
fn decode_applies_bfcl_preprocessing() {
    // Backticks and newlines are trimmed and the brackets added.
    let calls = decode("```\nf(a=1), g(b='x')\n```").unwrap();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[1].argument("b"), Some(&PyValue::Str("x".into())));
    // A language tag after the fence is not trimmed, so the text is no longer a call list.
    assert!(decode("```python\n[f(a=1)]\n```").is_err());
    assert_eq!(decode("[]").unwrap(), vec![]);
    // The missing closing bracket is added; a repeated keyword keeps its last value.
    let calls = decode("[f(a=1, a=2)").unwrap();
    assert_eq!(calls[0].arguments, vec![("a".to_string(), PyValue::Int(2))]);
}

#[test]
fn decode_rejects_what_python_rejects() {
    for bad in [
        "[f(a=1)] [g(b=2)]",
        "I cannot help",
        "[f(a=01)]",
        "[1, f()]",
    ] {
        assert!(decode(bad).is_err(), "{bad} should not decode");
    }
}

#[test]
fn strings_escapes_and_numbers() {
    let calls = decode(r#"[f(a="x\ty\u00e9", b='''q"''', c=r'\d', d=1_000, e=0x10, f=1e3, g=-2.5, h=.5, i="a" "b")]"#).unwrap();
    let call = &calls[0];
    assert_eq!(call.argument("a"), Some(&PyValue::Str("x\tyé".into())));
    assert_eq!(call.argument("b"), Some(&PyValue::Str("q\"".into())));
    assert_eq!(call.argument("c"), Some(&PyValue::Str("\\d".into())));
    assert_eq!(call.argument("d"), Some(&PyValue::Int(1000)));
    assert_eq!(call.argument("e"), Some(&PyValue::Int(16)));
    assert_eq!(call.argument("f"), Some(&PyValue::Float(1000.0)));
    assert_eq!(call.argument("g"), Some(&PyValue::Float(-2.5)));
    assert_eq!(call.argument("h"), Some(&PyValue::Float(0.5)));
    assert_eq!(call.argument("i"), Some(&PyValue::Str("ab".into())));
}

#[test]
fn arithmetic_is_evaluated() {
    let call = &decode("[f(a=2*3, b=10**-1, c=7//2, d=-7%3)]").unwrap()[0];
    assert_eq!(call.argument("a"), Some(&PyValue::Int(6)));
    assert_eq!(call.argument("b"), Some(&PyValue::Float(0.1)));
    assert_eq!(call.argument("c"), Some(&PyValue::Int(3)));
    // `-7 % 3` parses as `(-7) % 3` in Python, which is 2.
    assert_eq!(call.argument("d"), Some(&PyValue::Int(2)));
}

#[test]
fn render_round_trips() {
    let text = "[f(a=1, b=2.0, c='it\\'s', d=[1, (2,)], e={'k': None}), m.g()]";
    let calls = decode(text).unwrap();
    assert_eq!(decode(&render_calls(&calls)).unwrap(), calls);
    assert_eq!(calls[1].name, "m.g");
}

#[test]
fn parse_finds_calls_in_prose() {
    let outcome = parse("Let me look that up.\n[get_weather(city=\"Paris\", days=3)]\nDone.");
    assert_eq!(outcome.calls.len(), 1);
    let call = &outcome.calls[0];
    assert_eq!(call.name, "get_weather");
    assert_eq!(call.arguments["days"], serde_json::json!(3));
    assert_eq!(call.raw, "get_weather(city=\"Paris\", days=3)");
    assert_eq!(outcome.prose, "Let me look that up.\n\nDone.");

    let nothing = parse("The list [1, 2] has no calls.");
    assert!(nothing.calls.is_empty());
    assert!(nothing.problems.is_empty());

    let broken = parse("[f(a=)]");
    assert!(broken.calls.is_empty());
    assert_eq!(broken.problems.len(), 1, "{:?}", broken.problems);
}
