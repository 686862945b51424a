//! How a file is written: beside its place and renamed over it, so that a reader (or a crash)
//! never sees half a file and a symlink at the place is replaced, never written through; new
//! files without ever truncating one that exists; and one writer at a time per folder.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

static NEXT: AtomicU64 = AtomicU64::new(0);

/// A temporary name in `dir`, unique to this process and call, short whatever the final name.
fn temp_path(dir: &Path) -> PathBuf {
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    dir.join(format!(".skilleval-{}-{n}.partial", std::process::id()))
}

/// Writes `bytes` to `path` atomically: into a temporary file in the same folder, flushed to
/// disk, then renamed over `path`. On any failure the temporary file is removed.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let temp = temp_path(dir);
    let result = (|| {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&temp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    result
}

/// Writes a new file: an existing file (or symlink) at `path` is an error, never truncated.
pub fn create_new(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|e| {
            if e.kind() == io::ErrorKind::AlreadyExists {
                io::Error::new(
                    io::ErrorKind::AlreadyExists,
                    "already exists; it is kept as it is",
                )
            } else {
                e
            }
        })?;
    file.write_all(bytes)
}

/// Creates the folder `dir` if missing and proves a file can be made in it (one is made and
/// removed), so that a folder that cannot be written is found before any work.
pub fn check_writable_folder(dir: &Path) -> io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let probe = temp_path(dir);
    create_new(&probe, b"")?;
    std::fs::remove_file(&probe)
}

/// An exclusive lock on a folder itself (`flock` on the open folder, no lock file), held until
/// dropped: two processes that write the same folder take turns. The operating system's lock
/// goes with the process however it ends, and the folder gains no file.
pub struct FolderLock {
    _dir: File,
}

impl FolderLock {
    /// Waits for the lock on `dir` (created if missing).
    pub fn acquire(dir: &Path) -> io::Result<FolderLock> {
        std::fs::create_dir_all(dir)?;
        let handle = File::open(dir)?;
        handle.lock()?;
        Ok(FolderLock { _dir: handle })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_atomic_write_leaves_no_temporary_file_even_when_it_fails() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.json");
        write_atomic(&path, b"one").unwrap();
        write_atomic(&path, b"two").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        let long = dir.path().join(format!("{}.json", "x".repeat(300)));
        assert!(write_atomic(&long, b"x").is_err());
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().flatten().collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }

    #[test]
    fn a_folder_lock_leaves_no_file_and_is_exclusive() {
        let dir = tempfile::tempdir().unwrap();
        let held = FolderLock::acquire(dir.path()).unwrap();
        let other = File::open(dir.path()).unwrap();
        assert!(other.try_lock().is_err());
        drop(held);
        assert!(other.try_lock().is_ok());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_new_file_never_replaces_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("keep.txt");
        std::fs::write(&path, "mine").unwrap();
        assert!(create_new(&path, b"").is_err());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "mine");
    }
}
