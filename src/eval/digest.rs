//! SHA-256 digests of the files and folders that enter a run, and the git revision of a folder:
//! what a manifest records so that a resume, a reused baseline or a stamp can tell the same
//! input from a changed one.

use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::anyhow;
use sha2::{Digest, Sha256};

pub fn sha256_hex(bytes: &[u8]) -> String {
    format!("{:x}", Sha256::digest(bytes))
}

pub fn file_sha256(path: &Path) -> std::io::Result<String> {
    let mut file = crate::base::input::open_input(path)?;
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

/// Feeds every regular file under `dir` (path relative to `root`, then contents) to `hasher`,
/// in name order, so the digest changes when any file is added, removed, renamed or edited. A
/// symlink to a folder is not followed (a loop would never end) and anything else that is not a
/// regular file (a FIFO would block the read forever) is not read: each counts by its name and
/// kind only.
pub fn tree_digest(root: &Path, dir: &Path, hasher: &mut Sha256) -> anyhow::Result<()> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| anyhow!("{}: cannot read folder: {e}", dir.display()))?
        .flatten()
        .map(|e| e.path())
        .collect();
    paths.sort();
    for path in paths {
        let name = path
            .strip_prefix(root)
            .unwrap_or(&path)
            .display()
            .to_string();
        let own = std::fs::symlink_metadata(&path)
            .map_err(|e| anyhow!("{}: cannot read: {e}", path.display()))?;
        if own.is_dir() {
            tree_digest(root, &path, hasher)?;
            continue;
        }
        // What a symlink points at, if anything; a dangling one counts as its link alone.
        let target = std::fs::metadata(&path).ok();
        if !target.as_ref().is_some_and(|m| m.is_file()) {
            let kind = match (own.file_type().is_symlink(), &target) {
                (true, Some(m)) if m.is_dir() => "symlink to a folder",
                (true, None) => "dangling symlink",
                _ => "not a regular file",
            };
            hasher.update(name.as_bytes());
            hasher.update([1]);
            hasher.update(kind.as_bytes());
            continue;
        }
        let bytes = crate::base::input::read_input(&path)
            .map_err(|e| anyhow!("{}: cannot read: {e}", path.display()))?;
        hasher.update(name.as_bytes());
        hasher.update([0]);
        hasher.update((bytes.len() as u64).to_le_bytes());
        hasher.update(&bytes);
    }
    Ok(())
}
