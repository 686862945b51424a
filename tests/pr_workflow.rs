//! The GitHub Actions recipe `docs/ci/skill-pr.yml`, run step by step as a runner runs it, on a
//! real git repository built here: several commits on `main`, a skills folder, two packs, and a
//! PR branch that changes one skill's body (`weather`) and another's front matter only (`notes`).
//!
//! The workflow file is parsed and each of its `run:` steps is executed with bash, in order, in
//! the folder and with the environment the workflow gives it (its `env:` at every level, its
//! `${{ }}` expressions filled in from a pull request's context). What a `uses:` step would
//! provide is stood in for: the PR's checkout is a clone of the test repository with the merge
//! commit GitHub checks out; skilleval's checkout is this source tree; the caches and the
//! artifact upload do nothing. The step whose name starts with "Install" (setup.sh and
//! `cargo install`, which need the network) is skipped, and this build of skilleval is put on
//! `PATH` instead. `gh` is a stub on `PATH` that keeps its arguments and the body it was given,
//! so that the comment the job would post can be compared with the report.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::git_repo::{git, skills_repository, write};
use serde_yaml::Value;

const WORKFLOW: &str = "docs/ci/skill-pr.yml";

/// What one step did: its name and exit status (`None`: skipped).
struct StepRun {
    name: String,
    status: Option<i32>,
}

/// A job carried out: its steps, their words, and the folders the runner had.
struct JobRun {
    steps: Vec<StepRun>,
    said: String,
    /// `$GITHUB_WORKSPACE/repo`: the PR's checkout.
    checkout: PathBuf,
    /// Where the `gh` stub kept what it was given.
    gh_log: PathBuf,
    _runner: tempfile::TempDir,
}

impl JobRun {
    fn status_of(&self, prefix: &str) -> Option<i32> {
        self.steps
            .iter()
            .find(|s| s.name.starts_with(prefix))
            .unwrap_or_else(|| panic!("no step named {prefix}…"))
            .status
    }
}

fn text_of(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        other => panic!("not a scalar: {other:?}"),
    }
}

/// The `env:` mapping of a workflow, job or step, its expressions filled in.
fn env_of(node: &Value, context: &BTreeMap<String, String>) -> Vec<(String, String)> {
    let Some(map) = node.get("env").and_then(Value::as_mapping) else {
        return Vec::new();
    };
    map.iter()
        .map(|(k, v)| (text_of(k), fill(&text_of(v), context)))
        .collect()
}

/// `${{ expr }}` replaced by the context's value of `expr`; an expression the context lacks
/// fails the test, so that the workflow cannot use what this runner does not stand in for.
fn fill(text: &str, context: &BTreeMap<String, String>) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("${{") {
        out.push_str(&rest[..start]);
        let end = rest[start..]
            .find("}}")
            .unwrap_or_else(|| panic!("unclosed expression in {text:?}"))
            + start;
        let expr = rest[start + 3..end].trim();
        let value = context.get(expr).unwrap_or_else(|| {
            panic!("the workflow uses ${{{{ {expr} }}}}, which no stand-in gives")
        });
        out.push_str(value);
        rest = &rest[end + 2..];
    }
    out.push_str(rest);
    out
}

/// The `gh` stub: keeps its arguments, its token and repository, and the body file it is given.
const GH_STUB: &str = r#"#!/bin/sh
log="$GH_STUB_LOG"
mkdir -p "$log"
printf '%s\n' "$@" > "$log/args"
printf '%s\n' "$GH_TOKEN" > "$log/token"
printf '%s\n' "$GH_REPO" > "$log/repo"
while [ "$#" -gt 0 ]; do
  if [ "$1" = --body-file ]; then cp "$2" "$log/body"; fi
  shift
done
"#;

/// Runs the workflow's one job for pull request 7 of `upstream` (branch `pr` into `main`),
/// with `overrides` laid over the workflow's own `env:` (the knobs it documents).
fn run_workflow(upstream: &Path, overrides: &[(&str, &str)]) -> JobRun {
    let source = Path::new(env!("CARGO_MANIFEST_DIR"));
    let workflow: Value =
        serde_yaml::from_str(&std::fs::read_to_string(source.join(WORKFLOW)).unwrap()).unwrap();
    let jobs = workflow["jobs"].as_mapping().unwrap();
    assert_eq!(jobs.len(), 1, "one job");
    let job = jobs.values().next().unwrap();
    assert_eq!(job["defaults"]["run"]["shell"].as_str(), Some("bash"));

    let runner = tempfile::tempdir().unwrap();
    let workspace = runner.path().join("work");
    let temp = runner.path().join("temp");
    let bin = runner.path().join("bin");
    let gh_log = runner.path().join("gh");
    for dir in [&workspace, &temp, &bin] {
        std::fs::create_dir_all(dir).unwrap();
    }
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_skilleval"), bin.join("skilleval")).unwrap();
    write(&bin, "gh", GH_STUB);
    Command::new("chmod")
        .arg("+x")
        .arg(bin.join("gh"))
        .status()
        .unwrap();
    let path_file = temp.join("github_path");
    std::fs::write(&path_file, "").unwrap();

    let mut context: BTreeMap<String, String> = [
        ("github.base_ref", "main".to_string()),
        ("github.event.pull_request.number", "7".to_string()),
        ("github.repository", "owner/skills".to_string()),
        ("secrets.GITHUB_TOKEN", "stand-in-token".to_string()),
        ("runner.temp", temp.to_string_lossy().into_owned()),
        ("runner.os", "Linux".to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let mut env: Vec<(String, String)> = Vec::new();
    for (k, v) in env_of(&workflow, &context)
        .into_iter()
        .chain(env_of(job, &context))
    {
        env.push((k, v));
    }
    for (k, v) in overrides {
        assert!(
            env.iter().any(|(name, _)| name == k),
            "{k}: the workflow sets no such variable"
        );
        env.push((k.to_string(), v.to_string()));
    }
    for (k, v) in &env {
        context.insert(format!("env.{k}"), v.clone());
    }

    let mut steps = Vec::new();
    let mut said = String::new();
    let mut failed = false;
    for (index, step) in job["steps"].as_sequence().unwrap().iter().enumerate() {
        let name = step["name"]
            .as_str()
            .unwrap_or_else(|| panic!("step {index} has no name"))
            .to_string();
        let condition = step.get("if").map(text_of);
        if failed && condition.as_deref() != Some("always()") {
            steps.push(StepRun { name, status: None });
            continue;
        }
        if let Some(uses) = step.get("uses").and_then(Value::as_str) {
            stand_in(uses, step, upstream, &workspace, source);
            steps.push(StepRun {
                name,
                status: Some(0),
            });
            continue;
        }
        let script = fill(&text_of(&step["run"]), &context);
        if name.starts_with("Install") {
            steps.push(StepRun { name, status: None });
            continue;
        }
        let script_file = temp.join(format!("step-{index}.sh"));
        std::fs::write(&script_file, &script).unwrap();
        let dir = match step.get("working-directory") {
            Some(d) => workspace.join(fill(&text_of(d), &context)),
            None => workspace.clone(),
        };
        let added = std::fs::read_to_string(&path_file).unwrap();
        let path = added
            .lines()
            .rev()
            .map(str::to_string)
            .chain([
                bin.to_string_lossy().into_owned(),
                std::env::var("PATH").unwrap(),
            ])
            .collect::<Vec<_>>()
            .join(":");
        let out = Command::new("bash")
            .args(["--noprofile", "--norc", "-eo", "pipefail"])
            .arg(&script_file)
            .current_dir(&dir)
            .env_remove("GH_TOKEN")
            .envs(env.iter().cloned())
            .envs(env_of(step, &context))
            .env("PATH", path)
            .env("CI", "true")
            .env("GITHUB_ACTIONS", "true")
            .env("GITHUB_WORKSPACE", &workspace)
            .env("RUNNER_TEMP", &temp)
            .env("GITHUB_PATH", &path_file)
            .env("GH_STUB_LOG", &gh_log)
            .output()
            .unwrap();
        said.push_str(&format!(
            "--- {name}\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ));
        let status = out.status.code().unwrap_or(-1);
        failed |= status != 0;
        steps.push(StepRun {
            name,
            status: Some(status),
        });
    }
    JobRun {
        steps,
        said,
        checkout: workspace.join("repo"),
        gh_log,
        _runner: runner,
    }
}

/// What a `uses:` step leaves on the runner.
fn stand_in(uses: &str, step: &Value, upstream: &Path, workspace: &Path, source: &Path) {
    let with = |key: &str| step["with"].get(key).map(text_of);
    if uses.starts_with("actions/checkout@") && with("repository").is_none() {
        // The PR's own repository: its whole history (the plan needs the merge base), checked
        // out as GitHub does for a pull request, at the merge of the PR into its base.
        assert_eq!(
            with("fetch-depth").as_deref(),
            Some("0"),
            "the plan needs the whole history"
        );
        let into = workspace.join(with("path").unwrap_or_default());
        let out = Command::new("git")
            .args(["clone", "-q", "--no-checkout"])
            .arg(upstream)
            .arg(&into)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        git(&into, &["checkout", "-q", "--detach", "origin/main"]);
        git(
            &into,
            &["merge", "-q", "--no-ff", "-m", "Merge pr", "origin/pr"],
        );
    } else if uses.starts_with("actions/checkout@") {
        // skilleval's own checkout: this source tree.
        let into = workspace.join(with("path").expect("skilleval is checked out beside the PR"));
        std::os::unix::fs::symlink(source, into).unwrap();
    } else if !(uses.starts_with("actions/cache@") || uses.starts_with("actions/upload-artifact@"))
    {
        panic!("no stand-in for {uses}");
    }
}

/// The one `pr-*` folder `plan --run` wrote under the checkout's `output`, and its report.
fn pr_folder(checkout: &Path) -> (PathBuf, String) {
    let prs: Vec<PathBuf> = std::fs::read_dir(checkout.join("output"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(prs.len(), 1, "{prs:?}");
    let report = std::fs::read_to_string(prs[0].join("report.md")).unwrap();
    (prs[0].clone(), report)
}

/// What the runs of `plan --run` left: the folders under the PR's folder.
fn run_folders(pr: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(pr)
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The comment the `gh` stub was asked to post on PR 7: its body.
fn posted_comment(job: &JobRun) -> String {
    let args = std::fs::read_to_string(job.gh_log.join("args"))
        .unwrap_or_else(|e| panic!("gh was never called ({e}):\n{}", job.said));
    let args: Vec<&str> = args.lines().collect();
    assert_eq!(
        &args[..4],
        ["pr", "comment", "7", "--body-file"],
        "{args:?}"
    );
    assert_eq!(
        std::fs::read_to_string(job.gh_log.join("token")).unwrap(),
        "stand-in-token\n"
    );
    assert_eq!(
        std::fs::read_to_string(job.gh_log.join("repo")).unwrap(),
        "owner/skills\n"
    );
    std::fs::read_to_string(job.gh_log.join("body")).unwrap()
}

/// A change (the plan's own commands are the truth), run without a model: the workflow's steps
/// on a clean clone carry the plan out and post the PR's report as the comment. The model is
/// a file that does not exist (`SKILLEVAL_FLAGS`), so weather's `score` and `run` fail at once
/// and the job fails with them; the report still names weather's check, each command with its
/// failure, and notes, whose front matter alone changed, has no check and no run folder.
#[test]
fn the_workflow_steps_post_the_pr_report() {
    let upstream = skills_repository();
    let job = run_workflow(
        upstream.path(),
        &[("SKILLEVAL_FLAGS", "--model /nonexistent/model.gguf")],
    );
    assert_eq!(job.status_of("Install"), None, "skipped: stood in for");
    let gate = job.status_of("Gate the PR").expect("the gate step ran");
    assert_ne!(gate, 0, "a check that fails fails the job:\n{}", job.said);
    let (pr, report) = pr_folder(&job.checkout);
    assert_eq!(posted_comment(&job), report, "the comment is the report");
    assert!(report.contains("**0 of 2 commands passed.**"), "{report}");
    // Each command of weather's check, with the flags the workflow gives (REPEATS to the run),
    // failed for the model file that is not there.
    let failed = "| failed (exit 1: error: /nonexistent/model.gguf: model file not found) |";
    for (command, flags) in [("score", ""), ("run", " --repeats 3")] {
        let row = format!(
            "| packs/weather | packs/weather/pack.toml:4 | `skilleval {command} --pack packs/weather --skills-dir $BASE/skills --variant skills/weather/SKILL.md --output {} --fail-on worse{flags} --model /nonexistent/model.gguf` {failed}",
            pr.strip_prefix(&job.checkout).unwrap().join(format!("0-{command}")).display()
        );
        assert!(report.contains(&row), "{row}\n{report}");
    }
    // notes' front matter alone changed: planned as no model run, and given no command.
    assert!(
        job.said
            .contains("skills/notes/SKILL.md (skill `notes`): no model run"),
        "{}",
        job.said
    );
    assert!(!report.contains("packs/notes"), "{report}");
    assert!(
        run_folders(&pr).iter().all(|f| f.starts_with("0-")),
        "{pr:?}"
    );
}

/// A change (the plan's own commands are the truth), on the real default model, tiny
/// (`SKILLEVAL_FLAGS=--limit 2`, `REPEATS=1` over the workflow's own values): the workflow's
/// steps on a clean clone score and run weather's new wording against the base's and post the
/// PR's report, with weather's check in it; notes' front-matter-only change starts no model.
#[test]
#[cfg_attr(not(feature = "full-tier"), ignore = "full tier")]
fn the_workflow_steps_gate_a_pr_on_the_model() {
    common::model::model_path();
    let upstream = skills_repository();
    let job = run_workflow(
        upstream.path(),
        &[("SKILLEVAL_FLAGS", "--limit 2"), ("REPEATS", "1")],
    );
    let gate = job.status_of("Gate the PR").expect("the gate step ran");
    let (pr, report) = pr_folder(&job.checkout);
    assert_eq!(posted_comment(&job), report, "the comment is the report");
    // 3: a row is worse; 1: only when the run could not fail (every law held in the control).
    assert!(
        matches!(gate, 0 | 3) || (gate == 1 && report.contains("\n- vacuous: packs/weather")),
        "{}",
        job.said
    );
    for command in ["score", "run"] {
        let row = format!(
            "| packs/weather | packs/weather/pack.toml:4 | `skilleval {command} --pack packs/weather"
        );
        assert!(report.contains(&row), "{row}\n{report}");
    }
    assert!(!report.contains("packs/notes"), "{report}");
    assert!(
        job.said
            .contains("skills/notes/SKILL.md (skill `notes`): no model run"),
        "{}",
        job.said
    );
    // One run folder per command of weather's check, each with its run; none for notes.
    assert_eq!(run_folders(&pr), ["0-run", "0-score"], "{}", job.said);
    for folder in ["0-score", "0-run"] {
        let runs = run_folders(&pr.join(folder));
        assert_eq!(runs.len(), 1, "{folder}: {runs:?}");
        assert!(pr.join(folder).join(&runs[0]).join("report.md").is_file());
    }
}
