//! `skilleval generate` keeps stdout for the generated text, so it can be piped; the figures go
//! to stderr, or into one JSON object with `--json`.

mod common;

use serde_json::Value;

use common::cli;

fn generate(extra: &[&str]) -> (String, String) {
    common::model::model_path();
    let out = cli::skilleval(
        &[
            &["generate", "--raw", "--prompt", "The capital of France is"],
            &["--max-tokens", "4", "--ctx", "512"][..],
            extra,
        ]
        .concat(),
    );
    let stderr = cli::text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    (cli::text(&out.stdout), stderr)
}

#[test]
#[cfg_attr(not(feature = "full-tier"), ignore = "full tier")]
fn stdout_holds_only_the_text_and_stderr_the_figures() {
    let (stdout, stderr) = generate(&[]);
    assert!(!stdout.trim().is_empty());
    for figure in ["model load", "prefill", "decode", "first token"] {
        assert!(!stdout.contains(figure), "{figure} on stdout: {stdout}");
        assert!(stderr.contains(figure), "{figure} not on stderr: {stderr}");
    }
}

#[test]
#[cfg_attr(not(feature = "full-tier"), ignore = "full tier")]
fn json_puts_the_text_and_the_figures_in_one_object() {
    let (stdout, _) = generate(&["--json"]);
    let value: Value = serde_json::from_str(&stdout).expect("stdout is one JSON object");
    assert!(value["text"].is_string(), "{stdout}");
    let figures = &value["figures"];
    assert!(
        figures["generated_tokens"].as_u64().unwrap() <= 4,
        "{stdout}"
    );
    assert!(
        figures["decode_tokens_per_sec"].as_f64().unwrap() > 0.0,
        "{stdout}"
    );
    assert!(
        figures["model_load_secs"].as_f64().unwrap() > 0.0,
        "{stdout}"
    );
}
