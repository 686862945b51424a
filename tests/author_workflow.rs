//! A skill author's workflow on the scripted backend: several variants against one baseline in
//! one run, a baseline taken from an earlier run with the same inputs (and never from one whose
//! inputs differ), and the winning wording stamped with its scores.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use skilleval::eval::arm::{self, Arm};
use skilleval::eval::corpus::Sample;
use skilleval::eval::plan;
use skilleval::eval::record::manifest::Manifest;
use skilleval::eval::record::{self, JournalEntry};
use skilleval::eval::report;
use skilleval::eval::reuse::BaselineSource;
use skilleval::eval::run_summary;
use skilleval::eval::runner::{self, RunOptions, RunResult};
use skilleval::eval::stamp;
use skilleval::harness::prompt::SystemPrompt;
use skilleval::harness::skills::SkillTree;
use skilleval::harness::template::Family;
use skilleval::harness::toolcall::CallFormat;

use common::options::run_options;
use common::scripted::{call, copy_pack, edit, lines, reading_of};
use common::scripted_backend::ScriptedBackend;

const TOOL: &str = "station_reading";

/// The mini pack copied, with two more variants beside its own `variant.md`: `second.md`
/// (front matter and a body) and `third.md` (a body alone).
fn pack_with_variants() -> (tempfile::TempDir, PathBuf, Vec<PathBuf>) {
    let (temp, dir) = copy_pack("mini");
    let second = dir.join("second.md");
    std::fs::write(
        &second,
        "---\nname: stations\ndescription: Read the latest temperature of a named weather station.\nversion: \"1.4\"\nallowed-tools: station_reading\n---\nCall station_reading with the station's name as the user wrote it; then give its temperature in °C.\n",
    )
    .unwrap();
    let third = dir.join("third.md");
    std::fs::write(&third, "Answer from memory; never call a tool.\n").unwrap();
    let variants = vec![dir.join("variant.md"), second, third];
    (temp, dir, variants)
}

fn options(pack_dir: &Path, output: &Path, variants: &[PathBuf], repeats: u32) -> RunOptions {
    let mut opts = run_options(pack_dir, output, repeats);
    opts.variants = variants.to_vec();
    opts
}

/// Replies by arm: the baseline and `second.md` ask for the station (the baseline skips Uccle),
/// `variant.md` skips Uccle and Oslo, `third.md` never calls.
fn replies(sample: &Sample, arm: Arm) -> Vec<String> {
    let station = sample.fields.get("station").and_then(|s| s.as_str());
    let skips = match arm {
        Arm::Control => true,
        Arm::Baseline => sample.id == "lookup-uccle",
        Arm::Variant(0) => ["lookup-uccle", "lookup-oslo"].contains(&sample.id.as_str()),
        Arm::Variant(1) => false,
        Arm::Variant(_) => true,
    };
    match station {
        Some(_) if skips => vec!["It is about 15 °C there.".into()],
        Some(station) => vec![
            call(TOOL, "station", station),
            format!("The station reports {}.", reading_of(station)),
        ],
        None => vec!["Glad to help. Have a good day!".into()],
    }
}

/// Replies for `arms` in the runner's plan order, leaving out the units of `skipped` arms.
fn script(
    opts: &RunOptions,
    arms: &[Arm],
    skipped: &[Arm],
    replies_for: impl Fn(&Sample, Arm) -> Vec<String>,
) -> Vec<String> {
    let samples = opts.pack.corpus(None).unwrap();
    plan::plan(&samples, opts.repeats, opts.seed, arms, false)
        .iter()
        .filter(|u| !skipped.contains(&u.arm))
        .flat_map(|u| replies_for(&samples[u.sample_index], u.arm))
        .collect()
}

fn run_with(opts: &RunOptions, replies: Vec<String>) -> RunResult {
    let mut backend = ScriptedBackend::new(Family::Gemma, replies);
    let result = runner::run(&mut backend, opts).expect("the run completes");
    assert_eq!(backend.remaining(), 0, "every scripted reply was asked for");
    result
}

/// (sample, repeat, seed, each round's text, failed laws): what was judged of one unit.
type Judged = (String, u32, u32, Vec<String>, Vec<String>);

/// What was judged of one arm's units, in key order.
fn judged(entries: &[JournalEntry], arm: Arm) -> Vec<Judged> {
    let mut rows: Vec<_> = entries
        .iter()
        .filter(|e| e.arm == arm)
        .map(|e| {
            (
                e.sample_id.clone(),
                e.repeat,
                e.seed,
                e.transcript.rounds.iter().map(|r| r.raw.clone()).collect(),
                e.judgement.failed.clone(),
            )
        })
        .collect();
    rows.sort();
    rows
}

#[test]
fn three_variants_run_against_one_baseline_with_one_correction() {
    let (_temp, pack_dir, variants) = pack_with_variants();
    let output = tempfile::tempdir().unwrap();
    let opts = options(&pack_dir, output.path(), &variants, 2);
    let arms = arm::in_plan_order(true, 3);
    assert_eq!(
        arms,
        [
            Arm::Control,
            Arm::Baseline,
            Arm::Variant(0),
            Arm::Variant(1),
            Arm::Variant(2)
        ]
    );
    let result = run_with(&opts, script(&opts, &arms, &[], replies));
    let samples = opts.pack.corpus(None).unwrap();
    assert_eq!(result.entries.len(), 5 * 2 * samples.len());

    // Every arm of a (sample, repeat) shares its seed.
    for e in &result.entries {
        let baseline = result
            .entries
            .iter()
            .find(|b| b.arm == Arm::Baseline && b.sample_id == e.sample_id && b.repeat == e.repeat)
            .unwrap();
        assert_eq!(e.seed, baseline.seed, "{} {:?}", e.sample_id, e.arm);
    }

    let summary = &result.summary;
    let labels: Vec<Option<&str>> = summary.wordings().map(|w| w.label.as_deref()).collect();
    assert_eq!(
        labels,
        [Some("variant.md"), Some("second.md"), Some("third.md")]
    );
    let treatments: Vec<Arm> = summary.wordings().map(|w| w.treatment).collect();
    assert_eq!(
        treatments,
        [Arm::Variant(0), Arm::Variant(1), Arm::Variant(2)]
    );
    // Each variant's own rates, from the script: lookup has 3 samples.
    let lookup = |arm: Arm| {
        summary
            .wordings()
            .find(|w| w.treatment == arm)
            .unwrap()
            .categories
            .iter()
            .find(|r| r.name == "lookup")
            .unwrap()
            .treatment
            .rate
    };
    // Vostok has no recording: the gapped run is scored as judged (it failed), not dropped.
    assert_eq!(lookup(Arm::Variant(1)), Some(2.0 / 3.0));
    assert_eq!(lookup(Arm::Variant(2)), Some(0.0));

    // One error budget over the run: each variant's rows face α over the three variants, so
    // no row's level exceeds α/3.
    for wording in summary.wordings() {
        for row in wording.rows().filter(|r| r.samples > 0) {
            assert!(
                row.level <= 0.05 / 3.0 + 1e-12,
                "{} {}: level {}",
                wording.name,
                row.name,
                row.level
            );
        }
    }

    // The same comparison of the first variant alone: same Δ and raw p, a stricter level.
    let single_out = tempfile::tempdir().unwrap();
    let single = options(&pack_dir, single_out.path(), &variants[..1], 2);
    let alone = run_with(
        &single,
        script(&single, &arm::in_plan_order(true, 1), &[], replies),
    );
    assert_eq!(
        judged(&alone.entries, Arm::Variant(0)),
        judged(&result.entries, Arm::Variant(0))
    );
    for (joint, own) in result
        .summary
        .wording
        .categories
        .iter()
        .zip(&alone.summary.wording.categories)
    {
        assert_eq!((joint.delta, joint.p_value), (own.delta, own.p_value));
        assert!(joint.p_adjusted >= own.p_adjusted, "{}", joint.name);
        assert!(joint.level <= own.level, "{}", joint.name);
    }

    // The files carry every variant.
    let dir = &result.dir;
    let manifest: Manifest =
        serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    let more: Vec<&str> = manifest
        .more_variants
        .iter()
        .map(|v| v.path.as_str())
        .collect();
    assert_eq!(
        more,
        [variants[1].to_str().unwrap(), variants[2].to_str().unwrap()]
    );
    let csv = lines(&dir.join("summary.csv"));
    let comparisons: BTreeSet<&str> = csv
        .iter()
        .skip(1)
        .map(|l| l.split(',').next().unwrap())
        .collect();
    assert_eq!(
        comparisons,
        BTreeSet::from([
            "skill_effect",
            "wording",
            "wording:variant2",
            "wording:variant3"
        ])
    );
    let table = report::table(&result.summary);
    assert!(
        table.contains("Wording: second.md (variant2) against baseline"),
        "{table}"
    );
    assert!(table.contains("Variants side by side"), "{table}");
    let markdown = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(markdown.contains("**Wording, third.md: "), "{markdown}");
    let junit = report::junit::junit(&result.summary, &result.run_id);
    assert!(
        junit.contains("skilleval.wording.variant3.category"),
        "{junit}"
    );
    // Rebuilt from the folder, the summary is the run's, names included.
    let record = record::load(dir).unwrap();
    assert_eq!(run_summary::of_record(&record).unwrap(), result.summary);
}

/// A run of `second.md` alone whose baseline and control are copied: only its own arm asks.
fn second_wording_only(opts: &RunOptions) -> Vec<String> {
    let as_second = |s: &Sample, arm: Arm| {
        replies(
            s,
            if arm == Arm::Variant(0) {
                Arm::Variant(1)
            } else {
                arm
            },
        )
    };
    script(
        opts,
        &arm::in_plan_order(true, 1),
        &[Arm::Control, Arm::Baseline],
        as_second,
    )
}

#[test]
fn a_later_run_takes_its_baseline_from_an_earlier_one_with_the_same_inputs() {
    let (_temp, pack_dir, variants) = pack_with_variants();
    let output = tempfile::tempdir().unwrap();
    let first_opts = options(&pack_dir, output.path(), &variants[..1], 2);
    let first = run_with(
        &first_opts,
        script(&first_opts, &arm::in_plan_order(true, 1), &[], replies),
    );

    // The second wording alone, its baseline from the cache: only its own arm runs.
    let mut later = options(&pack_dir, output.path(), &variants[1..2], 2);
    later.baseline_source = BaselineSource::Cache;
    let second = run_with(&later, second_wording_only(&later));
    assert_eq!(second.baseline_from.as_deref(), Some(first.run_id.as_str()));
    let copied = |dir: &Path| -> BTreeSet<String> {
        lines(&dir.join(record::folder::JOURNAL_FILE))
            .into_iter()
            .filter(|l| !l.contains("\"arm\":\"variant\""))
            .collect()
    };
    // The baseline and control lines are the earlier journal's, byte for byte.
    assert_eq!(copied(&second.dir), copied(&first.dir));
    assert_eq!(
        judged(&second.entries, Arm::Baseline),
        judged(&first.entries, Arm::Baseline)
    );
    let manifest = record::load(&second.dir).unwrap().manifest;
    assert_eq!(
        manifest.baseline_from.as_deref(),
        Some(first.run_id.as_str())
    );

    // Named explicitly, the same run is taken.
    let mut named = later.clone();
    named.baseline_source = BaselineSource::Run(first.run_id.clone());
    let third = run_with(&named, second_wording_only(&named));
    assert_eq!(third.baseline_from.as_deref(), Some(first.run_id.as_str()));
}

/// The earlier run of a reuse test, in its own output folder.
fn earlier_run(pack_dir: &Path, output: &Path, variants: &[PathBuf]) -> RunResult {
    let opts = options(pack_dir, output, &variants[..1], 1);
    run_with(
        &opts,
        script(&opts, &arm::in_plan_order(true, 1), &[], replies),
    )
}

/// Whether a later run of the second wording took its baseline from the earlier run, after
/// `change` altered the pack's files or the earlier run's manifest, and `tweak` the later
/// run's options.
fn reused_after(change: impl FnOnce(&Path, &Path), tweak: impl FnOnce(&mut RunOptions)) -> bool {
    let (_temp, pack_dir, variants) = pack_with_variants();
    let output = tempfile::tempdir().unwrap();
    let first = earlier_run(&pack_dir, output.path(), &variants);
    change(&pack_dir, &first.dir);
    let mut later = options(&pack_dir, output.path(), &variants[1..2], 1);
    later.baseline_source = BaselineSource::Cache;
    tweak(&mut later);
    let mut backend =
        ScriptedBackend::new(Family::Gemma, std::iter::repeat_n("Glad to help.", 500));
    let result = runner::run(&mut backend, &later).unwrap();
    result.baseline_from.is_some()
}

/// Rewrites one field of the earlier run's manifest, as if it had run with another value.
fn set_manifest(dir: &Path, pointer: &str, value: serde_json::Value) {
    let path = dir.join("manifest.json");
    let mut manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    *manifest
        .pointer_mut(pointer)
        .unwrap_or_else(|| panic!("{pointer}")) = value;
    std::fs::write(&path, serde_json::to_string_pretty(&manifest).unwrap()).unwrap();
}

#[test]
fn no_input_of_the_key_can_change_without_the_baseline_running_again() {
    let same = |_: &Path, _: &Path| {};
    let keep = |_: &mut RunOptions| {};
    assert!(reused_after(same, keep), "the same inputs reuse");
    assert!(!reused_after(same, |o| o.baseline_source = BaselineSource::Off));
    assert!(!reused_after(same, |o| o.seed = 7), "the seed");
    assert!(
        !reused_after(same, |o| o.temperature = Some(0.3)),
        "sampling"
    );
    let files = [
        (
            "corpus.jsonl",
            "Thanks, that was helpful.",
            "Thanks, that helped.",
        ),
        ("skills/stations/SKILL.md", "in °C.", "in degrees Celsius."),
        ("pack.toml", "max_rounds = 3", "max_rounds = 4"),
        ("fixtures/station_reading/uccle.json", "14 °C", "15 °C"),
    ];
    for (file, old, new) in files {
        assert!(
            !reused_after(|dir, _| edit(&dir.join(file), old, new), keep),
            "{file}"
        );
    }
    let fields = [
        ("/model_sha256", serde_json::json!("0000")),
        ("/skilleval_version", serde_json::json!("0.0.0")),
        ("/llama_cpp_2_version", serde_json::json!("0.0.0")),
        ("/backend/name", serde_json::json!("llama.cpp")),
        ("/backend/n_batch", serde_json::json!(512)),
        ("/parallel", serde_json::json!(2)),
        ("/call_format", serde_json::json!("JsonTag")),
        ("/record", serde_json::json!("Gaps")),
    ];
    for (pointer, value) in fields {
        assert!(
            !reused_after(|_, first| set_manifest(first, pointer, value), keep),
            "{pointer}"
        );
    }
    // The scripted backend names no CPU features; a run on llama.cpp's kernels does.
    let backend = |features: Option<&str>| {
        let mut backend = serde_json::json!({"name": "scripted", "load_secs": 0.0, "threads": 0,
            "n_ctx": 0, "sequences": 0, "n_batch": 0});
        if let Some(features) = features {
            backend["cpu_features"] = features.into();
        }
        move |_: &Path, first: &Path| set_manifest(first, "/backend", backend)
    };
    assert!(reused_after(backend(None), keep), "the scripted backend");
    assert!(
        !reused_after(backend(Some("AVX2 FMA")), keep),
        "/backend/cpu_features"
    );
}

/// The error a run with `opts` stops with before it asks the model anything.
fn refusal(opts: &RunOptions) -> String {
    let mut backend = ScriptedBackend::new(Family::Gemma, Vec::<String>::new());
    runner::run(&mut backend, opts)
        .err()
        .expect("refused")
        .to_string()
}

#[test]
fn a_named_baseline_with_other_inputs_is_refused_in_one_line() {
    let (_temp, pack_dir, variants) = pack_with_variants();
    let output = tempfile::tempdir().unwrap();
    let first = earlier_run(&pack_dir, output.path(), &variants);
    let mut later = options(&pack_dir, output.path(), &variants[1..2], 1);
    later.seed = 9;
    later.baseline_source = BaselineSource::Run(first.run_id.clone());
    let error = refusal(&later);
    assert!(
        error.contains(&format!("--baseline-from {}", first.run_id)),
        "{error}"
    );
    assert!(error.contains("run_seed"), "{error}");
    assert_eq!(error.lines().count(), 1, "{error}");
}

/// A copy of `dir`'s run folder as a run that was cut short before its first unit finished:
/// the same manifest under another id, started later, with an empty journal.
fn cut_short_copy(dir: &Path, run_id: &str) -> PathBuf {
    let copy = dir.parent().unwrap().join(run_id);
    std::fs::create_dir(&copy).unwrap();
    let mut manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    manifest["run_id"] = run_id.into();
    manifest["started_unix"] = (manifest["started_unix"].as_u64().unwrap() + 60).into();
    std::fs::write(copy.join("manifest.json"), manifest.to_string()).unwrap();
    std::fs::write(copy.join(record::folder::JOURNAL_FILE), "").unwrap();
    copy
}

#[test]
fn a_run_cut_short_with_the_same_inputs_gives_no_baseline() {
    let (_temp, pack_dir, variants) = pack_with_variants();
    let output = tempfile::tempdir().unwrap();
    let first = earlier_run(&pack_dir, output.path(), &variants);
    let empty = "29990101-000000-mini";
    cut_short_copy(&first.dir, empty);

    // The cache passes over the newer, empty run and takes every unit from the full one.
    let mut later = options(&pack_dir, output.path(), &variants[1..2], 1);
    later.baseline_source = BaselineSource::Cache;
    let result = run_with(&later, second_wording_only(&later));
    assert_eq!(result.baseline_from.as_deref(), Some(first.run_id.as_str()));
    let copied = result
        .entries
        .iter()
        .filter(|e| e.arm != Arm::Variant(0))
        .count();
    assert!(copied > 0);
    assert_eq!(result.baseline_copied, copied);

    // Named, the empty run is refused in one line.
    later.baseline_source = BaselineSource::Run(empty.into());
    let error = refusal(&later);
    assert!(
        error.contains("holds none of this run's baseline units"),
        "{error}"
    );
    assert_eq!(error.lines().count(), 1, "{error}");

    // With only the empty run there, the baseline runs anew and no source is claimed.
    std::fs::remove_dir_all(&first.dir).unwrap();
    std::fs::remove_dir_all(&result.dir).unwrap();
    later.baseline_source = BaselineSource::Cache;
    let mut backend =
        ScriptedBackend::new(Family::Gemma, std::iter::repeat_n("Glad to help.", 500));
    let alone = runner::run(&mut backend, &later).unwrap();
    assert_eq!(alone.baseline_from, None);
    assert_eq!(alone.baseline_copied, 0);
}

/// The mini pack with three variants, run on the script with the control arm: the folders
/// that hold it, the pack, the variants and the run.
fn three_variants_run() -> (
    (tempfile::TempDir, tempfile::TempDir),
    PathBuf,
    Vec<PathBuf>,
    RunResult,
) {
    let (pack_temp, pack_dir, variants) = pack_with_variants();
    let output = tempfile::tempdir().unwrap();
    let opts = options(&pack_dir, output.path(), &variants, 2);
    let arms = arm::in_plan_order(true, 3);
    let result = run_with(&opts, script(&opts, &arms, &[], replies));
    ((pack_temp, output), pack_dir, variants, result)
}

/// The system text the model is shown with `text` as the skill's `SKILL.md`, loaded.
fn prompt_with(pack_dir: &Path, text: &str) -> String {
    let tree = SkillTree::load(&pack_dir.join("skills"))
        .unwrap()
        .with_overlay("stations", text, Path::new("stamped.md"))
        .unwrap();
    let loaded = vec!["stations".to_string()];
    SystemPrompt {
        instructions: "You are a helpful assistant.",
        format: CallFormat::Markup,
        skills: &tree,
        loaded: &loaded,
        tools: &[],
        examples: Default::default(),
        deferred: &[],
        read_tool_output: false,
    }
    .render()
}

#[test]
fn the_winning_wording_is_stamped_and_the_model_never_sees_the_stamp() {
    let (_folders, pack_dir, variants, result) = three_variants_run();
    let record = record::load(&result.dir).unwrap();
    let mut summary = run_summary::of_record(&record).unwrap();
    // Three samples cannot show the skill's effect, and then no variant wins by itself (the
    // test below): read without the control, as a run without one.
    summary.skill_effect = None;

    // second.md passes every lookup, where the baseline misses Uccle, but three samples call
    // no row better: the baseline keeps its place, and second.md is stamped when named.
    assert_eq!(
        stamp::winner(&record, &summary, None).unwrap().arm,
        Arm::Baseline
    );
    let winner = stamp::winner(&record, &summary, Some(&variants[1])).unwrap();
    assert_eq!(winner.arm, Arm::Variant(1));
    assert_eq!(winner.file, variants[1]);
    let before = std::fs::read_to_string(&variants[1]).unwrap();
    let stamped = stamp::stamp(&record, &summary, winner).unwrap();
    assert_eq!(stamped.version, (Some("1.4".into()), "1.5".into()));
    let text = &stamped.text;
    assert!(text.contains("version: \"1.5\""), "{text}");
    assert!(
        text.contains(&format!("# skilleval: run {}", result.run_id)),
        "{text}"
    );
    // Vostok has no recording: a gap, scored as judged (it failed in both arms).
    assert!(
        text.contains("# skilleval: lookup 66.7% over 3 samples · Δ +33.3 pp"),
        "{text}"
    );
    assert!(text.contains("# skilleval: total "), "{text}");
    assert_eq!(
        prompt_with(&pack_dir, text),
        prompt_with(&pack_dir, &before),
        "the stamp changes nothing the model is shown"
    );
    // The stamped file still loads and its body is the one measured; stamping it again with
    // the same run is refused, so its version is not bumped for the same evidence.
    std::fs::write(&variants[1], text).unwrap();
    let again = stamp::winner(&record, &summary, Some(&variants[1])).unwrap();
    let twice = stamp::stamp(&record, &summary, again)
        .err()
        .unwrap()
        .to_string();
    assert!(
        twice.contains("already carries the stamp of run"),
        "{twice}"
    );

    // A body edited after the run is not stamped with that run's scores.
    edit(&variants[1], "as the user wrote it", "exactly as written");
    let changed = stamp::winner(&record, &summary, Some(&variants[1])).unwrap();
    let refused = stamp::stamp(&record, &summary, changed)
        .err()
        .unwrap()
        .to_string();
    assert!(refused.contains("the body changed since run"), "{refused}");
    // A body-only variant has no front matter to hold a stamp.
    let third = stamp::winner(&record, &summary, Some(&variants[2])).unwrap();
    let refused = stamp::stamp(&record, &summary, third)
        .err()
        .unwrap()
        .to_string();
    assert!(refused.contains("no front matter"), "{refused}");
}

#[test]
fn a_wording_with_a_row_worse_is_stamped_only_when_named() {
    let (_folders, _, variants, result) = three_variants_run();
    let record = record::load(&result.dir).unwrap();
    let mut summary = run_summary::of_record(&record).unwrap();
    // Three samples call no row better: the baseline keeps its place.
    assert_eq!(
        stamp::winner(&record, &summary, None).unwrap().arm,
        Arm::Baseline
    );
    // The same run with second.md's total better beyond noise: it would win, but the control
    // of three samples shows nothing, so no variant is chosen by itself.
    let second = summary
        .wordings()
        .position(|w| w.treatment == Arm::Variant(1))
        .unwrap();
    let comparison = if second == 0 {
        &mut summary.wording
    } else {
        &mut summary.more_wordings[second - 1]
    };
    comparison.total.verdict = skilleval::eval::stats::Verdict::Better;
    let refused = stamp::winner(&record, &summary, None)
        .err()
        .unwrap()
        .to_string();
    assert!(refused.contains("changed nothing measurable"), "{refused}");
    assert!(stamp::winner(&record, &summary, Some(&variants[0])).is_ok());
    let control = summary.skill_effect.take();
    assert_eq!(
        stamp::winner(&record, &summary, None).unwrap().arm,
        Arm::Variant(1)
    );

    // And with one law of its comparison worse beyond noise: its total is still the highest,
    // and it is passed over.
    let comparison = if second == 0 {
        &mut summary.wording
    } else {
        &mut summary.more_wordings[second - 1]
    };
    let law = comparison.laws.first_mut().expect("a law row");
    law.verdict = skilleval::eval::stats::Verdict::Worse;
    let law_name = law.name.clone();
    let chosen = stamp::winner(&record, &summary, None).unwrap();
    assert_ne!(chosen.arm, Arm::Variant(1));
    assert!(chosen.declined.is_empty());
    let passed_over = stamp::passed_over(&record, &summary);
    assert_eq!(passed_over.len(), 1, "{passed_over:?}");
    assert!(
        passed_over[0].1[0].starts_with(&law_name),
        "{passed_over:?}"
    );

    // Named, it is stamped, and the rows that declined travel with it.
    let named = stamp::winner(&record, &summary, Some(&variants[1])).unwrap();
    assert_eq!(named.arm, Arm::Variant(1));
    assert_eq!(named.declined.len(), 1, "{:?}", named.declined);

    // The control's own rows say that the body changed nothing.
    assert!(!control.unwrap().any_change());
}

/// A variant with front matter but no `allowed-tools` would have its tools offered before the
/// skill loads, where the baseline offers them after: refused in one line, before the model.
#[test]
fn a_variant_that_drops_allowed_tools_is_refused_before_the_model_loads() {
    let temp = tempfile::tempdir().unwrap();
    let pack_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("packs/timetable");
    let variant = temp.path().join("no-tools.md");
    std::fs::write(
        &variant,
        "---\nname: train-times\ndescription: Train times.\n---\nUse train_times for train times.\n",
    )
    .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_skilleval"))
        .args(["run", "--pack"])
        .arg(&pack_dir)
        .arg("--variant")
        .arg(&variant)
        .args(["--model", "/nonexistent/model.gguf", "--output"])
        .arg(temp.path().join("out"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error")).collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    assert!(
        errors[0].contains(
            "no-tools.md: field `allowed-tools` is missing: the baseline grants train_times"
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("model file not found"), "{stderr}");
}
