//! `skilleval check`: every shipped pack's laws agree with its hand-labelled cases and every
//! sample can pass; mistakes in a cases file are named with the file and line.

mod common;

use std::path::{Path, PathBuf};

use skilleval::eval::law_cases::{self, CASES_FILE};
use skilleval::eval::pack::Pack;

use common::cli::{outcome, skilleval};
use common::scripted::copy_pack;

fn packs() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("packs");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .expect("packs folder")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("pack.toml").is_file())
        .collect();
    dirs.sort();
    dirs
}

#[test]
fn every_shipped_pack_judges_its_cases_as_the_person_did() {
    let dirs = packs();
    assert!(!dirs.is_empty(), "no pack under packs/");
    for dir in dirs {
        let pack = Pack::load(dir.to_str().unwrap()).expect("the pack loads");
        let report = law_cases::check(&pack).expect("the check runs");
        assert!(report.agrees(), "{}", report.render());
    }
}

#[test]
fn the_weather_pack_has_cases() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("packs/weather");
    let pack = Pack::load(dir.to_str().unwrap()).unwrap();
    let report = law_cases::check(&pack).unwrap();
    assert!(report.cases_file.is_some());
    assert!(report.cases >= 20, "{} cases", report.cases);
}

fn skilleval_check(pack: &Path) -> (i32, String, String) {
    outcome(&skilleval(&["check", "--pack", pack.to_str().unwrap()]))
}

#[test]
fn the_command_exits_0_when_all_agree() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("packs/weather");
    let (code, stdout, stderr) = skilleval_check(&dir);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("coverage: answers:"), "{stdout}");
}

/// A case of the mini pack: a lookup of Oslo Blindern, which its fixture reads as 11.5 °C.
fn oslo_case(id: &str, reply: &str, reports: bool) -> String {
    format!(
        r#"{{"id": "{id}", "prompt_id": "lookup-oslo", "calls": [{{"tool": "station_reading", "arguments": {{"station": "Oslo Blindern"}}}}], "reply": "{reply}", "verdicts": {{"asks-for-the-named-station": true, "reports-the-reading": {reports}}}, "source": "hand"}}"#
    )
}

fn chitchat_case(id: &str, called: bool) -> String {
    let calls = if called {
        r#"[{"tool": "station_reading", "arguments": {"station": "Uccle"}}]"#
    } else {
        "[]"
    };
    format!(
        r#"{{"id": "{id}", "prompt_id": "chitchat-hello", "calls": {calls}, "reply": "Hello!", "verdicts": {{"no-station-for-small-talk": {}}}, "source": "hand"}}"#,
        !called
    )
}

/// The mini pack with these lines as its cases file.
fn mini_with_cases(lines: &[String]) -> (tempfile::TempDir, PathBuf) {
    let (temp, dir) = copy_pack("mini");
    std::fs::write(dir.join(CASES_FILE), lines.join("\n") + "\n").unwrap();
    (temp, dir)
}

/// Both directions of every mini law, all labelled as the laws judge them.
fn agreeing_cases() -> Vec<String> {
    vec![
        oslo_case("c1", "It reads 11.5 °C at Oslo Blindern.", true),
        oslo_case("c2", "I could not get a reading.", false),
        format!(
            r#"{{"id": "c3", "prompt_id": "lookup-oslo", "calls": [{{"tool": "station_reading", "arguments": {{"station": "Oslo"}}}}], "reply": "No reading.", "verdicts": {{"asks-for-the-named-station": false}}, "source": "hand"}}"#
        ),
        chitchat_case("c4", false),
        chitchat_case("c5", true),
    ]
}

#[test]
fn a_disagreement_is_one_line_and_exits_1() {
    let mut lines = agreeing_cases();
    // The person says the reading was reported; it was not.
    lines.push(oslo_case("c6", "It is mild at Oslo Blindern.", true));
    let (_temp, dir) = mini_with_cases(&lines);
    let (code, stdout, _) = skilleval_check(&dir);
    assert_eq!(code, 1, "{stdout}");
    let disagreements: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("disagreement:"))
        .collect();
    assert_eq!(
        disagreements,
        ["disagreement: case c6 (prompt lookup-oslo) law reports-the-reading: person says it holds, the law says it fails"]
    );
}

#[test]
fn agreeing_cases_with_both_directions_pass_except_for_a_sample_no_reply_can_pass() {
    let (_temp, dir) = mini_with_cases(&agreeing_cases());
    let pack = Pack::load(dir.to_str().unwrap()).unwrap();
    let report = law_cases::check(&pack).unwrap();
    assert!(report.disagreements.is_empty(), "{}", report.render());
    assert!(report.uncovered().is_empty(), "{}", report.render());
    // Vostok has no recording, so no reply can report its reading.
    let unpassable: Vec<&str> = report
        .unpassable
        .iter()
        .map(|u| u.sample_id.as_str())
        .collect();
    assert_eq!(unpassable, ["lookup-vostok"], "{}", report.render());
    assert!(!report.agrees());
    // Beside the finding: the result the closest reply was answered from, that reply, and
    // each law it failed as the pack writes it, so the reader sees why without a run.
    let text = report.render();
    let lines: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("unpassable: sample lookup-vostok"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .collect();
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("  result of station_reading: \"No recording for this call")),
        "{text}"
    );
    assert!(
        lines.iter().any(|l| l.starts_with("  closest reply: \"")),
        "{text}"
    );
    let failed = &report.unpassable[0].failed;
    for law in failed {
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with(&format!("  law {law} as written: {{\"kind\":"))),
            "{text}"
        );
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with(&format!("  law {law} fails: "))),
            "{text}"
        );
    }
}

#[test]
fn a_law_without_a_case_in_one_direction_fails_the_check() {
    let lines: Vec<String> = agreeing_cases()
        .into_iter()
        .filter(|l| !l.contains("\"c5\""))
        .collect();
    let (_temp, dir) = mini_with_cases(&lines);
    let (code, stdout, _) = skilleval_check(&dir);
    assert_eq!(code, 1, "{stdout}");
    assert!(
        stdout.contains(
            "coverage: no-station-for-small-talk: holds in 1, fails in 0 (no case where it fails)"
        ),
        "{stdout}"
    );
}

#[test]
fn a_pack_without_cases_says_so_and_still_checks_every_sample() {
    let (_temp, dir) = copy_pack("mini");
    let (code, stdout, _) = skilleval_check(&dir);
    assert!(stdout.contains("has no judge-cases.jsonl"), "{stdout}");
    assert!(
        stdout.contains("unpassable: sample lookup-vostok"),
        "{stdout}"
    );
    assert_eq!(code, 1);
}

#[test]
fn mistakes_in_the_cases_file_are_named_with_file_and_line() {
    let good = oslo_case("c1", "11.5 °C", true);
    let cases = [
        (r#"{"id": "x", "reply": "hi"}"#.to_string(), "missing field"),
        (
            good.replace("lookup-oslo", "lookup-nowhere"),
            "field `prompt_id`: no sample \"lookup-nowhere\"",
        ),
        (
            good.replace("reports-the-reading", "reports-the-weather"),
            "no law `reports-the-weather`",
        ),
        (
            chitchat_case("c9", false).replace("no-station-for-small-talk", "reports-the-reading"),
            "law `reports-the-reading` does not apply to sample \"chitchat-hello\"",
        ),
        (
            good.replace("\"reply\"", "\"stop\": \"tired\", \"reply\""),
            "field `stop`",
        ),
    ];
    for (bad, expected) in cases {
        let (_temp, dir) = mini_with_cases(&[good.replace("c1", "c0"), bad.clone()]);
        let pack = Pack::load(dir.to_str().unwrap()).unwrap();
        let error = format!("{:#}", law_cases::check(&pack).unwrap_err());
        let place = format!("{}:2:", dir.join(CASES_FILE).display());
        assert!(error.starts_with(&place), "{bad}: {error}");
        assert!(error.contains(expected), "{bad}: {error}");
        let (code, _, stderr) = skilleval_check(&dir);
        assert_eq!(code, 1, "{stderr}");
        assert!(stderr.contains(&place), "{stderr}");
    }
}
