//! The client of `scripts/bfcl/multi_turn_helper.py`: BFCL's own stateful APIs, decoder and
//! multi-turn and agentic checkers in a Python process, one JSON line per request and per reply
//! (decision 020). A run starts one helper per multi-turn entry; `bench score` one for all.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::Duration;

use anyhow::{anyhow, bail, Context};
use serde_json::{json, Value};

use super::check_types::CheckResult;
use crate::model_path::cache_dir;

/// Names a Python interpreter whose packages include `bfcl-eval`.
pub const PYTHON_ENV: &str = "SKILLEVAL_BFCL_PYTHON";
/// Where `scripts/setup.sh --bfcl` installs `bfcl-eval`, under the cache.
pub const CACHE_SUBDIR: &str = "bfcl";

/// The helper answers `hello` once Python has imported bfcl-eval, in about a second.
const HELLO_TIME_LIMIT: Duration = Duration::from_secs(30);
/// Any other request: one entry's set-up or one step's calls on BFCL's APIs.
const ANSWER_TIME_LIMIT: Duration = Duration::from_secs(600);

/// How to start the helper: an interpreter, the folder holding `bfcl_eval`, the script.
#[derive(Debug, Clone, PartialEq)]
pub struct HelperLaunch {
    pub python: PathBuf,
    /// Put on `PYTHONPATH`; `None` when the interpreter has the packages itself.
    pub packages: Option<PathBuf>,
    pub script: PathBuf,
}

impl HelperLaunch {
    /// `$SKILLEVAL_BFCL_PYTHON`, else `python3` with the packages set-up put in the cache.
    pub fn locate() -> anyhow::Result<HelperLaunch> {
        let script =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/bfcl/multi_turn_helper.py");
        if let Some(python) = std::env::var_os(PYTHON_ENV).filter(|p| !p.is_empty()) {
            return Ok(HelperLaunch {
                python: PathBuf::from(python),
                packages: None,
                script,
            });
        }
        let packages = cache_dir().join(CACHE_SUBDIR);
        if !packages.join("bfcl_eval").join("__init__.py").is_file() {
            bail!(
                "the multi-turn categories run BFCL's own APIs and checker, and bfcl-eval is not \
                 in {}: run `bash scripts/setup.sh --bfcl`, or set {PYTHON_ENV} to a Python that \
                 has bfcl-eval",
                packages.display()
            );
        }
        Ok(HelperLaunch {
            python: PathBuf::from("python3"),
            packages: Some(packages),
            script,
        })
    }
}

/// What BFCL's decoder made of one step's reply.
#[derive(Debug, Clone, PartialEq)]
pub enum Decoded {
    /// Calls as BFCL executes them, `name(arg=value, …)`.
    Calls(Vec<String>),
    /// Decoded, but no call (`[]`): BFCL ends the turn.
    Empty,
    /// BFCL's decoder failed (prose, broken syntax): BFCL ends the turn.
    Undecodable(String),
}

/// A running helper; dropped, it is told to quit.
pub struct Helper {
    child: Child,
    /// The helper's process group, killed when the helper is dropped.
    group: Option<crate::base::child::Group>,
    /// The last bytes of its stderr, for the error that explains a failure.
    stderr: std::sync::Arc<std::sync::Mutex<Vec<u8>>>,
    shown: String,
    input: ChildStdin,
    output: crate::base::child::LineReader,
    /// `bfcl-eval`'s version, as the helper reports it.
    pub bfcl_eval: String,
    /// BFCL's `MAXIMUM_STEP_LIMIT`: more executed steps in one turn end the entry.
    pub max_steps: u32,
}

impl Helper {
    pub fn start(launch: &HelperLaunch) -> anyhow::Result<Helper> {
        let mut command = Command::new(&launch.python);
        command.arg("-s").arg(&launch.script);
        if let Some(packages) = &launch.packages {
            command.env("PYTHONPATH", packages);
        }
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            // BFCL prints as it executes: only the end is kept, to explain a failure.
            .stderr(Stdio::piped());
        crate::base::child::own_group(&mut command);
        let mut child = command.spawn().with_context(|| {
            format!(
                "starting the BFCL helper ({} {})",
                launch.python.display(),
                launch.script.display()
            )
        })?;
        let input = child.stdin.take().expect("piped stdin");
        let output =
            crate::base::child::LineReader::new(child.stdout.take().expect("piped stdout"));
        let stderr = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut from = child.stderr.take().expect("piped stderr");
        let tail = stderr.clone();
        std::thread::spawn(move || {
            use std::io::Read as _;
            let mut buf = [0u8; 4096];
            while let Ok(n) = from.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let mut tail = tail.lock().expect("stderr lock");
                tail.extend_from_slice(&buf[..n]);
                let over = tail.len().saturating_sub(4096);
                tail.drain(..over);
            }
        });
        let group = Some(crate::base::child::Group::new(child.id()));
        let mut helper = Helper {
            child,
            group,
            stderr,
            shown: format!("{} {}", launch.python.display(), launch.script.display()),
            input,
            output,
            bfcl_eval: String::new(),
            max_steps: 0,
        };
        let hello = helper
            .ask_within(json!({"op": "hello"}), HELLO_TIME_LIMIT)
            .with_context(|| {
                format!(
                    "the BFCL helper did not start: does {} import bfcl_eval?",
                    launch.python.display()
                )
            })?;
        helper.bfcl_eval = hello["bfcl_eval"].as_str().unwrap_or_default().to_string();
        helper.max_steps = hello["max_steps"]
            .as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(|| anyhow!("the BFCL helper gave no step limit: {hello}"))?;
        Ok(helper)
    }

    /// Why the helper failed, as far as it said: its exit status and its stderr's last line.
    fn why(&mut self) -> String {
        let mut parts = vec![format!("the BFCL helper ({})", self.shown)];
        for _ in 0..50 {
            if let Ok(Some(status)) = self.child.try_wait() {
                parts.push(format!("exited ({status})"));
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let tail = self.stderr.lock().expect("stderr lock");
        let text = String::from_utf8_lossy(&tail);
        if let Some(last) = text.lines().rev().find(|l| !l.trim().is_empty()) {
            parts.push(format!("its stderr ends: {:?}", last.trim()));
        }
        parts.join(", ")
    }

    fn ask(&mut self, request: Value) -> anyhow::Result<Value> {
        self.ask_within(request, ANSWER_TIME_LIMIT)
    }

    fn ask_within(&mut self, request: Value, limit: Duration) -> anyhow::Result<Value> {
        // SIGPIPE is ignored: a helper that has exited makes this write fail with EPIPE.
        if let Err(e) = writeln!(self.input, "{request}").and_then(|()| self.input.flush()) {
            bail!("writing to the BFCL helper: {e}: {}", self.why());
        }
        let line = match self.output.next_line(limit) {
            Ok(Some(line)) => line,
            Ok(None) => bail!("{}", self.why()),
            Err(e) => bail!(
                "the BFCL helper ({}), asked {}: {e}",
                self.shown,
                request["op"].as_str().unwrap_or("a request")
            ),
        };
        let reply: Value = serde_json::from_str(&line)
            .with_context(|| format!("the BFCL helper's reply is not JSON: {line:?}"))?;
        if let Some(error) = reply.get("error") {
            bail!("the BFCL helper failed on {}: {error}", request["op"]);
        }
        Ok(reply)
    }

    /// Creates the entry's API instances from its `initial_config` and returns its turns as
    /// BFCL sends them. A memory entry's memory is loaded from the snapshots BFCL keeps under
    /// `results` (the model's result folder), and its first turn gains BFCL's memory prompt.
    pub fn begin(&mut self, question: &Value, results: &Path) -> anyhow::Result<Value> {
        let mut reply = self.ask(json!({
            "op": "start",
            "entry": question,
            "result_dir": results,
        }))?;
        match reply.get_mut("question").map(Value::take) {
            Some(turns @ Value::Array(_)) => Ok(turns),
            _ => bail!("the BFCL helper gave no question turns: {reply}"),
        }
    }

    /// BFCL's prompting decoder (`default_decode_execute_prompting`) on one reply.
    pub fn decode(&mut self, text: &str) -> anyhow::Result<Decoded> {
        let reply = self.ask(json!({"op": "decode", "text": text}))?;
        if let Some(message) = reply.get("undecodable").and_then(Value::as_str) {
            return Ok(Decoded::Undecodable(message.to_string()));
        }
        if reply["empty"].as_bool() == Some(true) {
            return Ok(Decoded::Empty);
        }
        Ok(Decoded::Calls(strings(&reply["calls"])?))
    }

    /// Executes calls on the entry's instances; one result text per call.
    pub fn execute(&mut self, id: &str, calls: &[String]) -> anyhow::Result<Vec<String>> {
        let reply = self.ask(json!({"op": "execute", "id": id, "calls": calls}))?;
        strings(&reply["results"])
    }

    /// Drops the entry's instances; with `flush`, a memory prerequisite's memory is saved
    /// first, as BFCL saves it when the conversation ends without an inference error.
    pub fn end(&mut self, id: &str, flush: bool) -> anyhow::Result<()> {
        self.ask(json!({"op": "end", "id": id, "flush": flush}))
            .map(drop)
    }

    /// BFCL's user message for a turn that adds held-out functions.
    pub fn held_out_message(&mut self, functions: &[Value]) -> anyhow::Result<String> {
        let reply = self.ask(json!({"op": "holdout_message", "functions": functions}))?;
        reply["text"]
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| anyhow!("the BFCL helper gave no message: {reply}"))
    }

    /// BFCL's evaluator on one entry's result (a list per turn of step replies).
    pub fn check(
        &mut self,
        question: &Value,
        ground_truth: &[Value],
        result: &Value,
    ) -> anyhow::Result<CheckResult> {
        let reply = self.ask(json!({
            "op": "check",
            "entry": question,
            "ground_truth": ground_truth,
            "result": result,
        }))?;
        if reply["valid"].as_bool() == Some(true) {
            return Ok(CheckResult::pass());
        }
        let kind = reply["error_type"]
            .as_str()
            .ok_or_else(|| anyhow!("the BFCL helper's verdict has no error type: {reply}"))?;
        Ok(CheckResult::fail(
            kind,
            reply["error_message"].as_str().unwrap_or_default(),
        ))
    }
}

fn strings(value: &Value) -> anyhow::Result<Vec<String>> {
    value
        .as_array()
        .and_then(|items| {
            items
                .iter()
                .map(|item| item.as_str().map(str::to_string))
                .collect()
        })
        .ok_or_else(|| anyhow!("the BFCL helper sent {value} where a list of texts belongs"))
}

impl Drop for Helper {
    fn drop(&mut self) {
        let _ = writeln!(self.input, "{}", json!({"op": "quit"}));
        let _ = self.input.flush();
        // A helper that does not quit within a few seconds is killed with all it started.
        for _ in 0..300 {
            if let Ok(Some(_)) = self.child.try_wait() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        drop(self.group.take());
        let _ = self.child.wait();
    }
}
