//! `skilleval chat --pack weather` on the real default model offers the pack's weather_lookup and
//! answers its call from the pack's fixtures.

mod common;

use serde_json::Value;

#[test]
#[cfg_attr(not(feature = "full-tier"), ignore = "full tier")]
fn chat_with_a_pack_calls_weather_lookup_and_gets_the_recorded_answer() {
    let _turn = common::model::turn();
    common::model::model_path();
    // Greedy (chat's default temperature), so the same call every time on the default model.
    let output = common::cli::skilleval(&[
        "chat",
        "--pack",
        "weather",
        "--prompt",
        "how cold is it in berlin today",
        "--json",
    ]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let transcript: Value = serde_json::from_str(&stdout).expect("--json prints the transcript");
    let calls: Vec<&Value> = transcript["rounds"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r["calls"].as_array().unwrap())
        .collect();
    let call = calls
        .iter()
        .find(|c| c["name"] == "weather_lookup")
        .unwrap_or_else(|| panic!("no weather_lookup call in {stdout}"));
    let location = call["arguments"]["location"].as_str().unwrap_or_default();
    assert!(location.to_lowercase().contains("berlin"), "{call}");
    // The answer came from a fixture of the pack, not from a gap or the network.
    assert_eq!(call["is_error"], false, "{call}");
    assert!(
        call["result"]
            .as_str()
            .unwrap()
            .starts_with("Berlin, Germany\nNow: "),
        "{call}"
    );
    let fixture = call["meta"]["fixture"].as_str().unwrap_or_default();
    assert!(fixture.contains("fixtures/weather/berlin"), "{call}");
}

/// Truth: the transcript's own stop. A chat whose loop stopped on an error (here a prompt longer
/// than the context) shows the transcript and exits 1, so a script never reads it as a reply.
#[test]
#[cfg_attr(not(feature = "full-tier"), ignore = "full tier")]
fn a_chat_that_stops_on_an_error_exits_non_zero() {
    let _turn = common::model::turn();
    common::model::model_path();
    let long = "tide ".repeat(400);
    let output = common::cli::skilleval(&[
        "chat", "--pack", "weather", "--ctx", "256", "--prompt", &long,
    ]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("stop: error"), "{stdout}");
    assert_eq!(output.status.code(), Some(1), "{stdout}");
}
