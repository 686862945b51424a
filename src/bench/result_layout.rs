//! Where a bench run's BFCL result files go: `result/<model folder>/<group>/` per repeat,
//! with the folder names BFCL reads back.

use std::path::{Path, PathBuf};

use super::corpus::{is_multi_turn, memory_backend};
use super::score::repeat_dir_name;

/// The folder BFCL keeps result files in, holding one folder per model.
pub const RESULT_DIR: &str = "result";

/// Where one repeat's BFCL result tree goes: `result/` alone with one repeat,
/// `repeat-<n>/result/` with several, so that each tree holds one file per category.
pub fn result_root(run_dir: &Path, repeat: u32, repeats: u32) -> PathBuf {
    if repeats > 1 {
        run_dir.join(repeat_dir_name(repeat)).join(RESULT_DIR)
    } else {
        run_dir.join(RESULT_DIR)
    }
}

/// BFCL's grouping folder for a category's result file (memory: `agentic/memory/<backend>`).
pub fn group_of(category: &str) -> &'static str {
    if is_multi_turn(category) {
        "multi_turn"
    } else if let Some(backend) = memory_backend(category) {
        match backend {
            "kv" => "agentic/memory/kv",
            "rec_sum" => "agentic/memory/rec_sum",
            other => unreachable!("memory backend {other} has no result folder"),
        }
    } else if category.contains("live") && !category.contains("non_live") {
        "live"
    } else {
        "non_live"
    }
}

/// The folder BFCL reads a model's results from: `bfcl evaluate --model a/b` looks in
/// `result/a_b`, and turns every `_` of a folder name back into `/`.
/// The name is made a file name by the program's one rule (`base::names::file_stem`), so that
/// it stays one folder under `result/`.
pub fn model_folder(result_model: &str) -> String {
    crate::base::names::file_stem(&result_model.replace('/', "_"))
}

/// A `--result-model` whose folder is the name as BFCL reads it: the name must already be a
/// file name by the program's rule (after `/` becomes `_`), or BFCL would look elsewhere.
pub fn check_result_model(name: &str) -> Result<(), String> {
    let folder = name.replace('/', "_");
    if crate::base::names::file_stem(&folder) != folder {
        return Err(format!(
            "not a result folder name: use letters, digits, `-`, `_`, `.` and `/`, not at either end, at most {} bytes",
            crate::base::names::STEM_MAX_BYTES
        ));
    }
    Ok(())
}

/// A result-model name for a GGUF file: its stem, with `_` (which BFCL reads as `/`) as `-`.
pub fn default_result_model(model_path: Option<&str>, fallback: &str) -> String {
    let stem = model_path
        .and_then(|p| Path::new(p).file_stem())
        .and_then(|s| s.to_str())
        .unwrap_or(fallback)
        .replace(['_', '/'], "-");
    crate::base::names::file_stem(&stem)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_and_folders_follow_bfcl() {
        assert_eq!(group_of("live_simple"), "live");
        assert_eq!(group_of("irrelevance"), "non_live");
        assert_eq!(group_of("multi_turn_long_context"), "multi_turn");
        assert_eq!(group_of("memory_kv"), "agentic/memory/kv");
        assert_eq!(group_of("memory_rec_sum_prereq"), "agentic/memory/rec_sum");
        assert_eq!(model_folder("google/gemma-3-1b-it"), "google_gemma-3-1b-it");
        assert_eq!(
            default_result_model(Some("/m/gemma-3-270m-q4_k_m.gguf"), "x"),
            "gemma-3-270m-q4-k-m"
        );
        assert_eq!(default_result_model(None, "scripted"), "scripted");
    }
}
