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
    if present(p) {
        return Ok(p.to_path_buf());
    }
    if present(&p.join("pack.toml")) {
        return Ok(p.join("pack.toml"));
    }
    let here = Path::new("packs").join(name_or_path).join("pack.toml");
    if present(&here) {
        return Ok(here);
    }
    Ok(shipped_pack_file(name_or_path)?.unwrap_or(here))
}

/// The pack a run used: `given` (`--pack`) when there is one, else the `pack.toml` its manifest
/// recorded, else the pack its name reaches from here (manifests older than the path).
pub fn of_run(manifest: &Manifest, given: Option<&str>) -> anyhow::Result<Pack> {
    if let Some(given) = given {
        return Pack::load(given);
    }
    let recorded = manifest.pack_file.as_deref();
    match recorded {
        Some(file) if Path::new(file).is_file() => Pack::load(file),
        _ => Pack::load(&manifest.pack).map_err(|e| match recorded {
            Some(file) => anyhow::anyhow!(
                "{e:#}; run {} used {file}, which is gone: name its pack with --pack",
                manifest.run_id
            ),
            None => anyhow::anyhow!(
                "{e:#}; name the pack run {} used with --pack",
                manifest.run_id
            ),
        }),
    }
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
/// beside it; `None` when no pack of that name ships.
pub fn shipped_pack_file(name: &str) -> anyhow::Result<Option<PathBuf>> {
    if !shipped_names().contains(&name) {
        return Ok(None);
    }
    let root = shipped_root();
    write_out(&root)?;
    Ok(Some(root.join("packs").join(name).join("pack.toml")))
}

/// Writes every shipped file under `root` unless a complete copy is there: into a fresh
/// folder beside it first, renamed into place whole, so that two processes starting at once
/// never read a half-written pack.
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
        if file.executable {
            make_executable(&target)?;
        }
        Ok::<_, std::io::Error>(())
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
                "{}: cannot write the shipped packs: {e}",
                root.display()
            ));
        }
    }
    Ok(())
}

#[cfg(unix)]
fn make_executable(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
}

#[cfg(not(unix))]
fn make_executable(_: &Path) -> std::io::Result<()> {
    Ok(())
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
