//! Skills in the Agent Skills format: the loader reads its fields and keeps unknown ones, a
//! skill's `allowed-tools` grants tools once it is loaded, and `skilleval lint` reports every
//! departure from the format with its file and line (expected findings written from the
//! format's rules, not from the linter's output).

mod common;

use std::path::Path;

use skilleval::harness::skills::lint::{self, Severity};
use skilleval::harness::skills::{parse_skill_md, SkillTree};

use common::cli;

fn write_skill(root: &Path, folder: &str, text: &str) {
    let dir = root.join(folder);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("SKILL.md"), text).unwrap();
}

#[test]
fn the_loader_reads_the_format_and_keeps_unknown_keys() {
    let text = "---\nname: pdf-tools\ndescription: Fill and merge PDF forms.\nlicense: Apache-2.0\ncompatibility: Needs poppler-utils.\nmetadata:\n  author: someone\nallowed-tools: Bash(pdftk:*) Read\nuser-invocable: false\n---\nUse pdftk.\n";
    let (meta, body) = parse_skill_md(text, Path::new("pdf-tools/SKILL.md")).unwrap();
    assert_eq!(meta.name, "pdf-tools");
    assert_eq!(meta.license.as_deref(), Some("Apache-2.0"));
    assert_eq!(meta.compatibility.as_deref(), Some("Needs poppler-utils."));
    assert_eq!(
        meta.metadata.as_ref().unwrap()["author"],
        serde_yaml::Value::from("someone")
    );
    assert_eq!(meta.granted_tools(), ["Bash", "Read"]);
    assert_eq!(
        meta.other.get("user-invocable"),
        Some(&serde_yaml::Value::Bool(false))
    );
    assert_eq!(body, "Use pdftk.");
}

#[test]
fn an_unquoted_colon_in_a_value_names_the_line_and_says_to_quote_it() {
    // Written from YAML's rule: ": " inside a plain scalar starts a mapping.
    let text = "---\nname: notes\ndescription: Manages notes: create and list them.\n---\nBody.\n";
    let error = parse_skill_md(text, Path::new("notes/SKILL.md"))
        .unwrap_err()
        .to_string();
    assert!(
        error.starts_with("notes/SKILL.md:3: front matter:"),
        "{error}"
    );
    assert!(error.contains("needs quotes"), "{error}");
    let quoted =
        "---\nname: notes\ndescription: \"Manages notes: create and list them.\"\n---\nBody.\n";
    assert!(parse_skill_md(quoted, Path::new("notes/SKILL.md")).is_ok());
}

#[test]
fn allowed_tools_and_the_older_tools_key_grant_the_same() {
    let old = "---\nname: s\ndescription: d\ntools: [station_reading, other]\n---\nB\n";
    let new = "---\nname: s\ndescription: d\nallowed-tools: station_reading other\n---\nB\n";
    let listed = "---\nname: s\ndescription: d\nallowed-tools: [station_reading, other]\n---\nB\n";
    let granted = |text: &str| {
        parse_skill_md(text, Path::new("s/SKILL.md"))
            .unwrap()
            .0
            .granted_tools()
    };
    assert_eq!(granted(old), ["station_reading", "other"]);
    assert_eq!(granted(new), granted(old));
    assert_eq!(granted(listed), granted(old));
    assert!(parse_skill_md(new, Path::new("s/SKILL.md"))
        .unwrap()
        .0
        .grants("other"));
}

/// (file name, line, field, severity) of each finding.
fn findings(root: &Path) -> Vec<(String, usize, String, Severity)> {
    let mut out: Vec<_> = lint::lint_path(root)
        .unwrap()
        .findings
        .into_iter()
        .map(|f| {
            let folder = f
                .file
                .parent()
                .and_then(|p| p.file_name())
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            (folder, f.line, f.field, f.severity)
        })
        .collect();
    out.sort();
    out
}

#[test]
fn lint_finds_every_violation_with_its_line() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    // Each folder breaks the format's rules in known places.
    write_skill(root, "good-one", "---\nname: good-one\ndescription: Does one thing.\nlicense: MIT\nmetadata:\n  author: a\nallowed-tools: Read\n---\nBody.\n");
    write_skill(
        root,
        "Bad_Name",
        "---\nname: Bad_Name\ndescription: x\n---\nBody.\n",
    );
    write_skill(
        root,
        "hyphens",
        "---\nname: -two--hyphens\ndescription: x\n---\nBody.\n",
    );
    write_skill(
        root,
        "other-folder",
        "---\nname: not-the-folder\ndescription: x\n---\nBody.\n",
    );
    let long_name = "a".repeat(65);
    write_skill(
        root,
        &long_name,
        &format!("---\nname: {long_name}\ndescription: x\n---\nBody.\n"),
    );
    write_skill(
        root,
        "long-description",
        &format!(
            "---\nname: long-description\ndescription: {}\n---\nBody.\n",
            "d".repeat(1025)
        ),
    );
    write_skill(
        root,
        "empty-description",
        "---\nname: empty-description\ndescription: \"\"\n---\nBody.\n",
    );
    write_skill(
        root,
        "no-description",
        "---\nname: no-description\n---\nBody.\n",
    );
    write_skill(root, "fields", &format!("---\nname: fields\ndescription: x\ncompatibility: {}\nmetadata:\n  n: 3\nallowed-tools: [Read]\ncolour: blue\n---\nBody.\n", "c".repeat(501)));
    write_skill(root, "no-front-matter", "Just a body.\n");
    write_skill(
        root,
        "bad-yaml",
        "---\nname: bad-yaml\ndescription: [unclosed\n---\nBody.\n",
    );

    use Severity::{Error, Warning};
    let mut want: Vec<(String, usize, String, Severity)> = [
        // Uppercase letters and an underscore: one finding for the characters.
        ("Bad_Name", 2, "name", Error),
        // Starts with a hyphen, two in a row, and does not match its folder.
        ("hyphens", 2, "name", Error),
        ("hyphens", 2, "name", Error),
        ("hyphens", 2, "name", Error),
        ("other-folder", 2, "name", Error),
        (long_name.as_str(), 2, "name", Error),
        ("long-description", 3, "description", Error),
        ("empty-description", 3, "description", Error),
        // A missing field is reported on the opening line.
        ("no-description", 1, "description", Error),
        ("fields", 4, "compatibility", Error),
        ("fields", 5, "metadata", Error),
        ("fields", 7, "allowed-tools", Error),
        ("fields", 8, "colour", Warning),
        ("no-front-matter", 1, "", Error),
        ("bad-yaml", 3, "", Error),
    ]
    .iter()
    .map(|(f, l, k, s)| (f.to_string(), *l, k.to_string(), *s))
    .collect();
    want.sort();
    assert_eq!(findings(root), want);
}

#[test]
fn two_skills_of_one_name_are_an_error() {
    let root = tempfile::tempdir().unwrap();
    write_skill(
        root.path(),
        "a",
        "---\nname: a\ndescription: x\n---\nBody.\n",
    );
    write_skill(
        root.path(),
        "b",
        "---\nname: a\ndescription: y\n---\nBody.\n",
    );
    let report = lint::lint_path(root.path()).unwrap();
    let messages: Vec<String> = report.findings.iter().map(ToString::to_string).collect();
    assert!(
        messages.iter().any(
            |m| m.contains("b/SKILL.md:2: error: field `name`: skill \"a\" is also defined in")
        ),
        "{messages:?}"
    );
}

fn skilleval(args: &[&str]) -> (i32, String) {
    let (code, stdout, _) = cli::outcome(&cli::skilleval(args));
    (code, stdout)
}

#[test]
fn the_shipped_skills_pass_and_a_broken_one_fails_the_command() {
    for dir in ["packs/weather/skills", "packs/routing/skills"] {
        if !Path::new(env!("CARGO_MANIFEST_DIR")).join(dir).is_dir() {
            continue;
        }
        let (code, out) = skilleval(&["lint", dir]);
        assert_eq!(code, 0, "{dir}: {out}");
        assert!(out.contains(", 0 errors, 0 warnings"), "{dir}: {out}");
        // The shipped skills load too, and grant their tools through `allowed-tools`.
        SkillTree::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join(dir)).unwrap();
    }
    let root = tempfile::tempdir().unwrap();
    write_skill(
        root.path(),
        "x",
        "---\nname: y\ndescription: x\nextra: 1\n---\nBody.\n",
    );
    let path = root.path().to_str().unwrap();
    let (code, out) = skilleval(&["lint", path]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("x/SKILL.md:2: error: field `name`:"), "{out}");
    assert!(out.contains("lint: 1 skill, 1 error, 1 warning"), "{out}");
    // Warnings alone pass, unless --strict.
    write_skill(
        root.path(),
        "x",
        "---\nname: x\ndescription: x\nextra: 1\n---\nBody.\n",
    );
    assert_eq!(skilleval(&["lint", path]).0, 0);
    assert_eq!(skilleval(&["lint", path, "--strict"]).0, 1);
}
