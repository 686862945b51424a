//! Judging a run again with edited laws (decision 016), on the scripted backend and the mini
//! pack. The truth each test holds the re-judgement to is independent of it: a fresh run of the
//! pack with the new laws, whose replies are the same script, so its transcripts are the same by
//! construction and only the judging code decides both.

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use skilleval::eval::arm::{self, Arm};
use skilleval::eval::corpus::Sample;
use skilleval::eval::pack::Pack;
use skilleval::eval::plan;
use skilleval::eval::record::{self, JournalEntry};
use skilleval::eval::rejudge;
use skilleval::eval::report::files::settings_of;
use skilleval::eval::reuse::BaselineSource;
use skilleval::eval::run_summary;
use skilleval::eval::runner::{self, RunOptions, RunResult};
use skilleval::harness::template::Family;

use common::options::variant_run_options;
use common::scripted::{call, copy_pack, edit, reading_of};
use common::scripted_backend::ScriptedBackend;

const TOOL: &str = "station_reading";

/// The baseline asks for every station but Uccle; the variant also skips Oslo and says the
/// reading without the word "station".
fn replies(sample: &Sample, arm: Arm) -> Vec<String> {
    let station = sample.fields.get("station").and_then(|s| s.as_str());
    let skips = match arm {
        Arm::Baseline => sample.id == "lookup-uccle",
        _ => ["lookup-uccle", "lookup-oslo"].contains(&sample.id.as_str()),
    };
    match station {
        Some(_) if skips => vec!["It is about 15 °C there.".into()],
        Some(station) if arm == Arm::Baseline => vec![
            call(TOOL, "station", station),
            format!("The station reports {}.", reading_of(station)),
        ],
        Some(station) => vec![
            call(TOOL, "station", station),
            format!("It reads {}.", reading_of(station)),
        ],
        None => vec!["Glad to help. Have a good day!".into()],
    }
}

fn options(pack_dir: &Path, output: &Path) -> RunOptions {
    let mut opts = variant_run_options(pack_dir, output, 2);
    opts.control = false;
    opts.baseline_source = BaselineSource::Off;
    opts
}

/// Runs `opts`, the scripted replies of `arms` in plan order, skipping `skipped` arms' units.
fn run(opts: &RunOptions, skipped: &[Arm]) -> RunResult {
    let samples = opts.pack.corpus(None).unwrap();
    let script: Vec<String> = plan::plan(
        &samples,
        opts.repeats,
        opts.seed,
        &arm::in_plan_order(false, 1),
        false,
    )
    .iter()
    .filter(|u| !skipped.contains(&u.arm))
    .flat_map(|u| replies(&samples[u.sample_index], u.arm))
    .collect();
    let mut backend = ScriptedBackend::new(Family::Gemma, script);
    let result = runner::run(&mut backend, opts).expect("the run completes");
    assert_eq!(backend.remaining(), 0, "every scripted reply was asked for");
    result
}

/// Three law edits: one law added, one narrowed, one removed.
fn edit_laws(pack_dir: &Path) {
    let file = pack_dir.join("pack.toml");
    edit(
        &file,
        "from_result_pattern = '(-?\\d+(?:\\.\\d+)?) °C'\ncategories = [\"lookup\", \"messy_name\"]",
        "from_result_pattern = '(-?\\d+(?:\\.\\d+)?) °C'\ncategories = [\"lookup\"]",
    );
    edit(
        &file,
        "[[laws]]\nname = \"no-station-for-small-talk\"\nkind = \"tool_not_called\"\ntool = \"station_reading\"\ncategories = [\"chitchat\"]\n",
        "[[laws]]\nname = \"names-the-station\"\nkind = \"reply_contains\"\ntext = \"station\"\nfold = true\ncategories = [\"lookup\", \"messy_name\"]\n",
    );
}

/// Passed, failed laws, applied laws and gap of one entry.
type Verdict = (bool, Vec<String>, Vec<String>, bool);

/// Judgement and gap of each entry, by (sample, arm, repeat).
fn verdicts(entries: &[JournalEntry]) -> BTreeMap<(String, Arm, u32), Verdict> {
    entries
        .iter()
        .map(|e| {
            (
                e.key(),
                (
                    e.judgement.passed,
                    e.judgement.failed.clone(),
                    e.judgement.applied_laws.clone(),
                    e.gapped,
                ),
            )
        })
        .collect()
}

#[test]
fn a_rejudged_run_is_what_a_fresh_run_with_the_new_laws_judges() {
    let (_temp, pack_dir) = copy_pack("mini");
    let output = tempfile::tempdir().unwrap();
    let first = run(&options(&pack_dir, output.path()), &[]);
    let journal_before = std::fs::read(first.dir.join(record::folder::JOURNAL_FILE)).unwrap();

    edit_laws(&pack_dir);
    let fresh_output = tempfile::tempdir().unwrap();
    let fresh = run(&options(&pack_dir, fresh_output.path()), &[]);

    let pack = Pack::load(pack_dir.to_str().unwrap()).unwrap();
    let record = record::load(&first.dir).unwrap();
    let again = rejudge::rejudge_run(&record, &pack, output.path()).unwrap();

    assert_eq!(verdicts(&again.entries), verdicts(&fresh.entries));
    assert_ne!(
        verdicts(&again.entries),
        verdicts(&first.entries),
        "the edits change verdicts"
    );
    let rebuilt = record::load(&again.dir).unwrap();
    assert_eq!(run_summary::of_record(&rebuilt).unwrap(), fresh.summary);
    // The earlier run is left as it was.
    assert_eq!(
        std::fs::read(first.dir.join(record::folder::JOURNAL_FILE)).unwrap(),
        journal_before
    );

    let rejudged = rebuilt
        .manifest
        .rejudged
        .clone()
        .expect("the manifest says where it came from");
    assert_eq!(rejudged.from, first.run_id);
    let laws = rejudged.laws.expect("the earlier manifest names its laws");
    assert_eq!(laws.added, vec!["names-the-station"]);
    assert_eq!(laws.edited, vec!["reports-the-reading"]);
    assert_eq!(laws.removed, vec!["no-station-for-small-talk"]);
    let changed = first
        .entries
        .iter()
        .filter(|e| {
            let key = e.key();
            let fresh = fresh.entries.iter().find(|f| f.key() == key).unwrap();
            fresh.judgement != e.judgement || fresh.gapped != e.gapped
        })
        .count();
    assert_eq!(rejudged.units_changed, changed);
    assert!(changed > 0);
    // Written beside the earlier run, its settings line says so.
    assert_eq!(again.dir.parent(), first.dir.parent());
    let report = std::fs::read_to_string(again.dir.join(record::folder::MARKDOWN_FILE));
    // `rejudge_run` writes the folder; the reports are the command's to write.
    assert!(report.is_err());
    let settings = settings_of(&rebuilt);
    assert!(
        settings.contains(&format!("transcripts of run {} judged again", first.run_id)),
        "{settings}"
    );
}

#[test]
fn a_pack_changed_beyond_its_laws_or_a_changed_corpus_is_refused() {
    let (_temp, pack_dir) = copy_pack("mini");
    let output = tempfile::tempdir().unwrap();
    let first = run(&options(&pack_dir, output.path()), &[]);
    let record = record::load(&first.dir).unwrap();

    // Comments and a law edit are not a change of transcripts.
    edit_laws(&pack_dir);
    let file = pack_dir.join("pack.toml");
    edit(&file, "[budgets]", "# the budgets\n[budgets]");
    let pack = Pack::load(pack_dir.to_str().unwrap()).unwrap();
    assert!(rejudge::check_same_transcripts(&record.manifest, &pack).is_ok());

    edit(&file, "max_rounds = 3", "max_rounds = 4");
    let pack = Pack::load(pack_dir.to_str().unwrap()).unwrap();
    let error = rejudge::rejudge_run(&record, &pack, output.path())
        .unwrap_err()
        .to_string();
    assert!(error.contains("more than its laws changed"), "{error}");
    assert!(error.contains("pack.toml"), "{error}");
    assert_eq!(error.lines().count(), 1, "{error}");
    edit(&file, "max_rounds = 4", "max_rounds = 3");

    let corpus = pack_dir.join("corpus.jsonl");
    edit(
        &corpus,
        "What is the temperature at Oslo Blindern?",
        "Oslo Blindern, how warm?",
    );
    let pack = Pack::load(pack_dir.to_str().unwrap()).unwrap();
    let mut record = record;
    record.manifest.corpus = corpus.display().to_string();
    let error = rejudge::rejudge_run(&record, &pack, output.path())
        .unwrap_err()
        .to_string();
    assert!(error.contains("the corpus changed"), "{error}");
    // Nothing was written for either refusal.
    let folders = std::fs::read_dir(output.path()).unwrap().count();
    assert_eq!(folders, 1);
}

#[test]
fn a_law_change_alone_reuses_the_baseline_and_judges_it_with_the_new_laws() {
    let (_temp, pack_dir) = copy_pack("mini");
    let output = tempfile::tempdir().unwrap();
    let first = run(&options(&pack_dir, output.path()), &[]);
    let first_lines = common::scripted::lines(&first.dir.join(record::folder::JOURNAL_FILE));

    edit_laws(&pack_dir);
    let mut later = options(&pack_dir, output.path());
    later.baseline_source = BaselineSource::Cache;
    let second = run(&later, &[Arm::Baseline]);
    assert_eq!(second.baseline_from.as_deref(), Some(first.run_id.as_str()));

    // What a fresh run with the new laws judges, baseline included.
    let fresh_output = tempfile::tempdir().unwrap();
    let fresh = run(&options(&pack_dir, fresh_output.path()), &[]);
    assert_eq!(verdicts(&second.entries), verdicts(&fresh.entries));
    assert_eq!(second.summary, fresh.summary);

    // The baseline's verdicts changed for some units: those lines are new, the rest the
    // earlier journal's, byte for byte.
    let baseline_changed = first
        .entries
        .iter()
        .filter(|e| e.arm == Arm::Baseline)
        .filter(|e| {
            let f = fresh.entries.iter().find(|f| f.key() == e.key()).unwrap();
            f.judgement != e.judgement || f.gapped != e.gapped
        })
        .count();
    assert!(baseline_changed > 0);
    assert_eq!(second.baseline_rejudged, baseline_changed);
    let second_lines = common::scripted::lines(&second.dir.join(record::folder::JOURNAL_FILE));
    let kept = second_lines
        .iter()
        .filter(|l| l.contains("\"arm\":\"baseline\""))
        .filter(|l| first_lines.contains(l))
        .count();
    let baseline_units = first
        .entries
        .iter()
        .filter(|e| e.arm == Arm::Baseline)
        .count();
    assert_eq!(kept, baseline_units - baseline_changed);
    let manifest = record::load(&second.dir).unwrap().manifest;
    assert_eq!(manifest.baseline_rejudged, baseline_changed);
    assert!(settings_of(&record::load(&second.dir).unwrap())
        .contains(&format!("{baseline_changed} of its units judged again")));

    // A change beyond the laws still runs the baseline.
    edit(
        &pack_dir.join("pack.toml"),
        "max_rounds = 3",
        "max_rounds = 4",
    );
    let mut third = options(&pack_dir, output.path());
    third.baseline_source = BaselineSource::Cache;
    let third = run(&third, &[]);
    assert_eq!(third.baseline_from, None);
}

#[test]
fn the_report_command_writes_the_rejudged_folder_and_says_what_changed() {
    let (_temp, pack_dir) = copy_pack("mini");
    let output = tempfile::tempdir().unwrap();
    let first = run(&options(&pack_dir, output.path()), &[]);
    edit_laws(&pack_dir);
    let command = |extra: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_skilleval"))
            .arg("report")
            .arg(&first.dir)
            .args(extra)
            .output()
            .unwrap()
    };
    // The run's pack is the pack.toml its manifest recorded; moved away, it is named and
    // `--pack` asked for.
    let moved = pack_dir.with_file_name("moved");
    std::fs::rename(&pack_dir, &moved).unwrap();
    let refused = command(&["--rejudge"]);
    std::fs::rename(&moved, &pack_dir).unwrap();
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("--pack") && stderr.contains("pack.toml, which is gone"),
        "{stderr}"
    );

    let done = command(&["--rejudge"]);
    let stdout = String::from_utf8_lossy(&done.stdout);
    assert!(
        done.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&done.stderr)
    );
    assert!(
        stdout.contains("(changed: added names-the-station; edited reports-the-reading; removed no-station-for-small-talk)"),
        "{stdout}"
    );
    let dir = output.path().join(format!("{}-rejudged", first.run_id));
    let report = std::fs::read_to_string(dir.join(record::folder::MARKDOWN_FILE)).unwrap();
    assert!(report.contains("judged again"), "{report}");
    assert!(dir.join(record::folder::HTML_FILE).is_file());
    // A second rejudge does not overwrite the first.
    let again = command(&["--rejudge", "--pack", pack_dir.to_str().unwrap()]);
    assert!(again.status.success());
    assert!(output
        .path()
        .join(format!("{}-rejudged-2", first.run_id))
        .is_dir());
}
