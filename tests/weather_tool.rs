//! `weather_lookup`: the place check and report on recorded fixtures, every way a live call can
//! fail (against a loopback HTTP server standing in for wttr.in), and the corpus/fixture pairing.

use std::collections::{BTreeMap, HashSet};
use std::io::{BufRead, BufReader, Write};
use std::net::{IpAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};
use skilleval::eval::fixture_store::{Fixture, FixtureStore, Fold, Route};
use skilleval::eval::pack::ToolSpec;
use skilleval::eval::replay::{build_registry, LiveServices, RecordMode};
use skilleval::harness::tools::{Effect, ToolOutput};
use skilleval::tools::weather::{
    check_qualifier, is_public_address, parameters_schema, percent_encode, render_result,
    resolve_public, tool_def, BlockedAddress, FetchError, Fetched, QualifierVerdict, ResolvedPlace,
    WeatherService, TOOL_NAME,
};

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/weather")
}

fn corpus_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("corpora/weather.jsonl")
}

/// How a weather pack routes `weather_lookup` calls to its recordings.
fn weather_route(dir: &Path) -> Route {
    Route {
        tool: TOOL_NAME.into(),
        dir: dir.to_path_buf(),
        key_arguments: vec!["location".into()],
        folds: vec![Fold::Case, Fold::Whitespace, Fold::Punctuation],
        arguments: vec!["location".into()],
    }
}

/// Every weather fixture, loaded as the pack runner loads them (refusing two files of one key).
fn fixture_store() -> FixtureStore {
    FixtureStore::load(vec![weather_route(&fixtures_dir())]).expect("fixtures load")
}

fn location_arguments(location: &str) -> Map<String, Value> {
    json!({ "location": location }).as_object().unwrap().clone()
}

fn recorded(store: &FixtureStore, location: &str) -> Fixture {
    store
        .lookup(TOOL_NAME, &location_arguments(location))
        .unwrap_or_else(|| panic!("no fixture for {location}"))
        .1
}

/// The recorded answer for `location`, rendered as if it had been asked for as `asked`.
fn render_fixture_as(location: &str, asked: &str) -> ToolOutput {
    let fixture = recorded(&fixture_store(), location);
    render_result(asked, fixture.status, &fixture.body_text())
}

fn render_fixture(location: &str) -> ToolOutput {
    render_fixture_as(location, location)
}

fn first_line(output: &ToolOutput) -> &str {
    output.content.lines().next().unwrap_or_default()
}

// ---------------------------------------------------------------------------------------------
// The place check on fixtures.

#[test]
fn nassau_bahamas_is_verified_against_the_country() {
    let output = render_fixture("Nassau, Bahamas");
    assert!(!output.is_error);
    assert_eq!(first_line(&output), "Nassau, New Providence, Bahamas");
    assert_eq!(output.meta["verification"], "verified");
}

#[test]
fn nassau_in_germany_is_flagged_when_the_bahamas_were_asked_for() {
    // Bare "Nassau" lands in Germany; the same answer for "Nassau, Bahamas" must say so.
    let output = render_fixture_as("Nassau", "Nassau, Bahamas");
    assert_eq!(
        first_line(&output),
        "Nassau, Rheinland-Pfalz, Germany \
         (not \"Nassau, Bahamas\" — this is where it resolved)"
    );
    assert_eq!(output.meta["verification"], "qualifier_mismatch");
}

#[test]
fn paris_texas_and_paris_france_resolve_apart() {
    let texas = render_fixture("Paris, Texas");
    assert_eq!(first_line(&texas), "Paris, Texas, United States of America");
    let texas_by_code = render_fixture("Paris, TX");
    assert_eq!(texas_by_code.meta["verification"], "verified");

    let france = render_fixture("Paris, France");
    assert_eq!(first_line(&france), "Paris, Ile-de-France, France");

    let crossed = render_fixture_as("Paris, France", "Paris, Texas");
    assert!(
        first_line(&crossed).ends_with("(not \"Paris, Texas\" — this is where it resolved)"),
        "{}",
        crossed.content
    );
}

#[test]
fn a_made_up_town_in_atlantis_is_refused_not_reported_as_florida() {
    let output = render_fixture("Xyzzyville, Atlantis");
    assert!(!output.is_error, "the model must see it as an answer");
    assert_eq!(
        output.content,
        "No such place: \"Xyzzyville, Atlantis\". wttr.in resolved it to Atlantis, Florida, \
         United States of America, which is somewhere else."
    );
    assert_eq!(output.meta["outcome"], "resolved_elsewhere");
}

#[test]
fn bare_atlantis_reports_florida_on_the_first_line() {
    let output = render_fixture("Atlantis");
    assert_eq!(
        first_line(&output),
        "Atlantis, Florida, United States of America"
    );
    assert!(output.content.contains("Now: "));
}

#[test]
fn bare_rome_landing_in_lome_is_reported_as_unconfirmed() {
    let output = render_fixture("Rome");
    assert_eq!(
        first_line(&output),
        "Lomé, Maritime, Togo (not \"Rome\" — this is where it resolved)"
    );
    assert_eq!(output.meta["verification"], "unconfirmed");

    let italy = render_fixture("Rome, Italy");
    assert_eq!(first_line(&italy), "Rome, Lazio, Italy");
}

#[test]
fn rome_italy_refuses_an_answer_from_togo() {
    let output = render_fixture_as("Rome", "Rome, Italy");
    assert_eq!(
        output.content,
        "No such place: \"Rome, Italy\". wttr.in resolved it to Lomé, Maritime, Togo, \
         which is somewhere else."
    );
}

#[test]
fn a_big_city_resolving_to_a_neighbourhood_is_accepted_through_its_region() {
    let london = render_fixture("London");
    assert_eq!(
        first_line(&london),
        "City of Westminster, Greater London, United Kingdom"
    );
    let london_uk = render_fixture("London, UK");
    assert_eq!(london_uk.meta["verification"], "verified");
    let london_ontario = render_fixture_as("London, Ontario", "London, England");
    assert_eq!(london_ontario.meta["verification"], "qualifier_mismatch");
}

#[test]
fn a_misspelling_resolved_by_fuzzy_search_is_not_claimed_as_verified() {
    let output = render_fixture("Barcelnoa");
    assert_eq!(
        first_line(&output),
        "Barcelona, Catalonia, Spain (not \"Barcelnoa\" — this is where it resolved)"
    );
    let qualified = render_fixture("Philadelpia, PA");
    assert_eq!(qualified.meta["verification"], "verified");
}

#[test]
fn qualifier_aliases_cover_codes_short_forms_and_unknown_names() {
    let place = |area: &str, region: &str, country: &str| ResolvedPlace {
        area: area.into(),
        region: region.into(),
        country: country.into(),
    };
    let dubai = place("Dubai", "Dubayy", "United Arab Emirates");
    let manchester = place("Manchester", "Greater Manchester", "United Kingdom");
    let portland = place("Portland", "Maine", "United States of America");
    let prague = place("Prague", "Hlavni Mesto Praha", "Czech Republic");
    let tbilisi = place("Tbilisi", "Tbilisi", "Georgia");
    let cases = [
        ("UAE", &dubai, QualifierVerdict::Matches),
        ("uk", &manchester, QualifierVerdict::Matches),
        ("England", &manchester, QualifierVerdict::Matches),
        ("U.K.", &manchester, QualifierVerdict::Matches),
        ("ME", &portland, QualifierVerdict::Matches),
        ("Maine", &portland, QualifierVerdict::Matches),
        ("US", &portland, QualifierVerdict::Matches),
        ("Oregon", &portland, QualifierVerdict::Contradicts),
        ("OR", &portland, QualifierVerdict::Contradicts),
        ("Czechia", &prague, QualifierVerdict::Matches),
        // The US state and the country share a name; either reading is accepted.
        ("Georgia", &tbilisi, QualifierVerdict::Matches),
        // Not in the table: falls back to containment in region or country.
        ("Praha", &prague, QualifierVerdict::Matches),
        ("Bavaria", &prague, QualifierVerdict::Contradicts),
        ("Atlantis", &portland, QualifierVerdict::Contradicts),
    ];
    for (qualifier, resolved, expected) in cases {
        assert_eq!(
            check_qualifier(qualifier, resolved),
            expected,
            "{qualifier} against {resolved:?}"
        );
    }
}

#[test]
fn the_report_has_place_now_and_three_days() {
    let body = json!({
        "current_condition": [{
            "FeelsLikeC": "12", "FeelsLikeF": "54", "humidity": "81", "temp_C": "14",
            "temp_F": "57", "weatherDesc": [{"value": "Light rain"}], "windspeedKmph": "22"
        }],
        "nearest_area": [{
            "areaName": [{"value": "Portland"}], "region": [{"value": "Maine"}],
            "country": [{"value": "United States of America"}],
            "latitude": "43.661", "longitude": "-70.255"
        }],
        "weather": [
            {"date": "2026-05-15", "mintempC": "8", "maxtempC": "16", "mintempF": "46", "maxtempF": "61",
             "hourly": [{}, {}, {}, {}, {"weatherDesc": [{"value": "Overcast"}]}, {}, {}, {}]},
            {"date": "2026-05-16", "mintempC": "9", "maxtempC": "18", "mintempF": "48", "maxtempF": "64",
             "hourly": [{}, {}, {}, {}, {"weatherDesc": [{"value": "Sunny"}]}, {}, {}, {}]},
            {"date": "2026-05-17", "mintempC": "10", "maxtempC": "19", "mintempF": "50", "maxtempF": "66",
             "hourly": []},
            {"date": "2026-05-18", "mintempC": "0", "maxtempC": "0", "mintempF": "32", "maxtempF": "32",
             "hourly": []}
        ]
    });
    let output = render_result("Portland, Maine", 200, &body.to_string());
    assert_eq!(
        output.content,
        "Portland, Maine, United States of America\n\
         Now: 14°C / 57°F, Light rain, feels like 12°C, humidity 81%, wind 22 km/h\n\
         2026-05-15 (today): 8–16°C / 46–61°F, Overcast\n\
         2026-05-16 (tomorrow): 9–18°C / 48–64°F, Sunny\n\
         2026-05-17: 10–19°C / 50–66°F"
    );
}

#[test]
fn a_body_without_a_nearest_area_is_no_such_place() {
    let output = render_result(
        "Nowhere",
        200,
        r#"{"current_condition": [], "weather": []}"#,
    );
    assert_eq!(
        output.content,
        "No such place: \"Nowhere\". wttr.in does not know it."
    );
    assert!(!output.is_error);
}

#[test]
fn a_non_200_or_non_json_answer_is_an_outage() {
    let busy = render_result("Madrid", 503, "Service Unavailable");
    assert!(busy.is_error);
    assert_eq!(
        busy.content,
        "The weather service could not be reached: it answered HTTP 503."
    );
    // A 404 is an outage too, unless its body says the place is unknown.
    let missing = render_result("Madrid", 404, "Not Found");
    assert!(missing.is_error);
    assert_eq!(
        missing.content,
        "The weather service could not be reached: it answered HTTP 404."
    );
    let html = render_result("Madrid", 200, "<html><body>wttr.in</body></html>");
    assert!(html.is_error);
    assert_eq!(
        html.content,
        "The weather service could not be reached: it did not return a forecast."
    );
}

// ---------------------------------------------------------------------------------------------
// Every fixture and every corpus line.

#[test]
fn every_fixture_loads_through_the_store_with_its_own_key_and_renders() {
    let store = fixture_store();
    let on_disk = std::fs::read_dir(fixtures_dir())
        .unwrap()
        .filter(|entry| {
            entry
                .as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|ext| ext == "json")
        })
        .count();
    // Loading already refuses two files of one key; every file is in the store.
    assert_eq!(store.len(), on_disk);
    assert!(store.len() >= 150, "only {} fixtures", store.len());
    for (path, fixture) in store.entries() {
        let name = path.display();
        assert_eq!(fixture.tool, TOOL_NAME, "{name}");
        let location = fixture.arguments["location"]
            .as_str()
            .expect("location argument");
        // The file answers for the arguments it was recorded with.
        let (found, _) = store.lookup(TOOL_NAME, &fixture.arguments).unwrap();
        assert_eq!(found, path);
        let output = render_result(location, fixture.status, &fixture.body_text());
        assert!(!output.is_error, "{name}: {}", output.content);
        if fixture.status == 200 && fixture.body.is_object() {
            // A report is the place, the conditions now and three days; else a refusal.
            if output.meta["outcome"] == "report" {
                assert_eq!(
                    output.content.lines().count(),
                    5,
                    "{name}: {}",
                    output.content
                );
            } else {
                assert!(output.content.starts_with("No such place"), "{name}");
            }
        } else {
            assert_eq!(
                output.content,
                format!("No such place: \"{location}\". wttr.in does not know it."),
                "{name}"
            );
        }
    }
}

#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Sample {
    id: String,
    category: String,
    prompt: String,
    location: Option<String>,
    resolved: Option<String>,
    unit: Option<String>,
    /// For forecast_day: the asked days, as the report labels them ("tomorrow", "2026-05-16").
    day: Option<Vec<String>>,
}

const CALL_CATEGORIES: [&str; 8] = [
    "plain_city",
    "city_country",
    "city_us_state",
    "shared_name",
    "nonexistent",
    "misspelled",
    "forecast_day",
    "units",
];
const NO_CALL_CATEGORIES: [&str; 2] = ["not_weather", "small_talk"];

fn corpus() -> Vec<Sample> {
    std::fs::read_to_string(corpus_path())
        .expect("corpus readable")
        .lines()
        .enumerate()
        .map(|(index, line)| {
            serde_json::from_str(line).unwrap_or_else(|err| panic!("line {}: {err}", index + 1))
        })
        .collect()
}

#[test]
fn the_corpus_is_well_formed_and_balanced() {
    let samples = corpus();
    assert!(samples.len() >= 130, "{} samples", samples.len());
    let mut ids = HashSet::new();
    let mut prompts = HashSet::new();
    let mut per_category: BTreeMap<&str, usize> = BTreeMap::new();
    for sample in &samples {
        assert!(ids.insert(sample.id.as_str()), "duplicate id {}", sample.id);
        assert!(
            prompts.insert(sample.prompt.as_str()),
            "duplicate prompt {}",
            sample.prompt
        );
        *per_category.entry(sample.category.as_str()).or_default() += 1;
        let wants_call = CALL_CATEGORIES.contains(&sample.category.as_str());
        assert!(
            wants_call || NO_CALL_CATEGORIES.contains(&sample.category.as_str()),
            "{}: unknown category {}",
            sample.id,
            sample.category
        );
        assert_eq!(sample.location.is_some(), wants_call, "{}", sample.id);
        if let Some(unit) = &sample.unit {
            assert!(unit == "F" || unit == "C", "{}: unit {unit}", sample.id);
        }
        if let Some(location) = &sample.location {
            // The location is what the user typed, so it has to appear in the prompt.
            assert!(
                sample
                    .prompt
                    .to_lowercase()
                    .contains(&location.to_lowercase()),
                "{}: {location} not in the prompt",
                sample.id
            );
        }
    }
    for category in CALL_CATEGORIES.iter().chain(&NO_CALL_CATEGORIES) {
        let count = per_category.get(category).copied().unwrap_or_default();
        assert!((12..=16).contains(&count), "{category}: {count} samples");
    }
    assert!(samples
        .iter()
        .filter(|s| s.category == "units")
        .all(|s| s.unit.is_some()));
    for sample in &samples {
        let asks_a_day = sample.category == "forecast_day";
        assert_eq!(sample.day.is_some(), asks_a_day, "{}", sample.id);
    }
}

#[test]
fn every_corpus_location_has_a_fixture_whose_answer_names_the_resolved_place() {
    let store = fixture_store();
    for sample in corpus() {
        let Some(location) = &sample.location else {
            continue;
        };
        let (_, fixture) = store
            .lookup(TOOL_NAME, &location_arguments(location))
            .unwrap_or_else(|| panic!("{}: no fixture for {location}", sample.id));
        let output = render_result(location, fixture.status, &fixture.body_text());
        if let Some(resolved) = &sample.resolved {
            assert!(
                output.meta["outcome"] == "report"
                    && first_line(&output).contains(resolved.as_str()),
                "{}: {resolved} not on the first line of {}",
                sample.id,
                output.content
            );
        }
        if sample.category == "nonexistent" && sample.resolved.is_none() {
            assert!(output.content.starts_with("No such place"), "{}", sample.id);
        }
        // Each asked day labels one line of the forecast.
        for day in sample.day.iter().flatten() {
            let labelled = output
                .content
                .lines()
                .filter(|line| line.starts_with(day.as_str()) || line.contains(&format!("({day})")))
                .count();
            assert_eq!(labelled, 1, "{}: {day} in {}", sample.id, output.content);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The tool definition and replay.

#[test]
fn the_tool_is_a_gated_read_with_one_required_string() {
    let tool = tool_def(Arc::new(WeatherService::new()));
    assert_eq!(tool.name, "weather_lookup");
    assert_eq!(tool.effect, Effect::Read);
    assert_eq!(tool.skill_gate.as_deref(), Some("weather"));
    assert_eq!(tool.parameters, parameters_schema());
    assert_eq!(tool.parameters["required"], json!(["location"]));
    assert_eq!(tool.parameters["properties"]["location"]["type"], "string");
    let description = tool.parameters["properties"]["location"]["description"]
        .as_str()
        .unwrap();
    // The model is told to keep the qualifier, with a shared-name example.
    assert!(description.contains("user's own words"), "{description}");
    assert!(description.contains("Paris, Texas"), "{description}");

    // Bad arguments are answered without any network call.
    for arguments in [
        json!({}),
        json!({"location": 7}),
        json!({"location": "  ,. "}),
    ] {
        let output = (tool.executor)(arguments.as_object().unwrap());
        assert!(output.is_error, "{arguments}");
        assert_eq!(output.content, "location must be a non-empty string");
    }
}

/// `weather_lookup` as a pack declares it, answered from `dir`.
fn weather_tool_spec(dir: &Path) -> ToolSpec {
    let route = weather_route(dir);
    ToolSpec {
        name: TOOL_NAME.into(),
        kind: TOOL_NAME.into(),
        description: None,
        parameters: None,
        skill_gate: None,
        fixtures: Some(route.dir),
        key_arguments: route.key_arguments,
        folds: route.folds,
        unrecorded: None,
        ..Default::default()
    }
}

#[test]
fn replay_answers_from_fixtures_and_marks_gaps() {
    let spec = weather_tool_spec(&fixtures_dir());
    let registry = build_registry(
        &[spec],
        Arc::new(fixture_store()),
        RecordMode::Off,
        LiveServices::default(),
    );
    let tool = registry.get(TOOL_NAME).unwrap();
    // Offered as the live tool is: same schema, same gate.
    let live = tool_def(Arc::new(WeatherService::new()));
    assert_eq!(
        (&tool.parameters, &tool.skill_gate),
        (&live.parameters, &live.skill_gate)
    );

    let hit = (tool.executor)(&location_arguments("  nassau, bahamas "));
    assert!(hit.content.starts_with("Nassau, New Providence, Bahamas\n"));
    assert!(hit.meta["fixture"]
        .as_str()
        .unwrap()
        .ends_with("nassau-bahamas.json"));
    // The report's own facts stay beside the fixture's name.
    assert_eq!(hit.meta["verification"], "verified");
    assert!(hit.meta.get("gap").is_none());

    let gap = (tool.executor)(&location_arguments("Ulaanbaatar"));
    assert!(gap.is_error);
    assert_eq!(gap.meta["gap"], true);
    assert!(
        gap.content.starts_with("No recording for this call"),
        "{}",
        gap.content
    );

    // What the live tool refuses is refused the same way, not counted as a gap.
    let empty = (tool.executor)(&location_arguments(" ,. "));
    assert_eq!(empty, (live.executor)(&location_arguments(" ,. ")));
    assert!(empty.is_error && empty.meta.get("gap").is_none());
}

#[test]
fn keys_ignore_case_white_space_and_punctuation() {
    let store = fixture_store();
    let texas = recorded(&store, "Paris, Texas");
    for asked in ["paris texas", "  PARIS,  TEXAS. ", "Paris - Texas"] {
        assert_eq!(recorded(&store, asked), texas, "{asked}");
    }
    assert_ne!(recorded(&store, "Paris, France"), texas);
    // Case folds beyond ASCII; accents are kept, so a name without them is another key.
    assert_eq!(recorded(&store, "SÃO PAULO"), recorded(&store, "São Paulo"));
    assert!(store
        .lookup(TOOL_NAME, &location_arguments("Sao Paulo"))
        .is_none());
}

#[test]
fn a_recorded_answer_round_trips_through_a_fixture_file() {
    let dir = tempfile::tempdir().unwrap();
    let store = FixtureStore::load(vec![weather_route(dir.path())]).unwrap();
    let original = recorded(&fixture_store(), "Paris, Texas");
    let live = Fetched {
        status: 200,
        body: original.body_text(),
    };
    let unknown = Fetched {
        status: 404,
        body: "Unknown location; please try ~Xyzzy\n".into(),
    };
    for (location, fetched) in [("Paris, Texas", &live), ("Xyzzy", &unknown)] {
        store
            .record(Fixture {
                tool: TOOL_NAME.into(),
                arguments: location_arguments(location),
                recorded_from_live: true,
                note: None,
                status: fetched.status,
                body: Fixture::body_from_text(&fetched.body),
                ..Default::default()
            })
            .unwrap();
    }
    assert!(dir.path().join("paris-texas.json").is_file());
    assert!(dir.path().join("xyzzy.json").is_file());

    let reloaded = FixtureStore::load(vec![weather_route(dir.path())]).unwrap();
    assert_eq!(reloaded.len(), 2);
    let stored = recorded(&reloaded, "Paris, Texas");
    assert!(stored.recorded_from_live);
    assert!(stored.body.is_object(), "a JSON answer is stored as JSON");
    assert_eq!(
        render_result("Paris, Texas", stored.status, &stored.body_text()),
        render_result("Paris, Texas", 200, &live.body)
    );
    assert_eq!(recorded(&reloaded, "Xyzzy").body, json!(unknown.body));
}

// ---------------------------------------------------------------------------------------------
// The live client against a loopback stand-in.

enum Reply {
    /// Bytes written as the whole response, then the connection closes.
    Raw(Vec<u8>),
    /// Accept, read the request, and say nothing for this long.
    Silent(Duration),
}

struct StandIn {
    base_url: String,
    requests: Arc<Mutex<Vec<String>>>,
    thread: Option<JoinHandle<()>>,
}

impl StandIn {
    /// Serves `replies` in order, one connection each, then stops. Gives up after 10 s idle so a
    /// failing test cannot hang the suite.
    fn start(replies: Vec<Reply>) -> StandIn {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let base_url = format!("http://{}", listener.local_addr().unwrap());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&requests);
        let thread = std::thread::spawn(move || {
            for reply in replies {
                let deadline = Instant::now() + Duration::from_secs(10);
                let mut stream = loop {
                    match listener.accept() {
                        Ok((stream, _)) => break stream,
                        Err(_) if Instant::now() < deadline => {
                            std::thread::sleep(Duration::from_millis(5))
                        }
                        Err(_) => return,
                    }
                };
                stream.set_nonblocking(false).unwrap();
                stream
                    .set_read_timeout(Some(Duration::from_secs(5)))
                    .unwrap();
                let mut head = String::new();
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                    head.push_str(&line);
                }
                seen.lock().unwrap().push(head);
                match reply {
                    Reply::Raw(bytes) => {
                        let _ = stream.write_all(&bytes);
                    }
                    Reply::Silent(pause) => std::thread::sleep(pause),
                }
            }
        });
        StandIn {
            base_url,
            requests,
            thread: Some(thread),
        }
    }

    fn service(&self) -> WeatherService {
        WeatherService::new()
            .with_base_url(&self.base_url)
            .allow_loopback()
    }

    /// Request heads received, after the server has finished.
    fn finish(mut self) -> Vec<String> {
        self.thread.take().unwrap().join().unwrap();
        self.requests.lock().unwrap().clone()
    }
}

fn response(status: &str, headers: &[(&str, &str)], body: &[u8]) -> Reply {
    let mut bytes = format!("HTTP/1.1 {status}\r\nConnection: close\r\n").into_bytes();
    for (name, value) in headers {
        bytes.extend_from_slice(format!("{name}: {value}\r\n").as_bytes());
    }
    bytes.extend_from_slice(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes());
    bytes.extend_from_slice(body);
    Reply::Raw(bytes)
}

fn json_response(body: &str) -> Reply {
    response(
        "200 OK",
        &[("Content-Type", "application/json")],
        body.as_bytes(),
    )
}

#[test]
fn a_live_lookup_asks_for_j1_with_our_user_agent_and_renders_the_answer() {
    let body = recorded(&fixture_store(), "Paris, Texas").body_text();
    let server = StandIn::start(vec![json_response(&body), json_response(&body)]);
    let service = server.service();

    let fetched = service.fetch("Paris, Texas").unwrap();
    assert_eq!(
        fetched,
        Fetched {
            status: 200,
            body: body.clone()
        }
    );
    let output = service.lookup("Paris, Texas");
    assert!(!output.is_error);
    assert_eq!(output, render_result("Paris, Texas", 200, &body));

    let requests = server.finish();
    assert_eq!(requests.len(), 2);
    let head = requests[0].to_lowercase();
    assert!(
        head.starts_with("get /paris%2c%20texas?format=j1 http/1.1\r\n"),
        "{head}"
    );
    let user_agent = format!("user-agent: skilleval/{}\r\n", env!("CARGO_PKG_VERSION"));
    assert!(head.contains(&user_agent), "{head}");
}

#[test]
fn an_error_status_is_fetched_as_is_and_rendered_as_an_outage() {
    let server = StandIn::start(vec![
        response("503 Service Unavailable", &[], b"busy, try later"),
        response("503 Service Unavailable", &[], b"busy, try later"),
    ]);
    let service = server.service();
    let fetched = service.fetch("Madrid").unwrap();
    assert_eq!(
        fetched,
        Fetched {
            status: 503,
            body: "busy, try later".into()
        }
    );
    let output = service.lookup("Madrid");
    assert!(output.is_error);
    assert_eq!(
        output.content,
        "The weather service could not be reached: it answered HTTP 503."
    );
    server.finish();
}

#[test]
fn an_unknown_place_is_no_such_place_whatever_the_status() {
    let server = StandIn::start(vec![
        response(
            "500 Internal Server Error",
            &[],
            b"location not found: no match for Gondor\n",
        ),
        response(
            "404 Not Found",
            &[],
            b"Unknown location; please try ~Narnia\n",
        ),
        response("200 OK", &[], b"Unknown location; please try ~Mordor\n"),
    ]);
    let service = server.service();
    assert_eq!(
        service.lookup("Gondor").content,
        "No such place: \"Gondor\". wttr.in does not know it."
    );
    let narnia = service.lookup("Narnia");
    assert_eq!(
        narnia.content,
        "No such place: \"Narnia\". wttr.in does not know it."
    );
    assert!(!narnia.is_error);
    assert_eq!(narnia.meta["outcome"], "not_found");
    assert_eq!(
        service.lookup("Mordor").content,
        "No such place: \"Mordor\". wttr.in does not know it."
    );
    server.finish();
}

#[test]
fn a_body_that_is_not_json_is_an_outage() {
    let server = StandIn::start(vec![response(
        "200 OK",
        &[("Content-Type", "text/html")],
        b"<html><body>Weather report: Madrid</body></html>",
    )]);
    let output = server.service().lookup("Madrid");
    assert!(output.is_error);
    assert_eq!(
        output.content,
        "The weather service could not be reached: it did not return a forecast."
    );
    server.finish();
}

#[test]
fn a_redirect_is_refused_and_not_followed() {
    let server = StandIn::start(vec![response(
        "302 Found",
        &[("Location", "http://127.0.0.1:9/elsewhere")],
        b"",
    )]);
    let service = server.service();
    match service.fetch("Madrid") {
        Err(FetchError::Redirected { status, location }) => {
            assert_eq!(status, 302);
            assert_eq!(location.as_deref(), Some("http://127.0.0.1:9/elsewhere"));
        }
        other => panic!("expected a refused redirect, got {other:?}"),
    }
    let requests = server.finish();
    assert_eq!(requests.len(), 1, "the redirect must not be followed");

    let server = StandIn::start(vec![response(
        "301 Moved Permanently",
        &[("Location", "/x")],
        b"",
    )]);
    let output = server.service().lookup("Madrid");
    assert!(output.is_error);
    assert_eq!(
        output.content,
        "wttr.in redirected the lookup for \"Madrid\""
    );
    server.finish();
}

#[test]
fn a_declared_oversize_body_is_refused() {
    let huge = vec![b' '; 400_001];
    let server = StandIn::start(vec![response("200 OK", &[], &huge)]);
    let result = server.service().fetch("Madrid");
    assert!(
        matches!(result, Err(FetchError::TooLarge { limit: 400_000 })),
        "{result:?}"
    );
    server.finish();
}

#[test]
fn an_undeclared_oversize_body_is_cut_off_at_the_cap() {
    // No Content-Length: the body runs until the connection closes, so only the read cap stops it.
    let mut bytes = b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n".to_vec();
    bytes.extend(std::iter::repeat_n(b'x', 450_000));
    let server = StandIn::start(vec![Reply::Raw(bytes)]);
    let output = server.service().lookup("Madrid");
    assert!(output.is_error);
    assert_eq!(
        output.content,
        "The weather service could not be reached: its answer was larger than the 400000-byte limit."
    );
    server.finish();
}

#[test]
fn a_body_at_the_cap_is_accepted() {
    let mut body = String::from("Unknown location; please try ~Narnia");
    body.push_str(&" ".repeat(400_000 - body.len()));
    let server = StandIn::start(vec![response("404 Not Found", &[], body.as_bytes())]);
    let fetched = server.service().fetch("Narnia").unwrap();
    assert_eq!(fetched.body.len(), 400_000);
    server.finish();
}

#[test]
fn a_silent_server_times_out() {
    let server = StandIn::start(vec![Reply::Silent(Duration::from_millis(1500))]);
    let service = server.service().with_timeout(Duration::from_millis(200));
    let started = Instant::now();
    let output = service.lookup("Madrid");
    assert!(
        started.elapsed() < Duration::from_millis(1200),
        "{:?}",
        started.elapsed()
    );
    assert!(output.is_error);
    assert_eq!(output.content, "weather_lookup timed out after 200 ms");
    server.finish();
}

#[test]
fn private_and_local_addresses_are_refused_by_the_resolver() {
    // Called directly: a regression here must not turn into packets sent to a private network.
    for (netloc, address) in [
        ("10.255.255.1:443", "10.255.255.1"),
        ("192.168.1.1:443", "192.168.1.1"),
        ("172.16.0.1:443", "172.16.0.1"),
        ("169.254.169.254:80", "169.254.169.254"),
        ("100.64.0.1:443", "100.64.0.1"),
        ("0.0.0.0:443", "0.0.0.0"),
        ("[fd00::1]:443", "fd00::1"),
        ("[fe80::1]:443", "fe80::1"),
        ("[::ffff:10.0.0.1]:443", "::ffff:10.0.0.1"),
    ] {
        let err = resolve_public(netloc, true).expect_err(netloc);
        let blocked = err
            .get_ref()
            .and_then(|inner| inner.downcast_ref::<BlockedAddress>())
            .unwrap_or_else(|| panic!("{netloc}: {err}"));
        assert_eq!(
            blocked.address,
            address.parse::<IpAddr>().unwrap(),
            "{netloc}"
        );
    }
    let public = resolve_public("1.1.1.1:443", false).unwrap();
    assert_eq!(public, vec!["1.1.1.1:443".parse().unwrap()]);
    let loopback = resolve_public("127.0.0.1:8080", true).unwrap();
    assert_eq!(loopback, vec!["127.0.0.1:8080".parse().unwrap()]);
}

#[test]
fn loopback_is_refused_unless_allowed() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    for base_url in [
        format!("http://127.0.0.1:{port}"),
        format!("http://localhost:{port}"),
    ] {
        let service = WeatherService::new().with_base_url(&base_url);
        match service.fetch("Madrid") {
            Err(FetchError::Blocked(blocked)) => assert!(blocked.address.is_loopback()),
            other => panic!("{base_url}: expected a refusal, got {other:?}"),
        }
        let output = service.lookup("Madrid");
        assert!(output.is_error);
        assert!(
            output
                .content
                .starts_with("The weather service could not be reached: ")
                && output
                    .content
                    .contains("not a public address, so it was not contacted"),
            "{}",
            output.content
        );
    }
    assert!(listener.accept().is_err(), "nothing may have connected");
}

#[test]
fn the_default_service_is_wttr_in_over_https() {
    let service = WeatherService::new();
    assert_eq!(service.base_url(), "https://wttr.in");
    assert_eq!(
        service.url_for("Nassau, Bahamas"),
        "https://wttr.in/Nassau%2C%20Bahamas?format=j1"
    );
}

#[test]
fn a_location_cannot_escape_its_path_segment() {
    assert_eq!(percent_encode("Paris, Texas"), "Paris%2C%20Texas");
    assert_eq!(percent_encode("a/b?c=d#e&f"), "a%2Fb%3Fc%3Dd%23e%26f");
    assert_eq!(percent_encode("São Paulo"), "S%C3%A3o%20Paulo");
    assert_eq!(percent_encode("St.-Jean_~"), "St.-Jean_~");
}

#[test]
fn public_address_classification() {
    let public = ["1.1.1.1", "5.9.243.187", "100.128.0.1", "2606:4700::1111"];
    let not_public = [
        "127.0.0.1",
        "10.1.2.3",
        "172.31.255.255",
        "192.168.0.10",
        "169.254.1.1",
        "100.64.0.1",
        "100.127.255.254",
        "0.0.0.0",
        "255.255.255.255",
        "224.0.0.1",
        "::1",
        "::",
        "fc00::1",
        "fdff::1",
        "fe80::1",
        "ff02::1",
        "::ffff:192.168.1.1",
    ];
    for address in public {
        assert!(is_public_address(address.parse().unwrap()), "{address}");
    }
    for address in not_public {
        assert!(!is_public_address(address.parse().unwrap()), "{address}");
    }
}
