//! A Model Context Protocol server as a pack's tools, over stdio through the official Rust SDK
//! (`rmcp`): `tools/list` gives the names, descriptions and schemas; `tools/call` answers while
//! recording. Replays never start the server.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use anyhow::{anyhow, Context};
use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Map, Value};

/// How an MCP server is started.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct McpServerSpec {
    /// The server's program and arguments; a relative program path with a `/` is taken from
    /// `working_dir`, a bare name from `PATH`.
    pub argv: Vec<String>,
    pub working_dir: PathBuf,
    /// The only variables of skilleval's environment the server sees, besides `PATH` and `HOME`.
    pub env: Vec<String>,
    /// The longest one request may take, the start included.
    pub timeout: Duration,
}

impl McpServerSpec {
    pub fn describe(&self) -> String {
        format!("mcp: {}", self.argv.join(" "))
    }

    fn program(&self) -> PathBuf {
        super::command::program_path(&self.argv[0], &self.working_dir)
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

/// A started server. Stopped (its process ended) when dropped.
pub struct McpConnection {
    spec: McpServerSpec,
    runtime: tokio::runtime::Runtime,
    client: Option<RunningService<RoleClient, ()>>,
}

impl McpConnection {
    pub fn start(spec: &McpServerSpec) -> anyhow::Result<McpConnection> {
        // One worker runs the SDK's service loop; callers on any thread block on it.
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .context("cannot start the MCP client's runtime")?;
        let program = spec.program();
        let mut command = tokio::process::Command::new(&program);
        command
            .args(&spec.argv[1..])
            .current_dir(&spec.working_dir)
            .env_clear();
        command.envs(super::command::allowed_env(&spec.env));
        let shown = spec.describe();
        let client = runtime.block_on(async {
            // The server's own log lines are not skilleval's output.
            let (transport, _) = TokioChildProcess::builder(command)
                .stderr(Stdio::null())
                .spawn()
                .map_err(|e| {
                    anyhow!(
                        "{shown}: cannot start {} (in {}): {e}",
                        program.display(),
                        spec.working_dir.display()
                    )
                })?;
            tokio::time::timeout(spec.timeout, ().serve(transport))
                .await
                .map_err(|_| anyhow!("{shown}: no answer to initialize within {:?}", spec.timeout))?
                .map_err(|e| anyhow!("{shown}: initialize failed: {e}"))
        })?;
        Ok(McpConnection {
            spec: spec.clone(),
            runtime,
            client: Some(client),
        })
    }

    fn client(&self) -> &RunningService<RoleClient, ()> {
        self.client.as_ref().expect("client lives until drop")
    }

    pub fn list_tools(&self) -> anyhow::Result<Vec<ListedTool>> {
        let shown = self.spec.describe();
        let tools = self.runtime.block_on(async {
            tokio::time::timeout(self.spec.timeout, self.client().list_all_tools())
                .await
                .map_err(|_| {
                    anyhow!(
                        "{shown}: tools/list took longer than {:?}",
                        self.spec.timeout
                    )
                })?
                .map_err(|e| anyhow!("{shown}: tools/list failed: {e}"))
        })?;
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
        let result = self.runtime.block_on(async {
            tokio::time::timeout(self.spec.timeout, self.client().call_tool(params))
                .await
                .map_err(|_| {
                    anyhow!(
                        "{shown}: tools/call {tool} took longer than {:?}",
                        self.spec.timeout
                    )
                })?
                .map_err(|e| anyhow!("{shown}: tools/call {tool} failed: {e}"))
        })?;
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
            let timeout = self.spec.timeout;
            self.runtime.block_on(async {
                let _ = tokio::time::timeout(timeout, client.cancel()).await;
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
