//! The scratch folder a `command` tool runs in while recording: a fresh copy of a
//! conversation's world (or an empty folder for one call), removed when dropped.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::{anyhow, bail};

pub struct Scratch {
    path: PathBuf,
}

impl Scratch {
    /// A new, empty folder under the system's temporary folder, holding a copy of `world`.
    pub fn new(world: Option<&Path>) -> anyhow::Result<Scratch> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        // A folder of that name may be left by an earlier process of the same id that was
        // killed before it removed it: the next name is taken, never that folder.
        let mut tries = 0;
        let path = loop {
            let name = format!(
                "skilleval-scratch-{}-{}",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::SeqCst)
            );
            let path = std::env::temp_dir().join(name);
            match std::fs::create_dir(&path) {
                Ok(()) => break path,
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && tries < 1000 => {
                    tries += 1
                }
                Err(e) => bail!("{}: cannot make a scratch folder: {e}", path.display()),
            }
        };
        let scratch = Scratch { path };
        if let Some(world) = world {
            copy_tree(world, &scratch.path)?;
        }
        Ok(scratch)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// Copies the files and folders under `from` into `to`. A link is refused: its target lies
/// outside the world, and a recording made through it would depend on this machine.
fn copy_tree(from: &Path, to: &Path) -> anyhow::Result<()> {
    let entries = std::fs::read_dir(from)
        .map_err(|e| anyhow!("{}: cannot read the tool's world: {e}", from.display()))?;
    for entry in entries {
        let entry = entry?;
        let kind = entry.file_type()?;
        let target = to.join(entry.file_name());
        if kind.is_symlink() {
            bail!(
                "{}: a link in a tool's world is refused; copy the file in",
                entry.path().display()
            );
        } else if kind.is_dir() {
            std::fs::create_dir(&target)?;
            copy_tree(&entry.path(), &target)?;
        } else if !kind.is_file() {
            // A FIFO or a device would block the copy, or copy what this machine holds.
            bail!(
                "{}: only files and folders belong in a tool's world",
                entry.path().display()
            );
        } else {
            std::fs::copy(entry.path(), &target)
                .map_err(|e| anyhow!("{}: cannot copy: {e}", entry.path().display()))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Truth: a change (a folder left by a killed process of the same id made every later
    /// call fail with "File exists"). The next free name is taken and the old folder is kept.
    #[test]
    fn a_folder_left_under_the_next_name_is_stepped_over() {
        let left: Vec<PathBuf> = (0..3)
            .map(|_| {
                let probe = Scratch::new(None).unwrap();
                let path = probe.path().to_path_buf();
                std::mem::forget(probe);
                path
            })
            .collect();
        // The folders of the next names exist already, as a killed process leaves them.
        let next = left[2]
            .to_string_lossy()
            .rsplit_once('-')
            .unwrap()
            .1
            .parse::<u64>()
            .unwrap();
        let taken: Vec<PathBuf> = (1..4)
            .map(|i| {
                let path = std::env::temp_dir().join(format!(
                    "skilleval-scratch-{}-{}",
                    std::process::id(),
                    next + i
                ));
                let _ = std::fs::create_dir(&path);
                std::fs::write(path.join("left.txt"), "old").unwrap();
                path
            })
            .collect();
        let scratch = Scratch::new(None).unwrap();
        assert!(!taken.contains(&scratch.path().to_path_buf()));
        for path in taken.iter().chain(&left) {
            let _ = std::fs::remove_dir_all(path);
        }
    }

    #[test]
    fn a_scratch_folder_copies_the_world_and_goes_when_dropped() {
        let world =
            std::env::temp_dir().join(format!("skilleval-world-test-{}", std::process::id()));
        std::fs::create_dir_all(world.join("sub")).unwrap();
        std::fs::write(world.join("sub/a.txt"), "hello").unwrap();
        let scratch = Scratch::new(Some(&world)).unwrap();
        let kept = scratch.path().to_path_buf();
        assert_eq!(
            std::fs::read_to_string(kept.join("sub/a.txt")).unwrap(),
            "hello"
        );
        std::fs::write(kept.join("b.txt"), "x").unwrap();
        assert!(
            !world.join("b.txt").exists(),
            "the world itself is never written"
        );
        drop(scratch);
        assert!(!kept.exists());
        // A FIFO would block the copy: it is refused, and the half-made folder goes too.
        let fifo = world.join("pipe.txt");
        assert!(std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success());
        let refused = Scratch::new(Some(&world)).err().expect("a FIFO is refused");
        assert!(
            refused.to_string().contains("only files and folders"),
            "{refused}"
        );
        std::fs::remove_dir_all(&world).unwrap();
    }
}
