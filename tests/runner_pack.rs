//! Pack, corpus and variant mistakes are refused before anything runs, each message naming the
//! file, the line where there is one, and the field; and the fixture store's answers: hits,
//! folded keys, collisions.

mod common;

use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};
use skilleval::eval::fixture_store::{Fixture, FixtureStore, Fold, Route};
use skilleval::eval::judge::LAW_KINDS;
use skilleval::eval::pack::Pack;
use skilleval::eval::runner;

use common::scripted::{copy_pack, edit, mini_pack_dir};

/// The 1-based line of the `nth` (0-based) line of `path` that starts with `prefix`.
fn line_of(path: &Path, prefix: &str, nth: usize) -> usize {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .enumerate()
        .filter(|(_, line)| line.trim_start().starts_with(prefix))
        .nth(nth)
        .map(|(index, _)| index + 1)
        .unwrap_or_else(|| panic!("no line {nth} starting {prefix:?} in {}", path.display()))
}

/// The error of loading the pack after one edit of its pack.toml.
fn error_after_edit(old: &str, new: &str) -> (String, PathBuf, tempfile::TempDir) {
    let (temp, dir) = copy_pack("mini");
    let file = dir.join("pack.toml");
    edit(&file, old, new);
    let error = Pack::load(file.to_str().unwrap())
        .map(|_| ())
        .expect_err("the edited pack is refused");
    (format!("{error:#}"), file, temp)
}

fn assert_names(error: &str, file: &Path, line: Option<usize>, field: &str) {
    let place = match line {
        Some(line) => format!("{}:{line}:", file.display()),
        None => format!("{}:", file.display()),
    };
    assert!(error.starts_with(&place), "expected {place} in: {error}");
    assert!(error.contains(field), "expected {field} in: {error}");
}

#[test]
fn the_mini_pack_loads_with_its_paths_resolved() {
    let pack = Pack::load(mini_pack_dir().to_str().unwrap()).unwrap();
    assert_eq!(pack.skill, "stations");
    assert_eq!(pack.categories, ["lookup", "messy_name", "chitchat"]);
    assert_eq!(pack.laws.len(), 3);
    assert_eq!(
        pack.tools[0].fixtures,
        Some(mini_pack_dir().join("fixtures/station_reading"))
    );
    assert_eq!(pack.budgets.max_rounds, 3);
    assert_eq!(pack.corpus(None).unwrap().len(), 6);
}

#[test]
fn a_missing_field_is_named_with_the_file_and_line() {
    let (error, file, _temp) = error_after_edit("skill = \"stations\"\n", "");
    assert_names(&error, &file, Some(1), "missing field `skill`");
}

#[test]
fn an_unknown_law_kind_names_the_law_its_line_and_the_known_kinds() {
    let (error, file, _temp) =
        error_after_edit("kind = \"tool_not_called\"", "kind = \"tool_never_called\"");
    let line = line_of(&file, "[[laws]]", 2);
    assert_names(&error, &file, Some(line), "field `laws[2]`");
    assert!(error.contains("field `kind`"), "{error}");
    assert!(error.contains("tool_never_called"), "{error}");
    assert!(error.contains("no-station-for-small-talk"), "{error}");
    for kind in LAW_KINDS {
        assert!(error.contains(kind), "{kind} not listed in: {error}");
    }
}

#[test]
fn every_listed_law_kind_is_a_kind_the_judge_knows() {
    // Without its other keys a law is refused, but never for its kind.
    for kind in LAW_KINDS {
        let (_temp, dir) = copy_pack("mini");
        let file = dir.join("pack.toml");
        edit(
            &file,
            "kind = \"tool_not_called\"",
            &format!("kind = \"{kind}\""),
        );
        if let Err(error) = Pack::load(file.to_str().unwrap()) {
            let error = format!("{error:#}");
            assert!(!error.contains("unknown law kind"), "{kind}: {error}");
        }
    }
}

#[test]
fn a_vacuous_pattern_is_refused_at_its_law() {
    let (_temp, dir) = copy_pack("mini");
    let file = dir.join("pack.toml");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(
        &file,
        format!("{text}\n[[laws]]\nname = \"says-anything\"\nkind = \"reply_matches\"\npattern = \".*\"\n"),
    )
    .unwrap();
    let error = format!("{:#}", Pack::load(file.to_str().unwrap()).unwrap_err());
    let line = line_of(&file, "[[laws]]", 3);
    assert_names(&error, &file, Some(line), "field `pattern`");
    assert!(error.contains("says-anything"), "{error}");
    assert!(error.contains("matches any text"), "{error}");
}

#[test]
fn a_law_category_that_is_not_declared_is_named() {
    let (error, file, _temp) =
        error_after_edit("categories = [\"chitchat\"]", "categories = [\"chatter\"]");
    let line = line_of(&file, "[[laws]]", 2);
    assert_names(&error, &file, Some(line), "field `laws[2].categories`");
    assert!(error.contains("\"chatter\""), "{error}");
}

#[test]
fn a_law_about_a_tool_the_pack_does_not_offer_is_refused() {
    let (error, file, _temp) = error_after_edit(
        "kind = \"tool_not_called\"\ntool = \"station_reading\"",
        "kind = \"tool_not_called\"\ntool = \"station_readings\"",
    );
    let line = line_of(&file, "[[laws]]", 2);
    assert_names(&error, &file, Some(line), "field `laws[2].tool`");
    assert!(error.contains("station_readings"), "{error}");
}

#[test]
fn a_tool_of_unknown_kind_is_named_with_the_known_kinds() {
    let (error, file, _temp) = error_after_edit("kind = \"recorded\"", "kind = \"recordings\"");
    let line = line_of(&file, "[[tools]]", 0);
    assert_names(&error, &file, Some(line), "field `tools[0].kind`");
    assert!(
        error.contains("recordings") && error.contains("weather_lookup"),
        "{error}"
    );
}

#[test]
fn a_recorded_tool_needs_its_fixtures_and_a_computed_tool_takes_none() {
    let (error, file, _temp) = error_after_edit("fixtures = \"fixtures/station_reading\"\n", "");
    let line = line_of(&file, "[[tools]]", 0);
    assert_names(
        &error,
        &file,
        Some(line),
        "field `tools[0].fixtures` is missing",
    );

    // The same tool as the computed calculator, still naming a fixtures folder.
    let (error, file, _temp) = error_after_edit("kind = \"recorded\"", "kind = \"calculate\"");
    assert_names(&error, &file, Some(line), "field `tools[0].fixtures`");
    assert!(error.contains("calculate is computed"), "{error}");
}

/// The error of loading a corpus of these lines with the mini pack.
fn corpus_error(lines: &[&str]) -> (String, PathBuf, tempfile::TempDir) {
    let temp = tempfile::tempdir().unwrap();
    let path = temp.path().join("corpus.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let pack = Pack::load(mini_pack_dir().to_str().unwrap()).unwrap();
    let error = pack
        .corpus(Some(&path))
        .map(|_| ())
        .expect_err("corpus refused");
    (format!("{error:#}"), path, temp)
}

const GOOD_LINE: &str = r#"{"id": "a", "category": "chitchat", "prompt": "hi"}"#;

#[test]
fn corpus_lines_are_checked_with_file_line_and_field() {
    let (error, path, _temp) = corpus_error(&[GOOD_LINE, "", r#"{"id": "b", "category": "#]);
    assert_names(&error, &path, Some(3), "not valid JSON");

    let (error, path, _temp) =
        corpus_error(&[GOOD_LINE, r#"{"category": "chitchat", "prompt": "hello"}"#]);
    assert_names(&error, &path, Some(2), "field `id` is missing");

    // A blank line in between still counts as a line.
    let (error, path, _temp) = corpus_error(&[
        "",
        GOOD_LINE,
        r#"{"id": "b", "category": "weather", "prompt": "x"}"#,
    ]);
    assert_names(&error, &path, Some(3), "field `category`");
    assert!(
        error.contains("\"weather\"") && error.contains("pack.toml"),
        "{error}"
    );

    let (error, path, _temp) = corpus_error(&[GOOD_LINE, GOOD_LINE]);
    assert_names(&error, &path, Some(2), "field `id`");
    assert!(error.contains("used twice"), "{error}");
}

#[test]
fn a_variant_without_front_matter_cannot_stand_in_for_an_absent_skill() {
    // A baseline tree that lacks the skill under test.
    let temp = tempfile::tempdir().unwrap();
    let other = temp.path().join("skills/other");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(
        other.join("SKILL.md"),
        "---\nname: other\ndescription: Something else.\n---\nUnrelated.\n",
    )
    .unwrap();
    let skills_dir = temp.path().join("skills");
    let pack = Pack::load(mini_pack_dir().to_str().unwrap()).unwrap();

    let body_only = mini_pack_dir().join("variant.md");
    let error = runner::skill_trees(&pack, Some(&skills_dir), std::slice::from_ref(&body_only))
        .map(|_| ())
        .unwrap_err();
    let error = format!("{error:#}");
    assert_names(&error, &body_only, None, "front matter");
    assert!(error.contains("\"stations\""), "{error}");

    // Without a variant the pack's own field is at fault.
    let error = format!(
        "{:#}",
        runner::skill_trees(&pack, Some(&skills_dir), &[])
            .map(|_| ())
            .unwrap_err()
    );
    assert!(
        error.contains("pack.toml") && error.contains("field `skill`"),
        "{error}"
    );

    // With front matter the variant adds the skill: baseline without it, variant with it.
    let whole = temp.path().join("whole.md");
    std::fs::write(
        &whole,
        "---\nname: stations\ndescription: Station readings.\n---\nCall station_reading.\n",
    )
    .unwrap();
    let trees =
        runner::skill_trees(&pack, Some(&skills_dir), std::slice::from_ref(&whole)).unwrap();
    assert!(trees.baseline.get("stations").is_none());
    assert_eq!(
        trees.first_variant().get("stations").unwrap().body,
        "Call station_reading."
    );
    assert!(!trees.aa);
}

#[test]
fn a_body_only_variant_replaces_the_body_and_keeps_the_front_matter() {
    let pack = Pack::load(mini_pack_dir().to_str().unwrap()).unwrap();
    let variant = mini_pack_dir().join("variant.md");
    let trees = runner::skill_trees(&pack, None, std::slice::from_ref(&variant)).unwrap();
    let (baseline, overlaid) = (
        trees.baseline.get("stations").unwrap(),
        trees.first_variant().get("stations").unwrap(),
    );
    assert_eq!(overlaid.meta, baseline.meta);
    assert_ne!(overlaid.body, baseline.body);
    assert_eq!(
        overlaid.body,
        std::fs::read_to_string(&variant).unwrap().trim()
    );
}

// ---------------------------------------------------------------------------------------------
// The fixture store.

#[test]
fn a_description_control_keeps_the_body_and_offers_the_skill_by_name_alone() {
    let (_temp, dir) = copy_pack("mini");
    let toml = dir.join("pack.toml");
    let text = std::fs::read_to_string(&toml).unwrap();
    std::fs::write(&toml, format!("control = \"description\"\n{text}")).unwrap();
    let pack = Pack::load(dir.to_str().unwrap()).unwrap();
    let trees = runner::skill_trees(&pack, None, &[]).unwrap();
    let (baseline, control) = (
        trees.baseline.get("stations").unwrap(),
        trees.control.get("stations").unwrap(),
    );
    assert_eq!(control.body, baseline.body);
    assert!(!baseline.meta.description.is_empty());
    assert_eq!(control.meta.description, "");

    // The default control empties the body and keeps the description.
    let pack = Pack::load(mini_pack_dir().to_str().unwrap()).unwrap();
    let trees = runner::skill_trees(&pack, None, &[]).unwrap();
    let control = trees.control.get("stations").unwrap();
    assert_eq!(control.body, "");
    assert_eq!(
        control.meta.description,
        trees.baseline.get("stations").unwrap().meta.description
    );
}

#[test]
fn only_a_recorded_tool_may_answer_what_was_not_recorded() {
    let (error, path, _temp) = error_after_edit(
        "kind = \"recorded\"",
        "kind = \"weather_lookup\"\nunrecorded = \"No such station.\"",
    );
    assert_names(
        &error,
        &path,
        Some(line_of(&path, "[[tools]]", 0)),
        "field `tools[0].unrecorded`",
    );
    assert!(error.contains("gap"), "{error}");
}

#[test]
fn constrained_calls_need_a_format_with_a_grammar() {
    let (error, path, _temp) = error_after_edit(
        "name = \"mini\"",
        "name = \"mini\"\nconstrained_calls = true\ncall_format = \"python_list\"",
    );
    let line = line_of(&path, "constrained_calls", 0);
    assert_names(&error, &path, Some(line), "field `constrained_calls`");
    assert!(error.contains("markup or json_tag"), "{error}");
}

fn station_route(dir: &Path, folds: Vec<Fold>) -> Route {
    Route {
        tool: "station_reading".into(),
        dir: dir.to_path_buf(),
        key_arguments: vec!["station".into()],
        folds,
        arguments: vec!["station".into()],
    }
}

fn station(name: &str) -> Map<String, Value> {
    json!({ "station": name }).as_object().unwrap().clone()
}

#[test]
fn lookups_fold_case_white_space_and_punctuation_as_the_route_says() {
    let dir = mini_pack_dir().join("fixtures/station_reading");
    let all = [Fold::Case, Fold::Whitespace, Fold::Punctuation];
    let store = FixtureStore::load(vec![station_route(&dir, all.to_vec())]).unwrap();
    assert_eq!(store.len(), 3);
    let (path, fixture) = store
        .lookup("station_reading", &station("  SODANKYLA  obs. "))
        .unwrap();
    assert_eq!(path, dir.join("sodankyla-obs.json"));
    assert!(fixture.body_text().starts_with("Sodankyla Obs: -3 °C"));
    assert!(store
        .lookup("station_reading", &station("oslo-blindern!"))
        .is_some());
    assert!(store
        .lookup("station_reading", &station("Vostok"))
        .is_none());
    assert!(store.lookup("other_tool", &station("Uccle")).is_none());

    // Each fold on its own.
    let case_only = FixtureStore::load(vec![station_route(&dir, vec![Fold::Case])]).unwrap();
    assert!(case_only
        .lookup("station_reading", &station("UCCLE"))
        .is_some());
    assert!(case_only
        .lookup("station_reading", &station("Uccle."))
        .is_none());
    let exact = FixtureStore::load(vec![station_route(&dir, vec![])]).unwrap();
    assert!(exact.lookup("station_reading", &station("Uccle")).is_some());
    assert!(exact.lookup("station_reading", &station("uccle")).is_none());
    assert!(exact
        .lookup("station_reading", &station("Oslo  Blindern"))
        .is_none());
}

#[test]
fn two_recordings_of_one_key_are_refused_naming_both_files() {
    let temp = tempfile::tempdir().unwrap();
    for (file, name) in [("a.json", "Uccle"), ("b.json", "UCCLE!")] {
        let fixture = Fixture {
            tool: "station_reading".into(),
            arguments: station(name),
            recorded_from_live: false,
            note: None,
            status: 200,
            body: json!("14 °C"),
            ..Default::default()
        };
        std::fs::write(
            temp.path().join(file),
            serde_json::to_string(&fixture).unwrap(),
        )
        .unwrap();
    }
    let all = vec![Fold::Case, Fold::Punctuation];
    let error = FixtureStore::load(vec![station_route(temp.path(), all)])
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("b.json") && error.contains("a.json"),
        "{error}"
    );
    // Without folds they are two different keys.
    let store = FixtureStore::load(vec![station_route(temp.path(), vec![])]).unwrap();
    assert_eq!(store.len(), 2);
}

#[test]
fn a_recording_for_a_tool_without_a_route_is_refused() {
    let temp = tempfile::tempdir().unwrap();
    std::fs::write(
        temp.path().join("x.json"),
        r#"{"tool": "elsewhere", "arguments": {}, "status": 200, "body": "x"}"#,
    )
    .unwrap();
    let error = FixtureStore::load(vec![station_route(temp.path(), vec![])])
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("x.json") && error.contains("field `tool`"),
        "{error}"
    );
}

#[test]
fn bodies_keep_what_the_service_sent() {
    for text in [
        r#"{"a": 1, "b": [2]}"#,
        "[1, 2]",
        "\"quoted\"",
        "42",
        "plain text",
        "",
    ] {
        let fixture = Fixture {
            tool: "t".into(),
            arguments: Map::new(),
            recorded_from_live: true,
            note: None,
            status: 200,
            body: Fixture::body_from_text(text),
            ..Default::default()
        };
        let stored: Fixture =
            serde_json::from_str(&serde_json::to_string(&fixture).unwrap()).unwrap();
        let expected: String = text.split_whitespace().collect();
        let actual: String = stored.body_text().split_whitespace().collect();
        assert_eq!(actual, expected, "{text}");
    }
    assert!(Fixture::body_from_text(r#"{"a": 1}"#).is_object());
    assert!(Fixture::body_from_text("42").is_string());
}

/// The error of loading the mini pack with one more law appended, and that law's line.
fn error_with_law(body: &str) -> (String, PathBuf, usize, tempfile::TempDir) {
    let (temp, dir) = copy_pack("mini");
    let file = dir.join("pack.toml");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(
        &file,
        format!("{text}\n[[laws]]\nname = \"the-added-law\"\n{body}\n"),
    )
    .unwrap();
    let error = match Pack::load(file.to_str().unwrap()) {
        Ok(pack) => pack.corpus(None).map(|_| ()).expect_err(body),
        Err(error) => error,
    };
    let line = line_of(&file, "[[laws]]", 3);
    (format!("{error:#}"), file, line, temp)
}

#[test]
fn laws_that_can_never_fail_or_never_pass_are_refused_at_their_line() {
    let cases = [
        // A pattern nothing matches: the law can never fail…
        (
            "kind = \"reply_not_matches\"\npattern = \"$a\"",
            "matches no text",
        ),
        // …or never pass.
        (
            "kind = \"reply_matches\"\npattern = \"$a\"",
            "matches no text",
        ),
        (
            "kind = \"reply_matches\"\npattern = \"a^\"",
            "matches no text",
        ),
        (
            "kind = \"reply_matches\"\npattern = \"(?i)sorry\"\nunless = \"\"",
            "empty pattern",
        ),
        (
            "kind = \"call_count\"\nmin = 0\nmax = 4294967295",
            "any count passes",
        ),
        (
            "kind = \"tool_not_called\"\nwhen_field = \"no_such_field\"",
            "never applies",
        ),
        (
            "kind = \"reply_reports_result\"\nfacts = [\"x$(y)\"]",
            "matches no text",
        ),
    ];
    for (body, expected) in cases {
        let (error, file, line, _temp) = error_with_law(body);
        assert_names(&error, &file, Some(line), "the-added-law");
        assert!(error.contains(expected), "{body}: {error}");
    }
}

#[test]
fn a_law_with_a_field_some_sample_has_and_a_bounded_count_loads() {
    for body in [
        "kind = \"tool_not_called\"\nwhen_field = \"station\"",
        "kind = \"call_count\"\nmax = 4",
        "kind = \"reply_not_matches\"\npattern = \"(?m)^Now:\"",
    ] {
        let (temp, dir) = copy_pack("mini");
        let file = dir.join("pack.toml");
        let text = std::fs::read_to_string(&file).unwrap();
        std::fs::write(
            &file,
            format!("{text}\n[[laws]]\nname = \"fine\"\n{body}\n"),
        )
        .unwrap();
        let pack = Pack::load(file.to_str().unwrap()).expect(body);
        pack.corpus(None).expect(body);
        drop(temp);
    }
}
