//! The judge's laws parsed from TOML, refused, or judged against small transcripts.

use super::*;
use crate::harness::backend::{FinishReason, GenMetrics};
use crate::harness::transcript::{CallRecord, Round, RunMetrics, StopReason};
use serde::Deserialize;
use serde_json::json;

pub(super) fn call(name: &str, arguments: Value, result: &str) -> CallRecord {
    CallRecord {
        name: name.into(),
        raw_arguments: arguments.clone(),
        arguments,
        repairs: vec![],
        result: result.into(),
        is_error: false,
        truncated_chars: 0,
        meta: Value::Null,
        approved: None,
    }
}

pub(super) fn transcript(calls: Vec<CallRecord>, reply: &str) -> Transcript {
    Transcript {
        rounds: vec![Round {
            raw: String::new(),
            finish: FinishReason::Eos,
            metrics: GenMetrics::default(),
            calls,
            prose: reply.into(),
            repairs: vec![],
            problems: vec![],
            reask: None,
            user: None,
        }],
        reply: reply.into(),
        stop: StopReason::Answered,
        loaded_skills: vec![],
        metrics: RunMetrics::default(),
    }
}

fn laws(toml_text: &str) -> Vec<Law> {
    #[derive(Deserialize)]
    struct Pack {
        laws: Vec<Law>,
    }
    toml::from_str::<Pack>(toml_text).expect("laws parse").laws
}

/// The problem that refuses the pack's one law, as a pack's loader reports it.
fn law_problem(toml_text: &str) -> String {
    let mut table: toml::Table = toml::from_str(toml_text).expect("toml parses");
    let Some(toml::Value::Array(laws)) = table.remove("laws") else {
        panic!("no [[laws]] in {toml_text}");
    };
    let law = laws.into_iter().next().expect("one law");
    law.try_into::<Law>()
        .expect_err(toml_text)
        .message()
        .to_string()
}

fn sample(value: Value) -> Map<String, Value> {
    value.as_object().expect("sample is an object").clone()
}

fn weather_transcript(location: &str, reply: &str) -> Transcript {
    transcript(
        vec![call(
            "weather_lookup",
            json!({ "location": location }),
            "Paris, France\n21.6°C, light rain\nhumidity 80%",
        )],
        reply,
    )
}

#[test]
fn parses_the_documented_toml_shape() {
    let parsed = laws(
        r#"
        [[laws]]
        name = "calls-weather-with-place-as-written"
        kind = "argument_equals_field"
        tool = "weather_lookup"
        argument = "location"
        field = "location"
        fold = true
        categories = ["plain_city", "city_country"]
        "#,
    );
    assert_eq!(parsed[0].name, "calls-weather-with-place-as-written");
    assert_eq!(
        parsed[0].categories,
        Some(vec!["plain_city".to_string(), "city_country".to_string()])
    );
    assert_eq!(
        *parsed[0].check(),
        Check::ArgumentEqualsField {
            tool: "weather_lookup".into(),
            argument: "location".into(),
            field: "location".into(),
            fold: true,
            calls: CallQuantifier::Any,
        }
    );
}

#[test]
fn a_misspelt_key_is_refused_with_the_law_name() {
    #[derive(Debug, Deserialize)]
    struct Pack {
        #[allow(dead_code)]
        laws: Vec<Law>,
    }
    let error = toml::from_str::<Pack>(
        r#"
        [[laws]]
        name = "mentions-city"
        kind = "reply_contains"
        text = "Paris"
        fodl = true
        "#,
    )
    .unwrap_err()
    .to_string();
    assert!(error.contains("mentions-city"), "{error}");
    assert!(error.contains("fodl"), "{error}");
}

#[test]
fn parsing_refuses_laws_that_cannot_fail() {
    let cases = [
        (
            "kind = \"reply_matches\"\npattern = \".*\"",
            "matches any text",
        ),
        (
            "kind = \"reply_matches\"\npattern = \"^\"",
            "matches any text",
        ),
        (
            "kind = \"reply_matches\"\npattern = \"(?s).*\"",
            "matches any text",
        ),
        (
            "kind = \"reply_not_matches\"\npattern = \"a|\"",
            "matches any text",
        ),
        (
            "kind = \"argument_matches\"\ntool = \"t\"\nargument = \"a\"\npattern = \"\"",
            "empty pattern",
        ),
        ("kind = \"reply_contains\"\ntext = \"\"", "empty"),
        (
            "kind = \"reply_contains\"\ntext = \"?!\"\nfold = true",
            "empty",
        ),
        (
            "kind = \"reply_contains\"\ntext = \"a\"\nfield = \"b\"",
            "exactly one",
        ),
        ("kind = \"call_count\"\nmin = 0", "any count passes"),
        (
            "kind = \"call_count\"\nmin = 0\nmax = 4294967295",
            "any count passes",
        ),
        (
            "kind = \"reply_not_matches\"\npattern = \"$a\"",
            "matches no text",
        ),
        (
            "kind = \"reply_matches\"\npattern = \"$a\"",
            "matches no text",
        ),
        ("kind = \"call_count\"", "any count passes"),
        ("kind = \"call_count\"\nmin = 3\nmax = 1", "exceeds"),
        (
            "kind = \"tool_called\"\ntool = \"t\"\ncategories = []",
            "applies nowhere",
        ),
        (
            "kind = \"stop_reason_is\"\nreason = \"finished\"",
            "unknown stop reason",
        ),
        (
            "kind = \"reply_mentions_tool_value\"\nfrom_result_line = 0",
            "counts from 1",
        ),
        (
            "kind = \"reply_mentions_tool_value\"\nfrom_result_pattern = \"temp\"",
            "capture group",
        ),
        (
            "kind = \"no_unsupported_numbers\"\nfollowed_by = []",
            "empty",
        ),
        (
            "kind = \"reply_matches\"\npattern = \"(\"",
            "field `pattern`: bad pattern: ",
        ),
    ];
    for (body, expected) in cases {
        let error = law_problem(&format!("[[laws]]\nname = \"the-law\"\n{body}"));
        assert!(error.starts_with("law `the-law`: "), "{body}: {error}");
        assert!(error.contains(expected), "{body}: {error}");
    }
}

#[test]
fn parsing_accepts_ordinary_patterns() {
    let parsed = laws(
        r#"
        [[laws]]
        name = "no-apology"
        kind = "reply_not_matches"
        pattern = "(?i)sorry"
        [[laws]]
        name = "a-number"
        kind = "reply_matches"
        pattern = "\\d+"
        "#,
    );
    assert_eq!(parsed.len(), 2);
}

#[test]
fn argument_equals_field_folds_case_and_punctuation() {
    let parsed = laws(
        r#"
        [[laws]]
        name = "place-as-written"
        kind = "argument_equals_field"
        tool = "weather_lookup"
        argument = "location"
        field = "location"
        fold = true
        "#,
    );
    let city = sample(json!({ "location": "Saint-Denis, Réunion" }));
    let good = weather_transcript("saint denis  réunion", "ok");
    let bad = weather_transcript("Saint-Denis", "ok");
    assert!(judge(&parsed, "plain_city", &city, "", &good).passed);
    let judgement = judge(&parsed, "plain_city", &city, "", &bad);
    assert_eq!(judgement.failed, vec!["place-as-written".to_string()]);
    assert_eq!(judgement.applied, 1);
}

#[test]
fn scope_keys_select_the_samples_a_law_applies_to() {
    let parsed = laws(
        r#"
        [[laws]]
        name = "no-tools"
        kind = "tool_not_called"
        categories = ["chitchat", "refusal"]
        except_categories = ["refusal"]
        [[laws]]
        name = "uses-place"
        kind = "tool_called"
        tool = "weather_lookup"
        when_field = "location"
        "#,
    );
    let with_place = sample(json!({ "location": "Oslo" }));
    let without_place = sample(json!({ "location": null }));
    let called = weather_transcript("Oslo", "ok");
    assert_eq!(
        judge(&parsed, "chitchat", &with_place, "", &called).applied,
        2
    );
    assert_eq!(
        judge(&parsed, "refusal", &with_place, "", &called).applied,
        1
    );
    let judgement = judge(&parsed, "chitchat", &without_place, "", &called);
    assert_eq!(
        (judgement.applied, judgement.failed.clone()),
        (1, vec!["no-tools".to_string()])
    );
}

#[test]
fn call_count_and_tool_not_called_without_a_tool_count_every_call() {
    let parsed = laws(
        r#"
        [[laws]]
        name = "at-most-one-call"
        kind = "call_count"
        max = 1
        [[laws]]
        name = "no-calls"
        kind = "tool_not_called"
        "#,
    );
    let two_calls = transcript(
        vec![call("a", json!({}), ""), call("b", json!({}), "")],
        "done",
    );
    let none = transcript(vec![], "done");
    let empty = Map::new();
    assert_eq!(
        judge(&parsed, "c", &empty, "", &two_calls).failed,
        vec!["at-most-one-call".to_string(), "no-calls".to_string()]
    );
    assert!(judge(&parsed, "c", &empty, "", &none).passed);
}

#[test]
fn every_quantifier_needs_all_calls_to_match() {
    let parsed = laws(
        r#"
        [[laws]]
        name = "celsius-always"
        kind = "argument_equals"
        tool = "weather_lookup"
        argument = "unit"
        value = "celsius"
        calls = "every"
        "#,
    );
    let mixed = transcript(
        vec![
            call("weather_lookup", json!({"unit": "celsius"}), ""),
            call("weather_lookup", json!({"unit": "fahrenheit"}), ""),
        ],
        "",
    );
    let empty = Map::new();
    assert!(!judge(&parsed, "c", &empty, "", &mixed).passed);
    assert!(!judge(&parsed, "c", &empty, "", &transcript(vec![], "")).passed);
}

#[test]
fn argument_equals_compares_numbers_by_value() {
    let parsed = laws(
        "[[laws]]\nname = \"days\"\nkind = \"argument_equals\"\ntool = \"forecast\"\nargument = \"days\"\nvalue = 3",
    );
    let empty = Map::new();
    let as_float = transcript(vec![call("forecast", json!({"days": 3.0}), "")], "");
    let as_text = transcript(vec![call("forecast", json!({"days": "3"}), "")], "");
    let wrong = transcript(vec![call("forecast", json!({"days": 4}), "")], "");
    assert!(judge(&parsed, "c", &empty, "", &as_float).passed);
    assert!(judge(&parsed, "c", &empty, "", &as_text).passed);
    assert!(!judge(&parsed, "c", &empty, "", &wrong).passed);
}

#[test]
fn words_that_parse_as_floats_compare_as_text() {
    let parsed = laws(
        "[[laws]]\nname = \"place\"\nkind = \"argument_equals_field\"\ntool = \"weather_lookup\"\nargument = \"location\"\nfield = \"location\"",
    );
    let nan = sample(json!({ "location": "Nan" }));
    let inf = sample(json!({ "location": "inf" }));
    let t = weather_transcript("Nan", "ok");
    assert!(judge(&parsed, "c", &nan, "", &t).passed);
    assert!(
        !judge(
            &parsed,
            "c",
            &inf,
            "",
            &weather_transcript("infinity", "ok")
        )
        .passed
    );
}

#[test]
fn reply_laws_read_text_fields_and_patterns() {
    let parsed = laws(
        r#"
        [[laws]]
        name = "names-city"
        kind = "reply_contains"
        field = "location"
        fold = true
        [[laws]]
        name = "gives-celsius"
        kind = "reply_matches"
        pattern = "\\d+(\\.\\d+)?\\s*°C"
        [[laws]]
        name = "no-apology"
        kind = "reply_not_matches"
        pattern = "(?i)sorry"
        "#,
    );
    let paris = sample(json!({ "location": "PARIS" }));
    let good = weather_transcript("Paris", "In Paris it is 21.6 °C.");
    let bad = weather_transcript("Paris", "Sorry, Parisians: 21.6 degrees.");
    assert!(judge(&parsed, "c", &paris, "", &good).passed);
    // Folded containment is whole-word: "Parisians" does not name Paris.
    assert_eq!(
        judge(&parsed, "c", &paris, "", &bad).failed,
        vec!["names-city", "gives-celsius", "no-apology"]
    );
}

#[test]
fn a_missing_sample_field_fails_the_law_and_is_reported_by_check_sample() {
    let parsed =
        laws("[[laws]]\nname = \"names-city\"\nkind = \"reply_contains\"\nfield = \"location\"");
    let empty = Map::new();
    let t = weather_transcript("Paris", "Paris");
    assert!(!judge(&parsed, "c", &empty, "", &t).passed);
    let error = check_sample(&parsed, "c", &empty).unwrap_err();
    assert!(
        error.contains("names-city") && error.contains("location"),
        "{error}"
    );
    assert_eq!(
        check_sample(&parsed, "c", &sample(json!({"location": "Paris"}))),
        Ok(())
    );
}

#[test]
fn reply_mentions_tool_value_by_line_and_by_capture() {
    let parsed = laws(
        r#"
        [[laws]]
        name = "echoes-first-line"
        kind = "reply_mentions_tool_value"
        tool = "weather_lookup"
        from_result_line = 1
        fold = true
        [[laws]]
        name = "echoes-temperature"
        kind = "reply_mentions_tool_value"
        from_result_pattern = "(-?\\d+(?:\\.\\d+)?)°C"
        "#,
    );
    let empty = Map::new();
    let good = weather_transcript("Paris", "Paris (France): 21.6 degrees, light rain.");
    let no_temperature = weather_transcript("Paris", "Paris, France: mild.");
    let no_call = transcript(vec![], "Paris, France: 21.6");
    assert!(judge(&parsed, "c", &empty, "", &good).passed);
    assert_eq!(
        judge(&parsed, "c", &empty, "", &no_temperature).failed,
        vec!["echoes-temperature"]
    );
    assert_eq!(judge(&parsed, "c", &empty, "", &no_call).failed.len(), 2);
}

#[test]
fn no_unsupported_numbers_checks_reply_numbers_against_results_and_prompt() {
    let all_numbers = laws("[[laws]]\nname = \"grounded\"\nkind = \"no_unsupported_numbers\"");
    let degrees_rounded = laws(
        "[[laws]]\nname = \"grounded\"\nkind = \"no_unsupported_numbers\"\nfollowed_by = [\"°\", \"degrees\"]\nallow_rounding = true",
    );
    let empty = Map::new();
    let prompt = "Weather in Paris for the next 3 days?";
    let verdict = |laws: &[Law], reply: &str| {
        judge(
            laws,
            "c",
            &empty,
            prompt,
            &weather_transcript("Paris", reply),
        )
        .passed
    };

    assert!(verdict(&all_numbers, "Next 3 days: 21.6°C, humidity 80%."));
    assert!(!verdict(&all_numbers, "Next 3 days: 22°C."));
    assert!(!verdict(&all_numbers, "It is -21.6°C."), "the sign matters");
    assert!(
        verdict(&degrees_rounded, "About 22 degrees, 5 km/h wind."),
        "rounded, wind unchecked"
    );
    assert!(!verdict(&degrees_rounded, "About 25°."));
    assert!(
        verdict(&all_numbers, "Ranges of 21.6-80 happen."),
        "a range dash is not a minus"
    );
}

#[test]
fn stop_reason_and_gaps() {
    let parsed =
        laws("[[laws]]\nname = \"answers\"\nkind = \"stop_reason_is\"\nreason = \"answered\"");
    let empty = Map::new();
    let mut t = weather_transcript("Paris", "ok");
    assert!(judge(&parsed, "c", &empty, "", &t).passed);
    assert!(!has_fixture_gap(&t));
    t.stop = StopReason::RoundBudget;
    t.rounds[0].calls[0].meta = json!({ "gap": true });
    assert!(!judge(&parsed, "c", &empty, "", &t).passed);
    assert!(has_fixture_gap(&t));
}

#[test]
fn a_failure_fixed_in_the_first_round_outlives_a_gap() {
    let parsed = laws(
        "[[laws]]\nname = \"as-written\"\nkind = \"argument_equals_field\"\ntool = \"weather_lookup\"\nargument = \"location\"\nfield = \"location\"\n\n[[laws]]\nname = \"mentions\"\nkind = \"reply_contains\"\ntext = \"Paris\"",
    );
    let fields = sample(json!({"location": "Paris"}));
    // Asked for the wrong place before any answer: that failure is the model's, gap or not.
    let mut wrong = weather_transcript("Lyon", "no idea");
    wrong.rounds[0].calls[0].meta = json!({"gap": true});
    let j = judge(&parsed, "c", &fields, "", &wrong);
    assert!(failed_before_any_answer(
        &parsed, &j, "c", &fields, "", &wrong
    ));
    // Asked right, failed only in the reply: the missing answer may be why.
    let mut right = weather_transcript("Paris", "no idea");
    right.rounds[0].calls[0].meta = json!({"gap": true});
    let j = judge(&parsed, "c", &fields, "", &right);
    assert!(!j.passed);
    assert!(!failed_before_any_answer(
        &parsed, &j, "c", &fields, "", &right
    ));
}

#[test]
fn laws_round_trip_through_serde() {
    let parsed = laws(
        "[[laws]]\nname = \"n\"\nkind = \"call_count\"\ntool = \"t\"\nmin = 1\nexcept_categories = [\"x\"]",
    );
    let json = serde_json::to_value(&parsed[0]).unwrap();
    assert_eq!(json["kind"], "call_count");
    assert_eq!(serde_json::from_value::<Law>(json).unwrap(), parsed[0]);
}

fn report_transcript(reply: &str) -> Transcript {
    transcript(
        vec![call(
            "weather_lookup",
            json!({ "location": "Oslo" }),
            "Oslo, Norway\nNow: 12°C / 54°F, Overcast, humidity 70%\n\
             2026-05-15 (today): 8–14°C / 46–57°F, Overcast\n\
             2026-05-16 (tomorrow): 5–9°C / 41–48°F, Light rain",
        )],
        reply,
    )
}

#[test]
fn reply_reports_result_reads_temperatures_and_facts_of_the_asked_lines() {
    let parsed = laws(
        r#"
        [[laws]]
        name = "reports"
        kind = "reply_reports_result"
        success_pattern = '(?m)^Now: '
        facts = ['^\d{4}-\d{2}-\d{2}[^:]*: [^,]*, ([A-Za-z ]+)$']
        weak_words = ["light"]
        lines_field = "day"
        "#,
    );
    let tomorrow = sample(json!({ "day": ["tomorrow"] }));
    let verdict =
        |reply: &str| judge(&parsed, "c", &tomorrow, "", &report_transcript(reply)).passed;
    assert!(verdict("Tomorrow: 9°C."));
    assert!(verdict("Rainy tomorrow."), "a word of the phrase, -y form");
    assert!(
        verdict("It will be raining."),
        "a word of the phrase, -ing form"
    );
    assert!(!verdict("Light clothes will do."), "a weak word alone");
    assert!(
        !verdict("It is 12°C and overcast."),
        "only the Now and today lines hold these"
    );
    assert!(!verdict("Tomorrow: 9°F."), "the unit must agree");
    let failed_lookup = transcript(
        vec![call(
            "weather_lookup",
            json!({}),
            "No such place: \"Oslo\". wttr.in does not know it.",
        )],
        "9°C",
    );
    assert!(!judge(&parsed, "c", &tomorrow, "", &failed_lookup).passed);
}

#[test]
fn temperature_laws_follow_the_one_rule() {
    let parsed = laws(
        r#"
        [[laws]]
        name = "grounded"
        kind = "no_unsupported_temperatures"
        success_pattern = '(?m)^Now: '
        allow_rounding = true
        [[laws]]
        name = "in-unit"
        kind = "reply_temperature_in_field_unit"
        field = "unit"
        [[laws]]
        name = "none"
        kind = "reply_has_no_temperature"
        "#,
    );
    let fahrenheit = sample(json!({ "unit": "F" }));
    let failed =
        |reply: &str| judge(&parsed, "c", &fahrenheit, "", &report_transcript(reply)).failed;
    assert_eq!(failed("It is 54 F."), vec!["none"]);
    assert_eq!(failed("It is 54 degrees."), vec!["in-unit", "none"]);
    assert_eq!(failed("It is 54C."), vec!["grounded", "in-unit", "none"]);
    assert_eq!(failed("It is 15 °F, 2026."), vec!["grounded", "none"]);
    assert_eq!(failed("Overcast."), vec!["in-unit"]);
}

#[test]
fn reply_matches_with_unless() {
    let parsed = laws(
        "[[laws]]\nname = \"refuses\"\nkind = \"reply_matches\"\npattern = \"(?i)not found\"\nunless = \"(?i)probably\"",
    );
    let empty = Map::new();
    let verdict = |reply: &str| judge(&parsed, "c", &empty, "", &transcript(vec![], reply)).passed;
    assert!(verdict("Narnia was not found."));
    assert!(!verdict("Narnia was not found, probably sunny there."));
    assert!(!verdict("Narnia is lovely."));
}
