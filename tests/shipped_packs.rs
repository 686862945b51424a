//! The packs that ship with skilleval are reachable by name from any folder, not only from the
//! checkout: `check --pack weather` and `doctor` in a skill author's own folder, with no
//! `packs/` in it. No model is loaded.

mod common;

use common::cli::{both, skilleval_in};

#[test]
fn a_shipped_pack_is_found_by_name_outside_the_checkout() {
    let author = tempfile::tempdir().unwrap();
    let out = skilleval_in(author.path(), &["check", "--pack", "weather"]);
    assert!(out.status.success(), "{}", both(&out));
    assert!(!author.path().join("packs").exists(), "{}", both(&out));
}

#[test]
fn doctor_outside_the_checkout_checks_the_shipped_packs_and_needs_no_packs_folder() {
    let author = tempfile::tempdir().unwrap();
    let out = skilleval_in(
        author.path(),
        &["doctor", "--model", "/nonexistent/model.gguf"],
    );
    let said = both(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        !said.contains("No such file or directory (os error 2)\npack"),
        "{said}"
    );
    for pack in [
        "builds",
        "flights",
        "notes",
        "routing",
        "timetable",
        "weather",
    ] {
        assert!(
            said.lines()
                .any(|l| l.starts_with(&format!("pack {pack}")) && l.contains(" ok: skill ")),
            "{said}"
        );
    }
    // The model is the one problem.
    assert!(said.contains("doctor: 1 problem(s)"), "{said}");
}

#[test]
fn doctor_checks_a_packs_folder_in_the_current_folder_before_the_shipped_ones() {
    let author = tempfile::tempdir().unwrap();
    let broken = author.path().join("packs/weather");
    std::fs::create_dir_all(&broken).unwrap();
    std::fs::write(broken.join("pack.toml"), "name = \"weather\"\n").unwrap();
    let out = skilleval_in(
        author.path(),
        &["doctor", "--model", "/nonexistent/model.gguf"],
    );
    let said = both(&out);
    // `--pack weather` would load the broken one here, so that is the one checked.
    assert!(
        said.lines()
            .any(|l| l.starts_with("pack weather") && l.contains("PROBLEM")),
        "{said}"
    );
    assert!(said.contains("doctor: 2 problem(s)"), "{said}");
}
