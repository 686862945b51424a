//! Bad model files: one clear line naming the path and the problem, exit code 1, no panic.

use std::path::Path;
use std::process::Command;

fn generate_with(model: &Path) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_skilleval"))
        .args(["generate", "--prompt", "hi", "--max-tokens", "2", "--model"])
        .arg(model)
        .output()
        .expect("the binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn assert_one_line(stderr: &str, path: &Path, problem: &str) {
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "expected one line, got: {stderr}");
    assert!(lines[0].starts_with("error: "), "{stderr}");
    assert!(lines[0].contains(&path.display().to_string()), "{stderr}");
    assert!(lines[0].contains(problem), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn a_missing_model_file_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("absent.gguf");
    let (code, stderr) = generate_with(&path);
    assert_eq!(code, 1);
    assert_one_line(&stderr, &path, "model file not found");
}

#[test]
fn a_file_that_is_not_gguf_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notes.gguf");
    std::fs::write(&path, "these are notes, not weights\n").unwrap();
    let (code, stderr) = generate_with(&path);
    assert_eq!(code, 1);
    assert_one_line(&stderr, &path, "not a GGUF file");
}

#[test]
#[cfg_attr(not(feature = "full-tier"), ignore = "full tier")]
fn a_truncated_gguf_is_named() {
    use std::io::Read;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cut.gguf");
    // Cut inside the metadata (the tokenizer's vocabulary runs for megabytes).
    let mut head = vec![0u8; 2_000_000];
    let real = skilleval::model_path::resolve(None);
    std::fs::File::open(&real)
        .expect("run scripts/setup.sh first")
        .read_exact(&mut head)
        .unwrap();
    std::fs::write(&path, &head).unwrap();
    let (code, stderr) = generate_with(&path);
    assert_eq!(code, 1);
    assert_one_line(&stderr, &path, "truncated GGUF file");
}

#[test]
fn an_unknown_family_is_named() {
    // A well-formed GGUF of a chat-tuned model without a chat template, whose architecture no
    // family claims (one without a template and not tuned to chat is a base model: transcript).
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mystery.gguf");
    std::fs::write(&path, minimal_gguf("mystery", "Mystery 1B Chat")).unwrap();
    let (code, stderr) = generate_with(&path);
    assert_eq!(code, 1);
    assert_one_line(&stderr, &path, "unknown model family");
    assert!(stderr.contains("mystery"), "{stderr}");
}

/// A GGUF v3 file with two metadata keys (`general.architecture`, `general.name`) and no
/// tensors.
fn minimal_gguf(architecture: &str, name: &str) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(b"GGUF");
    out.extend_from_slice(&3u32.to_le_bytes());
    out.extend_from_slice(&0u64.to_le_bytes()); // tensors
    out.extend_from_slice(&2u64.to_le_bytes()); // metadata pairs
    for (key, value) in [
        ("general.architecture", architecture),
        ("general.name", name),
    ] {
        out.extend_from_slice(&(key.len() as u64).to_le_bytes());
        out.extend_from_slice(key.as_bytes());
        out.extend_from_slice(&8u32.to_le_bytes()); // string
        out.extend_from_slice(&(value.len() as u64).to_le_bytes());
        out.extend_from_slice(value.as_bytes());
    }
    out
}

/// A context smaller than one prefill chunk made llama.cpp abort on an assertion (its batch is
/// cut to the context); it is refused by the argument parser, naming the flag, before any load.
#[test]
fn a_context_smaller_than_a_prefill_chunk_is_refused_by_name() {
    let out = Command::new(env!("CARGO_BIN_EXE_skilleval"))
        .args([
            "generate",
            "--prompt",
            "hi",
            "--ctx",
            "32",
            "--model",
            "/nonexistent.gguf",
        ])
        .output()
        .expect("the binary runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--ctx"), "{stderr}");
    assert!(!stderr.contains("nonexistent"), "{stderr}");
}
