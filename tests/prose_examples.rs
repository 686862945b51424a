//! A skill whose worked example is written as prose (`User:` / `Call:` / `Answer:`) is named
//! by `lint`, `init` and `check` before any model time: a small model copies no call from it.

mod common;

use common::cli::{outcome, skilleval};

const PROSE_SKILL: &str = "---\nname: shelf-finder\ndescription: Finds where a library book is shelved, by its title.\nallowed-tools: find_shelf\n---\nUse find_shelf when the user asks where a book is.\n\nExample:\nUser: Where is Dune?\nCall: find_shelf(title=\"Dune\")\nAnswer: Dune is on shelf F-12.\n";

#[test]
fn lint_init_and_check_name_a_worked_example_written_as_prose() {
    let temp = tempfile::tempdir().unwrap();
    let skill_dir = temp.path().join("skills/shelf-finder");
    std::fs::create_dir_all(&skill_dir).unwrap();
    let skill = skill_dir.join("SKILL.md");
    std::fs::write(&skill, PROSE_SKILL).unwrap();
    let skill = skill.display().to_string();
    // The `User:` line is line 9 of the file.
    let warning =
        "shelf-finder/SKILL.md:9: warning: field `body`: a worked example written as prose";

    let (code, stdout, stderr) = outcome(&skilleval(&["lint", &skill]));
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        format!("{stdout}{stderr}").contains(warning),
        "{stdout}{stderr}"
    );

    let pack = temp.path().join("pack").display().to_string();
    let (code, stdout, stderr) = outcome(&skilleval(&[
        "init",
        "--skill",
        &skill,
        "--out",
        &pack,
        "--recorded",
        "find_shelf",
        "--args",
        "find_shelf=title",
    ]));
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains(warning), "{stdout}{stderr}");

    let (_, stdout, stderr) = outcome(&skilleval(&["check", "--pack", &pack]));
    assert!(stdout.contains(warning), "{stdout}{stderr}");

    // The same example as an `example` block draws no such warning.
    let fixed = PROSE_SKILL.replace(
        "Example:\nUser: Where is Dune?\nCall: find_shelf(title=\"Dune\")\nAnswer: Dune is on shelf F-12.\n",
        "```example\nUser: Where is Dune?\nAssistant: <function=find_shelf><parameter=title>Dune</parameter></function>\nTool: Dune is on shelf F-12.\nAssistant: Dune is on shelf F-12.\n```\n",
    );
    std::fs::write(&skill, fixed).unwrap();
    let (_, stdout, stderr) = outcome(&skilleval(&["lint", &skill]));
    assert!(
        !format!("{stdout}{stderr}").contains("written as prose"),
        "{stdout}{stderr}"
    );
}
