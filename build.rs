//! Lists the shipped packs' files for `include_bytes!`: every file under `packs/` and
//! `fixtures/`, and the corpora at the top of `corpora/` (the packs' own; BFCL's stay out), so
//! that `--pack weather` works wherever the binary runs (decision 023).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The folders and files shipped, relative to the crate.
const SHIPPED: [&str; 3] = ["packs", "fixtures", "corpora"];

fn main() {
    let root = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let mut files = Vec::new();
    for top in SHIPPED {
        println!("cargo:rerun-if-changed={top}");
        collect(&root, &root.join(top), top == "corpora", &mut files);
    }
    files.sort();
    // FNV-1a over names and bytes: names the folder the files are written out to.
    let mut digest: u64 = 0xcbf29ce484222325;
    let mut source = String::from("&[\n");
    for (name, path, executable) in &files {
        let bytes = std::fs::read(path).expect("a shipped file reads");
        for byte in name.bytes().chain([0]).chain(bytes) {
            digest = (digest ^ u64::from(byte)).wrapping_mul(0x100000001b3);
        }
        writeln!(
            source,
            "    ShippedFile {{ path: {name:?}, bytes: include_bytes!({:?}), executable: {executable} }},",
            path.display()
        )
        .expect("writing to a string");
    }
    source.push_str("]\n");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets it"));
    std::fs::write(out.join("shipped_files.rs"), source).expect("OUT_DIR is writable");
    std::fs::write(out.join("shipped_digest.txt"), format!("{digest:016x}"))
        .expect("OUT_DIR is writable");
}

/// Every regular file under `dir` as (path relative to `root` with `/`, full path, executable);
/// only the top level when `shallow`. Hidden files (`.gitkeep`) are kept: they keep a folder;
/// Python's byte-code caches are not shipped.
fn collect(root: &Path, dir: &Path, shallow: bool, files: &mut Vec<(String, PathBuf, bool)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(meta) = std::fs::metadata(&path) else {
            continue;
        };
        if meta.is_dir() {
            if !shallow && entry.file_name() != "__pycache__" {
                collect(root, &path, false, files);
            }
        } else if meta.is_file() {
            let name = path
                .strip_prefix(root)
                .expect("under the crate")
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/");
            files.push((name, path, executable(&meta)));
        }
    }
}

#[cfg(unix)]
fn executable(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o111 != 0
}

#[cfg(not(unix))]
fn executable(_: &std::fs::Metadata) -> bool {
    false
}
