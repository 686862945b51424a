//! The round loop on the real default model. A 270M base model may answer anything, so these
//! tests check what holds whatever it says: a finished transcript, real figures, and
//! reproducibility.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::json;
use skilleval::harness::agent::{self, AgentRequest, Budgets};
use skilleval::harness::backend::{Backend, Sampling};
use skilleval::harness::skills::SkillTree;
use skilleval::harness::template::Message;
use skilleval::harness::tools::{Effect, Registry, ToolDef, ToolOutput};
use skilleval::harness::transcript::{StopReason, Transcript};

fn skills_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/skills")
}

fn tools() -> Registry {
    let mut tools = Registry::new();
    tools.add(ToolDef::new(
        "current_time",
        "The current time.",
        json!({"type": "object", "properties": {}}),
        Effect::Read,
        |_| ToolOutput::ok("14:05"),
    ));
    tools.add(
        ToolDef::new(
            "city_time",
            "The local time in a city.",
            json!({
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"]
            }),
            Effect::Read,
            |_| ToolOutput::ok("14:05"),
        )
        .gated_by("clock"),
    );
    tools
}

/// Small budgets keep the test quick; they still allow a call, its result and an answer.
fn budgets() -> Budgets {
    Budgets {
        max_rounds: 3,
        max_generated_tokens: 144,
        max_tokens_per_round: 48,
        ..Budgets::default()
    }
}

fn run_once(sampling: Sampling) -> Transcript {
    let skills = SkillTree::load(&skills_dir()).unwrap();
    let tools = tools();
    let request = AgentRequest {
        instructions: "You are a helpful assistant.",
        messages: vec![Message::user("What time is it in Paris?")],
        skills: &skills,
        preload: vec!["clock".into()],
        tools: &tools,
        format: None,
        sampling,
        budgets: budgets(),
        constrain_calls: false,
        examples: Default::default(),
        long_output: Default::default(),
        user: None,
    };
    let mut backend = common::model::backend();
    agent::run(&mut *backend, &request)
}

fn greedy() -> Sampling {
    Sampling {
        temperature: 0.0,
        seed: 1,
        ..Sampling::default()
    }
}

/// The transcript as JSON without what legitimately differs between two identical runs:
/// wall-clock seconds, and how much of the prompt the backend found already in its cache.
fn reproducible_json(transcript: &Transcript) -> String {
    let mut t = transcript.clone();
    for round in &mut t.rounds {
        let m = &mut round.metrics;
        m.cached_prompt_tokens = 0;
        m.prefill_secs = 0.0;
        m.decode_secs = 0.0;
        m.ttft_secs = 0.0;
    }
    let m = &mut t.metrics;
    m.prefill_secs = 0.0;
    m.decode_secs = 0.0;
    m.ttft_secs = 0.0;
    m.tool_secs = 0.0;
    m.wall_secs = 0.0;
    serde_json::to_string(&t).unwrap()
}

#[test]
#[cfg_attr(not(feature = "full-tier"), ignore = "full tier")]
fn a_loop_on_the_real_model_ends_with_a_transcript_and_real_figures() {
    let _turn = common::model::turn();
    let t = run_once(greedy());
    assert!(!t.rounds.is_empty());
    assert!(
        !matches!(t.stop, StopReason::Error(_)),
        "the backend failed: {:?}",
        t.stop
    );
    assert!(t.rounds.len() as u32 <= budgets().max_rounds);
    assert_eq!(t.metrics.rounds as usize, t.rounds.len());
    assert!(t.loaded_skills.iter().any(|s| s == "clock"));

    let m = &t.metrics;
    assert!(m.prompt_tokens > 0, "{m:?}");
    assert!(m.generated_tokens > 0, "{m:?}");
    assert!(
        m.generated_tokens <= budgets().max_generated_tokens,
        "{m:?}"
    );
    assert!(m.ttft_secs > 0.0, "{m:?}");
    assert!(m.prefill_secs > 0.0, "{m:?}");
    assert!(m.wall_secs >= m.ttft_secs, "{m:?}");
    for round in &t.rounds {
        assert!(round.metrics.prompt_tokens > 0);
        assert!(round.metrics.generated_tokens <= budgets().max_tokens_per_round);
    }
}

#[test]
#[cfg_attr(not(feature = "full-tier"), ignore = "full tier")]
fn the_same_seed_gives_a_byte_identical_transcript() {
    let _turn = common::model::turn();
    for sampling in [
        greedy(),
        Sampling {
            temperature: 0.8,
            seed: 7,
            ..Sampling::default()
        },
    ] {
        let first = reproducible_json(&run_once(sampling));
        // Another prompt in between, so the second run starts from a different cache.
        common::model::backend()
            .generate(&skilleval::harness::backend::GenRequest {
                prompt: "<bos>Count to three.".into(),
                max_tokens: 4,
                stop: Vec::new(),
                grammar: None,
                markers: Vec::new(),
                sampling,
            })
            .unwrap();
        let second = reproducible_json(&run_once(sampling));
        assert_eq!(first, second, "{sampling:?}");
    }
}

#[test]
#[cfg_attr(not(feature = "full-tier"), ignore = "full tier")]
fn the_chat_command_prints_a_json_transcript() {
    let _turn = common::model::turn();
    let out = Command::new(env!("CARGO_BIN_EXE_skilleval"))
        .arg("chat")
        .arg("--skills-dir")
        .arg(skills_dir())
        .args(["--prompt", "What time is it in Paris?"])
        .args(["--preload", "clock", "--json", "--ctx", "2048"])
        .arg("--model")
        .arg(common::model::model_path())
        .output()
        .expect("the binary runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    let transcript: Transcript = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("stdout is not a JSON transcript ({e}):\n{stdout}"));
    assert!(!transcript.rounds.is_empty());
    assert!(
        !matches!(transcript.stop, StopReason::Error(_)),
        "{:?}",
        transcript.stop
    );
    assert_eq!(transcript.loaded_skills, ["clock"]);
    let value: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert!(value["stop"]["kind"].is_string(), "{stdout}");
}
