//! How a child process (a pack's command tool, an MCP server, the BFCL helper) is started and
//! ended. Each starts in its own process group, so that a time-out or an interrupt ends the
//! whole group: a program that started a background process of its own cannot leave it
//! running, nor keep skilleval waiting on a pipe the background process holds open. Live
//! groups are listed here; Ctrl-C, SIGTERM and SIGHUP kill every one of them before the
//! process exits with 128 + the signal's number. A process that must tidy up first (`plan
//! --run`) defers them instead: each is passed on to the child it waits for, and it ends itself.
//!
//! skilleval never restores SIGPIPE's default action: writing to a child that has exited is an
//! `EPIPE` error of that write, which its caller reports, never a silent death of the process.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::OnceLock;

const SIGHUP: i32 = 1;
const SIGINT: i32 = 2;
const SIGKILL: i32 = 9;
const SIGTERM: i32 = 15;
/// The signals that end the process: Ctrl-C, `kill`/`timeout`/a CI runner, a closed terminal.
const ENDING_SIGNALS: [i32; 3] = [SIGINT, SIGTERM, SIGHUP];

extern "C" {
    fn signal(signum: i32, handler: usize) -> usize;
    fn write(fd: i32, buf: *const u8, count: usize) -> isize;
    fn kill(pid: i32, sig: i32) -> i32;
    fn _exit(status: i32) -> !;
}

/// The live process groups: a fixed table, so that the signal handler can read it without a
/// lock. 0 is a free slot.
const SLOTS: usize = 256;
static GROUPS: [AtomicI32; SLOTS] = [const { AtomicI32::new(0) }; SLOTS];
static NOTE: OnceLock<Vec<u8>> = OnceLock::new();
static HANDLER: AtomicBool = AtomicBool::new(false);

extern "C" fn on_ending_signal(signum: i32) {
    // Only async-signal-safe calls here: kill(2), write(2) and _exit(2).
    kill_every_group();
    if let Some(note) = NOTE.get() {
        // SAFETY: the buffer is set once before the handler is installed, and only read here.
        unsafe {
            write(2, note.as_ptr(), note.len());
        }
    }
    // SAFETY: ends the process at once, with the status a shell gives a process the signal ended.
    unsafe { _exit(128 + signum) }
}

fn install_handler() {
    if !HANDLER.swap(true, Ordering::SeqCst) {
        for signum in ENDING_SIGNALS {
            // SAFETY: installs a handler that only makes async-signal-safe calls.
            unsafe {
                signal(signum, on_ending_signal as *const () as usize);
            }
        }
    }
}

/// From now on, Ctrl-C (SIGTERM, SIGHUP) prints `note` (one line) before the process ends with
/// status 130 (143, 129). Only the first note of a process counts.
pub fn say_on_interrupt(note: &str) {
    let _ = NOTE.set(format!("\n{note}\n").into_bytes());
    install_handler();
}

fn kill_every_group() {
    for slot in &GROUPS {
        let group = slot.load(Ordering::SeqCst);
        if group > 0 {
            // SAFETY: kill(2) with a negative pid signals the group; it is async-signal-safe.
            unsafe {
                kill(-group, SIGKILL);
            }
        }
    }
}

/// Starts `command` in a process group of its own (call before spawning).
pub fn own_group(command: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    command.process_group(0);
}

/// The ending signal received while signals are deferred ([`defer_ending_signals`]); 0 for none.
static DEFERRED: AtomicI32 = AtomicI32::new(0);
/// The child an ending signal is passed on to while signals are deferred; 0 for none.
static FORWARD_TO: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_deferred_signal(signum: i32) {
    // Only atomics and kill(2) here: both async-signal-safe.
    DEFERRED.store(signum, Ordering::SeqCst);
    let pid = FORWARD_TO.load(Ordering::SeqCst);
    if pid > 0 {
        // SAFETY: passes the signal on to the child this process is waiting for.
        unsafe {
            kill(pid, signum);
        }
    }
}

/// For a process that waits on one child at a time and must tidy up before it ends (`plan
/// --run`, whose base checkout is a temporary folder): from now on Ctrl-C, SIGTERM and SIGHUP
/// no longer end it at once. Each is passed on to the child named by [`forward_signals_to`],
/// and [`ending_signal`] says it came, so the caller stops, tidies up, and exits with 128 + the
/// signal's number.
pub fn defer_ending_signals() {
    HANDLER.store(true, Ordering::SeqCst);
    for signum in ENDING_SIGNALS {
        // SAFETY: installs a handler that only stores an atomic and calls kill(2).
        unsafe {
            signal(signum, on_deferred_signal as *const () as usize);
        }
    }
}

/// The child an ending signal is passed on to from now on (`None`: none).
pub fn forward_signals_to(pid: Option<u32>) {
    let pid = pid.and_then(|p| i32::try_from(p).ok()).unwrap_or(0);
    FORWARD_TO.store(pid, Ordering::SeqCst);
}

/// The ending signal received since [`defer_ending_signals`], if any.
pub fn ending_signal() -> Option<i32> {
    match DEFERRED.load(Ordering::SeqCst) {
        0 => None,
        signum => Some(signum),
    }
}

/// A child's process group, listed while the guard lives; [`Group::kill`] ends every process
/// in it, and so does dropping the guard. Ctrl-C, SIGTERM and SIGHUP kill every listed group.
pub struct Group {
    id: i32,
    slot: Option<usize>,
}

impl Group {
    /// Lists the group of a child started with [`own_group`] (its id is the child's pid).
    pub fn new(pid: u32) -> Group {
        install_handler();
        let id = i32::try_from(pid).unwrap_or(0);
        let slot = (id > 0)
            .then(|| {
                GROUPS.iter().position(|s| {
                    s.compare_exchange(0, id, Ordering::SeqCst, Ordering::SeqCst)
                        .is_ok()
                })
            })
            .flatten();
        Group { id, slot }
    }

    /// Kills every process of the group (the child and whatever it started).
    pub fn kill(&self) {
        if self.id > 0 {
            // SAFETY: signals the group this guard owns.
            unsafe {
                kill(-self.id, SIGKILL);
            }
        }
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        self.kill();
        if let Some(slot) = self.slot {
            GROUPS[slot].store(0, Ordering::SeqCst);
        }
    }
}

/// The lines of a child's output, read on a thread of their own, so that a wait for the next
/// line can end: a child that neither answers nor exits would otherwise hold its reader forever.
pub struct LineReader {
    lines: std::sync::mpsc::Receiver<std::io::Result<String>>,
}

impl LineReader {
    pub fn new(from: impl std::io::Read + Send + 'static) -> LineReader {
        use std::io::BufRead as _;
        let (sender, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut from = std::io::BufReader::new(from);
            loop {
                let mut line = String::new();
                let read = from.read_line(&mut line);
                let end = !matches!(read, Ok(n) if n > 0);
                if sender.send(read.map(|_| line)).is_err() || end {
                    break;
                }
            }
        });
        LineReader { lines }
    }

    /// The next line (with its `\n`), `Ok(None)` once the output has ended, or an error of kind
    /// `TimedOut` when no line came within `limit`.
    pub fn next_line(&self, limit: std::time::Duration) -> std::io::Result<Option<String>> {
        use std::sync::mpsc::RecvTimeoutError;
        match self.lines.recv_timeout(limit) {
            Ok(Ok(line)) if line.is_empty() => Ok(None),
            Ok(Ok(line)) => Ok(Some(line)),
            Ok(Err(e)) => Err(e),
            Err(RecvTimeoutError::Disconnected) => Ok(None),
            Err(RecvTimeoutError::Timeout) => Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!("no answer within {} s", limit.as_secs()),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_reader_gives_lines_then_the_end_and_times_out_on_silence() {
        let reader = LineReader::new(&b"one\ntwo"[..]);
        let limit = std::time::Duration::from_secs(5);
        assert_eq!(reader.next_line(limit).unwrap().as_deref(), Some("one\n"));
        assert_eq!(reader.next_line(limit).unwrap().as_deref(), Some("two"));
        assert_eq!(reader.next_line(limit).unwrap(), None);
        let mut silent = std::process::Command::new("sleep")
            .arg("30")
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let reader = LineReader::new(silent.stdout.take().unwrap());
        let e = reader
            .next_line(std::time::Duration::from_millis(100))
            .unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::TimedOut);
        silent.kill().unwrap();
        silent.wait().unwrap();
    }

    #[test]
    fn killing_a_group_ends_the_background_process_too() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("bg.pid");
        let mut command = std::process::Command::new("sh");
        command
            .arg("-c")
            .arg(format!("sleep 30 & echo $! > {}; wait", pid_file.display()));
        own_group(&mut command);
        let mut child = command.spawn().unwrap();
        let group = Group::new(child.id());
        let started = std::time::Instant::now();
        while !pid_file.exists()
            || std::fs::read_to_string(&pid_file)
                .unwrap()
                .trim()
                .is_empty()
        {
            assert!(started.elapsed().as_secs() < 10);
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let background: i32 = std::fs::read_to_string(&pid_file)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        drop(group);
        child.wait().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(100));
        // SAFETY: signal 0 only asks whether the process exists.
        let alive = unsafe { kill(background, 0) } == 0;
        let zombie = std::fs::read_to_string(format!("/proc/{background}/stat"))
            .map(|s| s.contains(") Z "))
            .unwrap_or(true);
        assert!(!alive || zombie, "the background sleep outlived its group");
    }
}
