//! A published MCP server as a pack's tools: the reference filesystem server, installed by the
//! test set-up from the npm registry (`scripts/setup.sh --model all`), started over stdio by
//! `skilleval init` and by a recording run on the real default model, and never by a replay.
//!
//! The truths these tests check against come from outside skilleval: the server's own
//! `tools/list`, read here with plain JSON-RPC lines rather than through the SDK skilleval
//! uses, and the files on disk the server reads.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{json, Value};
use skilleval::eval::init::{self, InitOptions};
use skilleval::eval::law_cases;
use skilleval::eval::pack::Pack;
use skilleval::eval::replay::RecordMode;
use skilleval::eval::runner;

use common::recording::{
    assert_a_call_recorded, assert_replay_reproduces, live_fixtures, run_of_tool,
};

/// The server's entry point as the set-up installs it; a missing server fails the test, as a
/// missing model does: CI runs the set-up first.
fn server_script() -> PathBuf {
    let path = skilleval::model_path::cache_dir()
        .join("mcp/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
    assert!(
        path.is_file(),
        "{} is missing: run bash scripts/setup.sh --model all",
        path.display()
    );
    path
}

const SKILL: &str = "---
name: notes
description: Read the user's notes, kept as text files in the notes folder.
allowed-tools: read_text_file
---
When the user asks what a note says, call read_text_file with the note's file name as the
path, then answer from what it returns.

```example
User: what is in my note called ideas.txt?
Assistant: <function=read_text_file>
<parameter=path>
ideas.txt
</parameter>
</function>
Tool: Paint the shed blue.
Assistant: Your note ideas.txt says: paint the shed blue.
```
";

/// A skill folder, a notes folder the server may read, and a pack written by `init` from the
/// live server's listing.
fn notes_pack(temp: &Path) -> (PathBuf, PathBuf) {
    let skills = temp.join("skills/notes");
    std::fs::create_dir_all(&skills).unwrap();
    std::fs::write(skills.join("SKILL.md"), SKILL).unwrap();
    let pack_dir = temp.join("pack");
    let notes = pack_dir.join("notes");
    std::fs::create_dir_all(&notes).unwrap();
    std::fs::write(
        notes.join("shopping.txt"),
        "Buy oat milk, two lemons and rye bread.\n",
    )
    .unwrap();
    std::fs::write(
        notes.join("todo.txt"),
        "Call the plumber on Friday at nine.\n",
    )
    .unwrap();
    std::fs::write(
        notes.join("trip.txt"),
        "The train to Lyon leaves at 7:42 from platform 3.\n",
    )
    .unwrap();
    let written = init::init(&InitOptions {
        skill: skills.join("SKILL.md"),
        out: pack_dir.clone(),
        name: Some("notes".into()),
        commands: Default::default(),
        descriptions: Default::default(),
        arguments: Default::default(),
        mcp: Some(vec![
            "node".into(),
            server_script().display().to_string(),
            notes.display().to_string(),
        ]),
        recorded: vec![],
        writes: vec![],
        prompts: vec![
            (
                "read_text_file".into(),
                "What does my note shopping.txt say?".into(),
            ),
            (
                "read_text_file".into(),
                "Read me the note todo.txt, please.".into(),
            ),
            (
                "read_text_file".into(),
                "what's in my trip.txt note?".into(),
            ),
            ("none".into(), "What is the capital of Peru?".into()),
        ],
    })
    .expect("init writes a pack from the live server");
    assert_eq!(written.tools, vec![("read_text_file".to_string(), "mcp")]);
    (pack_dir, notes)
}

/// The server's own listing, by JSON-RPC over its stdin and stdout, without the SDK.
fn listing_by_hand(dir: &Path) -> Vec<Value> {
    let mut child = Command::new("node")
        .arg(server_script())
        .arg(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut send = |message: Value| writeln!(stdin, "{message}").unwrap();
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "by-hand", "version": "0"}}}),
    );
    let _initialized = lines.next().unwrap().unwrap();
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
    let reply: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    child.kill().ok();
    child.wait().ok();
    reply["result"]["tools"].as_array().unwrap().clone()
}

/// Processes still running with this folder in their command line.
fn processes_under(dir: &Path) -> Vec<String> {
    let needle = dir.display().to_string();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if cmdline.contains(&needle) {
            found.push(cmdline);
        }
    }
    found
}

#[test]
#[cfg_attr(not(feature = "full-tier"), ignore = "full tier")]
fn init_offers_the_tool_as_the_server_lists_it_and_the_pack_passes_check() {
    let _turn = common::model::turn();
    let temp = tempfile::tempdir().unwrap();
    let (pack_dir, notes) = notes_pack(temp.path());
    let pack = Pack::load(&pack_dir.display().to_string()).unwrap();
    let tool = &pack.tools[0];
    assert_eq!(tool.kind, "mcp");
    let listed = listing_by_hand(&notes);
    let by_hand = listed
        .iter()
        .find(|t| t["name"] == "read_text_file")
        .expect("the server lists read_text_file");
    // Members the server sends as null cannot be written in TOML; the server sends none here.
    assert_eq!(tool.parameters.as_ref(), Some(&by_hand["inputSchema"]));
    assert_eq!(tool.description.as_deref(), by_hand["description"].as_str());
    // Keyed by every argument, optional ones too: a call that reads the head of a file is not
    // answered with the recording of the whole file.
    let every: Vec<&String> = by_hand["inputSchema"]["properties"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(tool.key_arguments.iter().collect::<Vec<_>>(), every);
    assert!(every.len() > 1 && tool.key_arguments.contains(&"path".to_string()));
    let report = law_cases::check(&pack).unwrap();
    assert!(report.agrees(), "{}", report.render());
}

#[test]
#[cfg_attr(not(feature = "full-tier"), ignore = "full tier")]
fn a_recording_run_asks_the_server_and_a_replay_never_starts_it() {
    let _turn = common::model::turn();
    let temp = tempfile::tempdir().unwrap();
    let (pack_dir, notes) = notes_pack(temp.path());
    let mut backend = common::model::backend();

    let opts = run_of_tool(
        &pack_dir,
        temp.path().join("recorded"),
        RecordMode::Gaps,
        "read_text_file",
    );
    let recorded = runner::run(&mut *backend, &opts).unwrap();
    // The server stops with the run, though the options that named it are still held.
    assert_eq!(processes_under(&notes), Vec::<String>::new());
    assert_a_call_recorded(&recorded, "read_text_file");
    let mut checked = 0;
    for fixture in live_fixtures(&pack_dir.join("fixtures/read_text_file")) {
        let with = fixture.recorded_with.clone().unwrap_or_default();
        assert!(
            with.starts_with("mcp: node ") && with.contains("tools/call read_text_file"),
            "{with}"
        );
        assert!(fixture
            .recorded_at
            .as_deref()
            .is_some_and(|t| t.ends_with('Z')));
        let path = fixture.arguments["path"].as_str().unwrap_or_default();
        // A note that exists (the server takes a relative path from the folder it serves): the
        // recording is the file as it is on disk.
        if let Ok(text) = std::fs::read_to_string(notes.join(path)) {
            assert_eq!(fixture.status, 200, "{path}");
            assert_eq!(fixture.body_text(), text, "{path}");
            checked += 1;
        } else {
            // A path the server refuses or cannot find is its own error answer, kept as such.
            assert_eq!(fixture.status, 500, "{path}: {:?}", fixture.body);
        }
    }
    assert!(checked > 0, "no recording of a note that exists");

    // A replay with the server gone: every call the first run recorded is answered from its
    // recording, the same transcripts result, and nothing tries to start it.
    let pack_file = pack_dir.join("pack.toml");
    let text = std::fs::read_to_string(&pack_file).unwrap();
    let server_line = text.lines().find(|l| l.starts_with("server = ")).unwrap();
    std::fs::write(
        &pack_file,
        text.replace(server_line, "server = [\"no-such-mcp-server\"]"),
    )
    .unwrap();
    let replay = runner::run(
        &mut *backend,
        &run_of_tool(
            &pack_dir,
            temp.path().join("replayed"),
            RecordMode::Off,
            "read_text_file",
        ),
    )
    .unwrap();
    assert_replay_reproduces(&recorded, &replay);
}
