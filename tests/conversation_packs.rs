//! The two conversation packs as shipped. Fast tier: their laws agree with a person's labels
//! over whole exchanges (`check`), the notes world answers each call in the state the earlier
//! writes left (its recordings are the live program's answers, made in that state), a write
//! waits for the user's yes, and a bad `user` script is one line naming the file, the line and
//! the field. Full tier, on the real default model: conversations happen (the scripted user
//! speaks, approvals are asked), and a conversation run cut short and resumed writes the
//! uninterrupted run's transcripts.

mod common;

use std::path::{Path, PathBuf};

use skilleval::eval::law_cases::{CaseCall, CaseTurn, Replayer};
use skilleval::eval::pack::Pack;
use skilleval::eval::record::journal;
use skilleval::harness::conversation::Script;
use skilleval::harness::transcript::StopReason;

fn pack_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("packs")
        .join(name)
}

fn call(tool: &str, arguments: serde_json::Value) -> CaseCall {
    CaseCall {
        tool: tool.into(),
        arguments: arguments.as_object().cloned().unwrap(),
        result: None,
    }
}

fn script(json: &str) -> Script {
    serde_json::from_str(json).unwrap()
}

#[test]
fn both_packs_laws_agree_with_the_labelled_exchanges() {
    for name in ["flights", "notes"] {
        let out = common::cli::skilleval(&["check", "--pack", pack_dir(name).to_str().unwrap()]);
        let said = common::cli::both(&out);
        assert!(out.status.success(), "{name}: {said}");
        assert!(
            said.contains("0 disagreement(s)") && said.contains(": agree"),
            "{name}: {said}"
        );
    }
}

#[test]
fn a_list_answers_in_the_state_the_writes_before_it_left() {
    let pack = Pack::load(pack_dir("notes").to_str().unwrap()).unwrap();
    let replayer = Replayer::new(&pack).unwrap();
    let always = script(r#"{"default":"Yes.","approve":"always"}"#);
    let list = call("list_notes", serde_json::json!({}));
    let create = call(
        "create_note",
        serde_json::json!({"name": "groceries", "text": "milk"}),
    );
    let before = replayer
        .conversation(
            Some(&always),
            &[],
            std::slice::from_ref(&list),
            "",
            StopReason::Answered,
        )
        .unwrap();
    let after = replayer
        .conversation(
            Some(&always),
            &[],
            &[create, list.clone()],
            "",
            StopReason::Answered,
        )
        .unwrap();
    let shown =
        |t: &skilleval::harness::transcript::Transcript| t.calls().last().unwrap().result.clone();
    assert!(!shown(&before).contains("groceries"), "{}", shown(&before));
    assert!(shown(&after).contains("groceries"), "{}", shown(&after));
    // The other text of a create keys nothing: the same name in another wording is the same
    // state.
    let reworded = call(
        "create_note",
        serde_json::json!({"name": "Groceries", "text": "milk and eggs"}),
    );
    let again = replayer
        .conversation(
            Some(&always),
            &[],
            &[reworded, list],
            "",
            StopReason::Answered,
        )
        .unwrap();
    assert_eq!(shown(&again), shown(&after));
}

#[test]
fn a_delete_runs_only_after_the_user_said_yes() {
    let pack = Pack::load(pack_dir("notes").to_str().unwrap()).unwrap();
    let replayer = Replayer::new(&pack).unwrap();
    let confirm = script(
        r#"{"replies":[{"on":"approval","say":"Yes, delete it."}],"default":"The note todo.","approve":"when_confirmed"}"#,
    );
    let delete = call("delete_note", serde_json::json!({"name": "todo"}));
    let list = call("list_notes", serde_json::json!({}));
    let unasked = replayer
        .conversation(
            Some(&confirm),
            &[],
            &[delete.clone(), list.clone()],
            "",
            StopReason::Answered,
        )
        .unwrap();
    let calls: Vec<_> = unasked.calls().collect();
    assert_eq!(calls[0].approved, Some(false));
    assert!(calls[1].result.contains("todo"), "refused, so still there");
    let asked = replayer
        .conversation(
            Some(&confirm),
            &[CaseTurn {
                calls: vec![],
                reply: "Are you sure you want to delete the note todo?".into(),
            }],
            &[delete, list],
            "",
            StopReason::Answered,
        )
        .unwrap();
    let calls: Vec<_> = asked.calls().collect();
    assert_eq!(calls[0].approved, Some(true));
    assert_eq!(calls[0].result.trim(), "Deleted the note todo.");
    assert!(!calls[1].result.contains("todo"), "{}", calls[1].result);
}

#[test]
fn a_bad_user_script_is_one_line_naming_the_file_line_and_field() {
    for (bad, field) in [
        (r#""user": {"default": "x", "approve": "maybe"}"#, "user"),
        (
            r#""user": {"replies": [{"on": "question", "say": " "}]}"#,
            "user.replies[0].say",
        ),
        (r#""user": {"default": "x", "turns": 0}"#, "user.turns"),
        (r#""user": {"default": "x", "say": "y"}"#, "user.say"),
        (
            r#""user": [[{"on": "approval", "say": "Yes"}], "x", 2, "never"]"#,
            "user",
        ),
        (
            r#""user": {"default": "x", "approve": {"always": null}}"#,
            "user.approve",
        ),
        (
            r#""user": {"replies": [{"on": "question", "say": 5}]}"#,
            "user.replies[0].say",
        ),
        (
            r#""user": {"replies": [["question", "It's BA117."]]}"#,
            "user.replies[0]",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        common::files::copy_dir(&pack_dir("flights"), dir.path());
        let corpus = dir.path().join("corpus.jsonl");
        let text = std::fs::read_to_string(&corpus).unwrap();
        let first_user = text.find(r#""user": {"#).unwrap();
        let end = text[first_user..].find("}, \"reference_turns\"").unwrap() + first_user + 1;
        let edited = format!("{}{bad}{}", &text[..first_user], &text[end..]);
        std::fs::write(&corpus, edited).unwrap();
        let out = common::cli::skilleval(&["check", "--pack", dir.path().to_str().unwrap()]);
        let said = common::cli::both(&out);
        assert!(!out.status.success(), "{bad}: {said}");
        let line = said.lines().find(|l| l.contains("error")).unwrap_or(&said);
        assert!(
            line.contains("corpus.jsonl:1") && line.contains(&format!("`{field}")),
            "{bad}: {said}"
        );
    }
}

/// The transcripts (user turns, calls and results included; timings left out) and verdicts of a
/// run's units, in key order.
fn units_of(folder: &Path) -> Vec<(String, String, u32, String)> {
    let dir = std::fs::read_dir(folder).unwrap().flatten().next().unwrap();
    let mut units: Vec<_> = journal::read(&dir.path().join("journal.jsonl"))
        .unwrap()
        .into_iter()
        .map(|e| {
            // Everything a round holds but its timings, which no two runs share.
            let mut rounds = serde_json::to_value(&e.transcript.rounds).unwrap();
            for round in rounds.as_array_mut().unwrap() {
                round.as_object_mut().unwrap().remove("metrics");
            }
            let shown = format!("{rounds} passed={}", e.judgement.passed);
            (e.sample_id, format!("{:?}", e.arm), e.repeat, shown)
        })
        .collect();
    units.sort();
    units
}

/// On the real model a flights conversation is interrupted after its first samples and resumed:
/// the resumed run's transcripts, every user turn in them, are the uninterrupted run's. And the
/// conversations are real: the model asks and the scripted user answers in some of them.
#[test]
#[cfg_attr(not(feature = "full-tier"), ignore = "full tier")]
fn a_conversation_run_cut_short_and_resumed_equals_the_uninterrupted_run() {
    let _turn = common::model::turn();
    let output = tempfile::tempdir().unwrap();
    let pack = pack_dir("flights");
    let run = |folder: &Path, limit: &str, resume: Option<&str>| {
        let mut args = vec![
            "run",
            "--pack",
            pack.to_str().unwrap(),
            "--category",
            "missing_number",
            "--limit",
            limit,
            "--repeats",
            "1",
            "--parallel",
            "1",
            "--output",
            folder.to_str().unwrap(),
        ];
        if let Some(id) = resume {
            args.extend(["--resume", id]);
        }
        let out = common::cli::skilleval(&args);
        assert_eq!(out.status.code(), Some(0), "{}", common::cli::both(&out));
    };
    let (whole, cut) = (output.path().join("whole"), output.path().join("cut"));
    run(&whole, "4", None);
    run(&cut, "2", None);
    let id = std::fs::read_dir(&cut).unwrap().flatten().next().unwrap();
    let id = id.file_name().to_string_lossy().to_string();
    let before = units_of(&cut).len();
    run(&cut, "4", Some(&id));
    let (whole, cut) = (units_of(&whole), units_of(&cut));
    assert!(cut.len() > before, "the resume ran nothing");
    assert_eq!(whole, cut);
    assert!(
        whole
            .iter()
            .any(|(_, _, _, shown)| shown.contains("\"user\":")),
        "no unit had the scripted user speak"
    );
}

/// The notes pack copied, `edit` applied to the copy's folder; what `check` says, and its code.
fn check_edited(edit: impl Fn(&Path)) -> (bool, String) {
    let dir = tempfile::tempdir().unwrap();
    common::files::copy_dir(&pack_dir("notes"), dir.path());
    edit(dir.path());
    let out = common::cli::skilleval(&["check", "--pack", dir.path().to_str().unwrap()]);
    (out.status.success(), common::cli::both(&out))
}

fn replace_in(file: &Path, old: &str, new: &str) {
    let text = std::fs::read_to_string(file).unwrap();
    assert!(text.contains(old), "{old:?} not in {}", file.display());
    std::fs::write(file, text.replacen(old, new, 1)).unwrap();
}

/// Found accepted by a hostile sweep: a world outside the pack, missing or a file, a world in a
/// pack that never writes, and a recording made after a read. Each is now one line that
/// names the file and the field.
#[test]
fn a_world_or_a_recorded_state_that_cannot_be_is_refused_by_name() {
    let toml = |dir: &Path| dir.join("pack.toml");
    for (world, said) in [
        ("../outside", "tools[0].world"),
        ("/etc", "tools[0].world"),
        ("nowhere", "tools[0].world"),
        ("tools/notes.py", "tools[0].world"),
    ] {
        let (ok, out) = check_edited(|dir| {
            replace_in(
                &toml(dir),
                "world = \"world\"",
                &format!("world = \"{world}\""),
            )
        });
        assert!(
            !ok && out.contains("pack.toml:") && out.contains(said),
            "{world}: {out}"
        );
    }
    let (ok, out) = check_edited(|dir| {
        let text = std::fs::read_to_string(toml(dir)).unwrap();
        std::fs::write(toml(dir), text.replace("effect = \"write\"\n", "")).unwrap();
    });
    assert!(
        !ok && out.contains("world") && out.contains("effect"),
        "{out}"
    );
    let (ok, out) = check_edited(|dir| {
        let after = dir.join("fixtures/list_notes/list-notes-after-0b9316cb.json");
        replace_in(
            &after,
            "\"tool\": \"create_note\"",
            "\"tool\": \"list_notes\"",
        );
    });
    assert!(!ok && out.contains("after[0].tool"), "{out}");
    let (ok, out) = check_edited(|dir| {
        replace_in(
            &toml(dir),
            "after = \"create_note\"",
            "after = \"shred_note\"",
        )
    });
    assert!(
        !ok && out.contains(".after`") && out.contains("shred_note"),
        "{out}"
    );
}

/// The score of a conversation's question step against the rate it is the expectation of.
/// Truth: the sampled run `skilleval run --pack packs/flights --variant packs/flights/variants
/// --repeats 6` (tests/data/journals/flights-first-replies.jsonl: the first reply of each of its
/// 480 missing_number units, which the scorer never reads). Per (sample, arm), the share of
/// repeats whose first reply was the reference question against the probability of its words
/// (the `question_words` diagnostic). The file holds the pack's wording of today: a change to the
/// skill or its variants needs a new run.
#[test]
#[cfg_attr(not(feature = "full-tier"), ignore = "full tier")]
fn the_scored_question_tracks_the_sampled_rate_of_asking_it() {
    let _turn = common::model::turn();
    use skilleval::eval::runner::{self, RunOptions};
    use skilleval::eval::score;
    use skilleval::eval::score::measure::StepKind;
    let out = tempfile::tempdir().unwrap();
    let pack = Pack::load(pack_dir("flights").to_str().unwrap()).unwrap();
    let mut opts = RunOptions::new(pack);
    // Two of the run's four arms, to keep the full tier's time: the baseline, which asks, and
    // the wording that skips the question. The run's variant arms were reworded.md, then this.
    opts.variants = vec![pack_dir("flights").join("variants/skips-the-question.md")];
    opts.categories = vec!["missing_number".into()];
    opts.repeats = 1;
    opts.control = false;
    opts.output_root = out.path().to_path_buf();
    let prepared = runner::prepare(&opts).unwrap();
    let references = score::references(&prepared).unwrap();
    let mut backend = common::model::backend();
    let (_, steps) = score::score(
        &mut *backend,
        &prepared,
        &references,
        score::ScoreSettings::default(),
        None,
        false,
    )
    .unwrap();
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/journals/flights-first-replies.jsonl"),
    )
    .unwrap();
    let mut observed: std::collections::BTreeMap<(String, String), (f64, f64)> = Default::default();
    for line in text.lines() {
        let unit: serde_json::Value = serde_json::from_str(line).unwrap();
        let asked = !unit["first_round_called"].as_bool().unwrap()
            && unit["first_reply"].as_str().unwrap().trim() == "What is your flight number?";
        let arm = unit["arm"].to_string();
        let entry = observed
            .entry((unit["sample_id"].as_str().unwrap().to_string(), arm))
            .or_default();
        entry.0 += f64::from(u8::from(asked));
        entry.1 += 1.0;
    }
    let pairs: Vec<(f64, f64)> = steps
        .iter()
        .filter(|s| s.kind == StepKind::QuestionWords)
        .filter_map(|s| {
            let arm = match serde_json::to_value(s.arm).unwrap().to_string().as_str() {
                "\"variant\"" => "\"variant2\"".to_string(),
                other => other.to_string(),
            };
            observed
                .get(&(s.sample_id.clone(), arm))
                .map(|(asked, repeats)| (s.probability, asked / repeats))
        })
        .collect();
    assert_eq!(pairs.len(), 40, "20 samples in two arms");
    let n = pairs.len() as f64;
    let (mx, my) = (
        pairs.iter().map(|p| p.0).sum::<f64>() / n,
        pairs.iter().map(|p| p.1).sum::<f64>() / n,
    );
    let cov: f64 = pairs.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let (vx, vy): (f64, f64) = (
        pairs.iter().map(|p| (p.0 - mx).powi(2)).sum(),
        pairs.iter().map(|p| (p.1 - my).powi(2)).sum(),
    );
    let corr = cov / (vx * vy).sqrt();
    eprintln!("asks: mean scored {mx:.3}, sampled {my:.3}, correlation {corr:.3}");
    assert!(
        (mx - my).abs() < 0.05,
        "scored {mx:.3} against sampled {my:.3}"
    );
    assert!(corr > 0.6, "correlation {corr:.3}");
}

/// The notes pack on the real model: the harness keeps its promises in every transcript the
/// model makes. In a delete sample (`when_confirmed`) a write that ran came after the user's
/// yes to an approval question; a refused write shows the refusal; a list made after a create that ran
/// names the new note, answered from a recording made in that state.
#[test]
#[cfg_attr(not(feature = "full-tier"), ignore = "full tier")]
fn on_the_real_model_writes_wait_for_approval_and_lists_see_earlier_writes() {
    let _turn = common::model::turn();
    use skilleval::harness::conversation::Act;
    let output = tempfile::tempdir().unwrap();
    let out = common::cli::skilleval(&[
        "run",
        "--pack",
        pack_dir("notes").to_str().unwrap(),
        "--category",
        "delete,create",
        "--limit",
        "10",
        "--repeats",
        "1",
        "--output",
        output.path().to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", common::cli::both(&out));
    let dir = std::fs::read_dir(output.path())
        .unwrap()
        .flatten()
        .next()
        .unwrap();
    let entries = journal::read(&dir.path().join("journal.jsonl")).unwrap();
    let (mut writes, mut lists_after_create) = (0, 0);
    for entry in &entries {
        let t = &entry.transcript;
        let mut created: Vec<String> = Vec::new();
        for (i, round) in t.rounds.iter().enumerate() {
            for call in &round.calls {
                if call.approved.is_some() {
                    writes += 1;
                }
                if call.approved == Some(false) {
                    assert!(
                        call.is_error && call.result.contains("not approved"),
                        "{call:?}"
                    );
                }
                // Delete samples approve only after a yes; create samples approve every write.
                if entry.category == "delete" && call.approved == Some(true) {
                    let confirmed = t.rounds[..i]
                        .iter()
                        .any(|r| r.user.as_ref().is_some_and(|u| u.on == Act::Approval));
                    assert!(confirmed, "{}: a delete ran unconfirmed", entry.sample_id);
                }
                let name = call.arguments["name"].as_str().unwrap_or_default();
                if call.name == "create_note" && call.approved == Some(true) && !call.is_error {
                    let stem = name.trim().trim_end_matches(".txt").to_lowercase();
                    created.push(stem.replace(' ', "-"));
                }
                let gap = call.meta.get("gap").is_some();
                if call.name == "list_notes" && !gap && !call.is_error {
                    for note in &created {
                        lists_after_create += 1;
                        assert!(
                            call.result.contains(note.as_str()),
                            "{note}: {}",
                            call.result
                        );
                    }
                }
            }
        }
    }
    eprintln!(
        "{} units, {writes} write(s), {lists_after_create} list(s) after a create",
        entries.len()
    );
    assert!(writes > 0, "the model made no write: nothing was checked");
}

/// A backend that gives every word of a continuation the probability ½ and generates nothing:
/// enough for `score` to force a conversation's reference steps through the harness loop.
struct HalfPerWord;

impl skilleval::harness::backend::Backend for HalfPerWord {
    fn family(&self) -> skilleval::harness::template::Family {
        skilleval::harness::template::Family::Gemma
    }

    fn info(&self) -> skilleval::harness::backend::BackendInfo {
        skilleval::harness::backend::BackendInfo {
            name: "half-per-word".into(),
            ..Default::default()
        }
    }

    fn generate(
        &mut self,
        _: &skilleval::harness::backend::GenRequest,
    ) -> anyhow::Result<skilleval::harness::backend::Generation> {
        anyhow::bail!("only scores")
    }

    fn score(
        &mut self,
        request: &skilleval::harness::backend::ScoreRequest,
    ) -> anyhow::Result<skilleval::harness::backend::ContinuationScore> {
        let mut end = 0;
        let tokens = request
            .continuation
            .split_inclusive(' ')
            .map(|piece| {
                end += piece.len();
                skilleval::harness::backend::TokenScore {
                    piece: piece.into(),
                    end,
                    probability: 0.5,
                    likelihood: 0.5,
                }
            })
            .collect();
        Ok(skilleval::harness::backend::ContinuationScore {
            tokens,
            ..Default::default()
        })
    }
}

/// `score` on a conversation scores the arguments of every call on the reference path, not
/// only the call's opening. Truth: a change (the delete samples' reference turns end with a
/// `delete_note` call whose `name` is written out, and those steps used to hold no
/// `arguments` row).
#[test]
fn score_scores_the_arguments_of_a_call_inside_reference_turns() {
    use skilleval::eval::runner::{self, RunOptions};
    use skilleval::eval::score;
    use skilleval::eval::score::measure::StepKind;
    let out = tempfile::tempdir().unwrap();
    let pack = Pack::load(pack_dir("notes").to_str().unwrap()).unwrap();
    let mut opts = RunOptions::new(pack);
    opts.categories = vec!["delete".into()];
    opts.limit = Some(2);
    opts.repeats = 1;
    opts.control = false;
    opts.output_root = out.path().to_path_buf();
    let prepared = runner::prepare(&opts).unwrap();
    let references = score::references(&prepared).unwrap();
    let (_, steps) = score::score(
        &mut HalfPerWord,
        &prepared,
        &references,
        score::ScoreSettings::default(),
        None,
        false,
    )
    .unwrap();
    for sample in ["delete-001", "delete-002"] {
        let kinds: Vec<StepKind> = steps
            .iter()
            .filter(|s| s.sample_id == sample)
            .map(|s| s.kind)
            .collect();
        assert!(kinds.contains(&StepKind::Calls), "{sample}: {kinds:?}");
        let arguments: Vec<&str> = steps
            .iter()
            .filter(|s| s.sample_id == sample && s.arm == skilleval::eval::arm::Arm::Baseline)
            .filter(|s| s.kind == StepKind::Arguments)
            .map(|s| s.text.as_str())
            .collect();
        let name = if sample == "delete-001" {
            "old-ideas"
        } else {
            "todo"
        };
        assert!(
            arguments.len() == 1 && arguments[0].contains(name),
            "{sample}: the delete's arguments are scored: {arguments:?}"
        );
    }
}

/// `check` says why a law failed, not only which: a reference question the scripted user reads
/// as a plain question is named with that reading. Truth: a change (`check` used to print the
/// law's name and its keys alone).
#[test]
fn check_names_the_reason_a_confirmation_law_failed() {
    let (ok, out) = check_edited(|dir| {
        replace_in(
            &dir.join("corpus.jsonl"),
            "for me.\", \"note\": \"old-ideas\", \"user\": {\"replies\": [{\"on\": \"approval\", \"say\": \"Yes, delete it.\"}], \"default\": \"The note old-ideas.\", \"turns\": 2, \"approve\": \"when_confirmed\"}, \"reference_turns\": [{\"reply\": \"Are you sure you want to delete the note old-ideas? This cannot be undone.\"}",
            "for me.\", \"note\": \"old-ideas\", \"user\": {\"replies\": [{\"on\": \"approval\", \"say\": \"Yes, delete it.\"}], \"default\": \"The note old-ideas.\", \"turns\": 2, \"approve\": \"when_confirmed\"}, \"reference_turns\": [{\"reply\": \"Is it the note old-ideas you mean?\"}",
        )
    });
    assert!(!ok, "{out}");
    let line = out
        .lines()
        .find(|l| l.starts_with("  law confirms-before-deleting fails: "))
        .unwrap_or_else(|| panic!("no reason given: {out}"));
    assert!(
        line.contains("\"Is it the note old-ideas you mean?\" read as a question, not an approval"),
        "{line}"
    );
}
