//! Throw-away git repositories for the tests of the skill PR gate: git run with a fixed
//! identity, files written by their path from the root, everything committed; and a skills
//! repository with two packs and a PR branch.

use std::path::Path;
use std::process::Command;

/// Runs `git ARGS` in `dir` and fails the test, with git's words, when it fails.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args([
            "-c",
            "user.name=Test",
            "-c",
            "user.email=test@example.com",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub fn write(dir: &Path, rel: &str, text: &str) {
    let path = dir.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

pub fn commit(dir: &Path, message: &str) {
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", message]);
}

pub const WEATHER: &str = "---\nname: weather\ndescription: Look up the forecast for a place.\nversion: \"1\"\n---\nCall forecast with the place as written.\n";
pub const NOTES: &str = "---\nname: notes\ndescription: Keep the user's notes.\nversion: \"1\"\n---\nAdd a note with notes_add.\n";
pub const TODO: &str =
    "---\nname: todo\ndescription: Track tasks.\n---\nKeep a list of the user's tasks.\n";

pub const WEATHER_PACK: &str = r#"# The forecast skill on the shared skills folder.
name = "weather"
description = "Does the skill make the model call forecast?"
skill = "weather"
skills_dir = "../../skills"
corpus = "corpus.jsonl"
categories = ["ask", "chat"]

[[tools]]
name = "forecast"
kind = "recorded"
description = "The forecast for a place."
parameters = { type = "object", properties = { place = { type = "string" } }, required = ["place"] }
fixtures = "fixtures/forecast"
key_arguments = ["place"]

[[laws]]
name = "calls-forecast"
kind = "tool_called"
tool = "forecast"
categories = ["ask"]

[[laws]]
name = "no-call-for-chat"
kind = "tool_not_called"
categories = ["chat"]
"#;

pub const NOTES_PACK: &str = r#"name = "notes"
skill = "notes"
skills_dir = "../../skills"
corpus = "corpus.jsonl"
categories = ["add", "chat"]

[[tools]]
name = "notes_add"
kind = "command"
command = ["sh", "tools/notes.sh"]
description = "Add a note."
parameters = { type = "object", properties = { text = { type = "string" } }, required = ["text"] }
fixtures = "fixtures/notes_add"
key_arguments = ["text"]

[[laws]]
name = "adds-the-note"
kind = "tool_called"
tool = "notes_add"
categories = ["add"]

[[laws]]
name = "no-note-for-chat"
kind = "tool_not_called"
categories = ["chat"]
"#;

/// `main` with three skills (weather, notes, todo), a README and two packs that read the
/// skills folder (weather's and notes'), in two commits.
pub fn skills_and_packs() -> tempfile::TempDir {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path();
    git(dir, &["init", "-q", "-b", "main"]);
    write(dir, "skills/weather/SKILL.md", WEATHER);
    write(dir, "skills/notes/SKILL.md", NOTES);
    write(dir, "skills/todo/SKILL.md", TODO);
    write(dir, "README.md", "A skills repository.\n");
    commit(dir, "skills");
    write(dir, "packs/weather/pack.toml", WEATHER_PACK);
    write(
        dir,
        "packs/weather/corpus.jsonl",
        "{\"id\": \"a1\", \"category\": \"ask\", \"prompt\": \"weather in Oslo?\", \"place\": \"Oslo\"}\n{\"id\": \"c1\", \"category\": \"chat\", \"prompt\": \"hello\"}\n",
    );
    write(
        dir,
        "packs/weather/fixtures/forecast/oslo.json",
        "{\"tool\": \"forecast\", \"arguments\": {\"place\": \"Oslo\"}, \"recorded_from_live\": false, \"status\": 200, \"body\": \"Oslo: 11 °C, light rain\"}\n",
    );
    write(dir, "packs/notes/pack.toml", NOTES_PACK);
    write(
        dir,
        "packs/notes/corpus.jsonl",
        "{\"id\": \"n1\", \"category\": \"add\", \"prompt\": \"note: buy milk\"}\n{\"id\": \"c1\", \"category\": \"chat\", \"prompt\": \"hi\"}\n",
    );
    write(dir, "packs/notes/tools/notes.sh", "#!/bin/sh\necho added\n");
    commit(dir, "packs");
    temp
}

/// The repository GitHub would hold: [`skills_and_packs`], a PR branch `pr` that rewords
/// weather's body and bumps notes' `version:` only, and a commit on `main` after the branch
/// point (not the PR's).
pub fn skills_repository() -> tempfile::TempDir {
    let temp = skills_and_packs();
    let dir = temp.path();
    git(dir, &["checkout", "-q", "-b", "pr"]);
    write(
        dir,
        "skills/weather/SKILL.md",
        &WEATHER.replace("as written", "exactly as the user wrote it"),
    );
    write(
        dir,
        "skills/notes/SKILL.md",
        &NOTES.replace("version: \"1\"", "version: \"2\""),
    );
    commit(dir, "weather's wording; notes' version");
    git(dir, &["checkout", "-q", "main"]);
    write(dir, "README.md", "A skills repository, with packs.\n");
    commit(dir, "readme");
    temp
}
