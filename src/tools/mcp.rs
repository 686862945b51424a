//! A Model Context Protocol server as a pack's tools, through the official Rust SDK (`rmcp`):
//! a program started over stdio, or a server reached by streamable HTTP (`mcp_http.rs`).
//! `tools/list` gives the names, descriptions and schemas; `tools/call` answers while
//! recording. Replays never start or contact the server.

use std::path::PathBuf;
use std::pin::Pin;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use anyhow::{anyhow, Context};
use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Map, Value};
use tokio::io::{AsyncRead, AsyncReadExt, ReadBuf};

/// How an MCP server is reached.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct McpServerSpec {
    pub reach: McpReach,
    /// The longest one request may take, the start included.
    pub timeout: Duration,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum McpReach {
    /// A program skilleval starts, speaking MCP on its stdin and stdout.
    Stdio {
        /// The server's program and arguments; a relative program path with a `/` is taken
        /// from `working_dir`, a bare name from `PATH`.
        argv: Vec<String>,
        working_dir: PathBuf,
        /// The only variables of skilleval's environment the server sees, besides `PATH` and
        /// `HOME`.
        env: Vec<String>,
    },
    /// A server already running, reached by streamable HTTP at this URL (checked with
    /// `mcp_http::check_url`).
    Http { url: String },
}

impl McpServerSpec {
    pub fn describe(&self) -> String {
        match &self.reach {
            McpReach::Stdio { argv, .. } => format!("mcp: {}", argv.join(" ")),
            McpReach::Http { url } => format!("mcp: {url}"),
        }
    }
}

/// One tool as the server lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct ListedTool {
    pub name: String,
    pub description: String,
    pub input_schema: Value,
}

/// A call's answer: the text the server sent, and whether it says the call failed.
#[derive(Debug, Clone, PartialEq)]
pub struct McpAnswer {
    pub is_error: bool,
    pub text: String,
}

/// A started server. Stopped (its whole process group killed) when dropped.
pub struct McpConnection {
    spec: McpServerSpec,
    runtime: tokio::runtime::Runtime,
    client: Option<RunningService<RoleClient, ()>>,
    child: Option<tokio::process::Child>,
    group: Option<crate::base::child::Group>,
    /// What the server wrote on stdout that is not JSON-RPC, and the end of its stderr.
    seen: Arc<Seen>,
}

/// What a server wrote besides its messages, for the error that explains a failure.
#[derive(Default)]
struct Seen {
    /// The first stdout line that is not a JSON-RPC message: the transport ends there.
    not_json: Mutex<Option<String>>,
    /// The last bytes of its stderr.
    stderr: Mutex<Vec<u8>>,
}

const STDERR_KEPT: usize = 2048;

impl Seen {
    /// Why the server failed, in its own words where it left any.
    fn explain(&self, exited: Option<std::process::ExitStatus>) -> String {
        let mut parts = Vec::new();
        if let Some(line) = self.not_json.lock().expect("seen lock").as_ref() {
            parts.push(format!(
                "it printed {line:?} on stdout, which is not a JSON-RPC message (an MCP server over stdio writes only its messages there; its log belongs on stderr)"
            ));
        }
        if let Some(status) = exited {
            parts.push(format!("it exited ({status})"));
        }
        let stderr = self.stderr.lock().expect("seen lock");
        let text = String::from_utf8_lossy(&stderr);
        if let Some(last) = text.lines().rev().find(|l| !l.trim().is_empty()) {
            parts.push(format!("its stderr ends: {:?}", last.trim()));
        }
        parts.join("; ")
    }
}

/// The server's stdout as the MCP client reads it, ended at the first line that is not a
/// JSON-RPC message: the SDK skips such lines, so a server printing anything else would get no
/// word until the request timed out (two minutes, at `init`).
struct JsonLinesOnly<R> {
    inner: R,
    at_line_start: bool,
    ended: bool,
    seen: Arc<Seen>,
}

impl<R: AsyncRead + Unpin> AsyncRead for JsonLinesOnly<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        if self.ended {
            return Poll::Ready(Ok(()));
        }
        let mut chunk = vec![0u8; buf.remaining().min(64 * 1024)];
        let mut read = ReadBuf::new(&mut chunk);
        match Pin::new(&mut self.inner).poll_read(cx, &mut read) {
            Poll::Ready(Ok(())) => {}
            other => return other,
        }
        let filled = read.filled().to_vec();
        let mut kept = filled.len();
        for (i, &byte) in filled.iter().enumerate() {
            if byte == b'\n' {
                self.at_line_start = true;
            } else if self.at_line_start && !byte.is_ascii_whitespace() {
                if byte == b'{' || byte == b'[' {
                    self.at_line_start = false;
                } else {
                    let end = filled[i..]
                        .iter()
                        .position(|&b| b == b'\n')
                        .map_or(filled.len(), |n| i + n)
                        .min(i + 200);
                    let line = String::from_utf8_lossy(&filled[i..end]).trim().to_string();
                    *self.seen.not_json.lock().expect("seen lock") = Some(line);
                    self.ended = true;
                    kept = i;
                    break;
                }
            }
        }
        buf.put_slice(&filled[..kept]);
        Poll::Ready(Ok(()))
    }
}

/// How long a server may be silent at its start before skilleval says what it waits for.
const WAITING_NOTE_AFTER: Duration = Duration::from_secs(5);

/// The session `serving` opens, once the server has answered initialize within the spec's
/// timeout; an error says which of the two failed.
async fn initialized<E: std::fmt::Display>(
    spec: &McpServerSpec,
    serving: impl std::future::Future<Output = Result<RunningService<RoleClient, ()>, E>>,
) -> Result<RunningService<RoleClient, ()>, String> {
    let mut serving = std::pin::pin!(tokio::time::timeout(spec.timeout, serving));
    // A server that `npx` downloads first may take a minute; one that never answers must not
    // look like a hang meanwhile.
    let answer = match tokio::time::timeout(WAITING_NOTE_AFTER, &mut serving).await {
        Ok(answer) => answer,
        Err(_) => {
            eprintln!(
                "{}: waiting for the server to answer initialize (at most {} s)",
                spec.describe(),
                spec.timeout.as_secs()
            );
            serving.await
        }
    };
    answer
        .map_err(|_| format!("no answer to initialize within {:?}", spec.timeout))?
        .map_err(|e| format!("initialize failed: {e}"))
}

impl McpConnection {
    /// Starts the server in a process group of its own and initializes the session. A server
    /// that exits, or prints anything but JSON-RPC on stdout, is an error at once that says
    /// so (with the last line of its stderr); either way it is stopped.
    pub fn start(spec: &McpServerSpec) -> anyhow::Result<McpConnection> {
        // One worker runs the SDK's service loop; callers on any thread block on it.
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .context("cannot start the MCP client's runtime")?;
        match &spec.reach {
            McpReach::Stdio {
                argv,
                working_dir,
                env,
            } => Self::start_program(spec, runtime, argv, working_dir, env),
            McpReach::Http { url } => {
                let shown = spec.describe();
                super::mcp_http::check_url(url).map_err(|e| anyhow!("{shown}: {e}"))?;
                let client = runtime
                    .block_on(initialized(spec, super::mcp_http::serve(url)))
                    .map_err(|e| anyhow!("{shown}: {}", super::mcp_http::why_not(url, &e)))?;
                Ok(McpConnection {
                    spec: spec.clone(),
                    runtime,
                    client: Some(client),
                    child: None,
                    group: None,
                    seen: Arc::default(),
                })
            }
        }
    }

    fn start_program(
        spec: &McpServerSpec,
        runtime: tokio::runtime::Runtime,
        argv: &[String],
        working_dir: &std::path::Path,
        env: &[String],
    ) -> anyhow::Result<McpConnection> {
        let program = super::command::program_path(&argv[0], working_dir);
        let mut command = tokio::process::Command::new(&program);
        command
            .args(&argv[1..])
            .current_dir(working_dir)
            .env_clear()
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        command.envs(super::command::allowed_env(env));
        let shown = spec.describe();
        let seen = Arc::new(Seen::default());
        let (child, group, stdin, stdout) = {
            let _guard = runtime.enter();
            let mut child = command.spawn().map_err(|e| {
                anyhow!(
                    "{shown}: cannot start {} (in {}): {e}",
                    program.display(),
                    working_dir.display()
                )
            })?;
            let group = child.id().map(crate::base::child::Group::new);
            let stdin = child.stdin.take().expect("piped stdin");
            let stdout = JsonLinesOnly {
                inner: child.stdout.take().expect("piped stdout"),
                at_line_start: true,
                ended: false,
                seen: seen.clone(),
            };
            let mut stderr = child.stderr.take().expect("piped stderr");
            let kept = seen.clone();
            runtime.spawn(async move {
                let mut buf = [0u8; 4096];
                while let Ok(n) = stderr.read(&mut buf).await {
                    if n == 0 {
                        break;
                    }
                    let mut tail = kept.stderr.lock().expect("seen lock");
                    tail.extend_from_slice(&buf[..n]);
                    let over = tail.len().saturating_sub(STDERR_KEPT);
                    tail.drain(..over);
                }
            });
            (child, group, stdin, stdout)
        };
        let mut connection = McpConnection {
            spec: spec.clone(),
            runtime,
            client: None,
            child: Some(child),
            group,
            seen,
        };
        let served = connection
            .runtime
            .block_on(initialized(spec, ().serve((stdout, stdin))));
        match served {
            Ok(client) => {
                connection.client = Some(client);
                Ok(connection)
            }
            Err(e) => {
                let exited = connection.exit_status();
                let printed = connection
                    .seen
                    .not_json
                    .lock()
                    .expect("seen lock")
                    .is_some();
                let why = connection.seen.explain(exited);
                // A server that exited before it answered: the SDK's error (a broken pipe on
                // its own transport type) says less than the exit and the server's words.
                Err(match exited {
                    Some(_) if !printed => {
                        anyhow!("{shown}: the server ended before it answered initialize: {why}")
                    }
                    _ if why.is_empty() => anyhow!("{shown}: {e}"),
                    _ => anyhow!("{shown}: {e}: {why}"),
                })
            }
        }
    }

    /// The server's exit status, if it has ended (a server that is exiting has a moment to be
    /// seen doing so).
    fn exit_status(&mut self) -> Option<std::process::ExitStatus> {
        let child = self.child.as_mut()?;
        for _ in 0..20 {
            if let Ok(Some(status)) = child.try_wait() {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        None
    }

    /// `error` with what the server left to explain it.
    fn explained(&self, error: anyhow::Error) -> anyhow::Error {
        let why = self.seen.explain(None);
        if why.is_empty() {
            error
        } else {
            anyhow!("{error}: {why}")
        }
    }

    fn client(&self) -> &RunningService<RoleClient, ()> {
        self.client.as_ref().expect("client lives until drop")
    }

    pub fn list_tools(&self) -> anyhow::Result<Vec<ListedTool>> {
        let shown = self.spec.describe();
        let tools = self
            .runtime
            .block_on(async {
                tokio::time::timeout(self.spec.timeout, self.client().list_all_tools())
                    .await
                    .map_err(|_| {
                        anyhow!(
                            "{shown}: tools/list took longer than {:?}",
                            self.spec.timeout
                        )
                    })?
                    .map_err(|e| anyhow!("{shown}: tools/list failed: {e}"))
            })
            .map_err(|e| self.explained(e))?;
        Ok(tools
            .into_iter()
            .map(|t| ListedTool {
                name: t.name.to_string(),
                description: t.description.map(|d| d.to_string()).unwrap_or_default(),
                input_schema: Value::Object((*t.input_schema).clone()),
            })
            .collect())
    }

    /// Calls a tool; a protocol failure (the server died, the tool is unknown) is an `Err`,
    /// while a tool that reports its own failure (`isError`) is an answer.
    pub fn call(&self, tool: &str, arguments: &Map<String, Value>) -> anyhow::Result<McpAnswer> {
        let shown = self.spec.describe();
        let params = CallToolRequestParams::new(tool.to_string()).with_arguments(arguments.clone());
        let result = self
            .runtime
            .block_on(async {
                tokio::time::timeout(self.spec.timeout, self.client().call_tool(params))
                    .await
                    .map_err(|_| {
                        anyhow!(
                            "{shown}: tools/call {tool} took longer than {:?}",
                            self.spec.timeout
                        )
                    })?
                    .map_err(|e| anyhow!("{shown}: tools/call {tool} failed: {e}"))
            })
            .map_err(|e| self.explained(e))?;
        let value = serde_json::to_value(&result)?;
        Ok(McpAnswer {
            is_error: value
                .get("isError")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            text: answer_text(&value),
        })
    }
}

impl Drop for McpConnection {
    fn drop(&mut self) {
        if let Some(client) = self.client.take() {
            // A polite end first, briefly: the group is killed right after.
            let timeout = self.spec.timeout.min(Duration::from_secs(5));
            self.runtime.block_on(async {
                let _ = tokio::time::timeout(timeout, client.cancel()).await;
            });
        }
        // Whatever the server started ends with it.
        drop(self.group.take());
        if let Some(mut child) = self.child.take() {
            let _ = self.runtime.block_on(async {
                tokio::time::timeout(Duration::from_secs(5), child.wait()).await
            });
        }
    }
}

/// The text a model is shown for a `tools/call` result: its text blocks joined, other blocks
/// as JSON, and the structured content when there is no block at all.
fn answer_text(result: &Value) -> String {
    let blocks = result
        .get("content")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if blocks.is_empty() {
        return result
            .get("structuredContent")
            .map(|v| v.to_string())
            .unwrap_or_default();
    }
    blocks
        .iter()
        .map(
            |block| match (block.get("type").and_then(Value::as_str), block.get("text")) {
                (Some("text"), Some(Value::String(text))) => text.clone(),
                _ => block.to_string(),
            },
        )
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn text_blocks_are_joined_and_other_blocks_kept_as_json() {
        let result = json!({"content": [
            {"type": "text", "text": "one"},
            {"type": "image", "data": "AA==", "mimeType": "image/png"},
            {"type": "text", "text": "two"}
        ]});
        assert_eq!(
            answer_text(&result),
            "one\n{\"type\":\"image\",\"data\":\"AA==\",\"mimeType\":\"image/png\"}\ntwo"
        );
    }

    #[test]
    fn structured_content_stands_in_for_no_blocks() {
        assert_eq!(
            answer_text(&json!({"content": [], "structuredContent": {"rate": 1.1}})),
            "{\"rate\":1.1}"
        );
    }
}
