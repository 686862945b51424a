//! Files the tests copy and read back: folder trees and the lines of a run's journal.

use std::path::Path;

use skilleval::eval::record::folder::JOURNAL_FILE;

/// Copies the folder `from` to `to`, with everything under it.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create folder");
    for entry in std::fs::read_dir(from).expect("read folder").flatten() {
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).expect("copy file");
        }
    }
}

/// The lines of the journal in the run folder `dir`, as written.
pub fn journal_lines(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join(JOURNAL_FILE))
        .unwrap_or_else(|e| panic!("{}: {e}", dir.join(JOURNAL_FILE).display()))
        .lines()
        .map(str::to_string)
        .collect()
}
