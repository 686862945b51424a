//! A pack's own program as a tool: started once per call with the call's arguments as JSON on
//! stdin, its stdout the answer, in a scratch folder of its own, never in the pack's folder.
//! Used only while recording; replays never start it.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Map, Value};

/// How a command tool is started.
#[derive(Debug, Clone, PartialEq)]
pub struct CommandTool {
    /// The program and its arguments; a relative path with a `/` (the program, or an argument
    /// naming a file there) is read from `working_dir`, a bare program name from `PATH`.
    pub argv: Vec<String>,
    /// Where relative paths of `argv` are read from: the pack's folder, or its `working_dir`.
    pub working_dir: PathBuf,
    /// The pack's folder, named to the program by `PACK_DIR_VAR` so that it can read its own
    /// files (a table, a world to start from) there.
    pub pack_dir: PathBuf,
    /// The only variables of skilleval's environment the program sees (besides `PATH` and
    /// `HOME`), so that an answer cannot depend on something the pack does not name.
    pub env: Vec<String>,
    pub timeout: Duration,
    /// The folder holding a conversation's state, where the program runs; without one, each
    /// call runs in a fresh empty folder, removed after it.
    pub scratch: Option<PathBuf>,
    /// Arguments after `argv`, passed exactly as given (a script's flags built from the call's
    /// arguments): never read as paths of the pack.
    pub literal_args: Vec<String>,
}

/// The variable that names the folder the program runs in: its scratch folder.
pub const SCRATCH_VAR: &str = "SKILLEVAL_SCRATCH";

/// The variable that names the pack's folder, for a program that reads the pack's own files.
pub const PACK_DIR_VAR: &str = "SKILLEVAL_PACK_DIR";

/// What the program answered: a finished call (any exit code), a death by a signal, or a
/// time-out; a program that cannot be started is an `Err`. Only `Exited` is the program's
/// own answer: a recording never gives way to the other two.
#[derive(Debug, Clone, PartialEq)]
pub enum CommandAnswer {
    Exited {
        code: i32,
        stdout: String,
        stderr: String,
    },
    Killed {
        signal: i32,
        stdout: String,
        stderr: String,
    },
    TimedOut,
}

impl CommandTool {
    /// The program as started, for a fixture's `recorded_with`.
    pub fn describe(&self) -> String {
        format!("command: {}", self.argv.join(" "))
    }

    /// Runs the program once, in its scratch folder (or a fresh empty one), so that nothing it
    /// writes lands in the pack or outlives the conversation. It starts in a process group of
    /// its own (`base::child`): at the time-out the whole group is killed, so a background
    /// process it started can neither outlive the call nor hold its stdout open past
    /// `timeout_seconds`; when the program exits, its answer is taken and whatever it left
    /// running is killed.
    pub fn call(&self, arguments: &Map<String, Value>) -> anyhow::Result<CommandAnswer> {
        let own;
        let run_in = match &self.scratch {
            Some(scratch) => absolute(scratch),
            None => {
                own = super::scratch::Scratch::new(None)?;
                own.path().to_path_buf()
            }
        };
        // A path is made absolute, since the program runs elsewhere; a bare name stays one,
        // for `PATH` to find.
        let program = match self.argv[0].contains('/') {
            true => absolute(&program_path(&self.argv[0], &self.working_dir)),
            false => PathBuf::from(&self.argv[0]),
        };
        let mut command = Command::new(&program);
        command
            .args(
                self.argv[1..]
                    .iter()
                    .map(|a| pack_argument(a, &self.working_dir)),
            )
            .args(&self.literal_args)
            .current_dir(&run_in)
            .env_clear()
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        command.envs(allowed_env(&self.env));
        command.env(SCRATCH_VAR, &run_in);
        command.env(PACK_DIR_VAR, absolute(&self.pack_dir));
        crate::base::child::own_group(&mut command);
        let mut child = command.spawn().map_err(|e| {
            anyhow::anyhow!(
                "cannot start {} (paths read from {}): {e}",
                program.display(),
                self.working_dir.display()
            )
        })?;
        let group = crate::base::child::Group::new(child.id());
        let input = serde_json::to_string(&Value::Object(arguments.clone()))?;
        let mut stdin = child.stdin.take().expect("piped stdin");
        // A program that exits without reading its input is still an answer (its exit code
        // and words are what it said), so a broken pipe here is not an error. SIGPIPE is
        // ignored, so the write fails with EPIPE instead of ending skilleval.
        std::thread::spawn(move || {
            let _ = stdin.write_all(input.as_bytes());
        });
        let (done, finished) = std::sync::mpsc::channel();
        let stdout = reader(child.stdout.take().expect("piped stdout"), done.clone());
        let stderr = reader(child.stderr.take().expect("piped stderr"), done);
        let deadline = Instant::now() + self.timeout;
        let status = loop {
            if let Some(status) = child.try_wait()? {
                break Some(status);
            }
            if Instant::now() >= deadline {
                break None;
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        let Some(status) = status else {
            group.kill();
            let _ = child.wait();
            return Ok(CommandAnswer::TimedOut);
        };
        // The program has exited, and what it printed is its answer. Whatever it left running
        // is ended now, which closes the pipes it held; one that left the group may still hold
        // them, so the readers get a short while, and what they have read by then is taken.
        group.kill();
        let grace = Instant::now() + EXITED_READ_GRACE;
        let mut closed = 0;
        while closed < 2 {
            let left = grace.saturating_duration_since(Instant::now());
            match finished.recv_timeout(left) {
                Ok(()) => closed += 1,
                Err(_) => break,
            }
        }
        drop(group);
        let stdout = stdout.taken();
        let stderr = stderr.taken();
        use std::os::unix::process::ExitStatusExt as _;
        Ok(match (status.code(), status.signal()) {
            (None, Some(signal)) => CommandAnswer::Killed {
                signal,
                stdout,
                stderr,
            },
            (code, _) => CommandAnswer::Exited {
                code: code.unwrap_or(-1),
                stdout,
                stderr,
            },
        })
    }
}

/// How long the output of a program that has exited is still read, for a process outside its
/// group that holds its pipes.
const EXITED_READ_GRACE: Duration = Duration::from_secs(1);

/// A pack program's path: a relative one with a `/` from its working folder, a bare name from
/// `PATH`.
pub(crate) fn program_path(program: &str, working_dir: &Path) -> PathBuf {
    let path = Path::new(program);
    if path.is_relative() && program.contains('/') {
        working_dir.join(path)
    } else {
        path.to_path_buf()
    }
}

/// An argument of the program as it is passed: a relative path with a `/` that names a file or
/// folder under `working_dir` (`tools/rates.py`) becomes that file's absolute path, since the
/// program runs elsewhere; anything else is passed as written.
fn pack_argument(argument: &str, working_dir: &Path) -> std::ffi::OsString {
    let path = Path::new(argument);
    let placed = working_dir.join(path);
    if path.is_relative() && argument.contains('/') && placed.exists() {
        absolute(&placed).into_os_string()
    } else {
        argument.into()
    }
}

/// `path` from the root, so that it means the same from the folder the program runs in.
fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

/// The variables a pack program sees: `PATH`, `HOME` and the ones the pack names, as they are here.
pub(crate) fn allowed_env(names: &[String]) -> Vec<(String, std::ffi::OsString)> {
    ["PATH", "HOME"]
        .iter()
        .copied()
        .chain(names.iter().map(String::as_str))
        .filter_map(|name| std::env::var_os(name).map(|v| (name.to_string(), v)))
        .collect()
}

/// A pipe read to its end on a thread of its own, which says so on `done`; what it has read
/// so far can be taken at any time.
struct PipeReader {
    read: std::sync::Arc<std::sync::Mutex<Vec<u8>>>,
}

impl PipeReader {
    fn taken(&self) -> String {
        let bytes = self.read.lock().unwrap_or_else(|e| e.into_inner());
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

fn reader(mut from: impl Read + Send + 'static, done: std::sync::mpsc::Sender<()>) -> PipeReader {
    let read = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let into = read.clone();
    std::thread::spawn(move || {
        let mut buffer = [0u8; 64 * 1024];
        loop {
            match from.read(&mut buffer) {
                Ok(0) => break,
                Ok(n) => into
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .extend_from_slice(&buffer[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => break,
            }
        }
        let _ = done.send(());
    });
    PipeReader { read }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sh(script: &str, timeout_ms: u64) -> CommandTool {
        CommandTool {
            argv: vec!["sh".into(), "-c".into(), script.into()],
            working_dir: std::env::temp_dir(),
            pack_dir: std::env::temp_dir(),
            env: vec![],
            timeout: Duration::from_millis(timeout_ms),
            scratch: None,
            literal_args: vec![],
        }
    }

    fn args() -> Map<String, Value> {
        json!({"base": "EUR"}).as_object().cloned().unwrap()
    }

    #[test]
    fn the_arguments_arrive_on_stdin_and_stdout_is_the_answer() {
        let answer = sh("cat", 5_000).call(&args()).unwrap();
        assert_eq!(
            answer,
            CommandAnswer::Exited {
                code: 0,
                stdout: r#"{"base":"EUR"}"#.into(),
                stderr: String::new()
            }
        );
    }

    #[test]
    fn an_exit_code_and_stderr_are_kept() {
        let answer = sh("echo no such pair >&2; exit 3", 5_000)
            .call(&args())
            .unwrap();
        assert_eq!(
            answer,
            CommandAnswer::Exited {
                code: 3,
                stdout: String::new(),
                stderr: "no such pair\n".into()
            }
        );
    }

    #[test]
    fn a_program_that_hangs_times_out() {
        let started = Instant::now();
        let answer = sh("sleep 5", 200).call(&args()).unwrap();
        assert_eq!(answer, CommandAnswer::TimedOut);
        assert!(started.elapsed() < Duration::from_secs(4));
    }

    /// A simulation with a known truth: the program prints its answer and exits while a
    /// background child holds stdout; the answer is what it printed, taken at once.
    #[test]
    fn a_background_process_holding_stdout_open_cannot_hold_back_the_answer() {
        let started = Instant::now();
        let answer = sh("sleep 30 & echo started", 3_000).call(&args()).unwrap();
        assert_eq!(
            answer,
            CommandAnswer::Exited {
                code: 0,
                stdout: "started\n".into(),
                stderr: String::new()
            }
        );
        assert!(started.elapsed() < Duration::from_secs(2));
    }

    /// A simulation with a known truth: the shell kills itself with SIGSEGV (11).
    #[test]
    fn a_death_by_a_signal_is_no_exit_code() {
        match sh("echo half; kill -SEGV $$", 5_000).call(&args()).unwrap() {
            CommandAnswer::Killed { signal, stdout, .. } => {
                assert_eq!((signal, stdout.as_str()), (11, "half\n"))
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_program_that_reads_nothing_and_exits_is_an_answer() {
        // SIGPIPE is ignored by the test harness as by skilleval: the write fails, nothing dies.
        let tool = CommandTool {
            argv: vec!["/bin/false".into()],
            working_dir: std::env::temp_dir(),
            pack_dir: std::env::temp_dir(),
            env: vec![],
            timeout: Duration::from_secs(5),
            scratch: None,
            literal_args: vec![],
        };
        let big: Map<String, Value> = json!({"x": "y".repeat(1 << 20)})
            .as_object()
            .cloned()
            .unwrap();
        match tool.call(&big).unwrap() {
            CommandAnswer::Exited { code, .. } => assert_eq!(code, 1),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn only_named_variables_reach_the_program() {
        std::env::set_var("SKILLEVAL_TEST_SECRET", "hidden");
        std::env::set_var("SKILLEVAL_TEST_SHOWN", "shown");
        let mut tool = sh(
            "printf '%s/%s' \"$SKILLEVAL_TEST_SECRET\" \"$SKILLEVAL_TEST_SHOWN\"",
            5_000,
        );
        tool.env = vec!["SKILLEVAL_TEST_SHOWN".into()];
        match tool.call(&args()).unwrap() {
            CommandAnswer::Exited { stdout, .. } => assert_eq!(stdout, "/shown"),
            other => panic!("{other:?}"),
        }
    }

    /// Truth: a change (the program used to run in the pack's folder, so what it wrote there
    /// stayed and leaked into the next call). Each call runs in a fresh empty folder of its
    /// own, a file the pack names by a relative path is found from there, and the pack's
    /// folder is named by `SKILLEVAL_PACK_DIR`.
    #[test]
    fn a_call_runs_in_a_fresh_folder_never_in_the_packs() {
        let pack = tempfile::tempdir().unwrap();
        std::fs::create_dir(pack.path().join("tools")).unwrap();
        std::fs::write(
            pack.path().join("tools/t.sh"),
            "echo x >> ledger; printf '%s|%s|%s' \"$(wc -l < ledger)\" \"$PWD\" \"$SKILLEVAL_PACK_DIR\"",
        )
        .unwrap();
        let tool = CommandTool {
            argv: vec!["sh".into(), "tools/t.sh".into()],
            working_dir: pack.path().to_path_buf(),
            pack_dir: pack.path().to_path_buf(),
            env: vec![],
            timeout: Duration::from_secs(5),
            scratch: None,
            literal_args: vec![],
        };
        let mut folders = Vec::new();
        for _ in 0..2 {
            let CommandAnswer::Exited {
                code: 0, stdout, ..
            } = tool.call(&args()).unwrap()
            else {
                panic!("the program failed");
            };
            let parts: Vec<&str> = stdout.split('|').collect();
            assert_eq!(parts[0].trim(), "1", "no state carried over: {stdout}");
            assert_ne!(Path::new(parts[1]), pack.path(), "{stdout}");
            assert_eq!(Path::new(parts[2]), pack.path(), "{stdout}");
            assert!(
                !Path::new(parts[1]).exists(),
                "the folder goes after the call"
            );
            folders.push(parts[1].to_string());
        }
        assert!(
            !pack.path().join("ledger").exists(),
            "nothing written in the pack"
        );
        assert_ne!(folders[0], folders[1]);
    }

    #[test]
    fn a_missing_program_is_an_error_not_an_answer() {
        let tool = CommandTool {
            argv: vec!["./no-such-program".into()],
            working_dir: std::env::temp_dir(),
            pack_dir: std::env::temp_dir(),
            env: vec![],
            timeout: Duration::from_secs(1),
            scratch: None,
            literal_args: vec![],
        };
        let error = tool.call(&args()).unwrap_err().to_string();
        assert!(error.contains("no-such-program"), "{error}");
    }
}
