//! Where a pack comes from: the argument of `--pack`, the pack a run folder recorded, and the
//! packs that ship with skilleval, built into the binary (decision 023) and written out once to
//! the cache with the fixtures and corpora they reach by relative paths, so that `--pack
//! weather` loads from any folder.

use std::path::{Path, PathBuf};

use anyhow::Context;

use super::Pack;
use crate::eval::record::manifest::Manifest;

struct ShippedFile {
    /// Relative to the crate, with `/`: `packs/weather/pack.toml`, `fixtures/weather/…`.
    path: &'static str,
    bytes: &'static [u8],
    executable: bool,
}

static FILES: &[ShippedFile] = include!(concat!(env!("OUT_DIR"), "/shipped_files.rs"));

/// A digest of every shipped file: a binary with other packs writes them to another folder.
const DIGEST: &str = include_str!(concat!(env!("OUT_DIR"), "/shipped_digest.txt"));

/// A path to a pack's folder or to its `pack.toml`; else `packs/<name>/pack.toml` in the
/// current folder; else the shipped pack of that name, written out on first use. A name found
/// nowhere gives `packs/<name>/pack.toml`, for the error to name.
pub fn locate(name_or_path: &str) -> anyhow::Result<PathBuf> {
    // A `pack.toml` of any kind counts, so that reading it says what is wrong with it (a FIFO)
    // instead of the search going on and saying it is missing.
    let present = |p: &Path| crate::base::input::is_present(p) && !p.is_dir();
    let p = Path::new(name_or_path);
    for file in [p.to_path_buf(), p.join("pack.toml")] {
        if present(&file) {
            // A path into the cache (a run's recorded `pack_file`) is checked as a name is.
            if in_shipped_cache(&file) {
                verified(&shipped_root())?;
            }
            return Ok(file);
        }
    }
    let here = Path::new("packs").join(name_or_path).join("pack.toml");
    if present(&here) {
        return Ok(here);
    }
    Ok(shipped_pack_file(name_or_path)?.unwrap_or(here))
}

/// The pack a run used: `given` (`--pack`) when there is one, else the `pack.toml` its manifest
/// recorded, else the pack its name reaches from here (manifests older than the path). A pack
/// of another name is refused, and so is a recorded file that is gone: a pack of the same name
/// found elsewhere (a shipped one) would be another pack in silence.
pub fn of_run(manifest: &Manifest, given: Option<&str>) -> anyhow::Result<Pack> {
    let run = &manifest.run_id;
    let pack = match (given, manifest.pack_file.as_deref()) {
        (Some(given), _) => Pack::load(given)?,
        (None, Some(file)) if crate::base::input::is_present(Path::new(file)) => Pack::load(file)?,
        (None, Some(file)) => anyhow::bail!(
            "run {run} used {file}, which is gone; name the pack's new place with --pack"
        ),
        (None, None) => Pack::load(&manifest.pack)
            .map_err(|e| anyhow::anyhow!("{e:#}; name the pack run {run} used with --pack"))?,
    };
    if pack.name != manifest.pack {
        let named = match given {
            Some(given) => format!("--pack {given}"),
            None => pack.file.display().to_string(),
        };
        anyhow::bail!(
            "{named}: pack {:?} is not the run's pack: run {run} ran pack {:?}",
            pack.name,
            manifest.pack
        );
    }
    Ok(pack)
}

/// The names of the shipped packs, sorted.
pub fn shipped_names() -> Vec<&'static str> {
    let mut names: Vec<&str> = FILES
        .iter()
        .filter_map(|f| f.path.strip_prefix("packs/")?.strip_suffix("/pack.toml"))
        .collect();
    names.sort_unstable();
    names
}

/// Where the shipped files are written out: a folder of the cache named by their digest.
pub fn shipped_root() -> PathBuf {
    crate::model_path::cache_dir().join(format!(
        "packs-{}-{}",
        env!("CARGO_PKG_VERSION"),
        DIGEST.trim()
    ))
}

/// The `pack.toml` of the shipped pack `name`, written out (once) with everything shipped
/// beside it and checked against the binary; `None` when no pack of that name ships.
pub fn shipped_pack_file(name: &str) -> anyhow::Result<Option<PathBuf>> {
    if !shipped_names().contains(&name) {
        return Ok(None);
    }
    let root = shipped_root();
    write_out(&root)?;
    verified(&root)?;
    Ok(Some(root.join("packs").join(name).join("pack.toml")))
}

/// Whether `path` lies in the cache the shipped packs are written out to.
pub fn in_shipped_cache(path: &Path) -> bool {
    canonical(path).starts_with(canonical(&shipped_root()))
}

/// `path` with its links resolved; a file not made yet by its folder's.
fn canonical(path: &Path) -> PathBuf {
    path.canonicalize()
        .or_else(|e| match (path.parent(), path.file_name()) {
            (Some(dir), Some(name)) => dir.canonicalize().map(|d| d.join(name)),
            _ => Err(e),
        })
        .unwrap_or_else(|_| path.to_path_buf())
}

/// Refuses to write `what` at `path` when it lies in the shipped packs' cache: every later run
/// of that pack, in any folder, would read it. The line says how to get a copy of one's own.
pub fn refuse_write_into_shipped(path: &Path, what: &str) -> anyhow::Result<()> {
    if !in_shipped_cache(path) {
        return Ok(());
    }
    let root = shipped_root();
    let relative = canonical(path)
        .strip_prefix(canonical(&root))
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let mut parts = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy());
    let pack = match (parts.next(), parts.next()) {
        (Some(top), Some(name)) if top == "packs" => Some(name.into_owned()),
        _ => None,
    };
    // The whole cache, since a pack reaches its fixtures and corpus by relative paths.
    anyhow::bail!(
        "{}: {what} would write into the cache of the shipped packs ({}), which every run of the pack reads; copy the packs out (`cp -r {} my-packs && chmod -R u+w my-packs`) and run the copy (`--pack my-packs/packs/{}`)",
        path.display(),
        root.display(),
        root.display(),
        pack.as_deref().unwrap_or("NAME")
    )
}

/// Writes every shipped file under `root` unless a copy is there: into a fresh folder beside
/// it first, renamed into place whole, so that two processes starting at once never read a
/// half-written pack. The files are read-only: the cache is the binary's, not a workspace.
fn write_out(root: &Path) -> anyhow::Result<()> {
    if root.is_dir() {
        return Ok(());
    }
    let parent = root.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent)
        .with_context(|| format!("{}: cannot create the cache folder", parent.display()))?;
    let staging = parent.join(format!(
        ".{}-{}",
        root.file_name().unwrap_or_default().to_string_lossy(),
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&staging);
    let written = FILES.iter().try_for_each(|file| {
        let target = staging.join(file.path);
        if let Some(dir) = target.parent() {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(&target, file.bytes)?;
        set_read_only(&target, file.executable)
    });
    if let Err(e) = written {
        let _ = std::fs::remove_dir_all(&staging);
        return Err(anyhow::anyhow!(
            "{}: cannot write the shipped packs: {e}",
            staging.display()
        ));
    }
    if let Err(e) = std::fs::rename(&staging, root) {
        let _ = std::fs::remove_dir_all(&staging);
        // Another process put its copy in place first: the same files.
        if !root.is_dir() {
            return Err(anyhow::anyhow!(
                "{}: cannot write the shipped packs: {e}; {}",
                root.display(),
                remove_the_cache(root)
            ));
        }
    }
    Ok(())
}

/// The fix for a cache that cannot be mended in place.
fn remove_the_cache(root: &Path) -> String {
    format!(
        "remove the cache folder (`rm -rf {}`) and skilleval writes the shipped packs out again",
        root.display()
    )
}

/// Checks the copy under `root` against the files in the binary, once a process: a changed or
/// missing file is written out again (and said, one line); a file the binary does not ship is
/// refused, naming it, since a pack would read it. An edit in the cache never reaches a run.
fn verified(root: &Path) -> anyhow::Result<()> {
    static CHECKED: std::sync::Mutex<bool> = std::sync::Mutex::new(false);
    let mut checked = CHECKED.lock().unwrap_or_else(|e| e.into_inner());
    if *checked {
        return Ok(());
    }
    let mut restored = Vec::new();
    for file in FILES {
        let target = root.join(file.path);
        if std::fs::read(&target).is_ok_and(|bytes| bytes == file.bytes) {
            // A copy an older binary wrote may still be writable.
            if std::fs::metadata(&target).is_ok_and(|m| !m.permissions().readonly()) {
                let _ = set_read_only(&target, file.executable);
            }
            continue;
        }
        let restore = || -> std::io::Result<()> {
            if let Some(dir) = target.parent() {
                std::fs::create_dir_all(dir)?;
            }
            // A folder or a FIFO in a file's place is not ours to mend in place.
            if std::fs::symlink_metadata(&target).is_ok_and(|m| !m.is_file()) {
                return Err(std::io::Error::other("not a regular file"));
            }
            crate::base::write::write_atomic(&target, file.bytes)?;
            set_read_only(&target, file.executable)
        };
        restore().map_err(|e| {
            anyhow::anyhow!(
                "{}: the cached shipped packs are damaged and cannot be mended ({e}); {}",
                target.display(),
                remove_the_cache(root)
            )
        })?;
        restored.push(file.path);
    }
    if let Some(stray) = stray_file(root, root) {
        anyhow::bail!(
            "{}: the cache of the shipped packs holds a file skilleval does not ship, which a run would read; {}, and keep your own files in a pack folder of your own",
            stray.display(),
            remove_the_cache(root)
        );
    }
    if let Some(first) = restored.first() {
        eprintln!(
            "skilleval: warning: {}: {} file(s) of the shipped packs differed from the binary's ({first}{}) and were written out again; to change a shipped pack, copy it out of the cache and run the copy",
            root.display(),
            restored.len(),
            if restored.len() > 1 { ", …" } else { "" }
        );
    }
    *checked = true;
    Ok(())
}

/// The first file (or anything but a folder) under `dir` that the binary does not ship.
fn stray_file(root: &Path, dir: &Path) -> Option<PathBuf> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .collect();
    entries.sort();
    for path in entries {
        let is_dir = std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir());
        if is_dir {
            if let Some(stray) = stray_file(root, &path) {
                return Some(stray);
            }
            continue;
        }
        let relative = path.strip_prefix(root).ok()?;
        let name = relative
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join("/");
        if !FILES.iter().any(|f| f.path == name) {
            return Some(path);
        }
    }
    None
}

/// A cached file made read-only (and executable where it ships so).
#[cfg(unix)]
fn set_read_only(path: &Path, executable: bool) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let mode = if executable { 0o555 } else { 0o444 };
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
}

#[cfg(not(unix))]
fn set_read_only(path: &Path, _: bool) -> std::io::Result<()> {
    let mut permissions = std::fs::metadata(path)?.permissions();
    permissions.set_readonly(true);
    std::fs::set_permissions(path, permissions)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_packs_are_the_checkouts() {
        let checkout = Path::new(env!("CARGO_MANIFEST_DIR")).join("packs");
        let mut in_checkout: Vec<String> = std::fs::read_dir(checkout)
            .unwrap()
            .flatten()
            .filter(|e| e.path().join("pack.toml").is_file())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        in_checkout.sort();
        assert_eq!(shipped_names(), in_checkout);
        let corpora: Vec<&str> = FILES
            .iter()
            .map(|f| f.path)
            .filter(|p| p.starts_with("corpora/"))
            .collect();
        assert_eq!(corpora, ["corpora/routing.jsonl", "corpora/weather.jsonl"]);
    }
}
