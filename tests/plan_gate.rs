//! `skilleval plan` on real git repositories built here: several commits on `main`, a skills
//! folder, two packs that read it, and a PR branch. The expected plans are a person's reading
//! of each diff, written down before the code ran: which pack measures the changed skill (and
//! the `pack.toml` line that says so), which changed skill no pack measures, and that a change
//! to front matter the model never sees plans no model run. No model is loaded (fast tier).

mod common;

use std::path::Path;
use std::process::Command;

use common::git_repo::{
    commit, git, skills_and_packs, write, NOTES, NOTES_PACK, TODO, WEATHER, WEATHER_PACK,
};
use serde_json::Value;

/// The 1-based line of `skill = …` in a pack's text, as the test wrote it.
fn skill_line(pack_text: &str) -> usize {
    pack_text
        .lines()
        .position(|l| l.starts_with("skill = "))
        .unwrap()
        + 1
}

/// `main` with the skills, two packs and a second commit; the branch `pr` made from it.
fn repository() -> tempfile::TempDir {
    let temp = skills_and_packs();
    git(temp.path(), &["checkout", "-q", "-b", "pr"]);
    temp
}

/// Runs `skilleval plan ARGS` in `dir`: the exit code, stdout and stderr.
fn plan_text(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_skilleval"))
        .arg("plan")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn plan_json(dir: &Path, args: &[&str]) -> (i32, Value) {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    let (code, stdout, stderr) = plan_text(dir, &all);
    let json = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}\nstderr: {stderr}"));
    (code, json)
}

fn change<'a>(plan: &'a Value, path: &str) -> &'a Value {
    plan["changes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["path"] == path)
        .unwrap_or_else(|| panic!("no change {path} in {plan:#}"))
}

/// A person's reading of the PR: weather's body changed → the weather pack measures it (its
/// `skill =` line), scored and run against the base's wording; notes' front matter changed
/// only → no model run; todo's description changed → no pack measures it. A commit on `main`
/// after the branch point (notes' body) is not part of the PR, since the base is the merge base.
#[test]
fn plan_names_exactly_the_checks_the_diff_needs() {
    let temp = repository();
    let dir = temp.path();
    write(
        dir,
        "skills/weather/SKILL.md",
        &WEATHER.replace("as written.", "as written, never guessed."),
    );
    write(
        dir,
        "skills/notes/SKILL.md",
        &NOTES.replace("version: \"1\"", "version: \"2\"\n# skilleval: total 90%"),
    );
    write(
        dir,
        "skills/todo/SKILL.md",
        &TODO.replace("Track tasks.", "Track the user's tasks."),
    );
    commit(dir, "the PR");
    git(dir, &["checkout", "-q", "main"]);
    write(
        dir,
        "skills/notes/SKILL.md",
        &NOTES.replace("with notes_add", "with the notes_add tool"),
    );
    commit(dir, "main moves on");
    git(dir, &["checkout", "-q", "pr"]);

    let (code, plan) = plan_json(dir, &[]);
    assert_eq!(code, 0, "{plan:#}");
    assert!(
        plan["base_how"].as_str().unwrap().contains("main"),
        "{plan:#}"
    );
    // Naming the branch the PR goes into plans the same change, not main's later commit.
    let (_, named) = plan_json(dir, &["--base", "main"]);
    assert_eq!(named["base"], plan["base"], "{named:#}");
    assert_eq!(named["changes"], plan["changes"], "{named:#}");

    let checks = plan["checks"].as_array().unwrap();
    assert_eq!(checks.len(), 1, "one check, for weather: {plan:#}");
    let check = &checks[0];
    assert_eq!(check["kind"], "measure_wording");
    assert_eq!(check["pack"], "packs/weather");
    assert_eq!(check["skill"], "weather");
    assert_eq!(
        check["provenance"],
        format!("packs/weather/pack.toml:{}", skill_line(WEATHER_PACK))
    );
    assert_eq!(check["runs_model"], true);
    let commands: Vec<&str> = check["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    assert_eq!(
        commands,
        [
            "skilleval score --pack packs/weather --skills-dir \"$BASE\"/skills --variant skills/weather/SKILL.md",
            "skilleval run --pack packs/weather --skills-dir \"$BASE\"/skills --variant skills/weather/SKILL.md",
        ]
    );

    assert_eq!(
        change(&plan, "skills/weather/SKILL.md")["parts"],
        serde_json::json!(["body"])
    );
    let notes = change(&plan, "skills/notes/SKILL.md");
    assert_eq!(notes["need"], "no_model_run", "{notes:#}");
    assert_eq!(notes["parts"], serde_json::json!(["unseen_front_matter"]));
    assert_eq!(
        change(&plan, "skills/todo/SKILL.md")["parts"],
        serde_json::json!(["description"])
    );
    assert_eq!(plan["changes"].as_array().unwrap().len(), 3, "{plan:#}");

    let uncovered = plan["uncovered"].as_array().unwrap();
    assert_eq!(uncovered.len(), 1, "{plan:#}");
    assert_eq!(uncovered[0]["skill"], "todo");
    assert!(plan["refused"].as_array().unwrap().is_empty(), "{plan:#}");

    // --strict fails on the uncovered skill, and the text names it.
    let (code, text, _) = plan_text(dir, &["--strict"]);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("not covered: skill `todo`"), "{text}");
    assert!(
        text.contains(&format!(
            "packs/weather (packs/weather/pack.toml:{})",
            skill_line(WEATHER_PACK)
        )),
        "{text}"
    );
}

/// A person's reading: a PR that bumps `version:` and adds a stamp comment changes nothing the
/// model reads, so it plans no check and no model run, and `--strict` passes.
#[test]
fn a_front_matter_only_change_plans_no_model_run() {
    let temp = repository();
    let dir = temp.path();
    write(
        dir,
        "skills/weather/SKILL.md",
        &WEATHER.replace(
            "version: \"1\"",
            "version: \"1.1\"\n# skilleval: ask 100%, chat 90%",
        ),
    );
    commit(dir, "stamp");
    let (code, plan) = plan_json(dir, &["--strict"]);
    assert_eq!(code, 0, "{plan:#}");
    assert_eq!(plan["checks"], serde_json::json!([]), "{plan:#}");
    assert_eq!(
        change(&plan, "skills/weather/SKILL.md")["need"],
        "no_model_run"
    );
    let (_, text, _) = plan_text(dir, &[]);
    assert!(text.contains("checks: none"), "{text}");
}

/// A person's reading: a pack whose every law is scoped to a category none of its prompts are
/// in cannot fail for the skill, and a pack that names the skill but reads its own copy never
/// loads the change. Both are refused in one line each, and the plan exits 1.
#[test]
fn a_vacuous_gate_is_refused() {
    let temp = repository();
    let dir = temp.path();
    // A pack for todo whose only law is about a category with no prompts.
    write(
        dir,
        "packs/todo/pack.toml",
        "name = \"todo\"\nskill = \"todo\"\nskills_dir = \"../../skills\"\ncorpus = \"corpus.jsonl\"\ncategories = [\"ask\", \"later\"]\n\n[[laws]]\nname = \"answers\"\nkind = \"stop_reason_is\"\nreason = \"answered\"\ncategories = [\"later\"]\n",
    );
    write(
        dir,
        "packs/todo/corpus.jsonl",
        "{\"id\": \"t1\", \"category\": \"ask\", \"prompt\": \"add milk to my list\"}\n",
    );
    // A pack for notes that reads its own copy of the skill, not skills/notes.
    write(
        dir,
        "packs/notes/pack.toml",
        &NOTES_PACK.replace("skills_dir = \"../../skills\"", "skills_dir = \"skills\""),
    );
    write(dir, "packs/notes/skills/notes/SKILL.md", NOTES);
    commit(dir, "more packs");
    git(dir, &["branch", "-q", "-f", "main"]);
    write(
        dir,
        "skills/todo/SKILL.md",
        &TODO.replace("a list", "a short list"),
    );
    write(
        dir,
        "skills/notes/SKILL.md",
        &NOTES.replace("Add a note", "Always add a note"),
    );
    commit(dir, "the PR");

    let (code, text, stderr) = plan_text(dir, &[]);
    assert_eq!(code, 1, "{text}{stderr}");
    let refusals: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("refused: "))
        .collect();
    assert_eq!(refusals.len(), 2, "{text}");
    assert!(
        refusals
            .iter()
            .any(|l| l.contains("packs/todo (packs/todo/pack.toml:2)")
                && l.contains(
                    "no law applies to the categories whose prompts reach skill `todo` (ask)"
                )),
        "{text}"
    );
    assert!(
        refusals.iter().any(|l| l.contains("packs/notes")
            && l.contains("never loads the changed skill")
            && l.contains("packs/notes/skills/")),
        "{text}"
    );
}

/// A person's reading: a change to the program a `command` tool runs makes its recordings
/// stale (record them again), and a change to a pack's laws alone judges an earlier run
/// again without the model.
#[test]
fn a_tool_program_records_and_a_law_change_judges_again() {
    let temp = repository();
    let dir = temp.path();
    write(
        dir,
        "packs/notes/tools/notes.sh",
        "#!/bin/sh\necho 'note added'\n",
    );
    write(
        dir,
        "packs/weather/pack.toml",
        &WEATHER_PACK.replace(
            "name = \"no-call-for-chat\"",
            "name = \"never-calls-for-chat\"",
        ),
    );
    commit(dir, "tool and laws");
    let (code, plan) = plan_json(dir, &[]);
    assert_eq!(code, 0, "{plan:#}");
    let checks = plan["checks"].as_array().unwrap();
    let kinds: Vec<(&str, &str)> = checks
        .iter()
        .map(|c| (c["pack"].as_str().unwrap(), c["kind"].as_str().unwrap()))
        .collect();
    assert_eq!(
        kinds,
        [("packs/notes", "record"), ("packs/weather", "rejudge")],
        "{plan:#}"
    );
    assert!(checks[0]["why"]
        .as_str()
        .unwrap()
        .contains("packs/notes/fixtures/notes_add"));
    assert_eq!(checks[1]["runs_model"], false);
}

/// A change (the by-hand command is the truth): `plan --run` carries out the `check` a new
/// judge-cases file needs, with the same result as running it by hand, and writes the PR's one
/// report with it; the front-matter-only change beside it starts no model (no run folder).
#[test]
fn plan_run_carries_out_the_checks_and_writes_one_report() {
    let temp = repository();
    let dir = temp.path();
    write(
        dir,
        "packs/weather/judge-cases.jsonl",
        "{\"id\": \"case-1\", \"prompt_id\": \"c1\", \"calls\": [], \"reply\": \"Hello!\", \"verdicts\": {\"no-call-for-chat\": true}}\n",
    );
    write(
        dir,
        "skills/notes/SKILL.md",
        &NOTES.replace("version: \"1\"", "version: \"2\""),
    );
    commit(dir, "judge cases and a version bump");
    let by_hand = Command::new(env!("CARGO_BIN_EXE_skilleval"))
        .args(["check", "--pack", "packs/weather"])
        .current_dir(dir)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&by_hand.stderr).into_owned();
    let by_hand = by_hand.status.code().unwrap();

    let (code, stdout, stderr) = plan_text(dir, &["--run"]);
    assert_eq!(code, by_hand, "{stdout}{stderr}");
    assert!(
        stdout.contains("plan --run: skilleval check --pack packs/weather"),
        "{stdout}"
    );
    let prs: Vec<_> = std::fs::read_dir(dir.join("output"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(prs.len(), 1, "{prs:?}");
    let files: Vec<String> = std::fs::read_dir(&prs[0])
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(files, ["report.md"], "no run folder: no model ran");
    let report = std::fs::read_to_string(prs[0].join("report.md")).unwrap();
    // A failed command's row says why, in its own error line (else its last line on stderr).
    let lines: Vec<&str> = said
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let result = match (
        by_hand,
        lines
            .iter()
            .rfind(|l| l.starts_with("error"))
            .or(lines.last()),
    ) {
        (0, _) => "passed".to_string(),
        (code, Some(line)) => format!("failed (exit {code}: {line})"),
        (code, None) => format!("failed (exit {code})"),
    };
    assert!(
        report.contains(&format!(
            "| packs/weather | packs/weather/pack.toml | `skilleval check --pack packs/weather` | {result} |"
        )),
        "{report}"
    );
    assert!(report.starts_with("# Skill PR against "), "{report}");
}

/// A person's reading: a refused gate stops `plan --run` before anything runs (a model that
/// does not exist is named, so that a run that started would fail at once, not load one).
#[test]
fn plan_run_refuses_to_run_a_refused_plan() {
    let temp = repository();
    let dir = temp.path();
    let scoped_away = WEATHER_PACK
        .replace(
            "categories = [\"ask\", \"chat\"]",
            "categories = [\"ask\", \"chat\", \"later\"]",
        )
        .replace("categories = [\"ask\"]\n", "categories = [\"later\"]\n")
        .replace("categories = [\"chat\"]\n", "categories = [\"later\"]\n");
    assert_eq!(scoped_away.matches("[\"later\"]").count(), 2);
    write(dir, "packs/weather/pack.toml", &scoped_away);
    commit(dir, "laws scoped away");
    git(dir, &["branch", "-q", "-f", "main"]);
    write(
        dir,
        "skills/weather/SKILL.md",
        &WEATHER.replace("as written", "exactly as written"),
    );
    commit(dir, "the PR");
    let (code, stdout, stderr) =
        plan_text(dir, &["--run", "--", "--model", "/nonexistent/model.gguf"]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(stdout.contains("refused: packs/weather"), "{stdout}");
    assert!(stderr.contains("nothing was run"), "{stderr}");
    assert!(!dir.join("output").exists());
}

/// Truth: the promise in docs/pr-gate.md that `--run` never writes into a pack or git's folder.
/// An `--output` there is refused before anything runs, and nothing is written.
#[test]
fn plan_run_refuses_an_output_folder_inside_a_pack_or_git() {
    let temp = repository();
    let dir = temp.path();
    write(
        dir,
        "skills/weather/SKILL.md",
        &WEATHER.replace("as written", "exactly as written"),
    );
    commit(dir, "the PR");
    for output in ["packs/weather/runs", ".git/runs", "out/../packs/weather"] {
        let (code, stdout, stderr) = plan_text(
            dir,
            &[
                "--run",
                "--output",
                output,
                "--",
                "--model",
                "/nonexistent/model.gguf",
            ],
        );
        assert_eq!(code, 1, "{output}: {stdout}{stderr}");
        assert!(stderr.contains("never writes to"), "{output}: {stderr}");
    }
    assert!(!dir.join("packs/weather/runs").exists());
    assert!(!dir.join(".git/runs").exists());
    assert!(!dir.join("packs/weather/pr-").exists());
}

/// Truth: the commands' own error lines, as a person running them would read them. A command
/// that fails is reported with its exit code and the line that says why.
#[test]
fn plan_run_reports_why_a_command_failed() {
    let temp = repository();
    let dir = temp.path();
    write(
        dir,
        "skills/weather/SKILL.md",
        &WEATHER.replace("as written", "exactly as written"),
    );
    commit(dir, "the PR");
    let (code, stdout, stderr) = plan_text(dir, &["--run", "--", "--no-such-flag"]);
    assert_ne!(code, 0, "{stdout}{stderr}");
    let pr = std::fs::read_dir(dir.join("output"))
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    let report = std::fs::read_to_string(pr.join("report.md")).unwrap();
    assert!(
        report.contains("| failed (exit 2: error: unexpected argument '--no-such-flag' found) |"),
        "{report}"
    );
    // The child's own words still reach the terminal.
    assert!(
        stderr.contains("unexpected argument '--no-such-flag'"),
        "{stderr}"
    );
}

/// Runs `scripts/pr-gate.sh` in `dir` with this build as `skilleval` and `REPORT` at `report`.
fn pr_gate(dir: &Path, report: &Path) -> (i32, String) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/pr-gate.sh");
    let out = Command::new("bash")
        .arg(script)
        .env("SKILLEVAL", env!("CARGO_BIN_EXE_skilleval"))
        .env("REPORT", report)
        .env_remove("PR")
        .current_dir(dir)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

/// A change (the by-hand command is the truth): the shell recipe's steps, run as a CI job runs
/// them, carry out the plan and leave the PR's report where `REPORT` says, with the result of
/// running the check by hand; a changed skill no pack measures stops it before anything runs.
#[test]
fn the_shell_recipe_gates_a_pr() {
    let temp = repository();
    let dir = temp.path();
    write(
        dir,
        "packs/weather/judge-cases.jsonl",
        "{\"id\": \"case-1\", \"prompt_id\": \"c1\", \"calls\": [], \"reply\": \"Hello!\", \"verdicts\": {\"no-call-for-chat\": true}}\n",
    );
    commit(dir, "judge cases");
    let by_hand = Command::new(env!("CARGO_BIN_EXE_skilleval"))
        .args(["check", "--pack", "packs/weather"])
        .current_dir(dir)
        .output()
        .unwrap()
        .status
        .code()
        .unwrap();
    let report = dir.join("gate.md");
    let (code, said) = pr_gate(dir, &report);
    assert_eq!(code, by_hand, "{said}");
    let text = std::fs::read_to_string(&report).unwrap_or_else(|e| panic!("{e}: {said}"));
    let result = match by_hand {
        0 => "passed |".to_string(),
        code => format!("failed (exit {code}"),
    };
    assert!(
        text.contains(&format!(
            "`skilleval check --pack packs/weather` | {result}"
        )),
        "{text}"
    );

    // A description change of a skill no pack measures: --strict stops the recipe.
    write(
        dir,
        "skills/todo/SKILL.md",
        &TODO.replace("Track tasks.", "Track every task."),
    );
    commit(dir, "todo");
    std::fs::remove_file(&report).unwrap();
    let (code, said) = pr_gate(dir, &report);
    assert_eq!(code, 1, "{said}");
    assert!(said.contains("not covered: skill `todo`"), "{said}");
    assert!(!report.exists(), "{said}");
}

/// A person's reading: a routing pack (its samples name the skill they should load) whose tree
/// holds the changed skill beside its own measures it too, by two runs compared, with the line
/// of its `skills_dir` as provenance; the pack of the skill measures the wording.
#[test]
fn a_routing_pack_measures_a_skill_beside_its_own() {
    let temp = repository();
    let dir = temp.path();
    let routing = "name = \"routing\"\nskill = \"todo\"\nskills_dir = \"../../skills\"\ncorpus = \"corpus.jsonl\"\ncategories = [\"weather\", \"todo\"]\npreload = false\n\n[[laws]]\nname = \"loads-a-skill\"\nkind = \"tool_called\"\ntool = \"load_skill\"\ncategories = [\"weather\"]\n";
    write(dir, "packs/routing/pack.toml", routing);
    write(
        dir,
        "packs/routing/corpus.jsonl",
        "{\"id\": \"w1\", \"category\": \"weather\", \"prompt\": \"rain in Oslo?\", \"skill\": \"weather\"}\n{\"id\": \"t1\", \"category\": \"todo\", \"prompt\": \"add milk\", \"skill\": \"todo\"}\n",
    );
    commit(dir, "routing pack");
    git(dir, &["branch", "-q", "-f", "main"]);
    write(
        dir,
        "skills/weather/SKILL.md",
        &WEATHER.replace("Look up the forecast", "Look up the weather forecast"),
    );
    commit(dir, "the PR");
    let (code, plan) = plan_json(dir, &["--strict"]);
    assert_eq!(code, 0, "{plan:#}");
    let checks: Vec<(&str, &str, &str)> = plan["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["pack"].as_str().unwrap(),
                c["kind"].as_str().unwrap(),
                c["provenance"].as_str().unwrap(),
            )
        })
        .collect();
    let skills_dir_line = routing
        .lines()
        .position(|l| l.starts_with("skills_dir"))
        .unwrap()
        + 1;
    assert_eq!(
        checks,
        [
            (
                "packs/routing",
                "measure_tree",
                format!("packs/routing/pack.toml:{skills_dir_line}").as_str()
            ),
            (
                "packs/weather",
                "measure_wording",
                format!("packs/weather/pack.toml:{}", skill_line(WEATHER_PACK)).as_str()
            ),
        ],
        "{plan:#}"
    );
}

/// Truth: bash itself. A skills folder whose name a PR chose spells a command substitution; the
/// printed commands, run by bash with `skilleval` standing for a program that prints its
/// arguments, must pass the name through as written and run nothing.
#[test]
fn a_path_that_spells_a_command_stays_a_word_in_the_printed_commands() {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path();
    let hostile = "sk$(touch PWNED)`touch PWNED2`ills";
    git(dir, &["init", "-q", "-b", "main"]);
    write(dir, &format!("{hostile}/weather/SKILL.md"), WEATHER);
    write(
        dir,
        "packs/weather/pack.toml",
        &WEATHER_PACK.replace("../../skills", &format!("../../{hostile}")),
    );
    write(
        dir,
        "packs/weather/corpus.jsonl",
        "{\"id\": \"a1\", \"category\": \"ask\", \"prompt\": \"weather in Oslo?\", \"place\": \"Oslo\"}\n{\"id\": \"c1\", \"category\": \"chat\", \"prompt\": \"hello\"}\n",
    );
    commit(dir, "a skills folder with an awkward name");
    git(dir, &["checkout", "-q", "-b", "pr"]);
    write(
        dir,
        &format!("{hostile}/weather/SKILL.md"),
        &WEATHER.replace("as written", "exactly as the user wrote it"),
    );
    commit(dir, "reword");
    let (_, plan) = plan_json(dir, &[]);
    let commands: Vec<String> = plan["checks"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["commands"].as_array().unwrap().clone())
        .map(|c| c.as_str().unwrap().to_string())
        .collect();
    assert!(!commands.is_empty(), "{plan:#}");
    let script = format!(
        "skilleval() {{ printf '%s\\n' \"$@\"; }}\nBASE=/base\n{}\n",
        commands.join("\n")
    );
    let out = Command::new("bash")
        .arg("-c")
        .arg(&script)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!dir.join("PWNED").exists() && !dir.join("PWNED2").exists());
    let words = String::from_utf8_lossy(&out.stdout);
    assert!(
        words.lines().any(|w| w == format!("/base/{hostile}")),
        "{words}"
    );
}

/// Merges the branch `pr` into `main`, so that the next commit on `pr` is all the PR holds.
fn merge_into_main(dir: &Path) {
    git(dir, &["checkout", "-q", "main"]);
    git(dir, &["merge", "-q", "pr"]);
    git(dir, &["checkout", "-q", "pr"]);
}

/// The plan's checks as (kind, pack) pairs, and its commands.
fn checks_and_commands(plan: &Value) -> (Vec<(String, String)>, Vec<String>) {
    let checks = plan["checks"].as_array().unwrap();
    let kinds = checks
        .iter()
        .map(|c| {
            (
                c["kind"].as_str().unwrap().to_string(),
                c["pack"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let commands = checks
        .iter()
        .flat_map(|c| c["commands"].as_array().unwrap().clone())
        .map(|c| c.as_str().unwrap().to_string())
        .collect();
    (kinds, commands)
}

/// A person's reading: a PR that removes skill `todo` (no pack measures it) has no wording left
/// to measure: its `SKILL.md` is said to be removed, and nothing is planned. Removing `weather`,
/// which a pack still names, leaves that pack unable to load: refused, exit 1. Removed with its
/// pack, the skill is said to be removed and the plan passes.
#[test]
fn a_removed_skill_is_said_to_be_removed() {
    let temp = repository();
    let dir = temp.path();
    git(dir, &["rm", "-rq", "skills/todo"]);
    commit(dir, "remove todo");
    let (code, plan) = plan_json(dir, &["--strict"]);
    assert_eq!(code, 0, "{plan:#}");
    assert_eq!(change(&plan, "skills/todo/SKILL.md")["need"], "removed");
    assert_eq!(plan["checks"], serde_json::json!([]), "{plan:#}");
    let (_, text, _) = plan_text(dir, &[]);
    assert!(
        text.contains("skills/todo/SKILL.md (skill `todo`): removed — "),
        "{text}"
    );

    git(dir, &["rm", "-rq", "skills/weather"]);
    commit(dir, "remove weather");
    let (code, plan) = plan_json(dir, &[]);
    assert_eq!(code, 1, "{plan:#}");
    assert_eq!(change(&plan, "skills/weather/SKILL.md")["need"], "removed");
    assert_eq!(plan["checks"], serde_json::json!([]), "{plan:#}");
    let refused = plan["refused"].as_array().unwrap();
    assert_eq!(refused.len(), 1, "{plan:#}");
    assert_eq!(refused[0]["pack"], "packs/weather");
    assert!(
        refused[0]["why"].as_str().unwrap().contains("removes"),
        "{plan:#}"
    );

    git(dir, &["rm", "-rq", "packs/weather"]);
    commit(dir, "remove its pack too");
    let (code, plan) = plan_json(dir, &["--strict"]);
    assert_eq!(code, 0, "{plan:#}");
    assert_eq!(change(&plan, "skills/weather/SKILL.md")["need"], "removed");
    assert!(plan["refused"].as_array().unwrap().is_empty(), "{plan:#}");
}

/// A person's reading: renaming skill `weather`'s folder (the skill keeps its name) and
/// rewording its body plans the pack's check of the skill at its new path, compared with the
/// old wording at the old path as the base; the old path is said to have moved. A rename alone
/// plans nothing: the model reads nothing new.
#[test]
fn a_renamed_skill_folder_is_planned_at_its_new_path() {
    let temp = repository();
    let dir = temp.path();
    git(dir, &["mv", "skills/weather", "skills/forecast"]);
    commit(dir, "rename the folder");
    let (code, plan) = plan_json(dir, &["--strict"]);
    assert_eq!(code, 0, "{plan:#}");
    assert_eq!(plan["checks"], serde_json::json!([]), "{plan:#}");
    let moved = change(&plan, "skills/forecast/SKILL.md");
    assert_eq!(moved["from"], "skills/weather/SKILL.md", "{plan:#}");
    assert_eq!(moved["need"], "nothing", "{plan:#}");
    assert_eq!(change(&plan, "skills/weather/SKILL.md")["need"], "moved");

    write(
        dir,
        "skills/forecast/SKILL.md",
        &WEATHER.replace("as written.", "as written, never guessed."),
    );
    commit(dir, "reword");
    let (code, plan) = plan_json(dir, &["--strict"]);
    assert_eq!(code, 0, "{plan:#}");
    let renamed = change(&plan, "skills/forecast/SKILL.md");
    assert_eq!(renamed["need"], "measure", "{plan:#}");
    assert_eq!(renamed["parts"], serde_json::json!(["body"]), "{plan:#}");
    let (kinds, commands) = checks_and_commands(&plan);
    assert_eq!(
        kinds,
        [("measure_wording".to_string(), "packs/weather".to_string())],
        "{plan:#}"
    );
    assert_eq!(
        commands,
        [
            "skilleval score --pack packs/weather --skills-dir \"$BASE\"/skills --variant skills/forecast/SKILL.md",
            "skilleval run --pack packs/weather --skills-dir \"$BASE\"/skills --variant skills/forecast/SKILL.md",
        ]
    );
    assert!(plan["uncovered"].as_array().unwrap().is_empty(), "{plan:#}");
    assert!(plan["refused"].as_array().unwrap().is_empty(), "{plan:#}");
}

/// A person's reading: moving skill `weather` into another skills folder, its pack following
/// it there, and rewording it compares the new wording with the old, which the base keeps in
/// the old folder (`"$BASE"/skills`).
#[test]
fn a_skill_moved_to_another_folder_is_compared_with_its_old_wording() {
    let temp = repository();
    let dir = temp.path();
    std::fs::create_dir_all(dir.join("more")).unwrap();
    git(dir, &["mv", "skills/weather", "more/weather"]);
    write(
        dir,
        "more/weather/SKILL.md",
        &WEATHER.replace("as written.", "as written, never guessed."),
    );
    write(
        dir,
        "packs/weather/pack.toml",
        &WEATHER_PACK.replace("../../skills", "../../more"),
    );
    commit(dir, "move weather");
    let (code, plan) = plan_json(dir, &["--strict"]);
    assert_eq!(code, 0, "{plan:#}");
    assert_eq!(change(&plan, "more/weather/SKILL.md")["need"], "measure");
    let (kinds, commands) = checks_and_commands(&plan);
    assert!(
        kinds.contains(&("measure_wording".to_string(), "packs/weather".to_string())),
        "{plan:#}"
    );
    assert!(
        commands.contains(&"skilleval score --pack packs/weather --skills-dir \"$BASE\"/skills --variant more/weather/SKILL.md".to_string()),
        "{commands:#?}"
    );
    assert!(plan["refused"].as_array().unwrap().is_empty(), "{plan:#}");
    assert!(plan["uncovered"].as_array().unwrap().is_empty(), "{plan:#}");
}

/// A person's reading: a PR that adds a `SKILL.md` symlinked to a file outside the repository,
/// and a skill folder symlinked to a folder outside it, gets each said to lead outside and
/// never read (the outside skill's name appears nowhere in the plan). A `pack.toml` symlinked
/// outside stops the plan with one line.
#[test]
fn a_symlink_out_of_the_repository_is_never_read() {
    let temp = repository();
    let dir = temp.path();
    let outside = tempfile::tempdir().unwrap();
    let secret = "---\nname: secret-outside\ndescription: Not the repository's.\n---\nA body from elsewhere.\n";
    write(outside.path(), "SKILL.md", secret);
    write(outside.path(), "folder/SKILL.md", secret);
    std::fs::create_dir_all(dir.join("skills/leak")).unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("SKILL.md"),
        dir.join("skills/leak/SKILL.md"),
    )
    .unwrap();
    std::os::unix::fs::symlink(outside.path().join("folder"), dir.join("skills/linked")).unwrap();
    commit(dir, "links out");
    let (code, text, stderr) = plan_text(dir, &[]);
    assert_eq!(code, 0, "{text}{stderr}");
    assert!(!text.contains("secret-outside"), "{text}");
    let (_, plan) = plan_json(dir, &[]);
    for path in ["skills/leak/SKILL.md", "skills/linked"] {
        let change = change(&plan, path);
        assert_eq!(change["need"], "outside", "{plan:#}");
        assert!(
            change["why"]
                .as_str()
                .unwrap()
                .contains("outside the repository"),
            "{plan:#}"
        );
    }
    assert!(!plan.to_string().contains("secret-outside"), "{plan:#}");

    write(outside.path(), "pack/pack.toml", WEATHER_PACK);
    std::fs::create_dir_all(dir.join("packs/linked")).unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("pack/pack.toml"),
        dir.join("packs/linked/pack.toml"),
    )
    .unwrap();
    commit(dir, "a pack linked out");
    let (code, _, stderr) = plan_text(dir, &[]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("packs/linked/pack.toml: a symlink leading outside the repository"),
        "{stderr}"
    );
}

/// Truth: a change, held to what a shell does. Ctrl-C (SIGINT to the foreground process group)
/// while `plan --run` waits on a `run` that hangs on a silent server ends the plan with 130 and
/// leaves no base checkout in the temporary folder (it was left there before).
#[test]
fn an_interrupted_plan_run_removes_its_base_checkout() {
    use std::os::unix::process::CommandExt;
    let temp = repository();
    let dir = temp.path();
    write(
        dir,
        "skills/weather/SKILL.md",
        &WEATHER.replace("as written.", "as written, never guessed."),
    );
    commit(dir, "reword");
    // A server that takes the connection and never answers.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("http://{}", silent.local_addr().unwrap());
    let tmp = tempfile::tempdir().unwrap();
    let mut plan = Command::new(env!("CARGO_BIN_EXE_skilleval"))
        .args([
            "plan",
            "--run",
            "--",
            "--backend",
            "openai",
            "--endpoint",
            &endpoint,
        ])
        .env("TMPDIR", tmp.path())
        .current_dir(dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .process_group(0)
        .spawn()
        .unwrap();
    let bases = || -> Vec<String> {
        std::fs::read_dir(tmp.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("skilleval-base-"))
            .collect()
    };
    let started = std::time::Instant::now();
    while bases().is_empty() {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(60),
            "plan --run never laid out the base"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    // Past `score` (refused at once on a server) and into `run`, which waits on the server.
    std::thread::sleep(std::time::Duration::from_secs(3));
    assert!(plan.try_wait().unwrap().is_none(), "plan --run ended early");
    let group = format!("-{}", plan.id());
    let killed = Command::new("kill")
        .args(["-INT", "--", &group])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = plan.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{status:?}");
    assert_eq!(
        bases(),
        Vec::<String>::new(),
        "the base checkout was left behind"
    );
}

/// A person's reading: a pack whose multi-line `description` holds a line `skill = "notes"`
/// and a line opening with `[` names its skill on the line of its real `skill =` key, and the
/// plan gives that line as the check's provenance.
#[test]
fn the_provenance_line_is_the_skill_key_past_a_multi_line_description() {
    let temp = repository();
    let dir = temp.path();
    let pack = WEATHER_PACK.replace(
        "description = \"Does the skill make the model call forecast?\"",
        "description = \"\"\"\nDoes the skill make the model call forecast?\nskill = \"notes\" is another pack's\n[beta] forecasts only\n\"\"\"",
    );
    write(dir, "packs/weather/pack.toml", &pack);
    commit(dir, "a longer description");
    merge_into_main(dir);
    write(
        dir,
        "skills/weather/SKILL.md",
        &WEATHER.replace("as written.", "as written, never guessed."),
    );
    commit(dir, "reword");
    let real = pack
        .lines()
        .position(|l| l == "skill = \"weather\"")
        .unwrap()
        + 1;
    let (_, plan) = plan_json(dir, &[]);
    let checks = plan["checks"].as_array().unwrap();
    assert_eq!(checks.len(), 1, "{plan:#}");
    assert_eq!(
        checks[0]["provenance"],
        format!("packs/weather/pack.toml:{real}"),
        "{plan:#}"
    );
}

/// A person's reading: a tool reads a data file named as `--store=PATH` and a folder of its own
/// (`working_dir`); a PR that changes either leaves the tool's recordings stale, so each plans
/// a recording of the tool's pack, as a change to its program does.
#[test]
fn a_tool_data_file_change_plans_a_recording() {
    let temp = repository();
    let dir = temp.path();
    let pack = NOTES_PACK.replace(
        "command = [\"sh\", \"tools/notes.sh\"]",
        "command = [\"sh\", \"../tools/notes.sh\", \"--store=store/notes.json\"]\nworking_dir = \"data\"",
    );
    write(dir, "packs/notes/pack.toml", &pack);
    write(dir, "packs/notes/data/store/notes.json", "[]\n");
    write(dir, "packs/notes/data/prices.csv", "milk,1\n");
    commit(dir, "the notes tool reads its data");
    merge_into_main(dir);
    for (file, text) in [
        ("packs/notes/data/store/notes.json", "[\"buy milk\"]\n"),
        ("packs/notes/data/prices.csv", "milk,2\n"),
    ] {
        write(dir, file, text);
        commit(dir, "data changed");
        let (code, plan) = plan_json(dir, &[]);
        assert_eq!(code, 0, "{plan:#}");
        assert_eq!(change(&plan, file)["need"], "record", "{plan:#}");
        let (kinds, _) = checks_and_commands(&plan);
        assert_eq!(
            kinds,
            [("record".to_string(), "packs/notes".to_string())],
            "{plan:#}"
        );
        merge_into_main(dir);
    }
}
