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

/// The steps of `fuzz/fuzz_targets/python_calls.rs`: parse, then, when the text decodes, render
/// and decode again to the same text.
fn survives_the_fuzz_target(text: &str) {
    let _ = parse(text);
    if let Ok(calls) = decode(text) {
        let rendered = render_calls(&calls);
        let again =
            decode(&rendered).unwrap_or_else(|e| panic!("{rendered:?} does not decode: {e}"));
        assert_eq!(render_calls(&again), rendered);
    }
}

/// The input that crashed the `python_calls` fuzz target: a number followed by a two-byte
/// letter (U+062B), which the decoder's error message cut inside the letter.
#[test]
fn fuzz_crash_number_before_a_multi_byte_letter() {
    let text = std::str::from_utf8(b"7\xd8\xab[: ").unwrap();
    survives_the_fuzz_target(text);
    assert!(decode(text).is_err());
}

/// Integer arithmetic that leaves 64 bits is refused, not a panic: `i64::MIN // -1` overflowed
/// inside `div_euclid`.
#[test]
fn integer_division_past_64_bits_is_refused() {
    for text in [
        "[f(a=(-9223372036854775807-1)//-1)]",
        "[f(a=(-9223372036854775807-1)%-1)]",
    ] {
        survives_the_fuzz_target(text);
        let error = decode(text).unwrap_err();
        assert!(error.contains("overflow"), "{text}: {error}");
    }
    let call = &decode("[f(a=-7//2, b=7%-3)]").unwrap()[0];
    assert_eq!(call.argument("a"), Some(&PyValue::Int(-4)));
    assert_eq!(call.argument("b"), Some(&PyValue::Int(-2)));
}

/// A repeated string is built only up to a bound: `'x' * 9223372036854775807` asked for more
/// memory than exists.
#[test]
fn a_huge_string_repetition_is_refused() {
    let text = "[f(a='x'*9223372036854775807)]";
    survives_the_fuzz_target(text);
    assert!(decode(text).unwrap_err().contains("too long"));
    assert_eq!(
        decode("[f(a=3*'ab')]").unwrap()[0].argument("a"),
        Some(&PyValue::Str("ababab".into()))
    );
}

/// Rendered calls are Python source that decodes to the same values, also where Python's
/// `repr` is not source: infinities, NaN, the smallest integer and a callee without a name.
#[test]
fn values_without_a_literal_render_as_source_that_decodes_back() {
    for (text, rendered) in [
        ("[f(a=1e400, b=-1e400)]", "[f(a=1e309, b=-1e309)]"),
        ("[f(a=1e400-1e400)]", "[f(a=(1e309-1e309))]"),
        (
            "[f(a=[-9223372036854775807-1])]",
            "[f(a=[(-9223372036854775807-1)])]",
        ),
        ("[(1)(a=1)]", "[(None)(a=1)]"),
    ] {
        survives_the_fuzz_target(text);
        assert_eq!(render_calls(&decode(text).unwrap()), rendered);
    }
    let calls = decode("[f(a=1e400, b=-9223372036854775807-1)]").unwrap();
    assert_eq!(calls[0].argument("a"), Some(&PyValue::Float(f64::INFINITY)));
    assert_eq!(calls[0].argument("b"), Some(&PyValue::Int(i64::MIN)));
    assert_eq!(calls[0].argument("a").unwrap().repr(), "inf");
    assert_eq!(decode("[(1)(a=1)]").unwrap()[0].name, "");
}

/// A negative exponent is not cut to 32 bits: `2 ** -4294967296` is 0.0 in Python, not 1.0.
#[test]
fn negative_powers_keep_their_exponent() {
    let call = &decode("[f(a=2**-4294967296, b=2**-2)]").unwrap()[0];
    assert_eq!(call.argument("a"), Some(&PyValue::Float(0.0)));
    assert_eq!(call.argument("b"), Some(&PyValue::Float(0.25)));
    assert!(decode("[f(a=0**-1)]").unwrap_err().contains("zero"));
}
