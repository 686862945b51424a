//! The `git` program, asked as a child process for what a plan reads: the repository's root, the
//! base revision (given, or the merge base with the default branch), the paths changed since,
//! and a file's text at the base. Every failure names the git command and what git said.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{anyhow, bail};

/// Runs `git -C dir args…` and returns its stdout; a failure is one line with git's own words.
fn git(dir: &Path, args: &[&str]) -> anyhow::Result<Vec<u8>> {
    let output = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| anyhow!("cannot start git (is it installed and on PATH?): {e}"))?;
    if !output.status.success() {
        let said = String::from_utf8_lossy(&output.stderr);
        let said = said.trim().replace('\n', " ");
        bail!("git {}: {said}", args.join(" "));
    }
    Ok(output.stdout)
}

fn git_line(dir: &Path, args: &[&str]) -> anyhow::Result<String> {
    let out = git(dir, args)?;
    Ok(String::from_utf8_lossy(&out).trim().to_string())
}

/// The root of the work tree `dir` is in.
pub fn repository_root(dir: &Path) -> anyhow::Result<PathBuf> {
    let root = git_line(dir, &["rev-parse", "--show-toplevel"]).map_err(|e| {
        anyhow!(
            "{}: not inside a git repository, so there is no change to plan for ({e})",
            dir.display()
        )
    })?;
    Ok(PathBuf::from(root))
}

/// The revision a plan compares against, and how it was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Base {
    /// The full commit id.
    pub commit: String,
    /// `--base main`, or `merge base of HEAD and origin/main`.
    pub how: String,
}

/// The merge base of HEAD with `given`, or without it with the default branch (the remote's
/// HEAD, else a local `main` or `master`). Never a guess past those. A PR's change is what it
/// made since it branched, so commits made on the base branch since then are not counted.
pub fn base(root: &Path, given: Option<&str>) -> anyhow::Result<Base> {
    let (branch, how) = match given {
        Some(rev) => {
            git_line(
                root,
                &["rev-parse", "--verify", &format!("{rev}^{{commit}}")],
            )
            .map_err(|e| anyhow!("--base {rev}: not a commit of this repository ({e})"))?;
            (
                rev.to_string(),
                format!("merge base of HEAD and --base {rev}"),
            )
        }
        None => {
            let branch = default_branch(root)?;
            let how = format!("merge base of HEAD and {branch}");
            (branch, how)
        }
    };
    let commit = git_line(root, &["merge-base", "HEAD", &branch]).map_err(|e| {
        anyhow!(
            "{e}: HEAD and {branch} share no commit here (a shallow clone? fetch more history, \
             e.g. `git fetch --unshallow`, or name the base with --base)"
        )
    })?;
    Ok(Base { commit, how })
}

fn default_branch(root: &Path) -> anyhow::Result<String> {
    if let Ok(remote_head) = git_line(
        root,
        &[
            "symbolic-ref",
            "--quiet",
            "--short",
            "refs/remotes/origin/HEAD",
        ],
    ) {
        if !remote_head.is_empty() {
            return Ok(remote_head);
        }
    }
    for branch in ["main", "master"] {
        let exists = git(
            root,
            &[
                "rev-parse",
                "--verify",
                "--quiet",
                &format!("refs/heads/{branch}"),
            ],
        )
        .is_ok();
        if exists {
            return Ok(branch.to_string());
        }
    }
    bail!("cannot tell the default branch (no origin/HEAD, no local main or master): name the base with --base REF")
}

/// How a path changed between the base and the work tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Added,
    Modified,
    Deleted,
}

/// Every path (relative to the root, with `/`) that differs between `base` and the work tree,
/// tracked files only; a rename is a deletion and an addition.
pub fn changed_paths(root: &Path, base: &str) -> anyhow::Result<Vec<(Status, String)>> {
    let out = git(
        root,
        &["diff", "--name-status", "--no-renames", "-z", base, "--"],
    )?;
    let text = String::from_utf8(out).map_err(|_| anyhow!("git diff: a path is not UTF-8"))?;
    let mut fields = text.split('\0').filter(|f| !f.is_empty());
    let mut changes = Vec::new();
    while let Some(code) = fields.next() {
        let path = fields
            .next()
            .ok_or_else(|| anyhow!("git diff: status {code:?} without a path"))?;
        let status = match code.chars().next() {
            Some('A') => Status::Added,
            Some('D') => Status::Deleted,
            _ => Status::Modified,
        };
        changes.push((status, path.to_string()));
    }
    Ok(changes)
}

/// The text of `path` (relative to the root) at `base`; `None` when the base has no such file.
pub fn text_at(root: &Path, base: &str, path: &str) -> anyhow::Result<Option<String>> {
    let spec = format!("{base}:{path}");
    if git(root, &["cat-file", "-e", &spec]).is_err() {
        return Ok(None);
    }
    let bytes = git(root, &["show", &spec])?;
    Ok(Some(String::from_utf8(bytes).map_err(|_| {
        anyhow!("{path}: at the base ({base}) the file is not UTF-8 text")
    })?))
}

/// Whether the base holds a file at `path`.
pub fn exists_at(root: &Path, base: &str, path: &str) -> bool {
    git(root, &["cat-file", "-e", &format!("{base}:{path}")]).is_ok()
}

/// Every `pack.toml` in the work tree, tracked or new (ignored files left out), relative to
/// the root.
pub fn pack_files(root: &Path) -> anyhow::Result<Vec<String>> {
    let out = git(
        root,
        &[
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
            "--",
            "pack.toml",
            ":(glob)**/pack.toml",
        ],
    )?;
    let text = String::from_utf8_lossy(&out);
    let mut files: Vec<String> = text
        .split('\0')
        .filter(|f| !f.is_empty())
        .map(str::to_string)
        .filter(|f| root.join(f).is_file())
        .collect();
    files.sort();
    files.dedup();
    Ok(files)
}

/// Writes the files of `commit` into `dir`, an empty folder: `git archive` read by `tar -x`,
/// so that nothing is written outside it (no worktree is registered in the repository).
pub fn lay_out(root: &Path, commit: &str, dir: &Path) -> anyhow::Result<()> {
    let mut archive = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["archive", "--format=tar", commit])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| anyhow!("cannot start git (is it installed and on PATH?): {e}"))?;
    let tar_input = archive
        .stdout
        .take()
        .ok_or_else(|| anyhow!("git archive: no output"))?;
    let tar = Command::new("tar")
        .arg("-x")
        .arg("-C")
        .arg(dir)
        .stdin(tar_input)
        .output()
        .map_err(|e| anyhow!("cannot start tar: {e}"))?;
    let archived = archive.wait_with_output()?;
    if !archived.status.success() {
        bail!(
            "git archive {commit}: {}",
            String::from_utf8_lossy(&archived.stderr).trim()
        );
    }
    if !tar.status.success() {
        bail!(
            "tar -x -C {}: {}",
            dir.display(),
            String::from_utf8_lossy(&tar.stderr).trim()
        );
    }
    Ok(())
}
