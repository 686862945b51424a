//! The commands a run folder suggests work as printed, wherever its pack is: a pack in a folder
//! whose name is not the pack's, run on the scripted backend into a folder of runs that is not
//! `output/`, then the hint `skilleval report` prints (`skilleval fixtures …`) and `report
//! --rejudge` run from a folder with no `packs/` in it, and the report rebuilt from another
//! folder with the run's prompts.

mod common;

use skilleval::eval::arm::Arm;
use skilleval::eval::corpus::Sample;
use skilleval::eval::pack::Pack;
use skilleval::eval::reuse::BaselineSource;
use skilleval::eval::runner::{self, RunOptions};
use skilleval::harness::template::Family;

use common::cli::{both, skilleval_in};
use common::scripted::{call, copy_pack, reading_of, script_for};
use common::scripted_backend::ScriptedBackend;

const TOOL: &str = "station_reading";
/// A station the mini pack has no recording of: the variant's calls for it are gaps.
const UNRECORDED: &str = "Atlantis Central";

/// The baseline asks for the named station; the variant asks for one nobody recorded.
fn replies(sample: &Sample, arm: Arm) -> Vec<String> {
    match sample.fields.get("station").and_then(|s| s.as_str()) {
        Some(_) if arm == Arm::Variant(0) => vec![
            call(TOOL, "station", UNRECORDED),
            "No reading came back.".into(),
        ],
        Some(station) => vec![
            call(TOOL, "station", station),
            format!("The station reports {}.", reading_of(station)),
        ],
        None => vec!["Glad to help. Have a good day!".into()],
    }
}

#[test]
fn the_hints_of_a_run_whose_pack_folder_is_not_named_after_it_work_as_printed() {
    let (temp, copied) = copy_pack("mini");
    // The pack is called "mini"; its folder is not.
    let pack_dir = temp.path().join("station-skill-pack");
    std::fs::rename(&copied, &pack_dir).unwrap();
    let runs = temp.path().join("runs");
    // Named relative to the folder it stands in, as `run --pack station-skill-pack` would be
    // (this file's one test, so the process's folder is its own).
    std::env::set_current_dir(temp.path()).unwrap();
    let mut opts = RunOptions::new(Pack::load("station-skill-pack").unwrap());
    opts.output_root = runs.clone();
    opts.repeats = 1;
    opts.variants = vec![pack_dir.join("variant.md")];
    opts.control = false;
    opts.baseline_source = BaselineSource::Off;
    let samples = opts.pack.corpus(None).unwrap();
    let mut backend = ScriptedBackend::new(
        Family::Gemma,
        script_for(&samples, 1, false, false, 0, replies),
    );
    let result = runner::run(&mut backend, &opts).expect("the run completes");
    assert_eq!(backend.remaining(), 0);

    // From the folder that holds the pack and the runs, as the author would stand.
    let cwd = temp.path();
    assert!(!cwd.join("packs").exists() && !cwd.join("output").exists());
    let dir = result.dir.to_str().unwrap();
    let report = skilleval_in(cwd, &["report", dir]);
    assert!(report.status.success(), "{}", both(&report));
    let printed = both(&report);
    let hint = printed
        .split('`')
        .find(|part| part.starts_with("skilleval fixtures "))
        .unwrap_or_else(|| panic!("no `skilleval fixtures` hint in:\n{printed}"));
    let words: Vec<&str> = hint.split_whitespace().skip(1).collect();
    let fixtures = skilleval_in(cwd, &words);
    assert!(
        fixtures.status.success(),
        "`{hint}` failed:\n{}",
        both(&fixtures)
    );
    let stubs: Vec<String> = std::fs::read_dir(pack_dir.join("fixtures").join(TOOL))
        .unwrap()
        .flatten()
        .map(|e| std::fs::read_to_string(e.path()).unwrap())
        .filter(|body| body.contains(UNRECORDED))
        .collect();
    assert_eq!(stubs.len(), 1, "{}", both(&fixtures));

    // From another folder, the report still finds the run's corpus for its prompts.
    let elsewhere = cwd.join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    let rebuilt = skilleval_in(&elsewhere, &["report", dir]);
    assert!(rebuilt.status.success(), "{}", both(&rebuilt));
    assert!(
        !both(&rebuilt).contains("prompts not shown"),
        "{}",
        both(&rebuilt)
    );

    let rejudge = skilleval_in(cwd, &["report", dir, "--rejudge"]);
    assert!(rejudge.status.success(), "{}", both(&rejudge));
    assert!(
        both(&rejudge).contains("judged again with mini's laws"),
        "{}",
        both(&rejudge)
    );
}
