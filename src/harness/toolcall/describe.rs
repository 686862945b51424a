//! Spotting a reply that talks about calling a tool instead of calling it, and
//! the message that asks the model to make the call.

use std::ops::Range;
use std::sync::LazyLock;

use super::render::spelled_out_call;
use super::CallFormat;
use regex::Regex;

/// A verb that announces a call.
static INTENT_VERB: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(?:call|calling|invoke|invoking|use|using|run|running|execute|executing|query|querying|trigger|triggering)\b").unwrap()
});
/// Who is about to act: the model itself, or a modal that makes it a plan.
static SPEAKER_OR_PLAN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(?:i|i'll|i'd|i'm|let me|let's|we|we'll|will|shall|going to|need to|have to|should|must|now)\b").unwrap()
});
/// A call already made, or declined: the sentence reports rather than plans.
static REPORT_OR_REFUSAL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(?:called|used|ran|invoked|executed|queried|returned|according to|no need|not need|n't need|without)\b").unwrap()
});

/// The tool whose call `text` describes in prose (`I will call weather_lookup
/// with location Paris`, `weather_lookup(location: Paris)`) instead of making.
/// `tools` pairs each tool's name with its parameter names.
pub fn describes_call(text: &str, tools: &[(&str, Vec<String>)]) -> Option<String> {
    let mut earliest: Option<(usize, &str)> = None;
    for (tool, parameters) in tools {
        let Some(pattern) = whole_word(tool) else {
            continue;
        };
        let described = pattern
            .find_iter(text)
            .find(|mention| mention_describes_call(text, mention.range(), parameters));
        if let Some(mention) = described {
            if earliest.is_none_or(|(start, _)| mention.start() < start) {
                earliest = Some((mention.start(), tool));
            }
        }
    }
    earliest.map(|(_, tool)| tool.to_string())
}

/// A short message asking the model to make the call it described, spelling out the shape
/// with the tool's real parameter names (a placeholder would be copied into the call).
pub fn reask_message(tool: &str, parameters: &[String], format: CallFormat) -> String {
    format!(
        "You described a call to {tool} instead of making it. Reply with the call itself: {}.",
        spelled_out_call(format, tool, parameters)
    )
}

fn whole_word(name: &str) -> Option<Regex> {
    let first = name.chars().next()?;
    let last = name.chars().last()?;
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    let start = if is_word(first) { r"\b" } else { "" };
    let end = if is_word(last) { r"\b" } else { "" };
    Regex::new(&format!("(?i){start}{}{end}", regex::escape(name))).ok()
}

fn mention_describes_call(text: &str, mention: Range<usize>, parameters: &[String]) -> bool {
    let sentence = sentence_around(text, mention.clone());
    let before = &text[sentence.start..mention.start];
    let after = &text[mention.end..sentence.end];
    if REPORT_OR_REFUSAL.is_match(&text[sentence.clone()]) {
        return false;
    }
    written_like_a_call(before, after) || announced(before) || gives_an_argument(after, parameters)
}

/// `weather_lookup(location: Paris)`, perhaps with the name in backticks, or a
/// call in another format (`<function=weather_lookup>`, `"name": "weather_lookup"`).
fn written_like_a_call(before: &str, after: &str) -> bool {
    let quotes = ['`', '"', '\''];
    let opens_arguments = after
        .trim_start_matches(quotes)
        .trim_start()
        .starts_with('(');
    let named_by_a_key = before
        .trim_end_matches(quotes)
        .trim_end()
        .ends_with([':', '=']);
    opens_arguments || named_by_a_key
}

/// `I will call …`, `Let me use the …`, or an imperative `Use the … tool`.
fn announced(before: &str) -> bool {
    let Some(verb) = INTENT_VERB.find(before) else {
        return false;
    };
    let opens_sentence = before[..verb.start()].chars().all(|c| !c.is_alphanumeric());
    opens_sentence || SPEAKER_OR_PLAN.is_match(&before[..verb.start()])
}

/// `… with location Paris`, `… location: Paris`, `… "location": "Paris"`.
fn gives_an_argument(after: &str, parameters: &[String]) -> bool {
    parameters.iter().any(|parameter| {
        let escaped = regex::escape(parameter);
        let pattern =
            format!(r#"(?i)\bwith\s+(?:the\s+|a\s+)?{escaped}\b|\b{escaped}["'`]?\s*[:=]"#);
        Regex::new(&pattern).is_ok_and(|given| given.is_match(after))
    })
}

/// The sentence holding `mention`: sentences end at a line break or at
/// `.`, `!` or `?` followed by whitespace.
fn sentence_around(text: &str, mention: Range<usize>) -> Range<usize> {
    let ends_sentence = |index: usize, character: char| {
        character == '\n'
            || (matches!(character, '.' | '!' | '?')
                && text[index + character.len_utf8()..]
                    .chars()
                    .next()
                    .is_none_or(char::is_whitespace))
    };
    let start = text[..mention.start]
        .char_indices()
        .rev()
        .find(|&(index, character)| ends_sentence(index, character))
        .map_or(0, |(index, character)| index + character.len_utf8());
    let end = text[mention.end..]
        .char_indices()
        .find(|&(offset, character)| ends_sentence(mention.end + offset, character))
        .map_or(text.len(), |(offset, _)| mention.end + offset);
    start..end
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tools() -> Vec<(&'static str, Vec<String>)> {
        vec![
            (
                "weather_lookup",
                vec!["location".to_string(), "days".to_string()],
            ),
            ("send_email", vec!["to".to_string(), "body".to_string()]),
        ]
    }

    fn detect(text: &str) -> Option<String> {
        describes_call(text, &tools())
    }

    #[test]
    fn announced_call_is_detected() {
        assert_eq!(
            detect("I will call weather_lookup with location Paris.").as_deref(),
            Some("weather_lookup")
        );
        assert_eq!(
            detect("Let me use `send_email` to reach Bob.").as_deref(),
            Some("send_email")
        );
    }

    #[test]
    fn call_written_as_a_function_is_detected() {
        assert_eq!(
            detect("weather_lookup(location: Paris)").as_deref(),
            Some("weather_lookup")
        );
    }

    #[test]
    fn imperative_use_of_the_tool_is_detected() {
        assert_eq!(
            detect("Use the weather_lookup tool for Paris.").as_deref(),
            Some("weather_lookup")
        );
    }

    #[test]
    fn arguments_given_in_prose_are_detected() {
        assert_eq!(
            detect("Next: weather_lookup with location Paris and days 2").as_deref(),
            Some("weather_lookup")
        );
        assert_eq!(
            detect("{\"name\": \"send_email\", \"arguments\": {\"to\": \"bob\"}}").as_deref(),
            Some("send_email")
        );
    }

    #[test]
    fn call_in_another_format_is_detected() {
        assert_eq!(
            detect("<function=weather_lookup>\n<parameter=place>Paris</parameter>\n</function>")
                .as_deref(),
            Some("weather_lookup")
        );
        assert_eq!(
            detect("{\"name\": \"send_email\"}").as_deref(),
            Some("send_email")
        );
    }

    #[test]
    fn earliest_described_tool_is_named() {
        assert_eq!(
            detect("First I'll call send_email, then weather_lookup(location: Paris).").as_deref(),
            Some("send_email")
        );
    }

    #[test]
    fn plain_answer_is_not_detected() {
        assert_eq!(detect("It is 18°C and sunny in Paris today."), None);
        assert_eq!(detect("I will tell Bob the forecast: rain."), None);
    }

    #[test]
    fn reporting_a_past_call_is_not_detected() {
        assert_eq!(
            detect("I called weather_lookup and it says 18°C in Paris."),
            None
        );
        assert_eq!(
            detect("According to weather_lookup, Paris will see rain."),
            None
        );
    }

    #[test]
    fn declining_to_call_is_not_detected() {
        assert_eq!(
            detect("There is no need to call weather_lookup; you said it is sunny."),
            None
        );
    }

    #[test]
    fn naming_the_tool_to_the_user_is_not_detected() {
        assert_eq!(detect("You can use weather_lookup for other cities."), None);
        assert_eq!(detect("The weather_lookup tool covers Europe only."), None);
    }

    #[test]
    fn tool_name_inside_another_word_is_not_a_mention() {
        assert_eq!(
            detect("I will call my_weather_lookup_v2(location: Paris)"),
            None
        );
    }

    #[test]
    fn reask_spells_out_the_call_with_real_names_and_no_placeholder() {
        let location = vec!["location".to_string()];
        let markup = reask_message("weather_lookup", &location, CallFormat::Markup);
        assert!(markup.contains("weather_lookup instead of making it"));
        assert!(markup.contains("<function=weather_lookup>"), "{markup}");
        assert!(markup.contains("<parameter=location>"), "{markup}");
        let python = reask_message("weather_lookup", &location, CallFormat::PythonList);
        assert!(
            python.contains("weather_lookup( with location="),
            "{python}"
        );
        let json = reask_message("weather_lookup", &location, CallFormat::JsonTag);
        assert!(json.contains("\"name\": \"weather_lookup\""), "{json}");
        for text in [markup, python, json] {
            for placeholder in crate::harness::toolcall::render::PLACEHOLDERS {
                assert!(!text.contains(placeholder), "{placeholder:?} in {text}");
            }
        }
    }
}
