//! For the tests that run the harness without a model: the test packs, temporary copies of
//! them, deterministic models that answer from the prompt, and scripts for the scripted backend
//! written in the order the runner asks for replies.

use std::path::{Path, PathBuf};

use regex::Regex;
use serde_json::{Map, Value};
use skilleval::eval::arm::{self, Arm};
use skilleval::eval::corpus::Sample;
use skilleval::eval::pack::Pack;
use skilleval::eval::plan::{self, Unit};
use skilleval::harness::backend::{FinishReason, GenMetrics, GenRequest, Generation};
use skilleval::harness::toolcall::render::render_call;
use skilleval::harness::toolcall::CallFormat;

use super::files::copy_dir;

/// `text` as a backend returns it for `request`, with word counts for token counts.
pub fn word_counted(request: &GenRequest, text: String, finish: FinishReason) -> Generation {
    Generation {
        metrics: GenMetrics {
            prompt_tokens: request.prompt.split_whitespace().count() as u32,
            generated_tokens: text.split_whitespace().count() as u32,
            ..Default::default()
        },
        text,
        finish,
    }
}

pub fn packs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/packs")
}

pub fn mini_pack_dir() -> PathBuf {
    packs_dir().join("mini")
}

/// A copy of a test pack in a temporary folder, to edit or to record into.
pub fn copy_pack(name: &str) -> (tempfile::TempDir, PathBuf) {
    let temp = tempfile::tempdir().expect("temporary folder");
    let dir = temp.path().join(name);
    copy_dir(&packs_dir().join(name), &dir);
    (temp, dir)
}

/// Replaces the one occurrence of `old` in a file; panics when it is not there exactly once,
/// so a test cannot silently run on an unchanged pack.
pub fn edit(path: &Path, old: &str, new: &str) {
    let text = std::fs::read_to_string(path).expect("read file to edit");
    assert_eq!(
        text.matches(old).count(),
        1,
        "{old:?} in {}",
        path.display()
    );
    std::fs::write(path, text.replacen(old, new, 1)).expect("write edited file");
}

/// A call as the default (Gemma) family writes it.
pub fn call(tool: &str, argument: &str, value: &str) -> String {
    let mut arguments = Map::new();
    arguments.insert(argument.to_string(), Value::String(value.to_string()));
    render_call(CallFormat::Markup, tool, &arguments)
}

/// What a diligent model says to the mini pack, from the prompt alone: it asks for the station
/// the user named, then repeats the reading the tool returned.
#[derive(Clone)]
pub struct StationReplies {
    /// (user prompt, station) for the corpus samples that name one.
    stations: std::sync::Arc<Vec<(String, String)>>,
}

impl StationReplies {
    pub fn new(pack: &Pack) -> Self {
        let stations = pack
            .corpus(None)
            .unwrap()
            .iter()
            .filter_map(|s| {
                let station = s.fields.get("station")?.as_str()?.to_string();
                Some((s.prompt_text().to_string(), station))
            })
            .collect();
        StationReplies {
            stations: std::sync::Arc::new(stations),
        }
    }

    /// The reply to `request` as a backend returns it, with word counts for token counts.
    pub fn generation(&self, request: &GenRequest) -> Generation {
        word_counted(request, self.reply(&request.prompt), FinishReason::Eos)
    }

    pub fn reply(&self, prompt: &str) -> String {
        let reading = Regex::new(r"(-?\d+(?:\.\d+)?) °C").unwrap();
        if let Some((_, station)) = self.stations.iter().find(|(p, _)| prompt.contains(p)) {
            return match prompt.rfind("station_reading returned:") {
                Some(at) => match reading.captures(&prompt[at..]) {
                    Some(c) => format!("The station reports {} °C.", &c[1]),
                    None => "The station has no reading.".into(),
                },
                None => call("station_reading", "station", station),
            };
        }
        "Glad to help. Have a good day!".into()
    }
}

/// A model that answers from the prompt alone and serves any number of callers: it asks for
/// the station the user named, then repeats the reading the tool returned.
#[derive(Clone)]
pub struct Stations {
    replies: StationReplies,
}

impl Stations {
    pub fn new(pack: &Pack) -> Self {
        Stations {
            replies: StationReplies::new(pack),
        }
    }
}

impl skilleval::harness::backend::Backend for Stations {
    fn family(&self) -> skilleval::harness::template::Family {
        skilleval::harness::template::Family::Gemma
    }

    fn info(&self) -> skilleval::harness::backend::BackendInfo {
        skilleval::harness::backend::BackendInfo {
            name: "stations".into(),
            ..Default::default()
        }
    }

    fn generate(&mut self, request: &GenRequest) -> anyhow::Result<Generation> {
        Ok(self.replies.generation(request))
    }

    fn fork(&self) -> Option<Box<dyn skilleval::harness::backend::Backend + Send>> {
        Some(Box::new(self.clone()))
    }
}

/// The scripted backend's replies for a whole run with the control arm (the default). The
/// runner asks in plan order (repeat, then arm, then sample) and each unit takes as many
/// replies as it has rounds, so the script is written by walking the same plan. `skip` leaves
/// out the first units (already journaled).
pub fn script(
    samples: &[Sample],
    repeats: u32,
    aa: bool,
    skip: usize,
    replies_for: impl Fn(&Sample, Arm) -> Vec<String>,
) -> Vec<String> {
    script_for(samples, repeats, true, aa, skip, replies_for)
}

/// [`script`] for a run with or without the control arm.
pub fn script_for(
    samples: &[Sample],
    repeats: u32,
    control: bool,
    aa: bool,
    skip: usize,
    replies_for: impl Fn(&Sample, Arm) -> Vec<String>,
) -> Vec<String> {
    plan::plan(samples, repeats, 0, &arm::in_plan_order(control, 1), aa)
        .iter()
        .skip(skip)
        .flat_map(|unit: &Unit| replies_for(&samples[unit.sample_index], unit.arm))
        .collect()
}

/// The temperature recorded for a station, or a stand-in for a station with no recording.
pub fn reading_of(station: &str) -> String {
    let dir = mini_pack_dir().join("fixtures/station_reading");
    let wanted = fold(station);
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let fixture: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(entry.path()).unwrap()).unwrap();
        if fold(fixture["arguments"]["station"].as_str().unwrap()) == wanted {
            let body = fixture["body"].as_str().unwrap();
            let degrees = body.split(':').nth(1).unwrap().trim();
            return degrees.split(',').next().unwrap().to_string();
        }
    }
    "no reading".into()
}

fn fold(text: &str) -> String {
    text.to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Lines of a file that are not blank.
pub fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(str::to_string)
        .collect()
}
