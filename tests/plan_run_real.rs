//! `skilleval plan --run` on the real default model, tiny (`--limit`, `--repeats 1`), on a
//! skills repository built here (two packs, a PR branch that rewords weather's body and bumps
//! notes' `version:` only): its one PR report holds the tables the same comparisons give when
//! run by hand, and a pack whose every law holds without the skill is called vacuous.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::cli::{command, outcome};
use common::git_repo::{commit, git, skills_repository, write, WEATHER_PACK};
use serde_json::Value;

/// Runs `skilleval` in `dir` with `args`, split at spaces: the exit code, stdout and stderr.
fn skilleval(dir: &Path, args: &str) -> (i32, String, String) {
    outcome(
        &command()
            .current_dir(dir)
            .args(args.split(' '))
            .output()
            .unwrap(),
    )
}

/// The one run folder under `root` (a command's `--output`).
fn only_run(root: &Path) -> PathBuf {
    let runs: Vec<PathBuf> = std::fs::read_dir(root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("report.md").is_file())
        .collect();
    assert_eq!(runs.len(), 1, "{}: {runs:?}", root.display());
    runs[0].clone()
}

/// The PR report `plan --run` wrote under `dir/output`.
fn pr_report(dir: &Path) -> String {
    let prs: Vec<PathBuf> = std::fs::read_dir(dir.join("output"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(prs.len(), 1, "{prs:?}");
    std::fs::read_to_string(prs[0].join("report.md")).unwrap()
}

/// The table rows of a report: every line that starts with `|`.
fn table_rows(text: &str) -> Vec<&str> {
    text.lines().filter(|l| l.starts_with('|')).collect()
}

/// The PR report's section for one command: from its `## pack: `command`` line to the next.
fn section<'a>(report: &'a str, command_start: &str) -> &'a str {
    let heading = format!("\n## packs/weather: `{command_start}");
    let start = report
        .find(&heading)
        .unwrap_or_else(|| panic!("no section {heading:?} in\n{report}"))
        + 1;
    let end = report[start..]
        .find("\n## ")
        .map_or(report.len(), |i| start + i);
    &report[start..end]
}

/// A change (the same comparisons run by hand are the truth): `plan --run` scores and runs
/// weather's new wording against the base's, and the PR report's tables are, row for row and
/// figure for figure, the tables of the reports that the plan's printed commands write when a
/// person runs them by hand (the base laid out by the plan's own `git archive` line, the same
/// flags, another output folder, so that no baseline is shared). Every unit's seed comes from
/// the run's seed (0), the sample and the repeat, so two runs give the same transcripts.
#[test]
#[cfg_attr(not(feature = "full-tier"), ignore = "full tier")]
fn plan_run_report_matches_the_comparisons_run_by_hand() {
    let _turn = common::model::turn();
    common::model::model_path();
    let repo = skills_repository();
    let dir = repo.path();
    git(dir, &["checkout", "-q", "pr"]);
    let flags = ["--fail-on", "worse", "--limit", "2"];

    let (code, stdout, stderr) =
        skilleval(dir, "plan --run --fail-on worse --repeats 1 -- --limit 2");
    assert!(matches!(code, 0 | 1 | 3), "{stdout}{stderr}");
    let report = pr_report(dir);

    let (_, plan_json, _) = skilleval(dir, "plan --json");
    let plan: Value = serde_json::from_str(&plan_json).unwrap();
    let checks = plan["checks"].as_array().unwrap();
    assert_eq!(checks.len(), 1, "{plan:#}");
    let mut script = String::from("set -eu\n");
    for line in plan["setup"].as_array().unwrap() {
        script.push_str(line.as_str().unwrap());
        script.push('\n');
    }
    let commands: Vec<&str> = checks[0]["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    assert_eq!(commands.len(), 2, "score, then run: {commands:?}");
    for command in &commands {
        let name = command.split_whitespace().nth(1).unwrap();
        let repeats = if name == "run" { " --repeats 1" } else { "" };
        script.push_str(&format!(
            "{command} --output by-hand/{name} {}{repeats} || true\n",
            flags.join(" ")
        ));
    }
    script.push_str("rm -rf \"$BASE\"\n");
    let bin = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(
        env!("CARGO_BIN_EXE_skilleval"),
        bin.path().join("skilleval"),
    )
    .unwrap();
    let out = Command::new("bash")
        .arg("-c")
        .arg(&script)
        .current_dir(dir)
        .env(
            "PATH",
            format!(
                "{}:{}",
                bin.path().display(),
                std::env::var("PATH").unwrap()
            ),
        )
        .output()
        .unwrap();
    assert!(out.status.success(), "{script}\n{out:?}");

    for command in &commands {
        let name = command.split_whitespace().nth(1).unwrap();
        let by_hand =
            std::fs::read_to_string(only_run(&dir.join("by-hand").join(name)).join("report.md"))
                .unwrap();
        let ours = section(&report, &format!("skilleval {name} --pack packs/weather"));
        let expected = table_rows(&by_hand);
        assert!(!expected.is_empty(), "{name}: no table in\n{by_hand}");
        assert_eq!(
            table_rows(ours),
            expected,
            "{name}: the PR report's tables differ from the by-hand run's"
        );
    }
}

/// A person's reading of the definition (every law held in every unit of the control arm):
/// a pack whose only law is a call count no run reaches holds without the skill, so the run of
/// weather's new wording is marked vacuous in the PR report, in one line, and `--fail-on`
/// makes `plan --run` exit 1 and say why.
#[test]
#[cfg_attr(not(feature = "full-tier"), ignore = "full tier")]
fn a_run_whose_laws_all_hold_in_the_control_is_vacuous() {
    let _turn = common::model::turn();
    common::model::model_path();
    let repo = skills_repository();
    let dir = repo.path();
    let laws_start = WEATHER_PACK.find("[[laws]]").unwrap();
    let always = format!(
        "{}[[laws]]\nname = \"at-most-a-thousand-calls\"\nkind = \"call_count\"\nmax = 1000\n",
        &WEATHER_PACK[..laws_start]
    );
    write(dir, "packs/weather/pack.toml", &always);
    commit(dir, "a law that always holds");
    git(dir, &["checkout", "-q", "pr"]);
    git(dir, &["merge", "-q", "--no-edit", "main"]);

    let (code, stdout, stderr) =
        skilleval(dir, "plan --run --fail-on worse --repeats 1 -- --limit 1");
    assert_ne!(code, 0, "{stdout}{stderr}");
    assert!(
        stderr.contains("plan --run: exit 1 (--fail-on): 1 run(s) could not fail"),
        "{stderr}"
    );
    let report = pr_report(dir);
    let vacuous: Vec<&str> = report
        .lines()
        .filter(|l| l.starts_with("- vacuous: "))
        .collect();
    assert_eq!(
        vacuous,
        ["- vacuous: packs/weather (packs/weather/pack.toml:4): every law held in the 1 unit of the control arm (the skill's body removed): the laws do not need the skill, so the pack cannot tell it from none"],
        "{report}"
    );
    assert!(
        report.contains("`skilleval run --pack packs/weather")
            && report.contains("| vacuous (every law held in the control) |"),
        "{report}"
    );
}
