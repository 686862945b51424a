//! The digests a run's manifest keeps of its inputs read regular files only: a FIFO in the
//! skills folder would block the read forever, and a symlink to a folder above it would never
//! end. Both are counted by name and kind, and a regular file's edit still changes the digest.

mod common;

use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use skilleval::eval::pack::Pack;
use skilleval::eval::record::manifest::InputHashes;

use common::scripted::copy_pack;

/// The digests of the mini pack at `dir`, or a panic when they take longer than 20 s.
fn digests_within_time(dir: &Path) -> InputHashes {
    let dir = dir.to_path_buf();
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let pack = Pack::load(dir.to_str().unwrap()).unwrap();
        let hashes = pack.input_hashes(&pack.skills_dir, &[], &pack.corpus_path);
        let _ = sender.send(hashes.map_err(|e| e.to_string()));
    });
    receiver
        .recv_timeout(Duration::from_secs(20))
        .expect("the digests finish (a FIFO or a loop would hang them)")
        .expect("the digests are taken")
}

#[test]
fn a_fifo_and_a_symlink_loop_in_the_skills_folder_are_not_read() {
    let (_temp, pack) = copy_pack("mini");
    let before = digests_within_time(&pack);
    let skill = pack.join("skills/stations");
    let status = std::process::Command::new("mkfifo")
        .arg(skill.join("notes.fifo"))
        .status()
        .unwrap();
    assert!(status.success());
    std::os::unix::fs::symlink(pack.join("skills"), skill.join("loop")).unwrap();
    let with_both = digests_within_time(&pack);
    assert_ne!(before.skills, with_both.skills, "new entries count by name");

    let file = skill.join("SKILL.md");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, text + "\nOne more line.\n").unwrap();
    let edited = digests_within_time(&pack);
    assert_ne!(with_both.skills, edited.skills, "an edit still counts");
}
