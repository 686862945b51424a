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
    /// Whether the control arm (the skill with an empty body) ran.
    #[serde(default)]
    pub control: bool,
    /// SHA-256 of the control arm's skill body (of the empty text) when it ran.
    #[serde(default)]
    pub control_body_sha256: Option<String>,
    pub corpus: String,
    pub corpus_sha256: String,
    pub samples: usize,
    pub repeats: u32,
    pub run_seed: u64,
    pub sampling: Sampling,
    pub budgets: Budgets,
    pub call_format: String,
    pub record: String,
    /// Units run at once. Above 1, sequences share decode batches: a run replays exactly at the
    /// same value, but its results differ in the last bits from another value's
    /// (docs/throughput.md); the batch settings are in `backend`.
    #[serde(default = "one")]
    pub parallel: usize,
    pub started_unix: u64,
}

fn one() -> usize {
    1
}

impl Manifest {
    /// Inputs that differ between a run and the run it resumes. Any difference would mix two
    /// experiments in one journal; the run size (samples, repeats) may change, since units
    /// are keyed by sample and repeat.
    pub fn resume_conflicts(&self, earlier: &Manifest) -> Vec<&'static str> {
        let checks = [
            ("pack", self.pack == earlier.pack),
            ("skill", self.skill == earlier.skill),
            (
                "baseline_body_sha256",
                self.baseline_body_sha256 == earlier.baseline_body_sha256,
            ),
            (
                "variant_body_sha256",
                self.variant_body_sha256 == earlier.variant_body_sha256,
            ),
            ("corpus_sha256", self.corpus_sha256 == earlier.corpus_sha256),
            ("model_sha256", self.model_sha256 == earlier.model_sha256),
            ("run_seed", self.run_seed == earlier.run_seed),
            ("sampling", self.sampling == earlier.sampling),
            ("budgets", self.budgets == earlier.budgets),
            ("call_format", self.call_format == earlier.call_format),
        ];
        checks
            .into_iter()
            .filter(|(_, same)| !same)
            .map(|(field, _)| field)
            .collect()
    }
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
