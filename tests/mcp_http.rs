//! An MCP server reached by streamable HTTP as a pack's tools. The full tier starts a published
//! server on the loopback, the reference "everything" server in its streamableHttp mode
//! (installed by `scripts/setup.sh --model all` from the npm registry); `skilleval init --mcp
//! URL` writes a pack from its listing, a recording run on the real default model asks it, and a
//! replay with the server stopped answers from the recordings alone. The fast tier holds what
//! needs no server: the URL's checks in `pack.toml` and on the command line, and the errors for
//! a port nothing listens on and for a loopback stand-in that is no MCP server.
//!
//! The truths the full tier checks against come from outside skilleval: the server's own
//! `tools/list` and `tools/call`, read here with plain JSON-RPC over HTTP (`ureq`), not
//! through the SDK skilleval uses.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use skilleval::eval::init::{self, InitOptions};
use skilleval::eval::law_cases;
use skilleval::eval::pack::Pack;
use skilleval::eval::replay::RecordMode;
use skilleval::eval::runner;

use common::cli::{outcome, skilleval};
use common::recording::{
    assert_a_call_recorded, assert_replay_reproduces, live_fixtures, run_of_tool,
};

const SKILL: &str = "---
name: echoer
description: Repeat a phrase back to the user through the echo tool.
allowed-tools: echo
---
When the user asks you to echo a phrase, call echo with the phrase as the message, then answer
with what it returns.

```example
User: echo the phrase green kettle
Assistant: <function=echo>
<parameter=message>
green kettle
</parameter>
</function>
Tool: Echo: green kettle
Assistant: Echo: green kettle
```
";

/// A skills folder holding the echoer skill, under `temp`.
fn echoer_skill(temp: &Path) -> PathBuf {
    let skill = temp.join("skills/echoer");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(skill.join("SKILL.md"), SKILL).unwrap();
    skill
}

/// A loopback port that nothing listens on: bound, then let go.
fn closed_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A loopback server that answers every request with `status` and an HTML `body`: a web server
/// that is no MCP server. It serves until the test process ends.
fn web_server(status: u16, body: &'static str) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(stream);
            let mut length = 0usize;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line.trim().is_empty() {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap_or(0);
                }
            }
            let mut request_body = vec![0u8; length];
            let _ = reader.read_exact(&mut request_body);
            let _ = write!(
                reader.get_mut(),
                "HTTP/1.1 {status} X\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    url
}

/// `skilleval init` of the echoer skill with `--mcp mcp`, into `out`.
fn init_with(temp: &Path, out: &Path, mcp: &str) -> (i32, String, String) {
    let skill = echoer_skill(temp);
    outcome(&skilleval(&[
        "init",
        "--skill",
        &skill.display().to_string(),
        "--out",
        &out.display().to_string(),
        "--mcp",
        mcp,
    ]))
}

/// `init --mcp URL` with a URL it cannot use: one line that names the URL (or the flag) and
/// why, exit 1, and nothing written (truth: a change; the refusal of a closed port is the
/// operating system's).
#[test]
fn init_refuses_a_url_it_cannot_use_and_writes_nothing() {
    let temp = tempfile::tempdir().unwrap();
    let closed = format!("http://127.0.0.1:{}/mcp", closed_port());
    let not_found = web_server(404, "<html><pre>Cannot POST /mcp</pre></html>");
    let web_page = web_server(200, "<html><body>Welcome</body></html>");
    let cases: Vec<(String, Vec<String>)> = vec![
        (
            closed.clone(),
            vec![closed.clone(), "nothing answers at".into()],
        ),
        (
            not_found.clone(),
            vec![
                not_found.clone(),
                "404".into(),
                "streamable-HTTP MCP server".into(),
            ],
        ),
        (
            web_page.clone(),
            vec![web_page.clone(), "streamable-HTTP MCP server".into()],
        ),
        (
            "ftp://127.0.0.1/mcp".into(),
            vec!["--mcp".into(), "http:// or https://".into()],
        ),
        (
            format!("{closed} --verbose"),
            vec!["--mcp".into(), "given alone".into()],
        ),
    ];
    for (i, (mcp, words)) in cases.iter().enumerate() {
        let out = temp.path().join(format!("pack{i}"));
        let started = Instant::now();
        let (code, stdout, stderr) = init_with(temp.path(), &out, mcp);
        assert_eq!(code, 1, "{mcp}: {stdout}{stderr}");
        assert!(started.elapsed() < Duration::from_secs(30), "{mcp}: slow");
        let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
        assert_eq!(lines.len(), 1, "{mcp}: {stderr}");
        for word in words {
            assert!(
                lines[0].contains(word.as_str()),
                "{mcp}: {word:?} in {stderr}"
            );
        }
        assert!(!out.join("pack.toml").exists(), "{mcp}: wrote a pack");
    }
}

/// A pack whose one tool is the echo tool of the server at `url`, with `extra` lines in its
/// `[[tools]]` entry: written as `init` writes it, so only the URL's fields differ.
fn url_pack(temp: &Path, url: &str, extra: &str) -> PathBuf {
    echoer_skill(temp);
    let dir = temp.join("pack");
    std::fs::create_dir_all(dir.join("fixtures/echo")).unwrap();
    std::fs::write(
        dir.join("corpus.jsonl"),
        "{\"id\":\"e1\",\"category\":\"needs_echo\",\"prompt\":\"Echo the phrase blue lantern\"}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("pack.toml"),
        format!(
            r#"name = "echoer"
description = "The echoer skill."
skill = "echoer"
skills_dir = "../skills"
corpus = "corpus.jsonl"
categories = ["needs_echo"]

[[tools]]
name = "echo"
kind = "mcp"
description = "Echoes back the input string"
parameters = {{ type = "object", properties = {{ message = {{ type = "string" }} }}, required = ["message"] }}
url = {url:?}
{extra}
fixtures = "fixtures/echo"
key_arguments = ["message"]

[[laws]]
name = "calls-echo"
kind = "tool_called"
tool = "echo"
categories = ["needs_echo"]
purpose = true
"#
        ),
    )
    .unwrap();
    dir
}

/// A `url` that cannot be used, or fields a server at a URL does not take, are refused when
/// the pack loads, naming the file, the line of the tool and the field (truth: a change).
#[test]
fn a_pack_names_its_wrong_url_at_the_field() {
    let cases = [
        (
            "ftp://127.0.0.1/mcp",
            "",
            "tools[0].url`",
            "http:// or https://",
        ),
        ("http://", "", "tools[0].url`", "not a URL"),
        (
            "http://127.0.0.1:3001/mcp",
            "server = [\"node\", \"server.js\"]",
            "tools[0].url`",
            "not both",
        ),
        (
            "http://127.0.0.1:3001/mcp",
            "working_dir = \".\"",
            "tools[0].working_dir`",
            "runs on its own",
        ),
        (
            "http://127.0.0.1:3001/mcp",
            "env = [\"API_KEY\"]",
            "tools[0].env`",
            "runs on its own",
        ),
    ];
    for (url, extra, field, reason) in cases {
        let temp = tempfile::tempdir().unwrap();
        let dir = url_pack(temp.path(), url, extra);
        let error = Pack::load(&dir.display().to_string())
            .err()
            .unwrap_or_else(|| panic!("{url} {extra}: loaded"))
            .to_string();
        let at = format!("{}:8: field `{field}", dir.join("pack.toml").display());
        assert!(error.starts_with(&at), "{url} {extra}: {error}");
        assert!(error.contains(reason), "{url} {extra}: {error}");
    }
    // The same pack with a good URL loads: the refusals above are the URL's alone.
    let temp = tempfile::tempdir().unwrap();
    let dir = url_pack(temp.path(), "http://127.0.0.1:3001/mcp", "");
    let pack = Pack::load(&dir.display().to_string()).unwrap();
    assert_eq!(
        pack.tools[0].mcp_server().unwrap().describe(),
        "mcp: http://127.0.0.1:3001/mcp"
    );
}

/// A recording run asks every server it reaches by URL before the model loads: a URL nothing
/// answers at is named at its field, and the (missing) model is never reached. A replay never
/// contacts the server, so the same pack replays up to the model (truth: a change).
#[test]
fn a_recording_run_names_a_dead_url_before_the_model_loads_and_a_replay_never_asks() {
    let temp = tempfile::tempdir().unwrap();
    let url = format!("http://127.0.0.1:{}/mcp", closed_port());
    let dir = url_pack(temp.path(), &url, "");
    let run = |record: &[&str]| {
        let mut args = vec![
            "run",
            "--pack",
            dir.to_str().unwrap(),
            "--repeats",
            "1",
            "--no-control",
            "--model",
            "/nonexistent/model.gguf",
        ];
        args.extend_from_slice(record);
        let output = temp.path().join("out");
        let output = output.display().to_string();
        let mut args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        args.extend(["--output".to_string(), output]);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        outcome(&skilleval(&args))
    };
    let (code, _, stderr) = run(&["--record", "gaps"]);
    assert_eq!(code, 1, "{stderr}");
    let at = format!(
        "{}:8: field `tools[0].url`",
        dir.join("pack.toml").display()
    );
    assert!(
        stderr.contains(&at) && stderr.contains("nothing answers at"),
        "{stderr}"
    );
    assert!(!stderr.contains("model file not found"), "{stderr}");
    let (code, _, stderr) = run(&[]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("model file not found"), "{stderr}");
    assert!(!stderr.contains("nothing answers at"), "{stderr}");
}

/// The reference "everything" server in its streamable-HTTP mode, on a loopback port of its
/// own; stopped when dropped.
struct EverythingServer {
    child: Child,
    url: String,
}

impl EverythingServer {
    /// Started from where the set-up installs it; a missing server fails the test, as a
    /// missing model does: CI runs the set-up first.
    fn start() -> EverythingServer {
        let script = skilleval::model_path::cache_dir()
            .join("mcp/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
        assert!(
            script.is_file(),
            "{} is missing: run bash scripts/setup.sh --model all",
            script.display()
        );
        let port = closed_port();
        let mut child = Command::new("node")
            .arg(&script)
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // It says on stderr when it listens.
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let line = lines
                .next()
                .unwrap_or_else(|| panic!("the server ended before it listened"))
                .unwrap();
            if line.contains(&format!("listening on port {port}")) {
                break;
            }
            assert!(Instant::now() < deadline, "the server did not listen");
        }
        // Its later words go nowhere, so that it never blocks on a full pipe.
        std::thread::spawn(move || for _ in lines.by_ref() {});
        EverythingServer {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
        }
    }

    fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for EverythingServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A JSON-RPC session with a streamable-HTTP server by hand: POSTs of plain JSON, answers
/// read from a JSON body or from the `data:` lines of an event stream.
struct ByHand {
    url: String,
    session: Option<String>,
}

impl ByHand {
    fn open(url: &str) -> ByHand {
        let mut by_hand = ByHand {
            url: url.to_string(),
            session: None,
        };
        by_hand.post(
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "by-hand", "version": "0"}}}),
        );
        by_hand.post(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        by_hand
    }

    fn post(&mut self, message: Value) -> Option<Value> {
        let mut request = ureq::post(&self.url)
            .set("Content-Type", "application/json")
            .set("Accept", "application/json, text/event-stream")
            .set("MCP-Protocol-Version", "2025-06-18");
        if let Some(session) = &self.session {
            request = request.set("Mcp-Session-Id", session);
        }
        let response = request.send_string(&message.to_string()).unwrap();
        if let Some(session) = response.header("mcp-session-id") {
            self.session = Some(session.to_string());
        }
        let body = response.into_string().unwrap();
        let id = message.get("id")?;
        let answers: Vec<Value> = if body.trim_start().starts_with('{') {
            vec![serde_json::from_str(&body).unwrap()]
        } else {
            body.lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .filter_map(|d| serde_json::from_str(d.trim()).ok())
                .collect()
        };
        answers.into_iter().find(|a| a.get("id") == Some(id))
    }

    fn tools(&mut self) -> Vec<Value> {
        let reply = self
            .post(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))
            .unwrap();
        reply["result"]["tools"].as_array().unwrap().clone()
    }

    /// The text of a call's answer, its text blocks joined.
    fn call(&mut self, tool: &str, arguments: &Value) -> String {
        let reply = self
            .post(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                "params": {"name": tool, "arguments": arguments}}))
            .unwrap();
        reply["result"]["content"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["text"].as_str().unwrap_or_default().to_string())
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// The pack `init` writes from the live server's listing, with two prompts that need echo.
fn echoer_pack(temp: &Path, url: &str) -> PathBuf {
    let skill = echoer_skill(temp);
    let pack_dir = temp.join("pack");
    let written = init::init(&InitOptions {
        skill: skill.join("SKILL.md"),
        out: pack_dir.clone(),
        name: Some("echoer".into()),
        commands: Default::default(),
        descriptions: Default::default(),
        arguments: Default::default(),
        mcp: Some(vec![url.to_string()]),
        recorded: vec![],
        writes: vec![],
        prompts: vec![
            ("echo".into(), "Echo the phrase blue lantern".into()),
            ("echo".into(), "Please echo this: seven tall trees".into()),
            ("none".into(), "What is the capital of Peru?".into()),
        ],
    })
    .expect("init writes a pack from the live server");
    assert_eq!(written.tools, vec![("echo".to_string(), "mcp")]);
    pack_dir
}

/// `init --mcp URL` offers the tool as the server lists it, and the pack passes `check`
/// (truth: the server's own tools/list, read by hand).
#[test]
#[cfg_attr(not(feature = "full-tier"), ignore = "full tier")]
fn init_offers_the_tool_as_the_http_server_lists_it() {
    let server = EverythingServer::start();
    let temp = tempfile::tempdir().unwrap();
    let pack_dir = echoer_pack(temp.path(), &server.url);
    let text = std::fs::read_to_string(pack_dir.join("pack.toml")).unwrap();
    assert!(
        text.contains(&format!("url = \"{}\"", server.url)) && !text.contains("server = "),
        "{text}"
    );
    let pack = Pack::load(&pack_dir.display().to_string()).unwrap();
    let tool = &pack.tools[0];
    let listed = ByHand::open(&server.url).tools();
    let by_hand = listed
        .iter()
        .find(|t| t["name"] == "echo")
        .expect("the server lists echo");
    assert_eq!(tool.parameters.as_ref(), Some(&by_hand["inputSchema"]));
    assert_eq!(tool.description.as_deref(), by_hand["description"].as_str());
    assert_eq!(tool.key_arguments, vec!["message".to_string()]);
    let report = law_cases::check(&pack).unwrap();
    assert!(report.agrees(), "{}", report.render());

    // A tool the server does not list is the pack's error at its field, found by a recording
    // run before the (missing) model loads.
    let pack_file = pack_dir.join("pack.toml");
    let text = std::fs::read_to_string(&pack_file).unwrap();
    std::fs::write(
        &pack_file,
        text.replace(
            "kind = \"mcp\"\n",
            "kind = \"mcp\"\nmcp_tool = \"echo-twice\"\n",
        ),
    )
    .unwrap();
    let output = temp.path().join("out").display().to_string();
    let (code, _, stderr) = outcome(&skilleval(&[
        "run",
        "--pack",
        pack_dir.to_str().unwrap(),
        "--record",
        "gaps",
        "--repeats",
        "1",
        "--model",
        "/nonexistent/model.gguf",
        "--output",
        &output,
    ]));
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("field `tools[0].mcp_tool`: the server")
            && stderr.contains("lists no tool \"echo-twice\""),
        "{stderr}"
    );
    assert!(!stderr.contains("model file not found"), "{stderr}");
}

/// A recording run on the real default model asks the server over HTTP and keeps its answers;
/// with the server stopped, a replay gives the same transcripts from the recordings alone
/// (truth: the server's own tools/call of each recorded argument, made by hand).
#[test]
#[cfg_attr(not(feature = "full-tier"), ignore = "full tier")]
fn a_recording_run_asks_the_http_server_and_a_replay_with_it_stopped_reproduces_it() {
    let _turn = common::model::turn();
    let mut server = EverythingServer::start();
    let temp = tempfile::tempdir().unwrap();
    let pack_dir = echoer_pack(temp.path(), &server.url);
    let mut backend = common::model::backend();

    let opts = run_of_tool(
        &pack_dir,
        temp.path().join("recorded"),
        RecordMode::Gaps,
        "echo",
    );
    let recorded = runner::run(&mut *backend, &opts).unwrap();
    assert_a_call_recorded(&recorded, "echo");
    let mut by_hand = ByHand::open(&server.url);
    let mut checked = 0;
    for fixture in live_fixtures(&pack_dir.join("fixtures/echo")) {
        assert_eq!(
            fixture.recorded_with.as_deref(),
            Some(format!("mcp: {} (tools/call echo)", server.url).as_str())
        );
        assert_eq!(fixture.status, 200, "{:?}", fixture.body);
        let arguments = Value::Object(fixture.arguments.clone());
        assert_eq!(fixture.body_text(), by_hand.call("echo", &arguments));
        checked += 1;
    }
    assert!(checked > 0, "no recording");

    // The server gone: any attempt to reach it would fail the call.
    server.stop();
    let replay = runner::run(
        &mut *backend,
        &run_of_tool(
            &pack_dir,
            temp.path().join("replayed"),
            RecordMode::Off,
            "echo",
        ),
    )
    .unwrap();
    assert_replay_reproduces(&recorded, &replay);
}
