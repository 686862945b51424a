//! `manifest.json`: everything that enters the promise "same inputs, same transcripts".

use std::io::Read;
use std::path::Path;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::harness::agent::Budgets;
use crate::harness::backend::{BackendInfo, Sampling};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Manifest {
    pub run_id: String,
    pub skilleval_version: String,
    pub llama_cpp_2_version: String,
    pub backend: BackendInfo,
    pub model_sha256: Option<String>,
    pub pack: String,
    pub skill: String,
    pub skills_dir: String,
    pub skills_git_revision: Option<String>,
    pub variant: Option<String>,
    pub baseline_body_sha256: String,
    pub variant_body_sha256: String,
    pub corpus: String,
    pub corpus_sha256: String,
    pub samples: usize,
    pub repeats: u32,
    pub run_seed: u64,
    pub sampling: Sampling,
    pub budgets: Budgets,
    pub call_format: String,
    pub record: String,
    pub started_unix: u64,
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    format!("{:x}", Sha256::digest(bytes))
}

pub fn file_sha256(path: &Path) -> std::io::Result<String> {
    let mut file = std::fs::File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(format!("{:x}", hasher.finalize()))
}

/// The commit of the repository holding `dir`, with `+dirty` when it has uncommitted changes.
pub fn git_revision(dir: &Path) -> Option<String> {
    let run = |args: &[&str]| {
        std::process::Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let rev = run(&["rev-parse", "HEAD"])?;
    let dirty = run(&["status", "--porcelain", "--", "."]).is_some_and(|s| !s.is_empty());
    Some(if dirty { format!("{rev}+dirty") } else { rev })
}
