//! The markup call grammar (`<function=name><parameter=…>…</parameter></function>`) on any
//! text a model could write: it may refuse, never panic. The seed grammar's two readings get
//! the fuzzed text as a name and as a value: inside a closed block with a nested opener, the
//! first lowercase opener names the one call; an unclosed parameter leaves its call standing.
#![no_main]

use skilleval::harness::toolcall::markup;

libfuzzer_sys::fuzz_target!(|text: &str| {
    let _ = markup::parse(text);
    let _ = skilleval::harness::toolcall::parse(
        skilleval::harness::toolcall::CallFormat::Markup,
        text,
    );

    let plain = !text.contains(['<', '>']);
    let a_name = plain && !text.is_empty() && text.chars().count() <= 64
        && !text.contains(char::is_whitespace);
    let nested = format!("<function=a><function={text}><parameter=k>v</parameter></function>");
    let outcome = markup::parse(&nested);
    if a_name {
        assert_eq!(outcome.calls.len(), 1, "{nested:?}");
        assert_eq!(outcome.calls[0].name, "a", "{nested:?}");
        assert_eq!(outcome.calls[0].arguments["k"], "v", "{nested:?}");
    }
    let upper = format!("<FUNCTION=a><function={text}></function>");
    let outcome = markup::parse(&upper);
    if a_name {
        assert_eq!(outcome.calls.len(), 1, "{upper:?}");
        assert_eq!(outcome.calls[0].name, text, "{upper:?}");
    }

    let unclosed = format!("<function=f><parameter=a>1</parameter><parameter=k>{text}</function>");
    let outcome = markup::parse(&unclosed);
    if plain {
        assert_eq!(outcome.calls.len(), 1, "{unclosed:?}");
        assert_eq!(outcome.calls[0].arguments.len(), 1, "{unclosed:?}");
    }
});
