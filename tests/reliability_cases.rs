//! Every bad input skilleval knows of, as a table: the command line, the exit code, and the
//! words its message must hold. The release binary runs each case. Unless a case says
//! otherwise, it names a model file that does not exist, so a case that reaches the model
//! fails with "model file not found": that proves the input was checked (or accepted) before
//! any model loads. docs/reliability.md lists the same cases.

mod common;

use std::cell::RefCell;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::files::copy_dir;
use common::scripted::{edit, packs_dir};

/// What a case checks after its command: `Err` says what is wrong.
type After = Box<dyn Fn(&Place) -> Result<(), String>>;

/// Where each case works: fresh copies of the test packs and a run output folder.
struct Place {
    _temp: tempfile::TempDir,
    root: PathBuf,
    mini: PathBuf,
    weather: PathBuf,
    output: PathBuf,
    /// Variables the case's command runs with.
    env: RefCell<Vec<(String, String)>>,
    /// Checks of the files the command left, run after it.
    after: RefCell<Vec<After>>,
    /// Processes the setup started, waited for after the command.
    background: RefCell<Vec<std::process::Child>>,
    /// The folder the command (and `skilleval` steps of the setup) run in; the checkout if
    /// none.
    cwd: RefCell<Option<PathBuf>>,
    /// A file the command's stdout goes to instead of a pipe.
    stdout_to: RefCell<Option<PathBuf>>,
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
            env: RefCell::new(Vec::new()),
            after: RefCell::new(Vec::new()),
            background: RefCell::new(Vec::new()),
            cwd: RefCell::new(None),
            stdout_to: RefCell::new(None),
        }
    }

    /// The folder commands run in.
    fn cwd(&self) -> PathBuf {
        self.cwd
            .borrow()
            .clone()
            .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")))
    }

    /// Commands run in the place's own folder, which has no `packs/`, with a cache of their
    /// own: a pack name reaches the shipped pack, written out under `root/cache`.
    fn outside_the_checkout(&self) -> PathBuf {
        *self.cwd.borrow_mut() = Some(self.root.clone());
        let cache = self.root.join("cache");
        self.set_env("SKILLEVAL_CACHE_DIR", &cache.display().to_string());
        cache
    }

    fn set_env(&self, name: &str, value: &str) {
        self.env.borrow_mut().push((name.into(), value.into()));
    }

    /// A check run after the case's command.
    fn then(&self, check: impl Fn(&Place) -> Result<(), String> + 'static) {
        self.after.borrow_mut().push(Box::new(check));
    }

    /// Runs skilleval now (a step of the setup); its exit code and output.
    fn skilleval(&self, args: &[String]) -> (i32, String) {
        let out = Command::new(env!("CARGO_BIN_EXE_skilleval"))
            .args(args)
            .envs(self.env.borrow().iter().cloned())
            .current_dir(self.cwd())
            .stdin(std::process::Stdio::null())
            .output()
            .expect("the binary runs");
        (
            out.status.code().unwrap_or(-1),
            format!(
                "{}{}",
                String::from_utf8_lossy(&out.stderr),
                String::from_utf8_lossy(&out.stdout)
            ),
        )
    }

    /// The run folders under the output folder, by name.
    fn runs(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(&self.output)
            .map(|r| {
                r.flatten()
                    .filter(|e| e.path().is_dir())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        names
    }

    /// A finished run of the mini pack at a server whose every reply is `text`, with `more`
    /// flags; its run id.
    fn finished_run(&self, text: &str, more: &[&str]) -> String {
        let before = self.runs();
        let args = server_run(self, &completion_server(text), more);
        let (code, output) = self.skilleval(&args);
        assert!(code == 0, "setup run failed ({code}): {output}");
        self.runs()
            .into_iter()
            .find(|r| !before.contains(r))
            .expect("a new run folder")
    }

    /// The mini pack's tool as a `command` tool running `sh -c script`, offered from the start
    /// in the markup syntax.
    fn mini_command_tool(&self, script: &str, timeout_seconds: u32) {
        let toml = self.mini_toml();
        edit(&toml, "kind = \"recorded\"", &format!(
            "kind = \"command\"\ncommand = [\"sh\", \"-c\", {}]\ntimeout_seconds = {timeout_seconds}",
            toml_string(script)
        ));
        edit(
            &toml,
            "skill = \"stations\"",
            "skill = \"stations\"\npreload = true\ncall_format = \"markup\"",
        );
    }

    /// The mini pack's fixture files (`*.json`) and anything else its folder holds.
    fn mini_fixture_files(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.mini.join("fixtures/station_reading"))
            .map(|r| {
                r.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        names
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
/// The longest a case may take; the real-model cases take seconds.
const CASE_TIME_LIMIT: Duration = Duration::from_secs(180);
/// What a case that passed every check before the model says.
const REACHED_MODEL: &str = "model file not found";

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

thread_local! {
    /// Set when a case's setup asks for the real model: such a case runs in the full tier only.
    static ON_REAL_MODEL: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// The default model, for the cases whose check needs its vocabulary or context.
fn real_model() -> String {
    ON_REAL_MODEL.set(true);
    let path = skilleval::model_path::resolve(None);
    let needed = cfg!(feature = "full-tier");
    assert!(
        !needed || path.is_file(),
        "{}: run scripts/setup.sh",
        path.display()
    );
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
    // A flag `more` gives again takes the place of its default.
    if let Some(at) = more.iter().position(|a| *a == "--repeats") {
        let default = args.iter().position(|a| a == "--repeats").unwrap();
        args[default + 1] = more[at + 1].to_string();
        let mut rest = s(more);
        rest.drain(at..at + 2);
        args.extend(rest);
        return args;
    }
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

/// `text` as a TOML basic string.
fn toml_string(text: &str) -> String {
    serde_json::to_string(text).unwrap()
}

/// A completion whose text is `text`, as an OpenAI-compatible server sends it.
fn completion(text: &str) -> &'static str {
    let body = serde_json::json!({
        "choices": [{"text": text, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5}
    });
    Box::leak(body.to_string().into_boxed_str())
}

/// A [`fake_server`] whose every completion is `text`.
fn completion_server(text: &str) -> String {
    fake_server(200, completion(text))
}

/// A markup call of the mini pack's tool with `station`.
fn station_call(station: &str) -> String {
    format!("<function=station_reading><parameter=station>{station}</parameter></function>")
}

/// A skill folder `name` under `root/skills` whose `allowed-tools` is `tools`.
fn skill_granting(p: &Place, name: &str, tools: &str) -> String {
    p.write(
        &format!("skills/{name}/SKILL.md"),
        format!("---\nname: {name}\ndescription: Does {name}.\nallowed-tools: {tools}\n---\nCall the tool.\n"),
    )
}

/// Whether a process is alive (a zombie is not).
fn alive(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{}/stat", pid.trim()))
        .map(|s| !s.contains(") Z "))
        .unwrap_or(false)
}

/// `server_run` of the pack `pack` (a name or a path) instead of the mini pack.
fn server_run_pack(p: &Place, pack: &str, endpoint: &str, more: &[&str]) -> Vec<String> {
    let mut args = server_run(p, endpoint, more);
    args[2] = pack.to_string();
    args
}

/// A finished run of the shipped pack `pack`, from the place's own folder (no `packs/` there)
/// at a server whose every reply is `text`; its run id and the cache the pack was written to.
fn finished_shipped_run(p: &Place, pack: &str, text: &str) -> (String, PathBuf) {
    let cache = p.outside_the_checkout();
    let before = p.runs();
    let args = server_run_pack(p, pack, &completion_server(text), &["--limit", "1"]);
    let (code, output) = p.skilleval(&args);
    assert!(code == 0, "setup run failed ({code}): {output}");
    let run = p
        .runs()
        .into_iter()
        .find(|r| !before.contains(r))
        .expect("a new run folder");
    (run, cache)
}

/// The one folder of shipped packs under `cache`.
fn shipped_root_in(cache: &Path) -> PathBuf {
    std::fs::read_dir(cache)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("packs-")
        })
        .expect("the shipped packs were written out")
}

/// A mini pack fixture for `station`, hand-written with `status` and `body`.
fn station_fixture(p: &Place, file: &str, station: &str, status: u16, body: &str) -> String {
    let text = format!(
        "{{\n  \"tool\": \"station_reading\",\n  \"arguments\": {{\"station\": {}}},\n  \"recorded_from_live\": true,\n  \"status\": {status},\n  \"body\": {}\n}}\n",
        toml_string(station),
        toml_string(body)
    );
    p.write(&format!("mini/fixtures/station_reading/{file}"), &text);
    text
}

/// `--record all` of a call to Bury with the tool `script`, whose own failing answer ("No
/// station called 'Bury'", status 500) is on file; the file must be left as it is.
fn record_all_over_the_tools_own_answer(p: &Place, script: &str, timeout: u32) -> Vec<String> {
    p.mini_command_tool(script, timeout);
    let kept = station_fixture(p, "bury.json", "Bury", 500, "No station called 'Bury'");
    p.then(move |p| {
        let now =
            std::fs::read_to_string(p.mini.join("fixtures/station_reading/bury.json")).unwrap();
        (now == kept)
            .then_some(())
            .ok_or_else(|| format!("bury.json was replaced: {now}"))
    });
    server_run(
        p,
        &completion_server(&station_call("Bury")),
        &["--record", "all", "--limit", "1"],
    )
}

/// The mini corpus with its first sample given `extra` fields.
/// A copy of the shipped weather pack, which `check` passes, with its corpus and fixtures
/// named where the checkout keeps them; its folder.
fn weather_pack_copy(p: &Place) -> PathBuf {
    let checkout = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = p.root.join("weather_copy");
    copy_dir(&checkout.join("packs/weather"), &dir);
    let toml = dir.join("pack.toml");
    for (from, to) in [
        ("corpora/weather.jsonl", "corpus"),
        ("fixtures/weather", "fixtures"),
    ] {
        let relative = format!("{to} = \"../../{from}\"");
        edit(
            &toml,
            &relative,
            &format!("{to} = \"{}\"", checkout.join(from).display()),
        );
    }
    dir
}

/// The weather copy's skill with a `description` of `length` characters.
fn weather_skill_with_description(p: &Place, length: usize) -> PathBuf {
    let dir = weather_pack_copy(p);
    let skill = dir.join("skills/weather/SKILL.md");
    let text = std::fs::read_to_string(&skill).unwrap();
    let (_, rest) = text.split_once("\nversion:").unwrap();
    let long = "x".repeat(length);
    std::fs::write(
        &skill,
        format!("---\nname: weather\ndescription: {long}\nversion:{rest}"),
    )
    .unwrap();
    dir
}

fn first_sample_with(p: &Place, extra: serde_json::Value) {
    let corpus = p.mini.join("corpus.jsonl");
    let text = std::fs::read_to_string(&corpus).unwrap();
    let (first, rest) = text.split_once('\n').unwrap();
    let mut sample: serde_json::Value = serde_json::from_str(first).unwrap();
    for (key, value) in extra.as_object().unwrap() {
        sample[key] = value.clone();
    }
    std::fs::write(&corpus, format!("{sample}\n{rest}")).unwrap();
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
            name: "fixture whose arguments misspell the key argument",
            setup: |p| {
                p.write(
                    "mini/fixtures/station_reading/staton.json",
                    r#"{"tool": "station_reading", "arguments": {"staton": "Uccle"}, "status": 200, "body": "x"}"#,
                );
                p.run_mini(&[])
            },
            code: 1,
            words: &["staton.json", "field `arguments.staton`: not an argument of tool \"station_reading\" (it takes station)"],
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
        // ── issue 49, class 1: a child's broken pipe is an error of its call ──
        Case {
            name: "a command tool that exits without reading its input (/bin/false) is an answer, not a silent death",
            setup: |p| {
                edit(
                    &p.mini_toml(),
                    "kind = \"recorded\"",
                    "kind = \"command\"\ncommand = [\"/bin/false\"]",
                );
                edit(&p.mini_toml(), "skill = \"stations\"", "skill = \"stations\"\npreload = true\ncall_format = \"markup\"");
                // More than a pipe holds, so that the write meets the closed pipe.
                let station = "x".repeat(200_000);
                p.then(|p| {
                    let files = p.mini_fixture_files();
                    let recorded = files.iter().find(|f| f.starts_with("xxxx")).ok_or_else(|| format!("no recording: {files:?}"))?;
                    let text = std::fs::read_to_string(p.mini.join("fixtures/station_reading").join(recorded)).unwrap();
                    text.contains("\"status\": 500").then_some(()).ok_or_else(|| format!("recorded: {text}"))
                });
                server_run(p, &completion_server(&station_call(&station)), &["--record", "all", "--limit", "1"])
            },
            code: 0,
            words: &["run "],
        },
        Case {
            name: "init --mcp false: the server exits at once, and init says so",
            setup: |p| {
                let skill = skill_granting(p, "notes", "list_notes");
                s(&["init", "--skill", &skill, "--out", &p.path("pack"), "--mcp", "false"])
            },
            code: 1,
            words: &["mcp: false", "initialize", "exited"],
        },
        Case {
            name: "bench with SKILLEVAL_BFCL_PYTHON a program that is not Python",
            setup: |p| {
                p.set_env("SKILLEVAL_BFCL_PYTHON", "/bin/false");
                s(&["bench", "--bfcl", "multi_turn_base", "--limit", "1", "--model", NO_MODEL])
            },
            code: 1,
            words: &["BFCL helper", "/bin/false", "exited"],
        },
        // ── class 2: names and arguments become file names by one rule ──
        Case {
            name: "lint refuses a tool named ../../../x in allowed-tools",
            setup: |p| {
                skill_granting(p, "escape", "../../../x");
                s(&["lint", &p.path("skills")])
            },
            code: 1,
            words: &["allowed-tools", "not a tool name"],
        },
        Case {
            name: "init refuses a tool named ../../../x and writes nothing outside the pack",
            setup: |p| {
                let skill = skill_granting(p, "escape", "../../../x");
                p.write("x/.gitkeep", "the user's own file\n");
                p.then(|p| {
                    let kept = std::fs::read_to_string(p.root.join("x/.gitkeep")).unwrap();
                    (kept == "the user's own file\n" && !p.root.join("pack").exists())
                        .then_some(())
                        .ok_or_else(|| format!("the user's file holds {kept:?}, or pack/ was written"))
                });
                s(&["init", "--skill", &skill, "--out", &p.path("pack/escape"), "--recorded", "../../../x", "--args", "../../../x=q"])
            },
            code: 1,
            words: &["field `allowed-tools`", "not a tool name"],
        },
        Case {
            name: "a pack tool named ../../../x is refused where the pack loads",
            setup: |p| {
                edit(&p.mini_toml(), "name = \"station_reading\"", "name = \"../../../x\"");
                p.run_mini(&[])
            },
            code: 1,
            words: &["pack.toml:", "field `tools[0].name`", "not a tool name"],
        },
        Case {
            name: "a long model argument (300 bytes) is recorded under a short file name, no .partial left",
            setup: |p| {
                p.mini_command_tool("cat >/dev/null; echo '{\"reading\": \"4 °C\"}'", 10);
                p.then(|p| {
                    let files = p.mini_fixture_files();
                    let long: Vec<&String> = files.iter().filter(|f| f.len() > 100 || f.contains("partial")).collect();
                    let recorded = files.iter().filter(|f| f.starts_with("yyyy")).count();
                    (long.is_empty() && recorded == 1)
                        .then_some(())
                        .ok_or_else(|| format!("fixture files: {files:?}"))
                });
                let station = "y".repeat(300);
                server_run(p, &completion_server(&station_call(&station)), &["--record", "gaps", "--limit", "1"])
            },
            code: 0,
            words: &["run "],
        },
        Case {
            name: "bench --result-model .. is refused before anything is written",
            setup: |p| {
                s(&["bench", "--bfcl", "simple_python", "--result-model", "..", "--output", &p.path("out"), "--model", NO_MODEL])
            },
            code: 1,
            words: &["--result-model \"..\"", "not a result folder name"],
        },
        // ── class 3: a recording never replaces good data in silence ──
        Case {
            name: "--record all with a tool that dies of SIGSEGV keeps the good recording and says so",
            setup: |p| {
                p.mini_command_tool("kill -SEGV $$", 10);
                let good = std::fs::read_to_string(p.mini.join("fixtures/station_reading/uccle.json")).unwrap();
                p.then(move |p| {
                    let now = std::fs::read_to_string(p.mini.join("fixtures/station_reading/uccle.json")).unwrap();
                    (now == good).then_some(()).ok_or_else(|| format!("uccle.json was replaced: {now}"))
                });
                server_run(p, &completion_server(&station_call("Uccle")), &["--record", "all", "--limit", "1"])
            },
            code: 1,
            words: &["the live tool failed (status 500", "uccle.json (status 200) was kept"],
        },
        Case {
            name: "two calls of one run whose arguments fold to one key: the first recording stands",
            setup: |p| {
                p.mini_command_tool("cat", 10);
                // The two calls may run at once: whichever is recorded first stands, and the
                // other is said, never written over it.
                p.then(|p| {
                    let files = p.mini_fixture_files();
                    let zz: Vec<&String> = files.iter().filter(|f| f.starts_with("zz-top")).collect();
                    (zz.len() == 1).then_some(()).ok_or_else(|| format!("files for the key: {files:?}"))
                });
                let text = format!("{}{}", station_call("ZZ Top"), station_call("zz, top"));
                server_run(p, &completion_server(&text), &["--record", "all", "--limit", "1"])
            },
            code: 0,
            words: &["fold to the same key got another answer", "stands"],
        },
        Case {
            name: "two recording runs at once leave one file for one key",
            setup: |p| {
                p.mini_command_tool("sleep 0.5; cat", 10);
                let endpoint = completion_server(&station_call("Quux"));
                let args = server_run(p, &endpoint, &["--record", "gaps", "--limit", "1"]);
                let other = Command::new(env!("CARGO_BIN_EXE_skilleval"))
                    .args(&args)
                    .current_dir(env!("CARGO_MANIFEST_DIR"))
                    .stdin(std::process::Stdio::null())
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::null())
                    .spawn()
                    .unwrap();
                p.background.borrow_mut().push(other);
                p.then(|p| {
                    let files = p.mini_fixture_files();
                    let found = files.iter().filter(|f| f.starts_with("quux")).count();
                    (found == 1).then_some(()).ok_or_else(|| format!("files: {files:?}"))
                });
                args
            },
            code: 0,
            words: &["run "],
        },
        Case {
            name: "init --out into a folder that holds fixtures keeps the user's files",
            setup: |p| {
                let skill = skill_granting(p, "notes", "list_notes");
                p.write("pack/fixtures/list_notes/.gitkeep", "mine\n");
                const MINE: &str = "{\"tool\": \"list_notes\", \"arguments\": {\"folder\": \"a\"}, \"status\": 200, \"body\": \"kept\"}\n";
                p.write("pack/fixtures/list_notes/a.json", MINE);
                p.then(|p| {
                    let keep = std::fs::read_to_string(p.root.join("pack/fixtures/list_notes/.gitkeep")).unwrap();
                    let a = std::fs::read_to_string(p.root.join("pack/fixtures/list_notes/a.json")).unwrap();
                    (keep == "mine\n" && a == MINE).then_some(()).ok_or_else(|| format!("emptied: {keep:?} {a:?}"))
                });
                s(&["init", "--skill", &skill, "--out", &p.path("pack"), "--recorded", "list_notes", "--args", "list_notes=folder"])
            },
            code: 0,
            words: &["pack.toml"],
        },
        // ── class 4: nothing waits forever ──
        Case {
            name: "a FIFO as manifest.json: report",
            setup: |p| {
                let dir = p.output.join("20260101-000000-mini");
                p.write("output/20260101-000000-mini/journal.jsonl", "");
                mkfifo(&dir.join("manifest.json"));
                s(&["report", "20260101-000000-mini", "--output", &p.output.display().to_string()])
            },
            code: 1,
            words: &["manifest.json", "FIFO"],
        },
        Case {
            name: "a FIFO as manifest.json: stamp",
            setup: |p| {
                let dir = p.output.join("20260101-000000-mini");
                p.write("output/20260101-000000-mini/journal.jsonl", "");
                mkfifo(&dir.join("manifest.json"));
                s(&["stamp", "20260101-000000-mini", "--output", &p.output.display().to_string()])
            },
            code: 1,
            words: &["manifest.json", "FIFO"],
        },
        Case {
            name: "a FIFO as manifest.json: merge",
            setup: |p| {
                let dir = p.output.join("20260101-000000-mini");
                p.write("output/20260101-000000-mini/journal.jsonl", "");
                mkfifo(&dir.join("manifest.json"));
                s(&["merge", &dir.display().to_string(), &dir.display().to_string(), "--output", &p.path("merged")])
            },
            code: 1,
            words: &["manifest.json", "FIFO"],
        },
        Case {
            name: "a FIFO as manifest.json: --resume",
            setup: |p| {
                let dir = p.output.join("20260101-000000-mini");
                p.write("output/20260101-000000-mini/journal.jsonl", "");
                mkfifo(&dir.join("manifest.json"));
                p.run_mini(&["--resume", "20260101-000000-mini"])
            },
            code: 1,
            words: &["manifest.json", "FIFO"],
        },
        Case {
            name: "a FIFO as --variant",
            setup: |p| {
                mkfifo(&p.root.join("v.md"));
                p.run_mini(&["--variant", &p.path("v.md")])
            },
            code: 1,
            words: &["v.md", "FIFO"],
        },
        Case {
            name: "a FIFO as --corpus",
            setup: |p| {
                mkfifo(&p.root.join("c.jsonl"));
                p.run_mini(&["--corpus", &p.path("c.jsonl")])
            },
            code: 1,
            words: &["c.jsonl", "FIFO"],
        },
        Case {
            name: "a command tool whose background child keeps stdout open obeys timeout_seconds, and the child is ended",
            setup: |p| {
                p.mini_command_tool(&format!("sleep 300 & echo $! > {}; echo started", p.path("bg.pid")), 1);
                let started = Instant::now();
                p.then(move |p| {
                    let pid = std::fs::read_to_string(p.root.join("bg.pid")).unwrap_or_default();
                    if started.elapsed() > Duration::from_secs(60) {
                        return Err(format!("took {:?}", started.elapsed()));
                    }
                    (!pid.trim().is_empty() && !alive(&pid)).then_some(()).ok_or_else(|| format!("the background child {pid:?} outlived the call"))
                });
                server_run(p, &completion_server(&station_call("Slow")), &["--record", "gaps", "--limit", "1"])
            },
            code: 0,
            words: &["run "],
        },
        Case {
            name: "an MCP server that prints non-JSON gets a clear error at once",
            setup: |p| {
                let skill = skill_granting(p, "notes", "list_notes");
                let started = Instant::now();
                p.then(move |_| {
                    (started.elapsed() < Duration::from_secs(30)).then_some(()).ok_or_else(|| format!("took {:?}", started.elapsed()))
                });
                s(&["init", "--skill", &skill, "--out", &p.path("pack"), "--mcp", "sh -c 'while true; do echo not json; sleep 0.1; done'"])
            },
            code: 1,
            words: &["not json", "not a JSON-RPC message"],
        },
        Case {
            name: "a FIFO as --model",
            setup: |p| {
                mkfifo(&p.root.join("m.gguf"));
                s(&["generate", "--prompt", "hi", "--model", &p.path("m.gguf")])
            },
            code: 1,
            words: &["m.gguf", "FIFO"],
        },
        Case {
            name: "a FIFO as --junit, before the model loads",
            setup: |p| {
                mkfifo(&p.root.join("j.xml"));
                p.run_mini(&["--junit", &p.path("j.xml")])
            },
            code: 1,
            words: &["--junit", "j.xml", "is a FIFO or a socket"],
        },
        Case {
            name: "a FIFO named like a fixture is refused, not skipped",
            setup: |p| {
                mkfifo(&p.mini.join("fixtures/station_reading/pipe.json"));
                p.run_mini(&[])
            },
            code: 1,
            words: &["pipe.json", "FIFO"],
        },
        // ── class 5: no panic in a parser ──
        Case {
            name: "--budget 99999999999999999999h",
            setup: |p| p.run_mini(&["--sequential", "--repeats", "2", "--budget", "99999999999999999999h"]),
            code: 2,
            words: &["--budget", "at most a year"],
        },
        Case {
            name: "--request-timeout 18446744073709551615",
            setup: |p| server_run(p, "http://127.0.0.1:1", &["--request-timeout", "18446744073709551615"]),
            code: 2,
            words: &["--request-timeout", "at most 86400"],
        },
        // ── class 6: bad inputs refused before they cost anything ──
        Case {
            name: "key_arguments naming an argument the tool lacks",
            setup: |p| {
                edit(&p.mini_toml(), "key_arguments = [\"station\"]", "key_arguments = [\"stattion\"]");
                p.run_mini(&[])
            },
            code: 1,
            words: &["field `tools[0].key_arguments`", "\"stattion\" is not an argument"],
        },
        Case {
            name: "a tool name with a space",
            setup: |p| {
                edit(&p.mini_toml(), "name = \"station_reading\"", "name = \"station reading\"");
                p.run_mini(&[])
            },
            code: 1,
            words: &["field `tools[0].name`", "no spaces"],
        },
        Case {
            name: "a tool name over 64 characters",
            setup: |p| {
                let long = format!("name = \"{}\"", "s".repeat(65));
                edit(&p.mini_toml(), "name = \"station_reading\"", &long);
                p.run_mini(&[])
            },
            code: 1,
            words: &["field `tools[0].name`", "at most 64"],
        },
        Case {
            name: "a tool named load_skill, which a built-in shadows",
            setup: |p| {
                edit(&p.mini_toml(), "name = \"station_reading\"", "name = \"load_skill\"");
                p.run_mini(&[])
            },
            code: 1,
            words: &["field `tools[0].name`", "built-in tool"],
        },
        Case {
            name: "init --command x=/no/such/program",
            setup: |p| {
                let skill = skill_granting(p, "notes", "list_notes");
                s(&["init", "--skill", &skill, "--out", &p.path("pack"), "--command", "list_notes=/no/such/program", "--args", "list_notes=folder"])
            },
            code: 1,
            words: &["--command list_notes=/no/such/program", "no program"],
        },
        Case {
            name: "a 60 MB skill body fails check",
            setup: |p| {
                let mut text = String::from("---\nname: stations\ndescription: Station readings.\n---\n");
                text.push_str(&"Readings. ".repeat(6_000_000));
                p.write("mini/skills/stations/SKILL.md", text);
                s(&["check", "--pack", &p.mini.display().to_string()])
            },
            code: 1,
            words: &["SKILL.md", "too large for a skill"],
        },
        Case {
            name: "a sequential run resumed with another --repeats",
            setup: |p| {
                let run = p.finished_run("It is mild.", &["--sequential", "--repeats", "2", "--limit", "2"]);
                server_run(p, &completion_server("It is mild."), &["--sequential", "--repeats", "3", "--limit", "2", "--resume", &run])
            },
            code: 1,
            words: &["field `repeats`", "--repeats 2"],
        },
        Case {
            name: "merge refuses a shard line whose passed is flipped against its failed laws",
            setup: |p| {
                let a = p.finished_run("It is mild.", &["--shard", "1/2"]);
                let b = p.finished_run("It is mild.", &["--shard", "2/2"]);
                let journal = p.output.join(&a).join("journal.jsonl");
                let text = std::fs::read_to_string(&journal).unwrap();
                let line = text.lines().find(|l| l.contains("\"passed\":false")).expect("a failed unit").to_string();
                let flipped = line.replace("\"passed\":false", "\"passed\":true");
                std::fs::write(&journal, text.replace(&line, &flipped)).unwrap();
                s(&["merge", &p.output.join(&a).display().to_string(), &p.output.join(&b).display().to_string(), "--output", &p.path("merged")])
            },
            code: 1,
            words: &["journal.jsonl:", "field `judgement.passed`"],
        },
        Case {
            name: "report --rejudge of a run still running",
            setup: |p| {
                let run = p.finished_run("It is mild.", &[]);
                let lock = File::options().write(true).open(p.output.join(&run).join("run.lock")).unwrap();
                lock.try_lock().unwrap();
                std::mem::forget(lock);
                s(&["report", &run, "--output", &p.output.display().to_string(), "--rejudge", "--pack", &p.mini.display().to_string()])
            },
            code: 1,
            words: &["--rejudge", "still running"],
        },
        Case {
            name: "stamping the same run twice leaves the version as it is",
            setup: |p| {
                let run = p.finished_run("It is mild.", &[]);
                let out = p.output.display().to_string();
                let skill = p.mini.join("skills/stations/SKILL.md");
                let shown = skill.display().to_string();
                let (code, text) = p.skilleval(&s(&["stamp", &run, "--output", &out, "--variant", &shown]));
                assert_eq!(code, 0, "{text}");
                let first = std::fs::read_to_string(&skill).unwrap();
                p.then(move |_| {
                    let now = std::fs::read_to_string(&skill).unwrap();
                    (now == first).then_some(()).ok_or_else(|| "the second stamp changed the file".to_string())
                });
                s(&["stamp", &run, "--output", &out, "--variant", &shown])
            },
            code: 1,
            words: &["already carries the stamp of run"],
        },
        Case {
            name: "fixtures RUN --pack of another pack",
            setup: |p| {
                let run = p.finished_run(&station_call("Nowhere"), &[]);
                s(&["fixtures", &run, "--output", &p.output.display().to_string(), "--pack", &p.weather.display().to_string()])
            },
            code: 1,
            words: &["--pack", "is not the run's pack"],
        },
        Case {
            name: "an --output that cannot be written, before the model loads",
            setup: |p| {
                let mut args = p.run_mini(&[]);
                let at = args.iter().position(|a| a == "--output").unwrap();
                args[at + 1] = "/proc/self".into();
                args
            },
            code: 1,
            words: &["--output /proc/self", "cannot write in it"],
        },
        Case {
            name: "report.md a symlink to a user's file: report replaces the link, the file is kept",
            setup: |p| {
                let run = p.finished_run("It is mild.", &[]);
                let mine = p.write("mine.md", "mine");
                for name in ["report.md", "report.html", "summary.csv"] {
                    let at = p.output.join(&run).join(name);
                    std::fs::remove_file(&at).unwrap();
                    std::os::unix::fs::symlink(&mine, &at).unwrap();
                }
                p.then(move |_| {
                    let now = std::fs::read_to_string(&mine).unwrap();
                    (now == "mine").then_some(()).ok_or_else(|| format!("the user's file now holds {} bytes of report", now.len()))
                });
                s(&["report", &run, "--output", &p.output.display().to_string()])
            },
            code: 0,
            words: &[],
        },
        Case {
            name: "score: a reference_call naming a tool the pack lacks, before the model",
            setup: |p| {
                let corpus = p.mini.join("corpus.jsonl");
                let first = std::fs::read_to_string(&corpus).unwrap().lines().next().unwrap().to_string();
                let mut sample: serde_json::Value = serde_json::from_str(&first).unwrap();
                sample["reference_call"] = serde_json::json!({"tool": "no_such_tool", "arguments": {}});
                std::fs::write(&corpus, format!("{sample}\n")).unwrap();
                let out = p.output.display().to_string();
                s(&["score", "--pack", &p.mini.display().to_string(), "--output", &out, "--model", NO_MODEL])
            },
            code: 1,
            words: &["reference_call", "\"no_such_tool\" is not a tool of the pack"],
        },
        Case {
            name: "--ctx 0, at the server backend that never reads it",
            setup: |p| {
                let mut args = run_at_server(p, 200, completion("It is mild."));
                args.extend(s(&["--ctx", "0"]));
                args
            },
            code: 2,
            words: &["--ctx", "0 is not in 256..="],
        },
        Case {
            name: "lint: a skill folder whose SKILL.md is a FIFO is named, not passed over",
            setup: |p| {
                mkfifo(&p.root.join("skills/piped/SKILL.md"));
                s(&["lint", &p.path("skills")])
            },
            code: 1,
            words: &["piped/SKILL.md", "FIFO"],
        },
        Case {
            name: "doctor: a pack folder whose pack.toml is a FIFO is named, not passed over",
            setup: |p| {
                mkfifo(&p.root.join("packs/piped/pack.toml"));
                s(&["doctor", "--packs-dir", &p.path("packs"), "--model", NO_MODEL])
            },
            code: 1,
            words: &["piped/pack.toml", "FIFO"],
        },
        Case {
            name: "check --pack a relative folder whose pack.toml is a FIFO: named, not sought under packs/",
            setup: |p| {
                mkfifo(&p.root.join("piped/pack.toml"));
                let up = "../".repeat(Path::new(env!("CARGO_MANIFEST_DIR")).components().count() - 1);
                s(&["check", "--pack", &format!("{up}{}", p.path("piped").trim_start_matches('/'))])
            },
            code: 1,
            words: &["piped/pack.toml", "FIFO"],
        },
        Case {
            name: "bench --limit 0",
            setup: |_| s(&["bench", "--bfcl", "simple_python", "--limit", "0", "--model", NO_MODEL]),
            code: 1,
            words: &["--limit", "at least 1"],
        },
        Case {
            name: "bench --max-tokens 0",
            setup: |_| s(&["bench", "--bfcl", "simple_python", "--max-tokens", "0", "--model", NO_MODEL]),
            code: 1,
            words: &["--max-tokens", "at least 1"],
        },
        Case {
            name: "bench --temperature NaN",
            setup: |_| s(&["bench", "--bfcl", "simple_python", "--temperature", "NaN", "--model", NO_MODEL]),
            code: 1,
            words: &["--temperature", "NaN"],
        },
        Case {
            name: "chat --temperature NaN, before the model",
            setup: |p| s(&["chat", "--pack", &p.mini.display().to_string(), "--prompt", "hi", "--temperature", "NaN", "--model", NO_MODEL]),
            code: 1,
            words: &["--temperature", "NaN"],
        },
        Case {
            name: "chat --prompt empty, before the model",
            setup: |p| s(&["chat", "--pack", &p.mini.display().to_string(), "--prompt", " ", "--model", NO_MODEL]),
            code: 1,
            words: &["--prompt", "empty"],
        },
        Case {
            name: "a BFCL helper that never answers: a time-out, and its process ended",
            setup: |p| {
                let pid_file = p.root.join("helper.pid");
                let helper = p.write("helper.sh", format!("#!/bin/sh\necho $$ > {}\nexec sleep 600\n", pid_file.display()));
                let mode = std::os::unix::fs::PermissionsExt::from_mode(0o755);
                std::fs::set_permissions(&helper, mode).unwrap();
                p.set_env("SKILLEVAL_BFCL_PYTHON", &helper);
                p.then(move |_| {
                    let pid = std::fs::read_to_string(&pid_file).map_err(|e| format!("the helper never started: {e}"))?;
                    (!alive(pid.trim())).then_some(()).ok_or_else(|| format!("the helper {} outlived bench", pid.trim()))
                });
                let endpoint = completion_server("[]");
                s(&["bench", "--bfcl", "multi_turn_base", "--mode", "harness", "--limit", "1", "--backend", "openai", "--endpoint", &endpoint, "--output", &p.output.display().to_string()])
            },
            code: 1,
            words: &["BFCL helper", "no answer within 30 s"],
        },
        Case {
            name: "judge-cases.jsonl a folder: check refuses it, not reads it as missing",
            setup: |p| {
                std::fs::create_dir_all(p.mini.join("judge-cases.jsonl")).unwrap();
                s(&["check", "--pack", &p.mini.display().to_string()])
            },
            code: 1,
            words: &["judge-cases.jsonl", "it is a folder"],
        },
        Case {
            name: "judge-cases.jsonl a FIFO: score refuses it before the model",
            setup: |p| {
                mkfifo(&p.mini.join("judge-cases.jsonl"));
                let out = p.output.display().to_string();
                s(&["score", "--pack", &p.mini.display().to_string(), "--output", &out, "--model", NO_MODEL])
            },
            code: 1,
            words: &["judge-cases.jsonl", "FIFO"],
        },
        // ── Reliability IV: the shipped packs' cache, and nothing lost or accepted in silence ──
        Case {
            name: "stamp of a run of a shipped pack never writes into the cache",
            setup: |p| {
                let (run, cache) = finished_shipped_run(p, "flights", "It is on time.");
                let skill = shipped_root_in(&cache).join("packs/flights/skills/flight-status/SKILL.md");
                let before = std::fs::read_to_string(&skill).unwrap();
                p.then(move |_| {
                    let now = std::fs::read_to_string(&skill).unwrap();
                    (now == before).then_some(()).ok_or_else(|| "the cached SKILL.md was stamped".to_string())
                });
                let shown = shipped_root_in(&cache).join("packs/flights/skills/flight-status/SKILL.md");
                s(&["stamp", &run, "--output", &p.output.display().to_string(), "--variant", &shown.display().to_string()])
            },
            code: 1,
            words: &["would write into the cache of the shipped packs", "cp -r", "--into FILE"],
        },
        Case {
            name: "stamp --into a copy of a shipped pack's skill stamps the copy alone",
            setup: |p| {
                let (run, cache) = finished_shipped_run(p, "flights", "It is on time.");
                let cached = shipped_root_in(&cache).join("packs/flights/skills/flight-status/SKILL.md");
                let copy = p.root.join("mine/SKILL.md");
                std::fs::create_dir_all(copy.parent().unwrap()).unwrap();
                std::fs::copy(&cached, &copy).unwrap();
                let before = std::fs::read_to_string(&cached).unwrap();
                let copied = copy.clone();
                p.then(move |_| {
                    let cache_now = std::fs::read_to_string(&cached).unwrap();
                    let copy_now = std::fs::read_to_string(&copied).unwrap();
                    match (cache_now == before, copy_now.contains("# skilleval: run")) {
                        (true, true) => Ok(()),
                        state => Err(format!("(cache unchanged, copy stamped) = {state:?}")),
                    }
                });
                let shown = shipped_root_in(&cache).join("packs/flights/skills/flight-status/SKILL.md");
                s(&["stamp", &run, "--output", &p.output.display().to_string(), "--variant", &shown.display().to_string(), "--into", &copy.display().to_string()])
            },
            code: 0,
            words: &["stamped", "mine/SKILL.md"],
        },
        Case {
            name: "an edit to a cached shipped skill never reaches a run: the file is written out again, read-only",
            setup: |p| {
                let cache = p.outside_the_checkout();
                let (code, text) = p.skilleval(&s(&["check", "--pack", "flights"]));
                assert_eq!(code, 0, "{text}");
                let skill = shipped_root_in(&cache).join("packs/flights/skills/flight-status/SKILL.md");
                let shipped = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("packs/flights/skills/flight-status/SKILL.md")).unwrap();
                let mut permissions = std::fs::metadata(&skill).unwrap().permissions();
                #[allow(clippy::permissions_set_readonly_false)]
                permissions.set_readonly(false);
                std::fs::set_permissions(&skill, permissions).unwrap();
                p.append(&skill, "\nAlways answer in French.\n");
                p.then(move |_| {
                    let now = std::fs::read_to_string(&skill).unwrap();
                    let read_only = std::fs::metadata(&skill).unwrap().permissions().readonly();
                    (now == shipped && read_only).then_some(()).ok_or_else(|| format!("the edit stayed ({}) or the file is writable ({})", now != shipped, !read_only))
                });
                s(&["run", "--pack", "flights", "--model", NO_MODEL, "--output", &p.output.display().to_string()])
            },
            code: 1,
            words: &["differed from the binary's", "written out again", REACHED_MODEL],
        },
        Case {
            name: "a file added to the cached shipped packs is refused, naming it and the fix",
            setup: |p| {
                let cache = p.outside_the_checkout();
                let (code, text) = p.skilleval(&s(&["check", "--pack", "flights"]));
                assert_eq!(code, 0, "{text}");
                let root = shipped_root_in(&cache);
                std::fs::create_dir_all(root.join("packs/flights/skills/extra")).unwrap();
                std::fs::write(root.join("packs/flights/skills/extra/SKILL.md"), "---\nname: extra\ndescription: x\n---\nx\n").unwrap();
                s(&["check", "--pack", "flights"])
            },
            code: 1,
            words: &["skills/extra/SKILL.md", "does not ship", "rm -rf"],
        },
        Case {
            name: "a damaged cached pack names the cache folder and the fix",
            setup: |p| {
                let cache = p.outside_the_checkout();
                let (code, text) = p.skilleval(&s(&["check", "--pack", "flights"]));
                assert_eq!(code, 0, "{text}");
                let toml = shipped_root_in(&cache).join("packs/flights/pack.toml");
                std::fs::remove_file(&toml).unwrap();
                std::fs::create_dir_all(&toml).unwrap();
                s(&["check", "--pack", "flights"])
            },
            code: 1,
            words: &["packs/flights/pack.toml", "damaged", "rm -rf {root}/cache/packs-"],
        },
        Case {
            name: "--record with a shipped pack never records into the cache",
            setup: |p| {
                p.outside_the_checkout();
                s(&["run", "--pack", "flights", "--record", "gaps", "--model", NO_MODEL, "--output", &p.output.display().to_string()])
            },
            code: 1,
            words: &["--record would write into the cache of the shipped packs", "--pack my-packs/packs/flights"],
        },
        Case {
            name: "report --rejudge of a run whose pack folder moved: no shipped pack of the same name in its place",
            setup: |p| {
                let mine = p.root.join("myflights");
                copy_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("packs/flights"), &mine);
                let (run, _) = finished_shipped_run(p, &mine.display().to_string(), "It is on time.");
                std::fs::rename(&mine, p.root.join("moved")).unwrap();
                s(&["report", &run, "--output", &p.output.display().to_string(), "--rejudge"])
            },
            code: 1,
            words: &["myflights/pack.toml, which is gone", "--pack"],
        },
        Case {
            name: "report --rejudge --pack of another pack: not the run's pack",
            setup: |p| {
                let run = p.finished_run("It is mild.", &[]);
                s(&["report", &run, "--output", &p.output.display().to_string(), "--rejudge", "--pack", &p.weather.display().to_string()])
            },
            code: 1,
            words: &["--pack", "is not the run's pack", "ran pack \"mini\""],
        },
        Case {
            name: "a command tool whose background child holds stdout: its answer is taken when it exits",
            setup: |p| {
                p.mini_command_tool("sleep 30 & echo 'Bgchild: 12 °C'", 3);
                p.then(|p| {
                    let files = p.mini_fixture_files();
                    let recorded = files.iter().find(|f| f.starts_with("bgchild")).ok_or_else(|| format!("no recording: {files:?}"))?;
                    let text = std::fs::read_to_string(p.mini.join("fixtures/station_reading").join(recorded)).unwrap();
                    (text.contains("\"status\": 200") && text.contains("12 °C")).then_some(()).ok_or_else(|| format!("recorded: {text}"))
                });
                server_run(p, &completion_server(&station_call("Bgchild")), &["--record", "gaps", "--limit", "1"])
            },
            code: 0,
            words: &["run "],
        },
        Case {
            name: "--record all: a tool's own failing answer on file is not replaced by its death by a signal",
            setup: |p| record_all_over_the_tools_own_answer(p, "kill -SEGV $$", 10),
            code: 1,
            words: &["killed by signal 11", "bury.json (status 500) was kept"],
        },
        Case {
            name: "--record all: an answer on file is not replaced by a time-out",
            setup: |p| record_all_over_the_tools_own_answer(p, "sleep 20", 1),
            code: 1,
            words: &["timed out after 1 s", "bury.json (status 500) was kept"],
        },
        Case {
            name: "run --json > /dev/full exits 1 with one line: a failed write is no closed pipe",
            setup: |p| {
                *p.stdout_to.borrow_mut() = Some(PathBuf::from("/dev/full"));
                server_run(p, &completion_server("It is mild."), &["--json", "--limit", "1"])
            },
            code: 1,
            words: &["stdout: cannot write", "No space left on device"],
        },
        Case {
            name: "check: a reference_turns call with an argument the tool does not take",
            setup: |p| {
                first_sample_with(p, serde_json::json!({
                    "user": {"replies": [{"on": "question", "say": "Oslo"}], "turns": 1},
                    "reference_turns": [{"calls": [{"tool": "station_reading", "arguments": {"station": "Oslo Blindern", "units": "C"}}], "reply": "It is 3 °C at Oslo Blindern."}]
                }));
                s(&["check", "--pack", &p.mini.display().to_string()])
            },
            code: 1,
            words: &["corpus.jsonl", "line 1", "field `reference_turns[0].calls[0]`", "argument \"units\" is not one the tool takes"],
        },
        Case {
            name: "score: a reference_turns call with an argument of the wrong type, before the model",
            setup: |p| {
                first_sample_with(p, serde_json::json!({
                    "user": {"replies": [{"on": "question", "say": "Oslo"}], "turns": 1},
                    "reference_turns": [{"calls": [{"tool": "station_reading", "arguments": {"station": {"name": "Oslo"}}}], "reply": "It is 3 °C."}]
                }));
                let out = p.output.display().to_string();
                s(&["score", "--pack", &p.mini.display().to_string(), "--output", &out, "--model", NO_MODEL])
            },
            code: 1,
            words: &["field `reference_turns[0].calls[0]`", "Argument \"station\" must be"],
        },
        Case {
            name: "read_tool_output(offset=-5) is an error the model sees, not a read from the start",
            setup: |p| {
                edit(&p.mini_toml(), "skill = \"stations\"\n", "skill = \"stations\"\nlong_tool_output = \"spill\"\ncall_format = \"markup\"\n");
                p.then(|p| {
                    let run = p.runs().pop().ok_or("no run folder")?;
                    let journal = std::fs::read_to_string(p.output.join(run).join("journal.jsonl")).unwrap_or_default();
                    journal.contains("offset must be a whole number from 0").then_some(()).ok_or_else(|| "the journal holds no error about the offset".to_string())
                });
                let call = "<function=read_tool_output><parameter=file>tool-output-1.txt</parameter><parameter=offset>-5</parameter></function>";
                server_run(p, &completion_server(call), &["--limit", "1"])
            },
            code: 0,
            words: &["run "],
        },
        Case {
            name: "two question replies under turns: 1 are refused: the second can never be said",
            setup: |p| {
                first_sample_with(p, serde_json::json!({
                    "user": {"replies": [{"on": "question", "say": "Oslo"}, {"on": "question", "say": "Blindern"}], "turns": 1}
                }));
                s(&["check", "--pack", &p.mini.display().to_string()])
            },
            code: 1,
            words: &["corpus.jsonl:1", "field `user.replies[1]`", "can never be said"],
        },
        Case {
            name: "a 2,000,000-character server reply in a pack of 64 tokens a round is cut, with a warning",
            setup: |p| {
                p.then(|p| {
                    let run = p.runs().pop().ok_or("no run folder")?;
                    let size = std::fs::metadata(p.output.join(run).join("journal.jsonl")).map(|m| m.len()).unwrap_or(0);
                    (size > 0 && size < 200_000).then_some(()).ok_or_else(|| format!("journal.jsonl holds {size} bytes"))
                });
                server_run(p, &completion_server(&"x".repeat(2_000_000)), &["--limit", "1"])
            },
            code: 0,
            words: &["held 2000000 characters", "is cut to 8192 characters"],
        },
        Case {
            name: "tool_output_chars too large for TOML names the field and the limit",
            setup: |p| {
                edit(&p.mini_toml(), "max_tokens_per_round = 64", "max_tokens_per_round = 64\ntool_output_chars = 99999999999999999999");
                s(&["check", "--pack", &p.mini.display().to_string()])
            },
            code: 1,
            words: &["pack.toml:", "field `budgets.tool_output_chars`", "at most 1000000"],
        },
        Case {
            name: "tool_output_chars past its limit names the field and the limit",
            setup: |p| {
                edit(&p.mini_toml(), "max_tokens_per_round = 64", "max_tokens_per_round = 64\ntool_output_chars = 5000000000");
                s(&["check", "--pack", &p.mini.display().to_string()])
            },
            code: 1,
            words: &["field `budgets.tool_output_chars`", "more than 1000000"],
        },
        Case {
            name: "--request-timeout too large for any integer names the flag and the limit",
            setup: |p| server_run(p, "http://127.0.0.1:1", &["--request-timeout", "99999999999999999999999"]),
            code: 2,
            words: &["--request-timeout", "86400 (a day)"],
        },
        Case {
            name: "init --out /dev/null says it is no folder",
            setup: |p| {
                let skill = skill_granting(p, "notes", "list_notes");
                s(&["init", "--skill", &skill, "--out", "/dev/null", "--recorded", "list_notes", "--args", "list_notes=folder"])
            },
            code: 1,
            words: &["--out /dev/null", "not a folder"],
        },
        // ── Reliability V: chat templates, judge cases, front matter and pack files ──
        Case {
            name: "a judge case calling a tool the pack does not offer is named by check",
            setup: |p| {
                let dir = weather_pack_copy(p);
                let cases = dir.join("judge-cases.jsonl");
                let mut text = std::fs::read_to_string(&cases).unwrap();
                text.push_str(r#"{"id": "unoffered", "prompt_id": "plain-001", "calls": [{"tool": "weather_lokup", "arguments": {"location": "Madrid"}}], "reply": "I could not look it up.", "verdicts": {}}"#);
                text.push('\n');
                std::fs::write(&cases, text).unwrap();
                s(&["check", "--pack", &dir.display().to_string()])
            },
            code: 0,
            words: &["judge-cases.jsonl:", ": field `calls[0].tool`: \"weather_lokup\" is no tool of the pack", "agree"],
        },
        Case {
            name: "judge-cases.jsonl with invalid UTF-8 names the line",
            setup: |p| {
                std::fs::write(
                    p.mini.join("judge-cases.jsonl"),
                    b"{\"id\": \"c1\", \"prompt_id\": \"lookup-oslo\", \"reply\": \"ok\", \"verdicts\": {}}\n{\"id\": \"c2\", \"prompt_id\": \"lookup-oslo\", \"reply\": \"\xff\", \"verdicts\": {}}\n",
                )
                .unwrap();
                s(&["check", "--pack", &p.mini.display().to_string()])
            },
            code: 1,
            words: &["judge-cases.jsonl:2: not UTF-8 text"],
        },
        Case {
            name: "pack.toml with invalid UTF-8 names the line",
            setup: |p| {
                let text = std::fs::read_to_string(p.mini_toml()).unwrap();
                let (head, tail) = text.split_once("You are").unwrap();
                std::fs::write(p.mini_toml(), [head.as_bytes(), b"\xff", tail.as_bytes()].concat()).unwrap();
                p.run_mini(&[])
            },
            code: 1,
            words: &["pack.toml:8: not UTF-8 text"],
        },
        Case {
            name: "a 5 MB description in a SKILL.md is named by check",
            setup: |p| {
                let dir = weather_skill_with_description(p, 5_000_000);
                s(&["check", "--pack", &dir.display().to_string()])
            },
            code: 0,
            words: &["SKILL.md:3: error: field `description`: is 5000000 characters; the format allows 1024"],
        },
        Case {
            name: "a 5 MB description in a SKILL.md is named by score before the model",
            setup: |p| {
                let dir = weather_skill_with_description(p, 5_000_000);
                let out = p.output.display().to_string();
                s(&["score", "--pack", &dir.display().to_string(), "--output", &out, "--model", NO_MODEL])
            },
            code: 1,
            words: &["SKILL.md:3: error: field `description`: is 5000000 characters", REACHED_MODEL],
        },
        Case {
            name: "an empty front matter: lint refuses it for its missing name",
            setup: |p| {
                let variant = p.write("v.md", "---\n---\nCall station_reading with the station's name.\n");
                s(&["lint", &variant])
            },
            code: 1,
            words: &["v.md:1: error: field `name`: missing", "field `description`: missing"],
        },
        Case {
            name: "an empty front matter: score refuses it as lint does, before the model",
            setup: |p| {
                let variant = p.write("v.md", "---\n---\nCall station_reading with the station's name.\n");
                let out = p.output.display().to_string();
                s(&["score", "--pack", &p.mini.display().to_string(), "--variant", &variant, "--output", &out, "--model", NO_MODEL])
            },
            code: 1,
            words: &["v.md:2: front matter field `name` is missing"],
        },
        Case {
            name: "an empty front matter in the pack's SKILL.md: check refuses it",
            setup: |p| {
                std::fs::write(p.mini.join("skills/stations/SKILL.md"), "---\n---\nCall station_reading.\n").unwrap();
                s(&["check", "--pack", &p.mini.display().to_string()])
            },
            code: 1,
            words: &["SKILL.md:2: front matter field `name` is missing"],
        },
    ]
}

#[test]
fn every_case_gets_its_exit_code_and_its_words() {
    let cases = cases();
    assert!(cases.len() >= 60, "{} cases", cases.len());
    let mut failures = Vec::new();
    let mut left_to_full_tier = Vec::new();
    for case in &cases {
        let place = Place::new();
        let args = (case.setup)(&place);
        if ON_REAL_MODEL.take() && !cfg!(feature = "full-tier") {
            left_to_full_tier.push(case.name);
            continue;
        }
        let stdout = match place.stdout_to.borrow().as_ref() {
            Some(path) => std::process::Stdio::from(
                File::options()
                    .write(true)
                    .open(path)
                    .expect("the case's stdout opens"),
            ),
            None => std::process::Stdio::piped(),
        };
        let mut child = Command::new(env!("CARGO_BIN_EXE_skilleval"))
            .args(&args)
            .envs(place.env.borrow().iter().cloned())
            .current_dir(place.cwd())
            .stdin(std::process::Stdio::null())
            .stdout(stdout)
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("the binary runs");
        // A case that hangs fails instead of holding the test forever.
        let started = Instant::now();
        let mut hung = false;
        while child.try_wait().unwrap().is_none() {
            if started.elapsed() > CASE_TIME_LIMIT {
                let _ = child.kill();
                hung = true;
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let out = child.wait_with_output().unwrap();
        for mut other in place.background.borrow_mut().drain(..) {
            let _ = other.wait();
        }
        let stderr = String::from_utf8_lossy(&out.stderr);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let text = format!("{stderr}{stdout}");
        let code = out.status.code().unwrap_or(-1);
        let mut wrong = Vec::new();
        if hung {
            wrong.push(format!("hung: killed after {CASE_TIME_LIMIT:?}"));
        }
        for check in place.after.borrow().iter() {
            if let Err(e) = check(&place) {
                wrong.push(e);
            }
        }
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
        // An error is one line, the last on stderr (`lint` and `doctor` list their findings).
        if case.code == 1 && args[0] != "lint" && args[0] != "doctor" {
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
    if !left_to_full_tier.is_empty() {
        eprintln!(
            "left to the full tier (they need the default model): {}",
            left_to_full_tier.join("; ")
        );
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

/// A closed stdout (`skilleval check … | head -0`) drops the rest of the output: no panic
/// message, and the command finishes with its own status, the one it gives with stdout open.
#[test]
fn a_closed_stdout_drops_the_output_and_the_command_finishes() {
    let place = Place::new();
    let args = ["check", "--pack", &place.mini.display().to_string()];
    let open = Command::new(env!("CARGO_BIN_EXE_skilleval"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_skilleval"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_ne!(out.status.code(), Some(141), "{stderr}");
    assert_eq!(out.status.code(), open.status.code(), "{stderr}");
}

/// Ctrl-C during a call to a command tool ends the tool and whatever it started: the tool's
/// process group is killed before the run exits with 130.
#[test]
fn an_interrupt_ends_the_children_of_a_running_tool() {
    a_signal_ends_the_children_of_a_running_tool("INT", 130);
}

/// SIGTERM (what `kill`, `timeout` and CI runners send) and SIGHUP (a closed terminal) end the
/// tool's process group as Ctrl-C does, and the run exits with 128 + the signal's number.
#[test]
fn a_termination_or_a_hangup_ends_the_children_of_a_running_tool() {
    a_signal_ends_the_children_of_a_running_tool("TERM", 143);
    a_signal_ends_the_children_of_a_running_tool("HUP", 129);
}

fn a_signal_ends_the_children_of_a_running_tool(signal: &str, status: i32) {
    let place = Place::new();
    let pid_file = place.root.join("bg.pid");
    place.mini_command_tool(
        &format!("sleep 300 & echo $! > {}; wait", pid_file.display()),
        600,
    );
    let args = server_run(
        &place,
        &completion_server(&station_call("Slow")),
        &["--record", "gaps", "--limit", "1"],
    );
    let child = Command::new(env!("CARGO_BIN_EXE_skilleval"))
        .args(&args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let pid = loop {
        let text = std::fs::read_to_string(&pid_file).unwrap_or_default();
        if !text.trim().is_empty() {
            break text;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the tool never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let sent = Command::new("kill")
        .args([format!("-{signal}"), child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(status), "SIG{signal}: {stderr}");
    assert!(stderr.contains("--resume"), "{stderr}");
    std::thread::sleep(Duration::from_millis(200));
    assert!(
        !alive(&pid),
        "SIG{signal}: the tool's background child {pid} outlived the run"
    );
}

/// `init --mcp` with a server that never answers says within seconds what it waits for (the
/// time-out is two minutes, for servers that `npx` first downloads), and a SIGTERM then ends
/// the server's process group with the process.
#[test]
fn init_waiting_on_a_silent_mcp_server_says_so_and_a_termination_ends_the_server() {
    use std::io::Read as _;
    let place = Place::new();
    let pid_file = place.root.join("server.pid");
    let skill = place.write(
        "skills/finder/SKILL.md",
        "---\nname: finder\ndescription: Looks things up.\nallowed-tools: lookup\n---\nCall it.\n",
    );
    let server = format!("sh -c 'echo $$ > {}; exec sleep 600'", pid_file.display());
    let mut child = Command::new(env!("CARGO_BIN_EXE_skilleval"))
        .args([
            "init",
            "--skill",
            &skill,
            "--out",
            &place.path("out"),
            "--mcp",
            &server,
        ])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let (sender, lines) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = stderr.read(&mut buf) {
            if n == 0 || sender.send(buf[..n].to_vec()).is_err() {
                break;
            }
        }
    });
    let mut said = Vec::new();
    let started = Instant::now();
    while !String::from_utf8_lossy(&said).contains("waiting") {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "no word after 30 s: {}",
            String::from_utf8_lossy(&said)
        );
        if let Ok(bytes) = lines.recv_timeout(Duration::from_millis(100)) {
            said.extend(bytes);
        }
    }
    let pid = std::fs::read_to_string(&pid_file).unwrap();
    let sent = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(143));
    std::thread::sleep(Duration::from_millis(200));
    assert!(
        !alive(pid.trim()),
        "the MCP server {} outlived init",
        pid.trim()
    );
}
