//! The builds pack as shipped, on the real default model: its tool is deferred and its logs are
//! spilled, and in every transcript the harness kept to the rules the seed harness states — a
//! deferred tool runs only after `tool_search` loaded it, a log longer than the budget is shown
//! cut with the file that holds the rest, and `read_tool_output` reads on from that file. The
//! laws and judge cases agree (`check`), which is the person's labels against the laws.

mod common;

use std::path::{Path, PathBuf};

use skilleval::eval::pack::Pack;
use skilleval::eval::runner::{self, RunOptions};
use skilleval::harness::spill::LongOutput;

fn pack_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("packs/builds")
}

#[test]
fn the_pack_defers_its_tool_spills_long_output_and_its_laws_agree_with_its_cases() {
    let pack = Pack::load(pack_dir().to_str().unwrap()).expect("the builds pack loads");
    assert_eq!(pack.long_tool_output, LongOutput::Spill);
    assert!(pack.tools.iter().all(|t| t.defer));
    let out = common::cli::skilleval(&["check", "--pack", pack_dir().to_str().unwrap()]);
    let said = common::cli::both(&out);
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains("0 disagreement(s)") && said.contains(": agree"),
        "{said}"
    );
}

/// The builds pack copied, with `old` in its `pack.toml` replaced by `new`; the error it loads
/// with.
fn load_error_with(old: &str, new: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    common::files::copy_dir(&pack_dir(), dir.path());
    common::scripted::edit(&dir.path().join("pack.toml"), old, new);
    format!(
        "{:#}",
        Pack::load(dir.path().to_str().unwrap()).expect_err("the edited pack is refused")
    )
}

#[test]
fn a_blank_group_and_a_law_on_a_built_in_the_pack_does_not_offer_are_refused() {
    let blank = load_error_with("group = \"ci\"", "group = \"  \"");
    assert!(
        blank.contains("pack.toml:") && blank.contains("field `tools[0].group`"),
        "{blank}"
    );
    let undeferred = load_error_with("defer = true\ngroup = \"ci\"", "");
    assert!(
        undeferred.contains("field `laws[0].tool`")
            && undeferred.contains("tool_search is offered only"),
        "{undeferred}"
    );
    let cut = load_error_with("long_tool_output = \"spill\"", "long_tool_output = \"cut\"");
    assert!(cut.contains("read_tool_output is offered only"), "{cut}");
}

#[test]
#[cfg_attr(not(feature = "full-tier"), ignore = "full tier")]
fn on_the_real_model_deferred_calls_wait_for_tool_search_and_spilled_logs_name_their_file() {
    let out = tempfile::tempdir().unwrap();
    let pack = Pack::load(pack_dir().to_str().unwrap()).unwrap();
    let mut opts = RunOptions::new(pack);
    // The failed-build prompts, whose reference searches for the deferred tool: a few units
    // keep the full tier's time (the base model seldom searches at all).
    opts.categories = vec!["failed_build".into()];
    opts.limit = Some(2);
    opts.repeats = 1;
    opts.output_root = out.path().to_path_buf();
    let mut backend = common::model::backend();
    let result = runner::run(&mut *backend, &opts).unwrap();
    assert!(!result.entries.is_empty());
    assert!(result.entries.iter().all(|e| !e.errored), "no unit failed");
    let (mut searches, mut logs) = (0, 0);
    for entry in &result.entries {
        let mut loaded = false;
        for call in entry.transcript.calls() {
            let what = format!("{} {}: {call:?}", entry.sample_id, entry.arm.name());
            match call.name.as_str() {
                "tool_search" => {
                    searches += 1;
                    loaded |= call.result.starts_with("Loaded:\n- build_log:");
                }
                "build_log" if !loaded => {
                    assert!(call.is_error, "{what}");
                    assert!(call.result.contains("call tool_search"), "{what}");
                }
                "build_log" if !call.is_error => {
                    logs += 1;
                    // Every shipped log is longer than the pack's 800 characters.
                    assert!(call.truncated_chars > 0, "{what}");
                    assert!(call.result.contains("in tool-output-"), "{what}");
                    assert!(
                        call.result.contains("call read_tool_output with file="),
                        "{what}"
                    );
                }
                _ => {}
            }
        }
    }
    eprintln!(
        "{} units: {searches} tool_search calls, {logs} logs read",
        result.entries.len()
    );
}
