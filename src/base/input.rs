//! Every input file is opened here: a regular file, or a clear error. A FIFO given as
//! `manifest.json`, `--variant` or `--corpus` would otherwise block the process forever, a
//! device (`/dev/zero`) would be read until memory ran out, and a folder fails with a message
//! that does not say so.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

/// What a file that is not a regular file is, for the error.
fn kind_of(file_type: std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if file_type.is_dir() {
        "a folder"
    } else if file_type.is_fifo() {
        "a FIFO (named pipe)"
    } else if file_type.is_socket() {
        "a socket"
    } else if file_type.is_char_device() || file_type.is_block_device() {
        "a device"
    } else {
        "not a regular file"
    }
}

/// Opens `path` for reading if it is a regular file (a symlink to one is followed). The file is
/// opened without blocking, so a FIFO is refused instead of waiting for a writer, and its kind
/// is taken from the open file, so nothing can swap it in between.
pub fn open_input(path: impl AsRef<Path>) -> io::Result<File> {
    let path = path.as_ref();
    use std::os::unix::fs::OpenOptionsExt;
    const O_NONBLOCK: i32 = 0o4000;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(O_NONBLOCK)
        .open(path)?;
    let file_type = file.metadata()?.file_type();
    if !file_type.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("it is {}, not a regular file", kind_of(file_type)),
        ));
    }
    // O_NONBLOCK has no effect on a regular file's reads.
    Ok(file)
}

/// The bytes of a regular file ([`open_input`]).
pub fn read_input(path: impl AsRef<Path>) -> io::Result<Vec<u8>> {
    let mut file = open_input(path)?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// The text of a regular file ([`open_input`]); not UTF-8 is an error naming the line of the
/// first byte that is not.
pub fn read_input_to_string(path: impl AsRef<Path>) -> io::Result<String> {
    utf8_text(read_input(path)?)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string()))
}

/// Where a file's text stops being UTF-8: the line (1-based) and the byte offset (0-based) of
/// its first invalid byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotUtf8 {
    pub line: usize,
    pub offset: usize,
}

impl NotUtf8 {
    /// One line naming the file and the line: `FILE:LINE: not UTF-8 text (…)`.
    pub fn at(&self, path: &Path) -> String {
        format!("{}:{}: {}", path.display(), self.line, self.what())
    }

    fn what(&self) -> String {
        format!(
            "not UTF-8 text (byte {} of the file is the first that is not)",
            self.offset
        )
    }
}

impl std::fmt::Display for NotUtf8 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.what())
    }
}

/// `bytes` as text, or where they stop being UTF-8.
pub fn utf8_text(bytes: Vec<u8>) -> Result<String, NotUtf8> {
    String::from_utf8(bytes).map_err(|e| {
        let offset = e.utf8_error().valid_up_to();
        let line = e.as_bytes()[..offset]
            .iter()
            .filter(|b| **b == b'\n')
            .count()
            + 1;
        NotUtf8 { line, offset }
    })
}

/// The bytes of a regular file of at most `limit` bytes; a larger one is an error that gives
/// both sizes, read no further than the limit.
pub fn read_input_limited(path: impl AsRef<Path>, limit: u64, what: &str) -> io::Result<Vec<u8>> {
    let file = open_input(path)?;
    let size = file.metadata()?.len();
    let too_big = |size: u64| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{size} bytes is too large for {what}: at most {limit} bytes"),
        )
    };
    if size > limit {
        return Err(too_big(size));
    }
    let mut bytes = Vec::new();
    file.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(too_big(bytes.len() as u64));
    }
    Ok(bytes)
}

/// Whether an optional input file is there: `Ok(false)` when nothing is at `path`, `Ok(true)`
/// for a regular file (a symlink to one counts), and the error [`open_input`] gives for anything
/// else, so that a folder or a FIFO in the file's place is refused instead of read as missing.
pub fn optional_input_present(path: &Path) -> io::Result<bool> {
    match std::fs::metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
        Ok(m) if m.is_file() => Ok(true),
        Ok(m) => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("it is {}, not a regular file", kind_of(m.file_type())),
        )),
    }
}

/// Whether anything is at `path` (a file of any kind, a folder, a symlink), without opening it:
/// a folder holding a `SKILL.md` or a `pack.toml` of the wrong kind is then read, and refused
/// with what it is, instead of passed over as if the file were missing.
pub fn is_present(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok()
}

/// Whether `path` is a regular file, without opening it (a symlink to one counts).
pub fn is_regular_file(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fifo_a_folder_and_a_device_are_refused_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("manifest.json");
        assert!(std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success());
        let e = read_input(&fifo).unwrap_err().to_string();
        assert!(e.contains("FIFO"), "{e}");
        let e = read_input(dir.path()).unwrap_err().to_string();
        assert!(e.contains("a folder"), "{e}");
        let e = read_input(Path::new("/dev/zero")).unwrap_err().to_string();
        assert!(e.contains("a device"), "{e}");
        let file = dir.path().join("x.txt");
        std::fs::write(&file, "x").unwrap();
        assert_eq!(read_input_to_string(&file).unwrap(), "x");
        assert!(optional_input_present(&file).unwrap());
        assert!(!optional_input_present(&dir.path().join("absent")).unwrap());
        let e = optional_input_present(dir.path()).unwrap_err().to_string();
        assert!(e.contains("a folder"), "{e}");
        let e = optional_input_present(&fifo).unwrap_err().to_string();
        assert!(e.contains("FIFO"), "{e}");
    }
}
