//! `skilleval doctor`: one line per item, exit 0 on a sound machine, 1 on any problem.

use std::path::Path;
use std::process::Command;

fn doctor(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_skilleval"))
        .arg("doctor")
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
#[cfg_attr(not(feature = "full-tier"), ignore = "full tier")]
fn the_default_model_and_the_packs_pass() {
    let model = skilleval::model_path::resolve(None);
    assert!(
        model.is_file(),
        "{} is missing: run scripts/setup.sh first",
        model.display()
    );
    let (code, out) = doctor(&[]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains(&format!("model        {}", model.display())),
        "{out}"
    );
    assert!(out.contains("sha256       ok ("), "{out}");
    assert!(out.contains("load         ok in"), "{out}");
    assert!(out.contains("binding      llama-cpp-2 "), "{out}");
    assert!(out.lines().any(|l| l.starts_with("cpu ")), "{out}");
    assert!(out.contains("pack weather ok: skill weather"), "{out}");
    assert!(out.ends_with("doctor: no problem found\n"), "{out}");
}

#[test]
fn a_missing_model_and_a_broken_pack_are_problems() {
    let packs = tempfile::tempdir().unwrap();
    let broken = packs.path().join("broken");
    std::fs::create_dir_all(&broken).unwrap();
    std::fs::write(broken.join("pack.toml"), "name = \"broken\"\n").unwrap();
    let missing = Path::new("/nonexistent/model.gguf");
    let (code, out) = doctor(&[
        "--model",
        missing.to_str().unwrap(),
        "--packs-dir",
        packs.path().to_str().unwrap(),
    ]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("model        PROBLEM: /nonexistent/model.gguf"),
        "{out}"
    );
    assert!(out.contains("pack broken  PROBLEM: "), "{out}");
    assert!(out.ends_with("doctor: 2 problem(s)\n"), "{out}");
}
