//! Every bad input skilleval knows of, as a table: the command line, the exit code, and the
//! words its message must hold. The release binary runs each case. Unless a case says
//! otherwise, it names a model file that does not exist, so a case that reaches the model
//! fails with "model file not found": that proves the input was checked (or accepted) before
//! any model loads. docs/reliability.md lists the same cases.

mod runner_support;

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::Command;

use runner_support::{edit, packs_dir};

/// Where each case works: fresh copies of the test packs and a run output folder.
struct Place {
    _temp: tempfile::TempDir,
    root: PathBuf,
    mini: PathBuf,
    weather: PathBuf,
    output: PathBuf,
}

impl Place {
    fn new() -> Place {
        let temp = tempfile::tempdir().unwrap();
        let root = temp.path().to_path_buf();
        let mini = root.join("mini");
        let weather = root.join("weather_record");
        copy_dir(&packs_dir().join("mini"), &mini);
        copy_dir(&packs_dir().join("weather_record"), &weather);
        std::fs::create_dir_all(weather.join("fixtures")).unwrap();
        Place {
            _temp: temp,
            output: root.join("output"),
            root,
            mini,
            weather,
        }
    }

    fn path(&self, name: &str) -> String {
        self.root.join(name).display().to_string()
    }

    fn write(&self, name: &str, bytes: impl AsRef<[u8]>) -> String {
        let path = self.root.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, bytes).unwrap();
        path.display().to_string()
    }

    /// `run --pack mini` with `args`, the output folder and a model that is not there.
    fn run_mini(&self, args: &[&str]) -> Vec<String> {
        self.run_pack(&self.mini, args)
    }

    fn run_pack(&self, pack: &Path, args: &[&str]) -> Vec<String> {
        let mut all = vec![
            "run".to_string(),
            "--pack".into(),
            pack.display().to_string(),
            "--output".into(),
            self.output.display().to_string(),
            "--model".into(),
            NO_MODEL.into(),
        ];
        all.extend(args.iter().map(|a| a.to_string()));
        all
    }

    fn mini_toml(&self) -> PathBuf {
        self.mini.join("pack.toml")
    }

    fn append(&self, path: &Path, text: &str) {
        let old = std::fs::read_to_string(path).unwrap();
        std::fs::write(path, old + text).unwrap();
    }

    /// The mini pack with one more law.
    fn add_law(&self, body: &str) {
        self.append(
            &self.mini_toml(),
            &format!("\n[[laws]]\nname = \"the-added-law\"\n{body}\n"),
        );
    }

    fn weather_fixture(&self, status: u16, body: &str) {
        self.write(
            "weather_record/fixtures/paris-texas.json",
            format!(
                "{{\"tool\": \"weather_lookup\", \"arguments\": {{\"location\": \"Paris, Texas\"}}, \"status\": {status}, \"body\": {body}}}"
            ),
        );
    }
}

const NO_MODEL: &str = "/nonexistent/model.gguf";
/// What a case that passed every check before the model says.
const REACHED_MODEL: &str = "model file not found";

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

struct Case {
    name: &'static str,
    /// Prepares the place and gives the arguments.
    setup: fn(&Place) -> Vec<String>,
    code: i32,
    /// Words the output (stderr, then stdout) must hold; `{mini}` and `{root}` stand for the
    /// folders.
    words: &'static [&'static str],
}

fn s(args: &[&str]) -> Vec<String> {
    args.iter().map(|a| a.to_string()).collect()
}

fn real_model() -> String {
    let path = skilleval::model_path::resolve(None);
    assert!(path.is_file(), "{}: run scripts/setup.sh", path.display());
    path.display().to_string()
}

/// A stand-in for an OpenAI-compatible server on loopback: it lists one model `m` at
/// `/v1/models`, has no other GET route, and answers every completion with `status` and `body`.
/// It serves until the test process ends.
fn fake_server(status: u16, body: &'static str) -> String {
    use std::io::{BufRead, BufReader, Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(stream);
            let mut request_line = String::new();
            if reader.read_line(&mut request_line).is_err() {
                continue;
            }
            let mut length = 0usize;
            loop {
                let mut header = String::new();
                if reader.read_line(&mut header).is_err() || header.trim().is_empty() {
                    break;
                }
                if let Some(v) = header.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap_or(0);
                }
            }
            let mut request_body = vec![0u8; length];
            let _ = reader.read_exact(&mut request_body);
            let (code, answer) = if request_line.starts_with("GET /v1/models") {
                (200, r#"{"data":[{"id":"m"}]}"#)
            } else if request_line.starts_with("GET") {
                (404, "{}")
            } else {
                (status, body)
            };
            let response = format!(
                "HTTP/1.1 {code} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{answer}",
                answer.len()
            );
            let _ = reader.get_mut().write_all(response.as_bytes());
        }
    });
    endpoint
}

/// `run --pack mini` at a [`fake_server`], one repeat, no control.
fn run_at_server(p: &Place, status: u16, body: &'static str) -> Vec<String> {
    server_run(p, &fake_server(status, body), &[])
}

/// `run --pack mini` at the server at `endpoint`, one repeat, no control, no retries, then
/// `more`.
fn server_run(p: &Place, endpoint: &str, more: &[&str]) -> Vec<String> {
    let mut args = s(&[
        "run",
        "--pack",
        &p.mini.display().to_string(),
        "--output",
        &p.output.display().to_string(),
        "--backend",
        "openai",
        "--endpoint",
        endpoint,
        "--model",
        "m",
        "--family",
        "gemma",
        "--repeats",
        "1",
        "--no-control",
        "--parallel",
        "1",
        "--retries",
        "0",
    ]);
    args.extend(s(more));
    args
}

/// A server that lists model `m` and then never answers a completion.
fn silent_server() -> String {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for mut stream in listener.incoming().flatten() {
            let mut buf = [0u8; 4096];
            let n = stream.read(&mut buf).unwrap_or(0);
            if buf[..n].starts_with(b"GET /v1/models") {
                let body = r#"{"data":[{"id":"m"}]}"#;
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            } else if buf[..n].starts_with(b"GET") {
                let _ = stream.write_all(
                    b"HTTP/1.1 404 X\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}",
                );
            } else {
                held.push(stream);
            }
        }
    });
    endpoint
}

/// A FIFO at `path`: reading it blocks until a writer comes, which none does.
fn mkfifo(path: &Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let status = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(status.success(), "mkfifo {}", path.display());
}

fn cases() -> Vec<Case> {
    vec![
        // ── pack.toml ──
        Case {
            name: "pack name with ../",
            setup: |p| {
                edit(&p.mini_toml(), "name = \"mini\"", "name = \"../../escape\"");
                p.run_mini(&[])
            },
            code: 1,
            words: &["pack.toml:2", "field `name`", "letters, digits"],
        },
        Case {
            name: "pack name with a slash",
            setup: |p| {
                edit(&p.mini_toml(), "name = \"mini\"", "name = \"a/b\"");
                p.run_mini(&[])
            },
            code: 1,
            words: &["field `name`", "not a valid pack name"],
        },
        Case {
            name: "empty pack name",
            setup: |p| {
                edit(&p.mini_toml(), "name = \"mini\"", "name = \"\"");
                p.run_mini(&[])
            },
            code: 1,
            words: &["field `name`", "not a valid pack name"],
        },
        Case {
            name: "max_rounds = 0",
            setup: |p| {
                edit(&p.mini_toml(), "max_rounds = 3", "max_rounds = 0");
                p.run_mini(&[])
            },
            code: 1,
            words: &["pack.toml:11", "field `budgets.max_rounds`", "at least 1"],
        },
        Case {
            name: "max_tokens_per_round = 0",
            setup: |p| {
                edit(
                    &p.mini_toml(),
                    "max_tokens_per_round = 64",
                    "max_tokens_per_round = 0",
                );
                p.run_mini(&[])
            },
            code: 1,
            words: &["pack.toml:13", "field `budgets.max_tokens_per_round`"],
        },
        Case {
            name: "max_generated_tokens = 0",
            setup: |p| {
                edit(
                    &p.mini_toml(),
                    "max_generated_tokens = 128",
                    "max_generated_tokens = 0",
                );
                p.run_mini(&[])
            },
            code: 1,
            words: &["field `budgets.max_generated_tokens`"],
        },
        Case {
            name: "sampling temperature nan",
            setup: |p| {
                p.append(&p.mini_toml(), "\n[sampling]\ntemperature = nan\n");
                p.run_mini(&[])
            },
            code: 1,
            words: &["pack.toml:", "field `sampling.temperature`", "NaN"],
        },
        Case {
            name: "sampling temperature inf",
            setup: |p| {
                p.append(&p.mini_toml(), "\n[sampling]\ntemperature = inf\n");
                p.run_mini(&[])
            },
            code: 1,
            words: &["field `sampling.temperature`", "from 0"],
        },
        Case {
            name: "sampling temperature negative",
            setup: |p| {
                p.append(&p.mini_toml(), "\n[sampling]\ntemperature = -1.0\n");
                p.run_mini(&[])
            },
            code: 1,
            words: &["field `sampling.temperature`"],
        },
        Case {
            name: "sampling top_p 7.5",
            setup: |p| {
                p.append(&p.mini_toml(), "\n[sampling]\ntop_p = 7.5\n");
                p.run_mini(&[])
            },
            code: 1,
            words: &["field `sampling.top_p`", "at most 1"],
        },
        Case {
            name: "sampling top_p 0",
            setup: |p| {
                p.append(&p.mini_toml(), "\n[sampling]\ntop_p = 0.0\n");
                p.run_mini(&[])
            },
            code: 1,
            words: &["field `sampling.top_p`", "above 0"],
        },
        Case {
            name: "sampling top_k -3",
            setup: |p| {
                p.append(&p.mini_toml(), "\n[sampling]\ntop_k = -3\n");
                p.run_mini(&[])
            },
            code: 1,
            words: &["field `sampling.top_k`", "at least 1"],
        },
        Case {
            name: "unknown law kind",
            setup: |p| {
                edit(
                    &p.mini_toml(),
                    "kind = \"tool_not_called\"",
                    "kind = \"tool_never_called\"",
                );
                p.run_mini(&[])
            },
            code: 1,
            words: &["field `laws[2]`", "tool_never_called"],
        },
        Case {
            name: "law that can never fail (pattern matches nothing)",
            setup: |p| {
                p.add_law("kind = \"reply_not_matches\"\npattern = \"$a\"");
                p.run_mini(&[])
            },
            code: 1,
            words: &["pack.toml:", "the-added-law", "matches no text"],
        },
        Case {
            name: "law that can never pass",
            setup: |p| {
                p.add_law("kind = \"reply_matches\"\npattern = \"a^\"");
                p.run_mini(&[])
            },
            code: 1,
            words: &["the-added-law", "matches no text"],
        },
        Case {
            name: "law with an empty unless pattern",
            setup: |p| {
                p.add_law("kind = \"reply_matches\"\npattern = \"(?i)sorry\"\nunless = \"\"");
                p.run_mini(&[])
            },
            code: 1,
            words: &["the-added-law", "empty pattern"],
        },
        Case {
            name: "unbounded call_count",
            setup: |p| {
                p.add_law("kind = \"call_count\"\nmin = 0\nmax = 4294967295");
                p.run_mini(&[])
            },
            code: 1,
            words: &["the-added-law", "any count passes"],
        },
        Case {
            name: "when_field on no sample",
            setup: |p| {
                p.add_law("kind = \"tool_not_called\"\nwhen_field = \"no_such_field\"");
                p.run_mini(&[])
            },
            code: 1,
            words: &["pack.toml:", "when_field", "never applies"],
        },
        Case {
            name: "law about a tool the pack does not offer",
            setup: |p| {
                p.add_law("kind = \"tool_not_called\"\ntool = \"no_such_tool\"");
                p.run_mini(&[])
            },
            code: 1,
            words: &["the-added-law", "not in the pack's `tools`"],
        },
        Case {
            name: "law category not declared",
            setup: |p| {
                p.add_law("kind = \"tool_not_called\"\ncategories = [\"nowhere\"]");
                p.run_mini(&[])
            },
            code: 1,
            words: &["categories", "nowhere", "not declared"],
        },
        Case {
            name: "law defined twice",
            setup: |p| {
                p.add_law("kind = \"tool_not_called\"");
                p.add_law("kind = \"tool_not_called\"");
                p.run_mini(&[])
            },
            code: 1,
            words: &["the-added-law", "defined twice"],
        },
        Case {
            name: "empty categories",
            setup: |p| {
                edit(
                    &p.mini_toml(),
                    "categories = [\"lookup\", \"messy_name\", \"chitchat\"]",
                    "categories = []",
                );
                p.run_mini(&[])
            },
            code: 1,
            words: &["field `categories` is empty"],
        },
        Case {
            name: "category listed twice",
            setup: |p| {
                edit(
                    &p.mini_toml(),
                    "categories = [\"lookup\", \"messy_name\", \"chitchat\"]",
                    "categories = [\"lookup\", \"lookup\", \"messy_name\", \"chitchat\"]",
                );
                p.run_mini(&[])
            },
            code: 1,
            words: &["field `categories`", "twice"],
        },
        Case {
            name: "unknown key in pack.toml",
            setup: |p| {
                edit(
                    &p.mini_toml(),
                    "skill = \"stations\"",
                    "skill = \"stations\"\ncolour = \"blue\"",
                );
                p.run_mini(&[])
            },
            code: 1,
            words: &["pack.toml:", "colour"],
        },
        Case {
            name: "TOML syntax error",
            setup: |p| {
                edit(&p.mini_toml(), "skill = \"stations\"", "skill = \"stations");
                p.run_mini(&[])
            },
            code: 1,
            words: &["pack.toml:4"],
        },
        Case {
            name: "no such pack",
            setup: |p| s(&["run", "--pack", &p.path("absent"), "--model", NO_MODEL]),
            code: 1,
            words: &["absent", "cannot read pack"],
        },
        Case {
            name: "tool of unknown kind",
            setup: |p| {
                edit(
                    &p.mini_toml(),
                    "kind = \"recorded\"",
                    "kind = \"telepathy\"",
                );
                p.run_mini(&[])
            },
            code: 1,
            words: &["field `tools[0].kind`", "telepathy"],
        },
        Case {
            name: "tool without key arguments",
            setup: |p| {
                edit(
                    &p.mini_toml(),
                    "key_arguments = [\"station\"]",
                    "key_arguments = []",
                );
                p.run_mini(&[])
            },
            code: 1,
            words: &["field `tools[0].key_arguments` is empty"],
        },
        Case {
            name: "skill not in the skills tree",
            setup: |p| {
                edit(&p.mini_toml(), "skill = \"stations\"", "skill = \"radar\"");
                p.run_mini(&[])
            },
            code: 1,
            words: &["field `skill`", "radar"],
        },
        // ── command-line flags ──
        Case {
            name: "--temperature NaN",
            setup: |p| p.run_mini(&["--temperature", "NaN"]),
            code: 1,
            words: &["--temperature", "NaN"],
        },
        Case {
            name: "--temperature inf",
            setup: |p| p.run_mini(&["--temperature", "inf"]),
            code: 1,
            words: &["--temperature", "from 0"],
        },
        Case {
            name: "--temperature negative",
            setup: |p| p.run_mini(&["--temperature=-0.5"]),
            code: 1,
            words: &["--temperature"],
        },
        Case {
            name: "--top-p 7.5",
            setup: |p| p.run_mini(&["--top-p", "7.5"]),
            code: 1,
            words: &["--top-p", "at most 1"],
        },
        Case {
            name: "--top-k -3",
            setup: |p| p.run_mini(&["--top-k=-3"]),
            code: 1,
            words: &["--top-k", "at least 1"],
        },
        Case {
            name: "--repeats 0",
            setup: |p| p.run_mini(&["--repeats", "0"]),
            code: 1,
            words: &["--repeats must be at least 1"],
        },
        Case {
            name: "--category that the pack lacks",
            setup: |p| p.run_mini(&["--category", "weather"]),
            code: 1,
            words: &["--category", "no such category", "lookup"],
        },
        Case {
            name: "--limit 0",
            setup: |p| p.run_mini(&["--limit", "0"]),
            code: 1,
            words: &["no samples to run"],
        },
        Case {
            name: "--parallel 0",
            setup: |p| p.run_mini(&["--parallel", "0"]),
            code: 2,
            words: &["--parallel"],
        },
        Case {
            name: "--resume with ../",
            setup: |p| p.run_mini(&["--resume", "../elsewhere"]),
            code: 1,
            words: &["--resume", "letters, digits"],
        },
        Case {
            name: "--resume of a run that does not exist",
            setup: |p| p.run_mini(&["--resume", "20260101-000000-mini"]),
            code: 1,
            words: &["--resume", "journal.jsonl", "does not exist"],
        },
        Case {
            name: "unknown flag",
            setup: |p| p.run_mini(&["--colour"]),
            code: 2,
            words: &["--colour"],
        },
        // ── variants ──
        Case {
            name: "empty variant",
            setup: |p| {
                let v = p.write("v.md", "");
                p.run_mini(&["--variant", &v])
            },
            code: 1,
            words: &["v.md", "body is empty"],
        },
        Case {
            name: "whitespace-only variant",
            setup: |p| {
                let v = p.write("v.md", " \n\t\n  \n");
                p.run_mini(&["--variant", &v])
            },
            code: 1,
            words: &["v.md", "body is empty"],
        },
        Case {
            name: "NUL-filled variant",
            setup: |p| {
                let v = p.write("v.md", [0u8; 64]);
                p.run_mini(&["--variant", &v])
            },
            code: 1,
            words: &["v.md", "NUL"],
        },
        Case {
            name: "variant that is not UTF-8",
            setup: |p| {
                let v = p.write("v.md", b"Call the tool \xff\xfe now.\n");
                p.run_mini(&["--variant", &v])
            },
            code: 1,
            words: &["v.md", "not UTF-8"],
        },
        Case {
            name: "variant that does not exist",
            setup: |p| p.run_mini(&["--variant", &p.path("absent.md")]),
            code: 1,
            words: &["absent.md", "cannot read variant"],
        },
        Case {
            name: "variant with front matter and no body",
            setup: |p| {
                let v = p.write(
                    "v.md",
                    "---\nname: stations\ndescription: Station readings.\n---\n\n",
                );
                p.run_mini(&["--variant", &v])
            },
            code: 1,
            words: &["v.md", "body is empty"],
        },
        Case {
            name: "variant whose YAML is broken names the file's line",
            setup: |p| {
                let v = p.write(
                    "v.md",
                    "---\nname: stations\ndescription: [unclosed\n---\nBody.\n",
                );
                p.run_mini(&["--variant", &v])
            },
            code: 1,
            words: &["v.md:", "front matter"],
        },
        Case {
            name: "variant that renames the skill",
            setup: |p| {
                let v = p.write(
                    "v.md",
                    "---\nname: radar\ndescription: Radar.\n---\nBody.\n",
                );
                p.run_mini(&["--variant", &v])
            },
            code: 1,
            words: &["v.md", "field `name`", "renames"],
        },
        Case {
            name: "variant whose body opens with a --- rule is a body",
            setup: |p| {
                let v = p.write(
                    "v.md",
                    "---\n\nCall station_reading once, then report it.\n",
                );
                p.run_mini(&["--variant", &v])
            },
            code: 1,
            words: &[REACHED_MODEL],
        },
        Case {
            name: "variant with a byte-order mark",
            setup: |p| {
                let v = p.write(
                    "v.md",
                    "\u{feff}Call station_reading once, then report it.\n",
                );
                p.run_mini(&["--variant", &v])
            },
            code: 1,
            words: &[REACHED_MODEL],
        },
        // ── skills ──
        Case {
            name: "SKILL.md YAML error gives the file's line",
            setup: |p| {
                p.write(
                    "mini/skills/stations/SKILL.md",
                    "---\nname: stations\ndescription: a: b: c\n---\nBody.\n",
                );
                p.run_mini(&[])
            },
            code: 1,
            words: &["SKILL.md:3:", "front matter"],
        },
        Case {
            name: "SKILL.md without front matter",
            setup: |p| {
                p.write("mini/skills/stations/SKILL.md", "Just a body.\n");
                p.run_mini(&[])
            },
            code: 1,
            words: &["SKILL.md", "no front matter"],
        },
        Case {
            name: "SKILL.md front matter not closed",
            setup: |p| {
                p.write(
                    "mini/skills/stations/SKILL.md",
                    "---\nname: stations\ndescription: x\nBody.\n",
                );
                p.run_mini(&[])
            },
            code: 1,
            words: &["SKILL.md", "not closed"],
        },
        Case {
            name: "SKILL.md with an empty name",
            setup: |p| {
                p.write(
                    "mini/skills/stations/SKILL.md",
                    "---\nname: \" \"\ndescription: x\n---\nBody.\n",
                );
                p.run_mini(&[])
            },
            code: 1,
            words: &["SKILL.md", "`name` is empty"],
        },
        Case {
            name: "--skills-dir that does not exist",
            setup: |p| p.run_mini(&["--skills-dir", &p.path("no-skills")]),
            code: 1,
            words: &["no-skills", "cannot read skills folder"],
        },
        // ── corpora ──
        Case {
            name: "corpus with a byte-order mark",
            setup: |p| {
                let corpus = p.mini.join("corpus.jsonl");
                let text = std::fs::read_to_string(&corpus).unwrap();
                std::fs::write(&corpus, format!("\u{feff}{text}")).unwrap();
                p.run_mini(&[])
            },
            code: 1,
            words: &[REACHED_MODEL],
        },
        Case {
            name: "corpus line that is not JSON",
            setup: |p| {
                p.append(&p.mini.join("corpus.jsonl"), "{not json\n");
                p.run_mini(&[])
            },
            code: 1,
            words: &["corpus.jsonl:7", "not valid JSON"],
        },
        Case {
            name: "corpus sample without an id",
            setup: |p| {
                edit(
                    &p.mini.join("corpus.jsonl"),
                    "\"id\": \"chitchat-thanks\", ",
                    "",
                );
                p.run_mini(&[])
            },
            code: 1,
            words: &["corpus.jsonl:", "field `id`"],
        },
        Case {
            name: "corpus id used twice",
            setup: |p| {
                p.append(
                    &p.mini.join("corpus.jsonl"),
                    "{\"id\": \"lookup-oslo\", \"category\": \"lookup\", \"prompt\": \"again\", \"station\": \"Oslo\"}\n",
                );
                p.run_mini(&[])
            },
            code: 1,
            words: &["corpus.jsonl:7", "used twice"],
        },
        Case {
            name: "corpus category not declared",
            setup: |p| {
                p.append(
                    &p.mini.join("corpus.jsonl"),
                    "{\"id\": \"x\", \"category\": \"radar\", \"prompt\": \"hi\"}\n",
                );
                p.run_mini(&[])
            },
            code: 1,
            words: &["corpus.jsonl:7", "field `category`", "radar"],
        },
        Case {
            name: "corpus with both prompt and messages",
            setup: |p| {
                p.append(
                    &p.mini.join("corpus.jsonl"),
                    "{\"id\": \"x\", \"category\": \"chitchat\", \"prompt\": \"hi\", \"messages\": []}\n",
                );
                p.run_mini(&[])
            },
            code: 1,
            words: &["corpus.jsonl:7", "exclude each other"],
        },
        Case {
            name: "empty corpus",
            setup: |p| {
                std::fs::write(p.mini.join("corpus.jsonl"), "\n").unwrap();
                p.run_mini(&[])
            },
            code: 1,
            words: &["corpus.jsonl", "no samples"],
        },
        Case {
            name: "--corpus that does not exist",
            setup: |p| p.run_mini(&["--corpus", &p.path("absent.jsonl")]),
            code: 1,
            words: &["absent.jsonl", "cannot read corpus"],
        },
        // ── a run that did nothing, and sizes (issue: reliability II) ──
        Case {
            name: "server answering 400 stops the run with one line",
            setup: |p| run_at_server(p, 400, r#"{"error":{"message":"bad request"}}"#),
            code: 1,
            words: &[
                "HTTP 400: bad request",
                "the server refuses such requests, so the run stops",
            ],
        },
        Case {
            name: "server answering 404 stops the run",
            setup: |p| run_at_server(p, 404, r#"{"error":"no such route"}"#),
            code: 1,
            words: &["HTTP 404", "so the run stops"],
        },
        Case {
            name: "server answering {\"choices\":[]} errors every unit, and the run says so",
            setup: |p| run_at_server(p, 200, r#"{"choices":[]}"#),
            code: 1,
            words: &[
                "every unit of baseline",
                "errored, so the run measured nothing",
                "no choices[0].text",
            ],
        },
        Case {
            name: "server answering \"text\": 42 errors every unit",
            setup: |p| run_at_server(p, 200, r#"{"choices":[{"text":42}]}"#),
            code: 1,
            words: &["every unit of baseline", "measured nothing"],
        },
        Case {
            name: "server answering HTML with 200 errors every unit",
            setup: |p| run_at_server(p, 200, "<html>hello</html>"),
            code: 1,
            words: &["measured nothing", "not JSON"],
        },
        Case {
            name: "--repeats 4294967295 is refused before the plan is built",
            setup: |p| p.run_mini(&["--repeats", "4294967295"]),
            code: 1,
            words: &["--repeats 4294967295", "more than the 1000000 a run takes"],
        },
        Case {
            name: "a prompt larger than the context, before the model loads",
            setup: |p| {
                let big = "weather ".repeat(100_000);
                p.append(
                    &p.mini.join("corpus.jsonl"),
                    &format!("{{\"id\": \"huge\", \"category\": \"lookup\", \"prompt\": \"{big}\", \"station\": \"Uccle\"}}\n"),
                );
                let mut args = p.run_mini(&[]);
                let model = args.iter().position(|a| a == NO_MODEL).unwrap();
                args[model] = real_model();
                args
            },
            code: 1,
            words: &[
                "corpus.jsonl:",
                "sample \"huge\"",
                "more than the context of 4096 holds",
            ],
        },
        Case {
            name: "a skill body larger than the context, before the model loads",
            setup: |p| {
                let skill = p.mini.join("skills/stations/SKILL.md");
                p.append(&skill, &"Read the station. ".repeat(60_000));
                let mut args = p.run_mini(&[]);
                let model = args.iter().position(|a| a == NO_MODEL).unwrap();
                args[model] = real_model();
                args
            },
            code: 1,
            words: &[
                "SKILL.md: the skill's body is",
                "more than the context of 4096 holds",
            ],
        },
        Case {
            name: "compare of runs whose every unit errored says so and exits 1",
            setup: |p| {
                for _ in 0..2 {
                    let args = run_at_server(p, 200, r#"{"choices":[]}"#);
                    Command::new(env!("CARGO_BIN_EXE_skilleval"))
                        .args(&args)
                        .output()
                        .unwrap();
                    // Run ids are by the second.
                    std::thread::sleep(std::time::Duration::from_millis(1100));
                }
                let mut runs: Vec<String> = std::fs::read_dir(&p.output)
                    .unwrap()
                    .flatten()
                    .map(|e| e.path().display().to_string())
                    .collect();
                runs.sort();
                assert_eq!(runs.len(), 2, "{runs:?}");
                s(&["compare", &runs[0], &runs[1], "--arm", "baseline"])
            },
            code: 1,
            words: &[
                "Errored units",
                "A 6 of 6, B 6 of 6",
                "the comparison measured nothing",
            ],
        },
        // ── paths checked before the model loads ──
        Case {
            name: "--junit names a folder",
            setup: |p| {
                std::fs::create_dir_all(p.root.join("junit-dir")).unwrap();
                p.run_mini(&["--junit", &p.path("junit-dir")])
            },
            code: 1,
            words: &["--junit", "is a folder; name a file"],
        },
        Case {
            name: "--output is a file",
            setup: |p| {
                let file = p.write("a-file", "x");
                let mut args = p.run_mini(&[]);
                let at = args.iter().position(|a| a == "--output").unwrap();
                args[at + 1] = file;
                args
            },
            code: 1,
            words: &["--output", "is not a folder"],
        },
        Case {
            name: "--output under /proc",
            setup: |p| {
                let mut args = p.run_mini(&[]);
                let at = args.iter().position(|a| a == "--output").unwrap();
                args[at + 1] = "/proc/skilleval-out".into();
                args
            },
            code: 1,
            words: &["--output /proc/skilleval-out", "cannot create folder"],
        },
        Case {
            name: "--prompt-log in a folder that does not exist",
            setup: |p| p.run_mini(&["--prompt-log", &p.path("nowhere/log.jsonl")]),
            code: 1,
            words: &["--prompt-log", "does not exist"],
        },
        Case {
            name: "--baseline-from a run that does not exist, and no folder left behind",
            setup: |p| p.run_mini(&["--baseline-from", "20990101-000000-mini"]),
            code: 1,
            words: &["--baseline-from", "no run folder"],
        },
        Case {
            name: "--baseline-from ../x",
            setup: |p| p.run_mini(&["--baseline-from", "../x"]),
            code: 1,
            words: &["--baseline-from", "no run folder"],
        },
        Case {
            name: "--resume with --baseline-from",
            setup: |p| {
                p.write("output/20260101-000000-mini/journal.jsonl", "");
                p.run_mini(&["--resume", "20260101-000000-mini", "--baseline-from", "x"])
            },
            code: 1,
            words: &["a resumed run keeps the baseline it began with"],
        },
        Case {
            name: "a pack name of 300 characters",
            setup: |p| {
                let long = "n".repeat(300);
                edit(
                    &p.mini_toml(),
                    "name = \"mini\"",
                    &format!("name = \"{long}\""),
                );
                p.run_mini(&[])
            },
            code: 1,
            words: &["field `name`", "300 characters", "at most 200"],
        },
        Case {
            name: "two variants with one file name",
            setup: |p| {
                let variant = std::fs::read_to_string(p.mini.join("variant.md")).unwrap();
                let a = p.write("a/v.md", &variant);
                let b = p.write("b/v.md", &variant);
                p.run_mini(&["--variant", &a, "--variant", &b])
            },
            code: 1,
            words: &["both are named v.md"],
        },
        Case {
            name: "tool_output_chars = 0",
            setup: |p| {
                edit(
                    &p.mini_toml(),
                    "[budgets]\n",
                    "[budgets]\ntool_output_chars = 0\n",
                );
                p.run_mini(&[])
            },
            code: 1,
            words: &["field `budgets.tool_output_chars`", "at least 1"],
        },
        Case {
            name: "report of an absolute path that is no run names it once",
            setup: |p| s(&["report", &p.path("no-run")]),
            code: 1,
            words: &["no-run/journal.jsonl does not exist"],
        },
        // ── digests: only regular files, no symlinked folders ──
        Case {
            name: "a FIFO in the skills folder is not read",
            setup: |p| {
                mkfifo(&p.mini.join("skills/stations/notes.fifo"));
                p.run_mini(&[])
            },
            code: 1,
            words: &[REACHED_MODEL],
        },
        Case {
            name: "a symlink loop in the skills folder is not followed",
            setup: |p| {
                std::os::unix::fs::symlink(
                    p.mini.join("skills"),
                    p.mini.join("skills/stations/loop"),
                )
                .unwrap();
                p.run_mini(&[])
            },
            code: 1,
            words: &[REACHED_MODEL],
        },
        // ── laws that could never pass, refused by run as check refuses them ──
        Case {
            name: "argument_equals_field on an argument the tool lacks",
            setup: |p| {
                edit(
                    &p.mini_toml(),
                    "argument = \"station\"",
                    "argument = \"staton\"",
                );
                p.run_mini(&[])
            },
            code: 1,
            words: &[
                "law `asks-for-the-named-station`",
                "has no argument \"staton\"",
                "its parameters: station",
            ],
        },
        Case {
            name: "a sample whose law field is empty",
            setup: |p| {
                edit(
                    &p.mini.join("corpus.jsonl"),
                    "\"station\": \"Oslo Blindern\"",
                    "\"station\": \"\"",
                );
                p.run_mini(&[])
            },
            code: 1,
            words: &[
                "corpus.jsonl:1",
                "lookup-oslo",
                "reads field `station`, which is \"\"",
            ],
        },
        Case {
            name: "a sample whose law field is an object",
            setup: |p| {
                edit(
                    &p.mini.join("corpus.jsonl"),
                    "\"station\": \"Oslo Blindern\"",
                    "\"station\": {\"name\": \"Oslo\"}",
                );
                p.run_mini(&[])
            },
            code: 1,
            words: &["corpus.jsonl:1", "reads field `station`, which is {"],
        },
        Case {
            name: "--seed -1",
            setup: |p| p.run_mini(&["--seed", "-1"]),
            code: 2,
            words: &["\"-1\" is not a seed"],
        },
        Case {
            name: "a fixtures path that is a file",
            setup: |p| {
                std::fs::remove_dir_all(p.mini.join("fixtures/station_reading")).unwrap();
                p.write("mini/fixtures/station_reading", "not a folder");
                p.run_mini(&[])
            },
            code: 1,
            words: &[
                "cannot read fixtures folder",
                "it is a file; `fixtures` names a folder",
            ],
        },
        Case {
            name: "a server that never answers, with --request-timeout 1",
            setup: |p| {
                server_run(
                    p,
                    &silent_server(),
                    &["--request-timeout", "1", "--limit", "1"],
                )
            },
            code: 1,
            words: &["measured nothing", "timed out"],
        },
        Case {
            name: "corpus line with the key id twice",
            setup: |p| {
                p.append(
                    &p.mini.join("corpus.jsonl"),
                    "{\"id\": \"twice-a\", \"id\": \"twice-b\", \"category\": \"chitchat\", \"prompt\": \"hi\"}\n",
                );
                p.run_mini(&[])
            },
            code: 1,
            words: &["corpus.jsonl:7", "field `id` appears twice"],
        },
        Case {
            name: "corpus with invalid UTF-8 names the line",
            setup: |p| {
                let path = p.mini.join("corpus.jsonl");
                let mut bytes = std::fs::read(&path).unwrap();
                bytes.extend_from_slice(
                    b"{\"id\": \"bad\", \"category\": \"chitchat\", \"prompt\": \"\xff\"}\n",
                );
                std::fs::write(&path, bytes).unwrap();
                p.run_mini(&[])
            },
            code: 1,
            words: &["corpus.jsonl:7: not UTF-8 text"],
        },
        Case {
            name: "pack skill named ../../stations",
            setup: |p| {
                edit(
                    &p.mini_toml(),
                    "skill = \"stations\"",
                    "skill = \"../../stations\"",
                );
                p.run_mini(&[])
            },
            code: 1,
            words: &[
                "pack.toml:",
                "field `skill`",
                "only lowercase letters, digits and hyphens",
            ],
        },
        Case {
            name: "a server that is not there names its URL once",
            setup: |p| server_run(p, "http://127.0.0.1:1", &[]),
            code: 1,
            words: &["error: http://127.0.0.1:1/v1/models: Connection Failed: Connect error"],
        },
        // ── fixtures read strictly ──
        Case {
            name: "fixture with a misspelt key",
            setup: |p| {
                p.write(
                    "mini/fixtures/station_reading/typo.json",
                    r#"{"tool": "station_reading", "arguments": {"station": "Typo"}, "recorded_from_lve": true, "status": 200, "body": "x"}"#,
                );
                p.run_mini(&[])
            },
            code: 1,
            words: &["typo.json", "unknown field `recorded_from_lve`"],
        },
        Case {
            name: "fixture whose arguments lack the key argument",
            setup: |p| {
                p.write(
                    "mini/fixtures/station_reading/staton.json",
                    r#"{"tool": "station_reading", "arguments": {"staton": "Uccle"}, "status": 200, "body": "x"}"#,
                );
                p.run_mini(&[])
            },
            code: 1,
            words: &["staton.json", "field `arguments.station` is missing"],
        },
        // ── fixtures ──
        Case {
            name: "malformed fixture, before the model",
            setup: |p| {
                p.write("mini/fixtures/station_reading/broken.json", "{\"tool\": ");
                p.run_mini(&[])
            },
            code: 1,
            words: &["broken.json", "not a fixture"],
        },
        Case {
            name: "missing fixtures folder",
            setup: |p| {
                std::fs::remove_dir_all(p.mini.join("fixtures")).unwrap();
                p.run_mini(&["--fail-on", "worse"])
            },
            code: 1,
            words: &["fixtures/station_reading", "cannot read fixtures folder"],
        },
        Case {
            name: "upper-case .JSON fixture is read",
            setup: |p| {
                std::fs::copy(
                    p.mini.join("fixtures/station_reading/uccle.json"),
                    p.mini.join("fixtures/station_reading/UCCLE-COPY.JSON"),
                )
                .unwrap();
                p.run_mini(&[])
            },
            code: 1,
            words: &["UCCLE-COPY.JSON", "same key as"],
        },
        Case {
            name: "fixture for a tool without a route",
            setup: |p| {
                p.write(
                    "mini/fixtures/station_reading/other.json",
                    "{\"tool\": \"radar\", \"arguments\": {}, \"status\": 200, \"body\": \"x\"}",
                );
                p.run_mini(&[])
            },
            code: 1,
            words: &["other.json", "no route", "radar"],
        },
        Case {
            name: "weather fixture body not in the service's shape",
            setup: |p| {
                p.weather_fixture(200, "{\"temp\": 5}");
                p.run_pack(&p.weather, &[])
            },
            code: 1,
            words: &["paris-texas.json", "field `body`", "j1"],
        },
        Case {
            name: "weather fixture body that is plain text with status 200",
            setup: |p| {
                p.weather_fixture(200, "\"sunny\"");
                p.run_pack(&p.weather, &[])
            },
            code: 1,
            words: &["paris-texas.json", "field `body`", "not a JSON object"],
        },
        Case {
            name: "weather fixture of a place not found is fine",
            setup: |p| {
                p.weather_fixture(404, "\"Unknown location\"");
                p.run_pack(&p.weather, &[])
            },
            code: 1,
            words: &[REACHED_MODEL],
        },
        // ── model ──
        Case {
            name: "--model is a folder",
            setup: |p| {
                let mut args = p.run_mini(&[]);
                let at = args.iter().position(|a| a == NO_MODEL).unwrap();
                args[at] = p.root.display().to_string();
                args
            },
            code: 1,
            words: &["{root}", "is a folder"],
        },
        Case {
            name: "--model that does not exist",
            setup: |p| p.run_mini(&[]),
            code: 1,
            words: &[NO_MODEL, REACHED_MODEL],
        },
        Case {
            name: "--model that is not GGUF",
            setup: |p| {
                let notes = p.write("notes.gguf", "notes, not weights\n");
                s(&["generate", "--prompt", "hi", "--model", &notes])
            },
            code: 1,
            words: &["notes.gguf", "not a GGUF file"],
        },
        Case {
            name: "--ctx beyond the model's training (loads the model)",
            setup: |_| {
                s(&[
                    "generate",
                    "--prompt",
                    "hi",
                    "--ctx",
                    "4000000",
                    "--model",
                    &real_model(),
                ])
            },
            code: 1,
            words: &["--ctx 4000000", "trained"],
        },
        Case {
            name: "second process in a run folder (loads the model)",
            setup: |p| {
                let dir = p.output.join("20260101-000000-mini");
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(dir.join("journal.jsonl"), "").unwrap();
                let lock = File::create(dir.join("run.lock")).unwrap();
                lock.try_lock().unwrap();
                // Held until the process ends: the case's child runs meanwhile.
                std::mem::forget(lock);
                let mut args = p.run_mini(&["--resume", "20260101-000000-mini", "--parallel", "1"]);
                let at = args.iter().position(|a| a == NO_MODEL).unwrap();
                args[at] = real_model();
                args
            },
            code: 1,
            words: &["20260101-000000-mini", "another skilleval process"],
        },
        // ── bench ──
        Case {
            name: "bench score of an empty result file",
            setup: |p| {
                p.write("results/BFCL_v4_simple_python_result.json", "");
                s(&["bench", "score", &p.path("results")])
            },
            code: 1,
            words: &["BFCL_v4_simple_python_result.json", "no result lines"],
        },
        Case {
            name: "bench score shows unknown ids in the table",
            setup: |p| {
                p.write(
                    "results/BFCL_v4_simple_python_result.json",
                    "{\"id\": \"no_such_entry_7\", \"result\": \"[f(x=1)]\"}\n",
                );
                s(&["bench", "score", &p.path("results")])
            },
            code: 0,
            words: &["1 result line(s) have an id the corpus does not hold"],
        },
        Case {
            name: "bench score of a folder that does not exist",
            setup: |p| s(&["bench", "score", &p.path("nowhere")]),
            code: 1,
            words: &["nowhere", "not a folder"],
        },
        Case {
            name: "bench score of a folder without result files",
            setup: |p| {
                p.write("results/readme.txt", "nothing here");
                s(&["bench", "score", &p.path("results")])
            },
            code: 1,
            words: &["no result files"],
        },
        Case {
            name: "bench --repeats 4294967295 is refused before the jobs are built",
            setup: |_| {
                s(&[
                    "bench",
                    "--bfcl",
                    "simple_python",
                    "--repeats",
                    "4294967295",
                    "--temperature",
                    "0.7",
                    "--model",
                    NO_MODEL,
                ])
            },
            code: 1,
            words: &["--repeats 4294967295", "more than the 1000000 a run takes"],
        },
        Case {
            name: "bench with an unknown category",
            setup: |_| s(&["bench", "--bfcl", "astrology", "--model", NO_MODEL]),
            code: 1,
            words: &["astrology"],
        },
        Case {
            name: "check of a pack that does not exist",
            setup: |p| s(&["check", "--pack", &p.path("absent")]),
            code: 1,
            words: &["absent", "cannot read pack"],
        },
    ]
}

#[test]
fn every_case_gets_its_exit_code_and_its_words() {
    let cases = cases();
    assert!(cases.len() >= 60, "{} cases", cases.len());
    let mut failures = Vec::new();
    for case in &cases {
        let place = Place::new();
        let args = (case.setup)(&place);
        let out = Command::new(env!("CARGO_BIN_EXE_skilleval"))
            .args(&args)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .expect("the binary runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let text = format!("{stderr}{stdout}");
        let code = out.status.code().unwrap_or(-1);
        let mut wrong = Vec::new();
        if code != case.code {
            wrong.push(format!("exit {code}, wanted {}", case.code));
        }
        for word in case.words {
            let word = word
                .replace("{mini}", &place.mini.display().to_string())
                .replace("{root}", &place.root.display().to_string());
            if !text.contains(&word) {
                wrong.push(format!("no {word:?}"));
            }
        }
        if text.contains("panicked") {
            wrong.push("panicked".into());
        }
        // An error is one line, the last on stderr.
        if case.code == 1 {
            let last = stderr.lines().last().unwrap_or("");
            if !last.starts_with("error: ") {
                wrong.push("stderr does not end with an `error:` line".into());
            }
        }
        if !wrong.is_empty() {
            failures.push(format!(
                "{}: {}\n    args: {args:?}\n    output: {}",
                case.name,
                wrong.join("; "),
                text.trim()
            ));
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}
