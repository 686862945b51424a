//! A skill that brings its own scripts: the shipped parcels pack, whose `pack.toml` lists no
//! tools, offers its skill's `scripts/quote_postage.py` and `scripts/track_parcel.py` once the
//! skill loads, records them as command tools and replays the recordings.
//!
//! The truths are Python's own: the description the model reads is what `python3 SCRIPT
//! --help` prints, and a recording holds what the script prints when run by hand on the
//! recording's arguments. The runs here use a model that answers from the prompt alone (fast
//! tier); the full-tier test runs the real default model.

mod common;

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use skilleval::eval::fixture_store::Fixture;
use skilleval::eval::pack::Pack;
use skilleval::eval::replay::RecordMode;
use skilleval::eval::runner::{self, RunOptions};
use skilleval::harness::backend::{Backend, BackendInfo, FinishReason, GenRequest, Generation};
use skilleval::harness::template::Family;
use skilleval::harness::toolcall::render::render_call;
use skilleval::harness::toolcall::CallFormat;

use common::files::copy_dir;
use common::options::run_options;

const SCRIPTS: [&str; 2] = ["quote_postage", "track_parcel"];

/// The parcels pack in a temporary folder, its recordings removed.
fn parcels_copy(temp: &Path) -> PathBuf {
    let dir = temp.join("parcels");
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("packs/parcels"),
        &dir,
    );
    for tool in SCRIPTS {
        let fixtures = dir.join("fixtures").join(tool);
        let _ = std::fs::remove_dir_all(&fixtures);
        std::fs::create_dir_all(&fixtures).unwrap();
    }
    dir
}

fn script_path(pack_dir: &Path, tool: &str) -> PathBuf {
    pack_dir.join(format!("skills/parcel-post/scripts/{tool}.py"))
}

/// What the script prints for `args`, run by hand.
fn by_hand(pack_dir: &Path, tool: &str, args: &[String]) -> String {
    let out = std::process::Command::new("python3")
        .arg("-B")
        .arg(script_path(pack_dir, tool))
        .args(args)
        .env("COLUMNS", "100")
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap()
}

/// The call a sample needs, if any: the tool and its arguments.
type NeededCall = Option<(String, Map<String, Value>)>;

/// A model that calls the tool each sample needs with the sample's own values, then repeats
/// what the tool returned; for a sample that needs no tool, it answers at once.
#[derive(Clone)]
struct Clerk {
    /// (prompt, the call it needs, if any).
    samples: Vec<(String, NeededCall)>,
}

impl Clerk {
    fn new(pack: &Pack) -> Clerk {
        let samples = pack
            .corpus(None)
            .unwrap()
            .iter()
            .map(|s| {
                let call = |tool: &str, fields: &[&str]| {
                    let arguments: Map<String, Value> = fields
                        .iter()
                        .map(|f| (f.to_string(), s.fields[*f].clone()))
                        .collect();
                    Some((tool.to_string(), arguments))
                };
                let needed = match s.category.as_str() {
                    "needs_quote_postage" => {
                        call("quote_postage", &["weight_grams", "destination"])
                    }
                    "needs_track_parcel" => call("track_parcel", &["tracking_number"]),
                    _ => None,
                };
                (s.prompt_text().to_string(), needed)
            })
            .collect();
        Clerk { samples }
    }

    fn reply(&self, prompt: &str) -> String {
        let Some((asked, needed)) = self
            .samples
            .iter()
            .filter_map(|(p, needed)| prompt.rfind(p.as_str()).map(|at| (at, needed)))
            .max_by_key(|(at, _)| *at)
        else {
            return "I cannot tell.".into();
        };
        let Some((tool, arguments)) = needed else {
            return "Happy to help with that.".into();
        };
        let after = &prompt[asked..];
        match after.rfind(&format!("{tool} returned:")) {
            Some(at) => {
                let result = after[at..].lines().nth(1).unwrap_or_default();
                format!("The post office says: {result}")
            }
            None => render_call(CallFormat::Markup, tool, arguments),
        }
    }
}

impl Backend for Clerk {
    fn family(&self) -> Family {
        Family::Gemma
    }

    fn info(&self) -> BackendInfo {
        BackendInfo {
            name: "clerk".into(),
            ..Default::default()
        }
    }

    fn generate(&mut self, request: &GenRequest) -> anyhow::Result<Generation> {
        Ok(common::scripted::word_counted(
            request,
            self.reply(&request.prompt),
            FinishReason::Eos,
        ))
    }

    fn fork(&self) -> Option<Box<dyn Backend + Send>> {
        Some(Box::new(self.clone()))
    }
}

fn options(pack_dir: &Path, output: PathBuf, record: RecordMode) -> RunOptions {
    let mut opts = run_options(pack_dir, &output, 1);
    opts.record = record;
    opts.control = false;
    opts
}

fn recordings(pack_dir: &Path, tool: &str) -> Vec<Fixture> {
    std::fs::read_dir(pack_dir.join("fixtures").join(tool))
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
        .map(|e| serde_json::from_str(&std::fs::read_to_string(e.path()).unwrap()).unwrap())
        .collect()
}

/// Truth: Python's argparse (`--help`, and the script run by hand). The pack lists no tools;
/// each script is one, gated on its skill, described by its own help.
#[test]
fn each_script_is_a_tool_described_by_its_own_help() {
    let temp = tempfile::tempdir().unwrap();
    let pack_dir = parcels_copy(temp.path());
    let toml = std::fs::read_to_string(pack_dir.join("pack.toml")).unwrap();
    assert!(
        !toml.lines().any(|l| l.trim() == "[[tools]]"),
        "the pack lists its tools"
    );
    let pack = Pack::load(pack_dir.to_str().unwrap()).unwrap();
    for tool in SCRIPTS {
        let spec = pack.tools.iter().find(|t| t.name == tool).expect(tool);
        let help = by_hand(&pack_dir, tool, &["--help".to_string()]);
        assert_eq!(spec.description.as_deref(), Some(help.trim_end()), "{tool}");
        assert_eq!(spec.skill_gate.as_deref(), Some("parcel-post"));
        assert_eq!(spec.kind, "command");
    }
}

/// Truth: the scripts themselves, run by hand on each recording's arguments. A recording run
/// keeps what each script printed; a replay, with the script's answers changed on disk since,
/// still gives the recorded answers, so it never ran the scripts.
#[test]
fn a_skill_folder_with_scripts_records_and_replays() {
    let temp = tempfile::tempdir().unwrap();
    let pack_dir = parcels_copy(temp.path());
    let pack = Pack::load(pack_dir.to_str().unwrap()).unwrap();
    let mut clerk = Clerk::new(&pack);
    let recorded = runner::run(
        &mut clerk,
        &options(&pack_dir, temp.path().join("recorded"), RecordMode::Gaps),
    )
    .unwrap();
    let mut checked = 0;
    for tool in SCRIPTS {
        let spec = pack.tools.iter().find(|t| t.name == tool).unwrap();
        let interface = spec.script.as_ref().unwrap();
        let kept = recordings(&pack_dir, tool);
        assert!(kept.len() >= 5, "{tool}: {} recordings", kept.len());
        for fixture in kept {
            assert!(fixture.recorded_from_live);
            let line = interface.command_line(&fixture.arguments);
            assert_eq!(
                (fixture.status, fixture.body_text()),
                (200, by_hand(&pack_dir, tool, &line)),
                "{tool} {:?}",
                fixture.arguments
            );
            checked += 1;
        }
    }
    assert!(checked >= 10);

    // The tariff changes on disk, the help does not: a replay answers from the recordings.
    let quote = script_path(&pack_dir, "quote_postage");
    let text = std::fs::read_to_string(&quote).unwrap();
    std::fs::write(&quote, text.replace("(395, 120)", "(999, 999)")).unwrap();
    let replayed = runner::run(
        &mut clerk,
        &options(&pack_dir, temp.path().join("replayed"), RecordMode::Off),
    )
    .unwrap();
    assert_eq!(recorded.entries.len(), replayed.entries.len());
    let passed = |entries: &[skilleval::eval::record::JournalEntry]| {
        entries.iter().filter(|e| e.judgement.passed).count()
    };
    assert_eq!(passed(&recorded.entries), recorded.entries.len());
    for (first, again) in recorded.entries.iter().zip(&replayed.entries) {
        let texts = |e: &skilleval::eval::record::JournalEntry| -> Vec<String> {
            e.transcript.rounds.iter().map(|r| r.raw.clone()).collect()
        };
        assert_eq!(texts(first), texts(again), "{}", first.sample_id);
    }
}

/// Truth: a change. Another help text is another description, and the manifest's digest of
/// what the model reads of the scripts moves with it (as does the skills tree's).
#[test]
fn a_changed_help_text_changes_what_the_model_reads_and_the_digest() {
    let temp = tempfile::tempdir().unwrap();
    let pack_dir = parcels_copy(temp.path());
    let digests = |dir: &Path| {
        let pack = Pack::load(dir.to_str().unwrap()).unwrap();
        let hashes = pack
            .input_hashes(&pack.skills_dir, &[], &pack.corpus_path)
            .unwrap();
        let description = pack.tools[0].description.clone().unwrap();
        (hashes, description)
    };
    let (before, old) = digests(&pack_dir);
    let quote = script_path(&pack_dir, "quote_postage");
    let text = std::fs::read_to_string(&quote).unwrap();
    std::fs::write(
        &quote,
        text.replace(
            "Price of posting one parcel, in pounds sterling.",
            "What one parcel costs to post, in pounds.",
        ),
    )
    .unwrap();
    let (after, new) = digests(&pack_dir);
    assert!(old.contains("Price of posting one parcel"), "{old}");
    assert!(new.contains("What one parcel costs to post"), "{new}");
    assert!(before.script_tools.is_some());
    assert_ne!(before.script_tools, after.script_tools);
    assert_ne!(before.skills, after.skills);
}

/// Truth: a change. A script that cannot be read as a tool stops the pack before any model
/// loads, with one line naming the script and what is wrong.
#[test]
fn a_script_that_cannot_be_a_tool_is_named_in_one_line() {
    let temp = tempfile::tempdir().unwrap();
    let pack_dir = parcels_copy(temp.path());
    let scripts = pack_dir.join("skills/parcel-post/scripts");
    let cases = [
        (
            "helper.py",
            "print('no parser here')\n",
            "has no get_args()",
        ),
        (
            "raises.py",
            "def get_args():\n    raise ValueError('bad')\n",
            "get_args() failed: ValueError: bad",
        ),
        ("run.sh", "#!/bin/sh\necho hi\n", "[script_executables]"),
    ];
    for (file, text, expected) in cases {
        let path = scripts.join(file);
        std::fs::write(&path, text).unwrap();
        if file.ends_with(".sh") {
            use std::os::unix::fs::PermissionsExt as _;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let error = Pack::load(pack_dir.to_str().unwrap())
            .unwrap_err()
            .to_string();
        assert!(error.contains(file) && error.contains(expected), "{error}");
        assert_eq!(error.lines().count(), 1, "{error}");
        std::fs::remove_file(&path).unwrap();
    }
    // A helper the scripts import, named with a leading `_`, is no tool.
    std::fs::write(scripts.join("_shared.py"), "X = 1\n").unwrap();
    assert!(Pack::load(pack_dir.to_str().unwrap()).is_ok());
}

/// Truth: a change. An executable declared in one line is a tool too, called as a command
/// tool is (its arguments as JSON on stdin).
#[test]
fn an_executable_declared_in_one_line_is_a_tool() {
    let temp = tempfile::tempdir().unwrap();
    let pack_dir = parcels_copy(temp.path());
    let path = pack_dir.join("skills/parcel-post/scripts/opening_hours.sh");
    std::fs::write(&path, "#!/bin/sh\necho 'Open 9 to 5.'\n").unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    let file = pack_dir.join("pack.toml");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(
        &file,
        text + "\n[script_executables]\n\"parcel-post/scripts/opening_hours.sh\" = { description = \"When the post office is open.\", parameters = { type = \"object\", properties = {} } }\n",
    )
    .unwrap();
    let pack = Pack::load(pack_dir.to_str().unwrap()).unwrap();
    let spec = pack
        .tools
        .iter()
        .find(|t| t.name == "opening_hours.sh")
        .expect("the executable is a tool");
    assert_eq!(
        spec.description.as_deref(),
        Some("When the post office is open.")
    );
    assert!(spec.script.is_none());
}

/// The real default model on a few samples, one repeat: the scripts are offered, what the
/// model calls is recorded, and a replay gives the same transcripts. Truth: the scripts run by
/// hand on each recording's arguments.
#[test]
#[cfg_attr(not(feature = "full-tier"), ignore = "full tier")]
fn the_real_model_runs_records_and_replays_a_skill_with_scripts() {
    let temp = tempfile::tempdir().unwrap();
    let pack_dir = parcels_copy(temp.path());
    let pack = Pack::load(pack_dir.to_str().unwrap()).unwrap();
    let mut backend = common::model::backend();
    let few = |record, out: &str| {
        let mut opts = options(&pack_dir, temp.path().join(out), record);
        opts.limit = Some(3);
        opts.categories = vec!["needs_quote_postage".into(), "needs_track_parcel".into()];
        opts
    };
    let recorded = runner::run(&mut *backend, &few(RecordMode::Gaps, "recorded")).unwrap();
    let mut kept = 0;
    for tool in SCRIPTS {
        let interface = pack
            .tools
            .iter()
            .find(|t| t.name == tool)
            .and_then(|t| t.script.clone())
            .unwrap();
        for fixture in recordings(&pack_dir, tool) {
            let line = interface.command_line(&fixture.arguments);
            let printed = by_hand(&pack_dir, tool, &line);
            if fixture.status == 200 {
                assert_eq!(fixture.body_text(), printed, "{:?}", fixture.arguments);
            }
            kept += 1;
        }
    }
    assert!(kept > 0, "the model called no script");
    let replayed = runner::run(&mut *backend, &few(RecordMode::Off, "replayed")).unwrap();
    assert_eq!(recorded.entries.len(), replayed.entries.len());
    for (first, again) in recorded.entries.iter().zip(&replayed.entries) {
        let texts = |e: &skilleval::eval::record::JournalEntry| -> Vec<String> {
            e.transcript.rounds.iter().map(|r| r.raw.clone()).collect()
        };
        assert_eq!(texts(first), texts(again), "{}", first.sample_id);
    }
}
