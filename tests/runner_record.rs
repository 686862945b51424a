//! `--record` against a loopback HTTP server standing in for the weather service: recording
//! the gaps writes fixture files, a replay-only run then finds them all, and recording
//! everything asks the service again for every call.

mod common;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::Value;
use skilleval::eval::arm::Arm;
use skilleval::eval::corpus::Sample;
use skilleval::eval::fixture_store::Fixture;
use skilleval::eval::pack::Pack;
use skilleval::eval::replay::{LiveServices, RecordMode};
use skilleval::eval::runner::{self, RunOptions, RunResult};
use skilleval::harness::template::Family;
use skilleval::tools::weather::{WeatherService, TOOL_NAME};

use common::scripted::{call, copy_pack, script_for};
use common::scripted_backend::ScriptedBackend;

/// A weather service on a loopback port: answers each location it knows with a recorded
/// status and body, anything else with 500, and keeps the locations it was asked for.
struct StandIn {
    base_url: String,
    asked: Arc<Mutex<Vec<String>>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl StandIn {
    fn start(answers: BTreeMap<String, (u16, String)>) -> StandIn {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let base_url = format!("http://{}", listener.local_addr().unwrap());
        let asked = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (seen, stopping) = (Arc::clone(&asked), Arc::clone(&stop));
        let thread = std::thread::spawn(move || {
            // Gives up after a minute so that a failing test cannot hang the suite.
            let deadline = Instant::now() + Duration::from_secs(60);
            while !stopping.load(Ordering::SeqCst) && Instant::now() < deadline {
                let Ok((stream, _)) = listener.accept() else {
                    std::thread::sleep(Duration::from_millis(5));
                    continue;
                };
                stream.set_nonblocking(false).unwrap();
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut request_line = String::new();
                reader.read_line(&mut request_line).unwrap();
                loop {
                    let mut header = String::new();
                    if reader.read_line(&mut header).unwrap_or(0) == 0 || header == "\r\n" {
                        break;
                    }
                }
                let path = request_line.split_whitespace().nth(1).unwrap_or("/");
                let location =
                    percent_decode(path.trim_start_matches('/').split('?').next().unwrap());
                let (status, body) = answers
                    .get(&location.to_lowercase())
                    .cloned()
                    .unwrap_or((500, "not a location this stand-in knows".into()));
                seen.lock().unwrap().push(location);
                let mut stream = stream;
                let head = format!(
                    "HTTP/1.1 {status} Whatever\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
                    body.len()
                );
                stream.write_all(head.as_bytes()).unwrap();
                stream.write_all(body.as_bytes()).unwrap();
            }
        });
        StandIn {
            base_url,
            asked,
            stop,
            thread: Some(thread),
        }
    }

    fn live(&self) -> LiveServices {
        LiveServices::with_weather(Arc::new(
            WeatherService::new()
                .with_base_url(&self.base_url)
                .allow_loopback(),
        ))
    }

    /// Locations asked for, once the server has stopped.
    fn finish(mut self) -> Vec<String> {
        self.stop.store(true, Ordering::SeqCst);
        self.thread.take().unwrap().join().unwrap();
        self.asked.lock().unwrap().clone()
    }
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let Ok(byte) = u8::from_str_radix(&text[i + 1..i + 3], 16) {
                out.push(byte);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(out).unwrap()
}

/// The stand-in's answers: real j1 bodies from the repository's weather fixtures, and the
/// service's "unknown location" answer for a made-up town.
fn answers() -> BTreeMap<String, (u16, String)> {
    let recorded = |file: &str| -> String {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/weather")
            .join(file);
        let fixture: Fixture =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        fixture.body_text()
    };
    BTreeMap::from([
        (
            "paris, texas".to_string(),
            (200, recorded("paris-texas.json")),
        ),
        (
            "nassau, bahamas".to_string(),
            (200, recorded("nassau-bahamas.json")),
        ),
        (
            "xyzzyville".to_string(),
            (
                404,
                "Unknown location; please try ~Xyzzyville\n".to_string(),
            ),
        ),
    ])
}

/// A model that asks for the sample's location as written, then answers.
fn asks_for_the_location(sample: &Sample, _arm: Arm) -> Vec<String> {
    let location = sample.fields["location"].as_str().unwrap();
    let answer = if sample.category == "nonexistent" {
        format!("There is no such place as {location}.")
    } else {
        format!("Here is the weather for {location}.")
    };
    vec![call(TOOL_NAME, "location", location), answer]
}

fn run(pack_dir: &Path, output: &Path, record: RecordMode, live: LiveServices) -> RunResult {
    let pack = Pack::load(pack_dir.to_str().unwrap()).unwrap();
    let samples = pack.corpus(None).unwrap();
    let mut opts = RunOptions::new(pack);
    opts.repeats = 1;
    opts.output_root = output.to_path_buf();
    opts.record = record;
    opts.live = live;
    // Two arms keep the recording order simple: the baseline records, the variant replays.
    opts.control = false;
    let replies = script_for(&samples, 1, false, true, 0, asks_for_the_location);
    let mut backend = ScriptedBackend::new(Family::Gemma, replies);
    let result = runner::run(&mut backend, &opts).expect("the run completes");
    assert_eq!(backend.remaining(), 0);
    result
}

fn fixture_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|read| read.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    files.sort();
    files
}

fn read_fixture(path: &Path) -> Fixture {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The `meta` key that says where each call's answer came from, per arm.
fn answer_sources(result: &RunResult, arm: Arm) -> Vec<&'static str> {
    result
        .entries
        .iter()
        .filter(|e| e.arm == arm)
        .flat_map(|e| e.transcript.calls())
        .map(|c| match &c.meta {
            m if m.get("recorded").is_some() => "recorded",
            m if m.get("fixture").is_some() => "fixture",
            m if m.get("gap") == Some(&Value::Bool(true)) => "gap",
            _ => "other",
        })
        .collect()
}

/// A live service that nobody answers: a replay-only run must never need it.
fn unreachable_service() -> LiveServices {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    LiveServices::with_weather(Arc::new(
        WeatherService::new()
            .with_base_url(format!("http://127.0.0.1:{port}"))
            .allow_loopback()
            .with_timeout(Duration::from_secs(2)),
    ))
}

#[test]
fn recording_gaps_writes_fixtures_that_a_replay_run_then_uses() {
    let (_temp, pack_dir) = copy_pack("weather_record");
    let fixtures = pack_dir.join("fixtures");
    let output = tempfile::tempdir().unwrap();

    // Replay with no fixtures folder at all is a mistake (a misspelt path, say), named before
    // anything runs.
    let pack = Pack::load(pack_dir.to_str().unwrap()).unwrap();
    let mut opts = RunOptions::new(pack);
    opts.output_root = output.path().to_path_buf();
    let error = runner::prepare(&opts).err().expect("refused").to_string();
    assert!(
        error.contains(&fixtures.display().to_string()) && error.contains("fixtures folder"),
        "{error}"
    );

    // Replay from an empty folder: no recordings yet, so every call is a gap; gapped runs are
    // scored as judged, and counted per arm.
    std::fs::create_dir_all(&fixtures).unwrap();
    let before = run(
        &pack_dir,
        output.path(),
        RecordMode::Off,
        unreachable_service(),
    );
    assert_eq!(before.summary.wording.total.gapped_pairs, 3);
    assert_eq!(before.summary.wording.total.pairs, 3);
    assert_eq!(before.summary.wording.total.reference.gapped, 3);
    assert!(fixture_files(&fixtures).is_empty());

    let server = StandIn::start(answers());
    let recording = run(&pack_dir, output.path(), RecordMode::Gaps, server.live());
    let mut asked = server.finish();
    asked.sort();
    // The baseline arm records; the variant arm already finds the recordings.
    assert_eq!(asked, ["Paris, Texas", "Xyzzyville", "nassau, bahamas"]);
    assert_eq!(answer_sources(&recording, Arm::Baseline), ["recorded"; 3]);
    assert_eq!(answer_sources(&recording, Arm::Variant(0)), ["fixture"; 3]);
    assert_eq!(recording.summary.wording.total.gapped_pairs, 0);
    assert_eq!(recording.summary.wording.total.reference.rate, Some(1.0));
    let manifest = std::fs::read_to_string(recording.dir.join("manifest.json")).unwrap();
    assert!(manifest.contains("\"record\": \"Gaps\""), "{manifest}");

    // The model saw the rendered report, as from the live tool.
    let paris = recording
        .entries
        .iter()
        .find(|e| e.sample_id == "city-paris-texas" && e.arm == Arm::Baseline)
        .unwrap();
    let shown = &paris.transcript.calls().next().unwrap().result;
    assert!(
        shown.starts_with("Paris, Texas, United States of America\nNow: "),
        "{shown}"
    );

    let files = fixture_files(&fixtures);
    let names: Vec<String> = files
        .iter()
        .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        ["nassau-bahamas.json", "paris-texas.json", "xyzzyville.json"]
    );
    for file in &files {
        let fixture = read_fixture(file);
        assert!(fixture.recorded_from_live, "{}", file.display());
        assert_eq!(fixture.tool, TOOL_NAME);
        let (status, body) = &answers()[&fixture.arguments["location"]
            .as_str()
            .unwrap()
            .to_lowercase()];
        assert_eq!(fixture.status, *status);
        assert_eq!(
            fixture.body_text().split_whitespace().collect::<String>(),
            body.split_whitespace().collect::<String>()
        );
    }
    assert!(read_fixture(&fixtures.join("paris-texas.json"))
        .body
        .is_object());
    assert!(read_fixture(&fixtures.join("xyzzyville.json"))
        .body
        .is_string());

    // Replay only, with the service out of reach: everything answers from the new files.
    let replay = run(
        &pack_dir,
        output.path(),
        RecordMode::Off,
        unreachable_service(),
    );
    assert_eq!(replay.summary.wording.total.gapped_pairs, 0);
    assert_eq!(replay.summary.wording.total.pairs, 3);
    for arm in [Arm::Baseline, Arm::Variant(0)] {
        assert_eq!(answer_sources(&replay, arm), ["fixture"; 3]);
    }
    assert_eq!(
        replay
            .entries
            .iter()
            .map(|e| e.judgement.passed)
            .collect::<Vec<_>>(),
        recording
            .entries
            .iter()
            .map(|e| e.judgement.passed)
            .collect::<Vec<_>>()
    );
}

#[test]
fn recording_everything_asks_again_and_replaces_hand_made_answers() {
    let (_temp, pack_dir) = copy_pack("weather_record");
    let fixtures = pack_dir.join("fixtures");
    std::fs::create_dir_all(&fixtures).unwrap();
    let hand_made = fixtures.join("paris-texas.json");
    std::fs::write(
        &hand_made,
        r#"{"tool": "weather_lookup", "arguments": {"location": "Paris, Texas"},
            "recorded_from_live": false, "note": "hand-made", "status": 404, "body": "Unknown location"}"#,
    )
    .unwrap();
    let output = tempfile::tempdir().unwrap();

    // Recording gaps leaves the hand-made answer alone.
    let server = StandIn::start(answers());
    run(&pack_dir, output.path(), RecordMode::Gaps, server.live());
    assert_eq!(server.finish().len(), 2);
    assert!(!read_fixture(&hand_made).recorded_from_live);

    // Recording everything asks for every call of both arms and replaces it in place.
    let server = StandIn::start(answers());
    let result = run(&pack_dir, output.path(), RecordMode::All, server.live());
    assert_eq!(server.finish().len(), 6);
    assert_eq!(answer_sources(&result, Arm::Variant(0)), ["recorded"; 3]);
    let replaced = read_fixture(&hand_made);
    assert!(replaced.recorded_from_live);
    assert_eq!((replaced.status, replaced.note), (200, None));
    assert_eq!(fixture_files(&fixtures).len(), 3);
}

#[test]
fn a_recording_run_where_every_recording_fails_is_an_error_with_the_first_reason() {
    let (_temp, pack_dir) = copy_pack("weather_record");
    let output = tempfile::tempdir().unwrap();
    let pack = Pack::load(pack_dir.to_str().unwrap()).unwrap();
    let samples = pack.corpus(None).unwrap();
    let mut opts = RunOptions::new(pack);
    opts.repeats = 1;
    opts.output_root = output.path().to_path_buf();
    opts.record = RecordMode::Gaps;
    opts.live = unreachable_service();
    opts.control = false;
    let replies = script_for(&samples, 1, false, true, 0, asks_for_the_location);
    let mut backend = ScriptedBackend::new(Family::Gemma, replies);
    let error = match runner::run(&mut backend, &opts) {
        Ok(_) => panic!("a run whose every recording failed exited cleanly"),
        Err(e) => e.to_string(),
    };
    assert!(
        error.contains("--record") && error.contains("failed") && error.contains("127.0.0.1"),
        "{error}"
    );
    assert!(
        !pack_dir.join("fixtures").exists() || fixture_files(&pack_dir.join("fixtures")).is_empty()
    );

    // Every unit is an error, counted in the report, not a quiet gap.
    let run_dir = std::fs::read_dir(output.path())
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let entries = skilleval::eval::record::journal::read(&run_dir.join("journal.jsonl")).unwrap();
    assert!(!entries.is_empty());
    assert!(entries.iter().all(|e| e.errored && !e.gapped));
    let report = std::fs::read_to_string(run_dir.join("report.md")).unwrap();
    assert!(report.contains("Errored units"), "{report}");
}

/// A command tool that prints spaced JSON: the model is shown those bytes when the call is
/// recorded and again when it is replayed, not the JSON re-serialized, so that a law written
/// against the program's real output holds in both.
#[test]
fn a_command_tool_s_printed_json_reaches_the_model_as_printed_and_replays_so() {
    let (_temp, pack_dir) = copy_pack("mini");
    let printed = "{\"station\": \"Vostok\", \"reading\": \"-61 °C\"}\n";
    let toml = pack_dir.join("pack.toml");
    common::scripted::edit(
        &toml,
        "kind = \"recorded\"",
        &format!(
            "kind = \"command\"\ncommand = [\"sh\", \"-c\", {}]",
            Value::String(format!(
                "cat >/dev/null; printf '%s\\n' '{}'",
                printed.trim_end()
            ))
        ),
    );
    common::scripted::edit(
        &toml,
        "skill = \"stations\"",
        "skill = \"stations\"\npreload = true",
    );
    let output = tempfile::tempdir().unwrap();
    let shown = |record: RecordMode| {
        let pack = Pack::load(pack_dir.to_str().unwrap()).unwrap();
        let mut opts = RunOptions::new(pack.clone());
        opts.repeats = 1;
        opts.control = false;
        opts.output_root = output.path().to_path_buf();
        opts.record = record;
        let mut backend = common::scripted::Stations::new(&pack);
        let result = runner::run(&mut backend, &opts).expect("the run completes");
        result
            .entries
            .iter()
            .filter(|e| e.sample_id == "lookup-vostok")
            .flat_map(|e| e.transcript.calls())
            .map(|c| c.result.clone())
            .collect::<Vec<_>>()
    };
    let recorded = shown(RecordMode::Gaps);
    assert!(!recorded.is_empty());
    for result in &recorded {
        assert!(result.contains(printed.trim_end()), "{result:?}");
    }
    let file = pack_dir.join("fixtures/station_reading/vostok.json");
    let fixture = read_fixture(&file);
    assert_eq!(fixture.body["reading"], "-61 °C");
    assert_eq!(fixture.printed.as_deref(), Some(printed));
    assert_eq!(shown(RecordMode::Off), recorded);
}
