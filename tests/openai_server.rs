//! `--backend openai` against a real llama.cpp server on loopback (`llama-server`, built by
//! `scripts/build_llama_tools.sh`) serving the default model: a greedy run through the server at
//! `--parallel 1` against the same run on the embedded backend, the retries while the server is
//! still loading, and the refusals (a wrong API key, nothing listening), each one line.
//!
//! Without the server binary the server tests are skipped with a message, unless
//! `SKILLEVAL_REQUIRE_SERVER=1` (as `.ci/run` sets), where they fail instead.

mod common;

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use skilleval::eval::pack::Pack;
use skilleval::eval::runner::{self, RunOptions, RunResult};
use skilleval::eval::score;
use skilleval::harness::backend::openai::{OpenAiBackend, OpenAiOptions};
use skilleval::harness::backend::{
    Backend, ContinuationScore, GenRequest, Generation, Sampling, ScoreRequest,
};
use skilleval::harness::template::Family;
use skilleval::harness::toolcall::grammar::{self, OfferedTool};
use skilleval::harness::toolcall::CallFormat;

use common::cli;

/// `llama-server` as the build script leaves it, or `None` (with the reason) when it is missing.
fn server_binary() -> Result<PathBuf, String> {
    let output = Command::new("bash")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/build_llama_tools.sh"))
        .arg("--plan")
        .stderr(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run scripts/build_llama_tools.sh: {e}"))?;
    let bin = String::from_utf8_lossy(&output.stdout).trim().to_string();
    let server = Path::new(&bin).join("llama-server");
    if output.status.success() && server.is_file() {
        Ok(server)
    } else {
        Err(format!(
            "{} is missing: run bash scripts/build_llama_tools.sh",
            server.display()
        ))
    }
}

/// The server binary, or `None` after saying why the test is skipped; panics instead when
/// `SKILLEVAL_REQUIRE_SERVER=1`.
fn require_server() -> Option<PathBuf> {
    match server_binary() {
        Ok(path) => Some(path),
        Err(why) if std::env::var("SKILLEVAL_REQUIRE_SERVER").as_deref() == Ok("1") => {
            panic!("SKILLEVAL_REQUIRE_SERVER=1 but {why}")
        }
        Err(why) => {
            eprintln!("skipped: {why}");
            None
        }
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free loopback port")
        .port()
}

/// A llama-server child on loopback, killed when dropped.
struct Server {
    child: Child,
    url: String,
    log: PathBuf,
    _dir: tempfile::TempDir,
}

impl Server {
    /// Starts the server on the default model with the embedded backend's batch settings: one
    /// slot, 2048 tokens of context (as `common::model::backend`), prompts in 256-token batches, the
    /// full sliding-window cache.
    fn start(binary: &Path, extra: &[&str]) -> Server {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("server.log");
        let port = free_port();
        let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
        let child = Command::new(binary)
            .args(["-m", common::model::model_path().to_str().unwrap()])
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            .args([
                "-c",
                "2048",
                "-np",
                "1",
                "-b",
                "256",
                "-ub",
                "256",
                "--swa-full",
            ])
            .args(["-t", &threads.to_string()])
            .args(extra)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .expect("llama-server starts");
        Server {
            child,
            url: format!("http://127.0.0.1:{port}"),
            log,
            _dir: dir,
        }
    }

    fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(20)..].join("\n")
    }

    /// Waits until `/health` answers 200.
    fn wait_healthy(&mut self) {
        let started = Instant::now();
        let agent = ureq::AgentBuilder::new()
            .timeout(Duration::from_secs(5))
            .build();
        while started.elapsed() < Duration::from_secs(180) {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("llama-server exited ({status}):\n{}", self.log_tail());
            }
            if let Ok(response) = agent.get(&format!("{}/health", self.url)).call() {
                if response.status() == 200 {
                    return;
                }
            }
            std::thread::sleep(Duration::from_millis(250));
        }
        panic!("llama-server not healthy after 180 s:\n{}", self.log_tail());
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A short greedy weather run: baseline, variant b.md and the control arm on three samples.
fn weather_options(output: &Path) -> RunOptions {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let pack = Pack::load(root.join("packs/weather").to_str().unwrap()).unwrap();
    let mut opts = RunOptions::new(pack);
    opts.variants = vec![root.join("packs/weather/variants/b.md")];
    opts.limit = Some(3);
    opts.repeats = 1;
    opts.temperature = Some(0.0);
    opts.output_root = output.to_path_buf();
    opts
}

/// Each unit's key and every round's text, in plan order.
fn rounds(result: &RunResult) -> Vec<(String, Vec<String>)> {
    result
        .entries
        .iter()
        .map(|e| {
            (
                format!("{} {} {}", e.sample_id, e.arm.name(), e.repeat),
                e.transcript.rounds.iter().map(|r| r.raw.clone()).collect(),
            )
        })
        .collect()
}

#[test]
#[cfg_attr(not(feature = "full-tier"), ignore = "full tier")]
fn a_greedy_run_through_the_server_matches_the_embedded_backend() {
    let _turn = common::model::turn();
    let Some(binary) = require_server() else {
        return;
    };
    let mut server = Server::start(&binary, &[]);
    server.wait_healthy();
    let out = tempfile::tempdir().unwrap();

    let opts = weather_options(&out.path().join("embedded"));
    let embedded = runner::run(&mut *common::model::backend(), &opts).expect("the embedded run");

    let mut backend = OpenAiBackend::connect(&OpenAiOptions::new(&server.url).unwrap())
        .expect("the server answers");
    let opts = weather_options(&out.path().join("server"));
    let served = runner::run(&mut backend, &opts).expect("the run through the server");

    let (ours, theirs) = (rounds(&embedded), rounds(&served));
    assert_eq!(ours.len(), 9, "three samples × three arms");
    let identical = ours.iter().zip(&theirs).filter(|(a, b)| a == b).count();
    eprintln!(
        "{identical} of {} units identical between the embedded backend and llama-server",
        ours.len()
    );
    for (a, b) in ours.iter().zip(&theirs).filter(|(a, b)| a != b) {
        eprintln!(
            "differs: {}\n  embedded: {:?}\n  server:   {:?}",
            a.0, a.1, b.1
        );
    }
    // The prompt reaches the server as the harness rendered it: same token count (one <bos>,
    // not two) for every first round.
    for (a, b) in embedded.entries.iter().zip(&served.entries) {
        assert_eq!(
            a.transcript.rounds[0].metrics.prompt_tokens,
            b.transcript.rounds[0].metrics.prompt_tokens,
            "{}: prompt tokens",
            a.sample_id
        );
    }
    // Identical, not merely close: the server has the embedded backend's batch settings and
    // prefills every prompt afresh (no reuse of the last prompt's cache, whose batches would
    // differ), so every logit comes from the same sums, though its llama.cpp is another
    // revision. Measured: 15 of 15 units on five samples.
    assert_eq!(identical, ours.len(), "every unit identical");

    // Three requests at once on forked handles: the server's one slot takes them in turn, each
    // prefilled afresh, so the transcripts are still the embedded backend's.
    let mut opts = weather_options(&out.path().join("server-parallel"));
    opts.parallel = 3;
    let parallel = runner::run(&mut backend, &opts).expect("the parallel run through the server");
    let at_once = rounds(&parallel);
    let identical = ours.iter().zip(&at_once).filter(|(a, b)| a == b).count();
    eprintln!(
        "--parallel 3: {identical} of {} units identical",
        ours.len()
    );
    assert_eq!(
        identical,
        ours.len(),
        "every unit identical at --parallel 3"
    );

    // With the server's prompt cache the later rounds start from the prefix the slot holds,
    // which the fresh prefills above never did; the manifest says which way the run went.
    let cached = |result: &RunResult| -> u32 {
        result
            .entries
            .iter()
            .flat_map(|e| &e.transcript.rounds)
            .map(|r| r.metrics.cached_prompt_tokens)
            .sum()
    };
    assert_eq!(cached(&served), 0, "no reuse unless asked for");
    let mut options = OpenAiOptions::new(&server.url).unwrap();
    options.prompt_cache = true;
    let mut caching = OpenAiBackend::connect(&options).expect("the server answers");
    let opts = weather_options(&out.path().join("server-cache"));
    let reused = runner::run(&mut caching, &opts).expect("the run with the server's cache");
    let with_cache = rounds(&reused);
    let identical = ours.iter().zip(&with_cache).filter(|(a, b)| a == b).count();
    eprintln!(
        "--server-prompt-cache: {identical} of {} units identical, {} prompt tokens reused",
        ours.len(),
        cached(&reused)
    );
    assert!(cached(&reused) > 0, "the server reused cached prompts");
    let recorded = |result: &RunResult| -> serde_json::Value {
        let text = std::fs::read_to_string(result.dir.join("manifest.json")).unwrap();
        serde_json::from_str::<serde_json::Value>(&text).unwrap()["backend"]["server_prompt_cache"]
            .clone()
    };
    assert_eq!(recorded(&reused), true);
    assert_eq!(recorded(&served), false);

    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(served.dir.join("manifest.json")).unwrap())
            .unwrap();
    assert_eq!(manifest["backend"]["name"], "openai");
    assert_eq!(manifest["backend"]["endpoint"], server.url.as_str());
    assert!(manifest["backend"]["model_name"]
        .as_str()
        .is_some_and(|m| m.contains("gemma")));
    assert!(manifest["model_sha256"].is_null(), "no model file here");
}

#[test]
#[cfg_attr(not(feature = "full-tier"), ignore = "full tier")]
fn a_constrained_run_through_the_server_makes_only_offered_calls() {
    let _turn = common::model::turn();
    let Some(binary) = require_server() else {
        return;
    };
    let mut server = Server::start(&binary, &[]);
    server.wait_healthy();
    let out = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let pack = Pack::load(root.join("packs/routing").to_str().unwrap()).unwrap();
    assert!(pack.constrained_calls);
    let mut opts = RunOptions::new(pack);
    opts.limit = Some(3);
    opts.repeats = 1;
    opts.control = false;
    opts.output_root = out.path().to_path_buf();
    let mut backend = OpenAiBackend::connect(&OpenAiOptions::new(&server.url).unwrap())
        .expect("the server answers");
    // The server holds a call to the grammar: greedily the model copies its example's tool;
    // offered only load_skill, it must load a skill instead.
    let asked = |a: u32, op: &str, b: u32, sign: &str, r: u32| {
        format!("User: what's {a} {op} {b}?\nAssistant: <function=calculate>\n<parameter=a>\n{a}\n</parameter>\n<parameter=operation>\n{op}\n</parameter>\n<parameter=b>\n{b}\n</parameter>\n</function>\nTool: {a} {sign} {b} = {r}\nAssistant: {a} {op} {b} is {r}.\n")
    };
    let prompt = format!(
        "<bos>{}{}User: what's 7 times 6?\nAssistant:",
        asked(2, "plus", 2, "+", 4),
        asked(9, "minus", 4, "-", 5)
    );
    let load_skill = OfferedTool {
        name: "load_skill".into(),
        parameters: serde_json::json!({"type": "object", "properties": {"name": {"type": "string", "enum": ["calculator"]}}, "required": ["name"]}),
    };
    let mut request = GenRequest::in_turn(Family::Transcript, prompt, 48, Sampling::default());
    let free = backend.generate(&request).expect("the server answers");
    assert!(
        free.text.contains("<function=calculate>"),
        "{:?}",
        free.text
    );
    request.grammar = grammar::for_calls(CallFormat::Markup, &[load_skill]);
    let held = backend
        .generate(&request)
        .expect("the server takes the grammar");
    assert!(
        held.text.contains(
            "<function=load_skill>\n<parameter=name>\ncalculator\n</parameter>\n</function>"
        ),
        "{:?}",
        held.text
    );

    let result = runner::run(&mut backend, &opts).expect("the run through the server");
    assert_eq!(
        result.entries.len(),
        2 * 3,
        "baseline and A/A arm × three samples"
    );
    common::model::assert_calls_offered(&opts.pack, &result.entries);
}

#[test]
#[cfg_attr(not(feature = "full-tier"), ignore = "full tier")]
fn the_backend_retries_while_the_server_loads_and_refuses_a_wrong_key() {
    let _turn = common::model::turn();
    let Some(binary) = require_server() else {
        return;
    };
    let server = Server::start(&binary, &["--api-key", "test-key"]);
    // No wait for /health: connection refusals and 503s while the model loads are retried.
    let mut options = OpenAiOptions::new(&server.url).unwrap();
    options.api_key = Some("test-key".into());
    options.retries = 12;
    options.backoff = Duration::from_millis(250);
    let backend = OpenAiBackend::connect(&options).unwrap_or_else(|e| {
        panic!("connects after retries: {e:#}\n{}", server.log_tail());
    });
    assert!(backend.info().model_name.is_some());

    options.api_key = Some("wrong-key".into());
    let started = Instant::now();
    let error = OpenAiBackend::connect(&options)
        .err()
        .expect("a wrong key is refused");
    let message = format!("{error:#}");
    assert!(message.contains("HTTP 401"), "{message}");
    assert!(message.contains("SKILLEVAL_API_KEY"), "{message}");
    assert!(!message.contains('\n'), "one line: {message}");
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "a 401 is not retried"
    );
}

#[test]
fn an_endpoint_where_nothing_listens_is_one_line_after_the_retries() {
    let mut options = OpenAiOptions::new(&format!("http://127.0.0.1:{}", free_port())).unwrap();
    options.retries = 2;
    options.backoff = Duration::from_millis(10);
    let error = OpenAiBackend::connect(&options)
        .err()
        .expect("nothing listens");
    let message = format!("{error:#}");
    assert!(message.contains("/v1/models"), "{message}");
    assert!(message.contains("after 3 tries"), "{message}");
    assert!(!message.contains('\n'), "one line: {message}");
}

/// The binary's exit code and stderr for `run` on the weather pack with `extra` flags.
fn run_command(extra: &[&str]) -> (i32, String) {
    let (code, _, stderr) = cli::outcome(&cli::skilleval(
        &[&["run", "--pack", "weather"], extra].concat(),
    ));
    (code, stderr)
}

#[test]
fn backend_flags_that_do_not_fit_are_one_line_before_anything_loads() {
    let (code, stderr) = run_command(&["--backend", "openai"]);
    assert_eq!(code, 1);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("--backend openai: give the server's URL with --endpoint"),
        "{stderr}"
    );

    let (code, stderr) = run_command(&["--endpoint", "http://127.0.0.1:9"]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains("--endpoint: only with --backend openai"),
        "{stderr}"
    );

    let (code, stderr) = run_command(&["--server-prompt-cache"]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains("--server-prompt-cache: only with --backend openai"),
        "{stderr}"
    );

    let (code, stderr) = run_command(&["--backend", "openai", "--endpoint", "127.0.0.1:8080"]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains("give the server's URL, e.g. http://"),
        "{stderr}"
    );
}

/// A backend that keeps every score request it answers, with the answer.
struct Recording<'a> {
    inner: &'a mut dyn Backend,
    scored: Vec<(ScoreRequest, ContinuationScore)>,
}

impl Backend for Recording<'_> {
    fn family(&self) -> Family {
        self.inner.family()
    }
    fn info(&self) -> skilleval::harness::backend::BackendInfo {
        self.inner.info()
    }
    fn generate(&mut self, request: &GenRequest) -> anyhow::Result<Generation> {
        self.inner.generate(request)
    }
    fn score(&mut self, request: &ScoreRequest) -> anyhow::Result<ContinuationScore> {
        let answer = self.inner.score(request)?;
        self.scored.push((request.clone(), answer.clone()));
        Ok(answer)
    }
}

/// Truth: the sampled run's own computation, called straight on llama.cpp in this process (the
/// prompt in the sequential engine's chunks, then the step one token at a time). The score
/// requests the weather pack makes (two samples, every arm; the first four) are put to
/// llama-server at the pack's sampler and greedily. llama.cpp's logits move with the batch shape
/// by far more than their last bits (docs/score.md, "Lanes and the engine's own noise"), so the
/// server is held to be no further from the run than the embedded backend is; a wrong sampler
/// formula or a token read at the wrong position would be far further. Greedy, the server's
/// token must be the embedded one's nearly everywhere. The formulas themselves are held exactly
/// by `server_score`'s unit tests.
#[test]
#[cfg_attr(not(feature = "full-tier"), ignore = "full tier")]
fn scores_through_the_server_match_the_embedded_backend() {
    let _turn = common::model::turn();
    let Some(binary) = require_server() else {
        return;
    };
    let mut server = Server::start(&binary, &[]);
    server.wait_healthy();
    let out = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut opts =
        RunOptions::new(Pack::load(root.join("packs/weather").to_str().unwrap()).unwrap());
    opts.limit = Some(2);
    opts.repeats = 1;
    opts.output_root = out.path().to_path_buf();
    let prepared = runner::prepare(&opts).unwrap();
    let references = score::references(&prepared).unwrap();
    let mut embedded = common::model::backend();
    let mut recording = Recording {
        inner: &mut *embedded,
        scored: Vec::new(),
    };
    score::score(
        &mut recording,
        &prepared,
        &references,
        score::ScoreSettings::default(),
        None,
        false,
    )
    .expect("the embedded score");
    let mut requests = recording.scored;
    assert!(requests.len() >= 4, "{} score requests", requests.len());
    // A few: each position is one or two server requests, slow on a shared CPU.
    requests.truncate(4);
    // The same requests, greedily: probabilities 1 or 0, likelihoods at temperature 1.
    let greedy: Vec<ScoreRequest> = requests
        .iter()
        .map(|(r, _)| ScoreRequest {
            sampling: Sampling {
                temperature: 0.0,
                ..r.sampling
            },
            ..r.clone()
        })
        .collect();
    for request in greedy {
        let answer = embedded.score(&request).unwrap();
        requests.push((request, answer));
    }
    let mut backend = OpenAiBackend::connect(&OpenAiOptions::new(&server.url).unwrap())
        .expect("the server answers");
    let (mut from_embedded, mut from_server, mut sampled_tokens) = (0.0_f64, 0.0_f64, 0);
    let (mut greedy_same, mut greedy_tokens) = (0, 0);
    for (request, ours) in &requests {
        let theirs = backend.score(request).expect("the server scores");
        let pieces = |s: &ContinuationScore| -> Vec<(String, usize)> {
            s.tokens.iter().map(|t| (t.piece.clone(), t.end)).collect()
        };
        assert_eq!(pieces(ours), pieces(&theirs), "the same tokens");
        assert_eq!(ours.prompt_tokens, theirs.prompt_tokens, "the same prompt");
        if request.sampling.temperature <= 0.0 {
            for (a, b) in ours.tokens.iter().zip(&theirs.tokens) {
                assert!(b.probability == 0.0 || b.probability == 1.0, "{b:?}");
                greedy_same += usize::from(a.probability == b.probability);
                greedy_tokens += 1;
            }
            continue;
        }
        let run = common::model::likelihoods_as_a_run_computes_them(request);
        for ((r, a), b) in run.iter().zip(&ours.tokens).zip(&theirs.tokens) {
            from_embedded += (a.likelihood - r).abs();
            from_server += (b.likelihood - r).abs();
            sampled_tokens += 1;
        }
    }
    let (from_embedded, from_server) = (
        from_embedded / sampled_tokens as f64,
        from_server / sampled_tokens as f64,
    );
    eprintln!(
        "{} score requests: mean |likelihood difference| from the run's computation over \
         {sampled_tokens} tokens: embedded {from_embedded:.4}, server {from_server:.4}; \
         greedy token the same at {greedy_same} of {greedy_tokens}",
        requests.len()
    );
    assert!(sampled_tokens > 0 && greedy_tokens > 0);
    assert!(
        from_server <= 1.5 * from_embedded + 0.005,
        "server {from_server:.4}, embedded {from_embedded:.4}"
    );
    assert!(
        greedy_same * 20 >= greedy_tokens * 19,
        "greedy token the same at {greedy_same} of {greedy_tokens}"
    );
}
