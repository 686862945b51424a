//! Where the default model lives: `--model`, else `$SKILLEVAL_MODEL`, else the user cache folder
//! that `scripts/setup.sh` fills.

use std::path::PathBuf;

pub const DEFAULT_MODEL_FILE: &str = "gemma-3-270m-q4_k_m.gguf";

pub fn cache_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("SKILLEVAL_CACHE_DIR") {
        return PathBuf::from(dir);
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(|| PathBuf::from(".cache"));
    base.join("skilleval")
}

pub fn resolve(explicit: Option<PathBuf>) -> PathBuf {
    explicit
        .or_else(|| std::env::var_os("SKILLEVAL_MODEL").map(PathBuf::from))
        .unwrap_or_else(|| cache_dir().join(DEFAULT_MODEL_FILE))
}
