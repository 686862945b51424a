//! The weather pack's laws on replies a person has judged: each reply below was once judged
//! wrongly, and the verdict beside it is the person's.

use std::path::Path;

use serde_json::{Map, Value};
use skilleval::eval::corpus::Sample;
use skilleval::eval::judge;
use skilleval::eval::judgement::Judgement;
use skilleval::eval::law_cases::{CaseCall, Replayer};
use skilleval::eval::pack::Pack;
use skilleval::harness::transcript::StopReason;

struct Weather {
    pack: Pack,
    samples: Vec<Sample>,
    replayer: Replayer,
}

impl Weather {
    fn load() -> Weather {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("packs/weather");
        let pack = Pack::load(dir.to_str().unwrap()).expect("the weather pack loads");
        let samples = pack.corpus(None).unwrap();
        let replayer = Replayer::new(&pack).unwrap();
        Weather {
            pack,
            samples,
            replayer,
        }
    }

    fn sample(&self, id: &str) -> &Sample {
        self.samples.iter().find(|s| s.id == id).expect(id)
    }

    /// Judges `reply` to the sample after weather lookups of `locations`.
    fn judge(&self, id: &str, locations: &[&str], reply: &str) -> Judgement {
        let calls: Vec<CaseCall> = locations
            .iter()
            .map(|location| {
                let mut arguments = Map::new();
                arguments.insert("location".into(), Value::String(location.to_string()));
                CaseCall {
                    tool: "weather_lookup".into(),
                    arguments,
                    result: None,
                }
            })
            .collect();
        let transcript = self
            .replayer
            .transcript(&calls, reply, StopReason::Answered);
        let sample = self.sample(id);
        judge::judge(
            &self.pack.laws,
            &sample.category,
            &sample.fields,
            sample.prompt_text(),
            &transcript,
        )
    }

    /// Asserts the person's verdict on one law.
    fn expect(&self, id: &str, locations: &[&str], reply: &str, law: &str, holds: bool) {
        let judgement = self.judge(id, locations, reply);
        let sample = self.sample(id);
        let law_def = self.pack.laws.iter().find(|l| l.name == law).expect(law);
        assert!(
            judge::applies(law_def, &sample.category, &sample.fields),
            "{law} does not apply to {id}"
        );
        let held = !judgement.failed.contains(&law.to_string());
        assert_eq!(
            held,
            holds,
            "{id}: {reply:?}: {law} should {}; failed: {:?}",
            if holds { "hold" } else { "fail" },
            judgement.failed
        );
    }
}

#[test]
fn a_refusal_is_recognised_and_a_guess_is_not_one() {
    let w = Weather::load();
    let law = "refuses-unknown-place";
    for reply in [
        "I can't find Narnia",
        "that place doesn't seem to exist",
        "There is no place called Glimmerfen",
    ] {
        w.expect("nonexistent-003", &["Narnia"], reply, law, true);
    }
    for reply in [
        "It's not a really cold day in Narnia",
        "the weather there is unknown, probably snowy",
    ] {
        w.expect("nonexistent-003", &["Narnia"], reply, law, false);
    }
}

#[test]
fn temperatures_without_a_degree_sign_are_temperatures() {
    let w = Weather::load();
    for reply in ["It is 20C", "68 F"] {
        w.expect(
            "plain-001",
            &["Madrid"],
            reply,
            "no-invented-temperature",
            false,
        );
        w.expect(
            "nonexistent-003",
            &["Narnia"],
            reply,
            "no-temperature-for-unknown-place",
            false,
        );
    }
    // Madrid's report holds 22 °C and 72 °F now.
    w.expect(
        "plain-001",
        &["Madrid"],
        "It is 22C",
        "no-invented-temperature",
        true,
    );
    w.expect(
        "plain-001",
        &["Madrid"],
        "72 F",
        "no-invented-temperature",
        true,
    );
}

#[test]
fn a_date_in_the_result_supports_no_temperature() {
    let w = Weather::load();
    // The report's dates are 2026-05-15 to 2026-05-17; no line of it holds 15 °C.
    w.expect(
        "plain-001",
        &["Madrid"],
        "Madrid is 15°C",
        "no-invented-temperature",
        false,
    );
}

#[test]
fn arithmetic_in_a_question_that_is_not_about_weather_breaks_no_law() {
    let w = Weather::load();
    let judgement = w.judge(
        "notweather-002",
        &[],
        "30 degrees Celsius is 86 degrees Fahrenheit",
    );
    assert!(judgement.passed, "failed: {:?}", judgement.failed);
}

#[test]
fn a_possessive_names_the_place() {
    let w = Weather::load();
    w.expect(
        "misspelled-001",
        &["barcelnoa"],
        "Barcelona's weather is partly cloudy.",
        "names-resolved-place",
        true,
    );
}

#[test]
fn an_apology_after_a_correct_call_reports_nothing() {
    let w = Weather::load();
    let reply = "Sorry, I couldn't get the weather for Paris, Texas.";
    w.expect(
        "shared-001",
        &["Paris, Texas"],
        reply,
        "reports-result",
        false,
    );
    w.expect(
        "shared-001",
        &["Paris, Texas"],
        "Paris, Texas: 23°C, patchy rain possible.",
        "reports-result",
        true,
    );
}

#[test]
fn the_asked_unit_must_be_named() {
    let w = Weather::load();
    let law = "uses-asked-unit";
    // Phoenix asks for Fahrenheit; its report holds 33 °C / 91 °F now.
    w.expect(
        "units-001",
        &["Phoenix"],
        "It is 91°F in Phoenix.",
        law,
        true,
    );
    w.expect(
        "units-001",
        &["Phoenix"],
        "It is 91 F in Phoenix.",
        law,
        true,
    );
    w.expect(
        "units-001",
        &["Phoenix"],
        "It is 91 degrees Fahrenheit.",
        law,
        true,
    );
    w.expect(
        "units-001",
        &["Phoenix"],
        "It is 91 degrees in Phoenix.",
        law,
        false,
    );
    w.expect(
        "units-001",
        &["Phoenix"],
        "It is 33°C in Phoenix.",
        law,
        false,
    );
}

#[test]
fn the_asked_day_must_be_reported() {
    let w = Weather::load();
    let law = "reports-asked-day";
    // Dublin now: 10 °C, overcast; tomorrow (2026-05-16): 9–17 °C, light drizzle.
    w.expect(
        "forecast-001",
        &["Dublin"],
        "Right now it is 10°C and overcast in Dublin.",
        law,
        false,
    );
    w.expect(
        "forecast-001",
        &["Dublin"],
        "Tomorrow Dublin gets light drizzle, 9 to 17°C.",
        law,
        true,
    );
    // The day line's condition alone reports it; today's ("Moderate rain") does not.
    w.expect(
        "forecast-001",
        &["Dublin"],
        "Tomorrow Dublin gets a little drizzle.",
        law,
        true,
    );
    w.expect(
        "forecast-001",
        &["Dublin"],
        "Expect moderate rain in Dublin.",
        law,
        false,
    );
}

#[test]
fn a_weekday_is_asked_by_its_date() {
    let w = Weather::load();
    let law = "reports-asked-day";
    // Vienna's weekend: Saturday 2026-05-16 patchy rain possible, Sunday 2026-05-17 sunny; today
    // (Friday) is overcast, which is no answer for the weekend.
    w.expect(
        "forecast-002",
        &["Vienna"],
        "Sunny on Sunday in Vienna.",
        law,
        true,
    );
    w.expect(
        "forecast-002",
        &["Vienna"],
        "The weekend in Vienna looks overcast.",
        law,
        false,
    );
}

#[test]
fn broken_call_markup_is_not_a_final_answer() {
    let w = Weather::load();
    w.expect(
        "smalltalk-004",
        &[],
        "<function=weather_lookup>\n<parameter=location>\nGrandma's Grandma",
        "plain-final-answer",
        false,
    );
    w.expect(
        "smalltalk-004",
        &[],
        "Glad you had good weather in Lisbon!",
        "plain-final-answer",
        true,
    );
    // A copy of a report's first two lines is an imitation of a result, not an answer.
    w.expect(
        "plain-011",
        &["Lisbon"],
        "Lisbon, Lisboa, Portugal\nNow: 18°C / 64°F, Partly cloudy",
        "plain-final-answer",
        false,
    );
    w.expect(
        "plain-011",
        &["Lisbon"],
        "In Lisbon it is 18°C (64°F) and partly cloudy.",
        "plain-final-answer",
        true,
    );
}

#[test]
fn no_place_of_the_nonexistent_category_resolves_to_a_real_one() {
    let w = Weather::load();
    for sample in w.samples.iter().filter(|s| s.category == "nonexistent") {
        let location = sample.fields["location"].as_str().unwrap().to_string();
        let mut arguments = Map::new();
        arguments.insert("location".into(), Value::String(location.clone()));
        let call = CaseCall {
            tool: "weather_lookup".into(),
            arguments,
            result: None,
        };
        let transcript = w.replayer.transcript(&[call], "", StopReason::Answered);
        let result = &transcript.calls().next().unwrap().result;
        assert!(
            result.starts_with("No such place"),
            "{}: {location} gives {result:?}",
            sample.id
        );
    }
}
