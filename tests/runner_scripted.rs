//! Whole runs of the mini pack on the scripted backend: replay and gaps, the files a run
//! writes, the control arm, `--resume` after an interruption, `--limit`, `--category`, A/A runs
//! and the `--fail-on worse` decision.

mod common;

use std::collections::BTreeSet;
use std::path::Path;

use skilleval::eval::arm::Arm;
use skilleval::eval::corpus::Sample;
use skilleval::eval::record::manifest::Manifest;
use skilleval::eval::record::{self, journal, JournalEntry};
use skilleval::eval::report;
use skilleval::eval::run_summary;
use skilleval::eval::runner::{self, RunOptions, RunResult};
use skilleval::eval::stats::{self, Outcome, Summary, Verdict};
use skilleval::harness::template::Family;

use common::options::run_options;
use common::scripted::{call, lines, mini_pack_dir, reading_of, script, script_for};
use common::scripted_backend::ScriptedBackend;

const TOOL: &str = "station_reading";

fn options(output: &Path, repeats: u32, variant: bool) -> RunOptions {
    let mut opts = run_options(&mini_pack_dir(), output, repeats);
    opts.variants = variant
        .then(|| mini_pack_dir().join("variant.md"))
        .into_iter()
        .collect();
    opts
}

/// A model that follows the skill: it asks for the named station and repeats the reading it
/// is given (read back from the fixture, so the script holds no result of its own).
fn diligent(sample: &Sample, _arm: Arm) -> Vec<String> {
    match sample.fields.get("station").and_then(|s| s.as_str()) {
        Some(station) => vec![
            call(TOOL, "station", station),
            format!("The station reports {}.", reading_of(station)),
        ],
        None => vec!["Glad to help. Have a good day!".into()],
    }
}

/// The variant arm answers `lookup-uccle` without asking the station; otherwise diligent.
fn variant_skips_uccle(sample: &Sample, arm: Arm) -> Vec<String> {
    if arm == Arm::Variant(0) && sample.id == "lookup-uccle" {
        vec!["It is mild in Uccle, about 15 °C.".into()]
    } else {
        diligent(sample, arm)
    }
}

fn run_with(opts: &RunOptions, replies: Vec<String>) -> (RunResult, ScriptedBackend) {
    let mut backend = ScriptedBackend::new(Family::Gemma, replies);
    let result = runner::run(&mut backend, opts).expect("the run completes");
    (result, backend)
}

fn entry<'a>(entries: &'a [JournalEntry], id: &str, arm: Arm, repeat: u32) -> &'a JournalEntry {
    entries
        .iter()
        .find(|e| e.sample_id == id && e.arm == arm && e.repeat == repeat)
        .unwrap_or_else(|| panic!("no entry for {id} {arm:?} {repeat}"))
}

/// A category row of the wording comparison.
fn category<'a>(summary: &'a Summary, name: &str) -> &'a stats::Row {
    summary
        .wording
        .categories
        .iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no category {name}"))
}

#[test]
fn a_run_writes_journal_manifest_summaries_and_report() {
    let output = tempfile::tempdir().unwrap();
    let opts = options(output.path(), 2, true);
    let samples = opts.pack.corpus(None).unwrap();
    let replies = script(&samples, 2, false, 0, variant_skips_uccle);
    let (result, backend) = run_with(&opts, replies);
    assert_eq!(backend.remaining(), 0, "every scripted reply was asked for");

    let dir = output.path().join(&result.run_id);
    assert_eq!(result.dir, dir);
    let units = 3 * 2 * samples.len();
    assert_eq!(lines(&dir.join("journal.jsonl")).len(), units);
    // Timings may lose a last digit in JSON; what was judged must not.
    let judged = |entries: &[JournalEntry]| -> Vec<_> {
        entries
            .iter()
            .map(|e| (e.key(), e.seed, e.judgement.clone(), e.gapped))
            .collect()
    };
    assert_eq!(
        judged(&journal::read(&dir.join("journal.jsonl")).unwrap()),
        judged(&result.entries)
    );

    let manifest: Manifest =
        serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest.run_id, result.run_id);
    assert_eq!(
        (manifest.pack.as_str(), manifest.skill.as_str()),
        ("mini", "stations")
    );
    assert_eq!((manifest.samples, manifest.repeats), (samples.len(), 2));
    assert_eq!(manifest.backend.name, "scripted");
    assert_eq!(manifest.record, "Off");
    assert_eq!(manifest.budgets, opts.pack.budgets);
    assert_eq!(
        manifest.variant.as_deref(),
        Some(mini_pack_dir().join("variant.md").to_str().unwrap())
    );
    assert_ne!(manifest.baseline_body_sha256, manifest.variant_body_sha256);
    assert!(manifest.control);
    assert_eq!(
        manifest.control_body_sha256.as_deref(),
        Some(skilleval::eval::digest::sha256_hex(b"").as_str())
    );
    let corpus = std::fs::read(mini_pack_dir().join("corpus.jsonl")).unwrap();
    assert_eq!(
        manifest.corpus_sha256,
        skilleval::eval::digest::sha256_hex(&corpus)
    );

    let summary: Summary =
        serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary, result.summary);
    let csv = lines(&dir.join("summary.csv"));
    let wording_rows: Vec<&str> = csv
        .iter()
        .filter(|l| {
            l.starts_with("wording,baseline,variant,category,")
                || l.starts_with("wording,baseline,variant,total,")
        })
        .map(|l| l.split(',').nth(4).unwrap())
        .collect();
    assert_eq!(wording_rows, ["chitchat", "lookup", "messy_name", "total"]);
    assert!(csv
        .iter()
        .any(|l| l.starts_with("skill_effect,control,baseline,law,")));
    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(
        report.starts_with("# skilleval: mini\n\n**Wording: "),
        "{report}"
    );
    assert!(report.contains("\n## Skill effect"), "{report}");
    assert!(report.contains("| **total** |"), "{report}");
    assert!(report.contains("variant "), "{report}");
    // The reports rebuilt from the folder alone are the ones the run wrote.
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(html.contains("<script type=\"application/json\" id=\"data\">"));
    let record = record::load(&dir).unwrap();
    assert_eq!(record.prompts_note, None);
    let rebuilt = run_summary::of_record(&record).unwrap();
    assert_eq!(rebuilt, result.summary);
    let (text, page) =
        report::files::render(&record, &rebuilt, &report::files::settings_of(&record));
    assert_eq!(page, html);
    assert_eq!(text, report);

    // The variant's skipped call fails both station laws, in both repeats; Vostok's gap is
    // scored as judged (it fails in both arms) and counted.
    let lookup = category(&result.summary, "lookup");
    assert_eq!(
        (lookup.reference.rate, lookup.treatment.rate),
        (Some(2.0 / 3.0), Some(1.0 / 3.0))
    );
    let skipped = entry(&result.entries, "lookup-uccle", Arm::Variant(0), 1);
    assert_eq!(
        skipped.judgement.failed,
        ["asks-for-the-named-station", "reports-the-reading"]
    );
    assert_eq!(
        category(&result.summary, "chitchat").treatment.rate,
        Some(1.0)
    );
}

#[test]
fn replayed_answers_fold_names_and_gaps_are_counted_and_judged() {
    let output = tempfile::tempdir().unwrap();
    let opts = options(output.path(), 2, true);
    let samples = opts.pack.corpus(None).unwrap();
    let (result, _) = run_with(&opts, script(&samples, 2, false, 0, diligent));

    // "SODANKYLA  obs." meets the recording "Sodankyla Obs" through the route's folds.
    let messy = entry(&result.entries, "messy-sodankyla", Arm::Baseline, 0);
    let call = messy.transcript.calls().next().unwrap();
    assert!(
        call.result.starts_with("Sodankyla Obs: -3 °C"),
        "{}",
        call.result
    );
    assert!(call.meta["fixture"]
        .as_str()
        .unwrap()
        .ends_with("sodankyla-obs.json"));
    assert!(messy.judgement.passed && !messy.gapped);

    // Vostok has no recording: the model is told so, and the pair is scored as judged.
    for arm in [Arm::Baseline, Arm::Variant(0)] {
        let vostok = entry(&result.entries, "lookup-vostok", arm, 0);
        let call = vostok.transcript.calls().next().unwrap();
        assert!(vostok.gapped);
        assert!(call.is_error);
        assert!(
            call.result.starts_with("No recording for this call"),
            "{}",
            call.result
        );
        assert_eq!(call.meta["gap"], true);
    }
    let lookup = category(&result.summary, "lookup");
    assert_eq!(lookup.gapped_pairs, 2, "one sample, two repeats");
    assert_eq!((lookup.samples, lookup.pairs), (3, 6));
    assert_eq!((lookup.reference.gapped, lookup.treatment.gapped), (2, 2));
    assert_eq!(lookup.reference.rate, Some(2.0 / 3.0));
    assert_eq!(result.summary.wording.total.gapped_pairs, 2);
    assert_eq!(category(&result.summary, "messy_name").gapped_pairs, 0);
}

#[test]
fn a_tool_whose_recordings_are_its_world_answers_an_unrecorded_call_without_a_gap() {
    let (_temp, dir) = common::scripted::copy_pack("mini");
    common::scripted::edit(
        &dir.join("pack.toml"),
        "folds = [\"case\", \"whitespace\", \"punctuation\"]",
        "folds = [\"case\", \"whitespace\", \"punctuation\"]\nunrecorded = \"No such station.\"",
    );
    let output = tempfile::tempdir().unwrap();
    let opts = run_options(&dir, output.path(), 1);
    let samples = opts.pack.corpus(None).unwrap();
    let (result, _) = run_with(&opts, script(&samples, 1, true, 0, diligent));
    let vostok = entry(&result.entries, "lookup-vostok", Arm::Baseline, 0);
    let call = vostok.transcript.calls().next().unwrap();
    assert!(!vostok.gapped);
    assert!(call.is_error);
    assert_eq!(call.result, "No such station.");
    assert_eq!(call.meta["unrecorded"], true);
    // A recorded station is still answered from its recording.
    let messy = entry(&result.entries, "messy-sodankyla", Arm::Baseline, 0);
    assert!(messy
        .transcript
        .calls()
        .next()
        .unwrap()
        .result
        .starts_with("Sodankyla Obs"));
    assert_eq!(category(&result.summary, "lookup").gapped_pairs, 0);
}

#[test]
fn resume_after_an_interruption_runs_only_what_is_missing() {
    let output = tempfile::tempdir().unwrap();
    let opts = options(output.path(), 1, true);
    let samples = opts.pack.corpus(None).unwrap();
    let (complete, _) = run_with(&opts, script(&samples, 1, false, 0, variant_skips_uccle));
    let journal_path = complete.dir.join("journal.jsonl");

    // Keep five entries and half of the sixth, as a kill mid-write would.
    let kept = 5;
    let all = lines(&journal_path);
    let half = &all[kept][..all[kept].len() / 2];
    std::fs::write(&journal_path, all[..kept].join("\n") + "\n" + half).unwrap();
    assert_eq!(journal::read(&journal_path).unwrap().len(), kept);

    let mut resume = opts.clone();
    resume.resume = Some(complete.run_id.clone());
    let replies = script(&samples, 1, false, kept, variant_skips_uccle);
    let (resumed, backend) = run_with(&resume, replies);
    assert_eq!(backend.remaining(), 0);
    assert_eq!(resumed.dir, complete.dir);
    assert_eq!(resumed.summary, complete.summary);
    let on_disk = journal::read(&journal_path).unwrap();
    assert_eq!(on_disk.len(), all.len());
    assert_eq!(
        lines(&journal_path).len(),
        all.len(),
        "the cut line is gone"
    );

    // Resuming a finished run asks the model nothing.
    let (again, backend) = run_with(&resume, Vec::new());
    assert!(backend.prompts.is_empty());
    assert_eq!(again.summary, complete.summary);

    // A different variant would mix two experiments in one journal.
    let mut other = resume.clone();
    other.variants = Vec::new();
    let mut backend = ScriptedBackend::new(Family::Gemma, Vec::<String>::new());
    let error = runner::run(&mut backend, &other)
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("manifest.json") && error.contains("variant_body_sha256"),
        "{error}"
    );

    let mut missing = resume.clone();
    missing.resume = Some("no-such-run".into());
    let error = runner::run(&mut backend, &missing)
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("no-such-run") && error.contains("journal.jsonl"),
        "{error}"
    );
}

/// Runs with a model that never calls a tool (one reply per unit) and returns the sample ids
/// that ran, in the order of the baseline arm.
fn ids_run(opts: &RunOptions, units: usize) -> Vec<String> {
    let replies = vec!["Glad to help. Have a good day!"; units];
    let mut backend = ScriptedBackend::new(Family::Gemma, replies);
    let result = runner::run(&mut backend, opts).expect("run");
    assert_eq!(backend.remaining(), 0);
    result
        .entries
        .iter()
        .filter(|e| e.arm == Arm::Baseline)
        .map(|e| e.sample_id.clone())
        .collect()
}

#[test]
fn limit_takes_categories_in_turn() {
    let output = tempfile::tempdir().unwrap();
    let mut opts = options(output.path(), 1, false);
    opts.limit = Some(4);
    let ids = ids_run(&opts, 3 * 4);
    // Corpus order of first appearance: lookup, messy_name, chitchat; then round again.
    assert_eq!(
        ids,
        [
            "lookup-oslo",
            "messy-sodankyla",
            "chitchat-hello",
            "lookup-uccle"
        ]
    );

    // Once messy_name runs dry the turns go on without it.
    opts.limit = Some(5);
    let ids = ids_run(&opts, 3 * 5);
    assert_eq!(&ids[3..], ["lookup-uccle", "chitchat-thanks"]);
}

#[test]
fn category_keeps_only_the_named_categories() {
    let output = tempfile::tempdir().unwrap();
    let mut opts = options(output.path(), 1, false);
    opts.categories = vec!["chitchat".into(), "messy_name".into()];
    let ids: BTreeSet<String> = ids_run(&opts, 3 * 3).into_iter().collect();
    let expected: BTreeSet<String> = ["chitchat-hello", "chitchat-thanks", "messy-sodankyla"]
        .map(String::from)
        .into();
    assert_eq!(ids, expected);

    opts.categories = vec!["weather".into()];
    let mut backend = ScriptedBackend::new(Family::Gemma, Vec::<String>::new());
    let error = runner::run(&mut backend, &opts)
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("--category \"weather\"") && error.contains("lookup"),
        "{error}"
    );
}

#[test]
fn an_a_a_run_salts_the_second_arm_and_stays_within_noise() {
    let output = tempfile::tempdir().unwrap();
    let opts = options(output.path(), 2, false);
    let samples = opts.pack.corpus(None).unwrap();
    let (result, backend) = run_with(&opts, script(&samples, 2, true, 0, diligent));
    assert_eq!(backend.remaining(), 0);
    for c in result
        .summary
        .wording
        .categories
        .iter()
        .chain([&result.summary.wording.total])
    {
        assert!(!c.changed(), "{}", c.name);
    }
    let manifest: Manifest =
        serde_json::from_str(&std::fs::read_to_string(result.dir.join("manifest.json")).unwrap())
            .unwrap();
    assert_eq!(manifest.variant, None);
    assert_eq!(manifest.baseline_body_sha256, manifest.variant_body_sha256);
    // Same wording, different dice: the seeds of the two arms differ; control keeps the
    // baseline's.
    for s in &samples {
        let baseline = entry(&result.entries, &s.id, Arm::Baseline, 0);
        let variant = entry(&result.entries, &s.id, Arm::Variant(0), 0);
        let control = entry(&result.entries, &s.id, Arm::Control, 0);
        assert_ne!(baseline.seed, variant.seed, "{}", s.id);
        assert_eq!(baseline.seed, control.seed, "{}", s.id);
    }
    assert!(result.summary.skill_effect.is_some());
    // The report says that no variant ran, not "Wording: …" as if one had.
    let text = skilleval::eval::report::table(&result.summary);
    assert!(
        text.contains("A/A: the baseline against a second draw of itself (no variant ran)"),
        "{text}"
    );
    let markdown = skilleval::eval::report::markdown(&result.summary, "t", "s");
    assert!(
        markdown.contains("A/A (the baseline against a second draw of itself): No category"),
        "{markdown}"
    );
    for text in [&text, &markdown] {
        assert!(!text.contains("Wording"), "{text}");
    }

    // With a variant both arms share each seed, so only the wording differs.
    let output = tempfile::tempdir().unwrap();
    let opts = options(output.path(), 1, true);
    let (result, _) = run_with(&opts, script(&samples, 1, false, 0, diligent));
    for s in &samples {
        let baseline = entry(&result.entries, &s.id, Arm::Baseline, 0);
        let variant = entry(&result.entries, &s.id, Arm::Variant(0), 0);
        let control = entry(&result.entries, &s.id, Arm::Control, 0);
        assert_eq!(baseline.seed, variant.seed, "{}", s.id);
        assert_eq!(baseline.seed, control.seed, "{}", s.id);
    }
}

/// The control arm's prompts carry the skill's name and description but not its body.
#[test]
fn the_control_arm_offers_the_skill_without_its_body() {
    let output = tempfile::tempdir().unwrap();
    let opts = options(output.path(), 1, true);
    let samples = opts.pack.corpus(None).unwrap();
    let (result, backend) = run_with(&opts, script(&samples, 1, false, 0, diligent));
    let body = "exactly as\nthe user wrote it";
    let description = "Read the latest temperature of a named weather station.";
    // Plan order: control's units come first in each repeat.
    let first_control = &backend.prompts[0];
    assert!(first_control.contains(description), "{first_control}");
    assert!(!first_control.contains(body), "{first_control}");
    let baseline_prompts = backend.prompts.iter().filter(|p| p.contains(body)).count();
    assert!(baseline_prompts > 0);
    assert!(result.entries.iter().any(|e| e.arm == Arm::Control));
    let skill = result.summary.skill_effect.as_ref().unwrap();
    assert_eq!(
        (skill.reference, skill.treatment),
        (Arm::Control, Arm::Baseline)
    );
}

#[test]
fn no_control_skips_the_control_arm() {
    let output = tempfile::tempdir().unwrap();
    let mut opts = options(output.path(), 1, true);
    opts.control = false;
    let samples = opts.pack.corpus(None).unwrap();
    let replies = script_for(&samples, 1, false, false, 0, variant_skips_uccle);
    let (result, backend) = run_with(&opts, replies);
    assert_eq!(backend.remaining(), 0);
    assert_eq!(result.entries.len(), 2 * samples.len());
    assert!(result.entries.iter().all(|e| e.arm != Arm::Control));
    assert_eq!(result.summary.skill_effect, None);
    let manifest: Manifest =
        serde_json::from_str(&std::fs::read_to_string(result.dir.join("manifest.json")).unwrap())
            .unwrap();
    assert!(!manifest.control);
    assert_eq!(manifest.control_body_sha256, None);
    let report = std::fs::read_to_string(result.dir.join("report.md")).unwrap();
    assert!(report.contains("--no-control"), "{report}");
}

/// Outcomes of `samples` samples in one category, with the variant passing as `variant_passes`
/// says and the baseline always passing.
fn outcomes(
    category: &str,
    samples: usize,
    variant_passes: impl Fn(usize) -> bool,
) -> Vec<Outcome> {
    (0..samples)
        .flat_map(|s| {
            [(Arm::Baseline, true), (Arm::Variant(0), variant_passes(s))].map(|(arm, passed)| {
                Outcome {
                    sample_id: format!("{category}-{s}"),
                    category: category.into(),
                    arm,
                    repeat: 0,
                    passed,
                    failed_laws: Vec::new(),
                    applied_laws: Vec::new(),
                    gapped: false,
                    errored: false,
                }
            })
        })
        .collect()
}

#[test]
fn fail_on_worse_trips_only_on_a_worse_verdict() {
    // Twelve samples broken by the variant: p = 2/4096, the interval at −100 pp.
    let mut broken = outcomes("broken", 12, |_| false);
    broken.extend(outcomes("fine", 12, |_| true));
    let summary = stats::summarize(&broken).unwrap();
    assert_eq!(category(&summary, "broken").verdict, Verdict::Worse);
    assert!(stats::any_worse(&summary));

    // Three broken samples are too few to tell from noise.
    let summary = stats::summarize(&outcomes("few", 12, |s| s >= 3)).unwrap();
    assert_eq!(summary.wording.total.verdict, Verdict::NoChange);
    assert!(!stats::any_worse(&summary));

    let summary = stats::summarize(&outcomes("same", 12, |_| true)).unwrap();
    assert!(!stats::any_worse(&summary));
}
