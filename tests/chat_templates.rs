//! The model's own chat template, run by skilleval, against Python's jinja2 applied as
//! transformers' `apply_chat_template` applies it (`scripts/apply_chat_template.py`): five
//! templates (Qwen 2.5 with tools, Llama 3.1, Mistral v3 with tools, Gemma 3, SmolLM2's own)
//! on conversations with system text, tools, calls, results and several turns.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde::Deserialize;
use serde_json::{json, Value};
use skilleval::harness::chat_template::ChatTemplate;

/// The clock both renderers read (`strftime_now`): 2024-07-27 03:05:09 UTC.
const NOW: u64 = 1_722_049_509;

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/chat_templates")
}

#[derive(Deserialize)]
struct TemplateCase {
    file: String,
    family: String,
    bos_token: String,
    eos_token: String,
}

#[derive(Deserialize)]
struct Conversation {
    name: String,
    messages: Value,
    tools: Option<Value>,
    add_generation_prompt: bool,
}

fn read<T: serde::de::DeserializeOwned>(name: &str) -> T {
    let text = std::fs::read_to_string(data().join(name)).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn source(case: &TemplateCase) -> String {
    std::fs::read_to_string(data().join(&case.file)).unwrap()
}

/// skilleval's rendering of every conversation: the text, or the template's error.
fn ours(case: &TemplateCase, conversations: &[Conversation]) -> Vec<Result<String, String>> {
    let template = ChatTemplate::new(
        &source(case),
        &case.file,
        &case.bos_token,
        &case.eos_token,
        NOW,
    )
    .unwrap_or_else(|e| panic!("{}: {e}", case.family));
    conversations
        .iter()
        .map(|c| {
            template
                .apply(&c.messages, c.tools.as_ref(), c.add_generation_prompt)
                .map_err(|e| e.to_string())
        })
        .collect()
}

/// The reference's rendering, as `scripts/apply_chat_template.py` writes it.
fn as_outcomes(reference: &Value) -> Vec<Result<String, String>> {
    reference
        .as_array()
        .unwrap()
        .iter()
        .map(|o| match o["text"].as_str() {
            Some(text) => Ok(text.to_string()),
            None => Err(o["error"].as_str().unwrap().to_string()),
        })
        .collect()
}

/// Equal texts where the reference renders; a failure where it fails.
fn assert_same(
    case: &TemplateCase,
    conversations: &[Conversation],
    reference: &[Result<String, String>],
) {
    let ours = ours(case, conversations);
    let mut rendered = 0;
    for ((conversation, ours), theirs) in conversations.iter().zip(&ours).zip(reference) {
        let at = format!("{} on {}", case.family, conversation.name);
        match (ours, theirs) {
            (Ok(ours), Ok(theirs)) => {
                assert_eq!(ours, theirs, "{at}: the prompts differ");
                rendered += 1;
            }
            (Err(_), Err(_)) => {}
            (ours, theirs) => panic!("{at}: skilleval {ours:?}, jinja2 {theirs:?}"),
        }
    }
    assert!(
        rendered >= 4,
        "{}: only {rendered} conversations rendered",
        case.family
    );
}

/// Truth: an official tool — the prompts Python's jinja2 rendered through transformers' own
/// environment (`scripts/apply_chat_template.py`), kept in `expected.json`; the full tier runs
/// the script again and checks both agree.
#[test]
fn every_template_renders_as_transformers_renders_it() {
    let templates: Vec<TemplateCase> = read("templates.json");
    let conversations: Vec<Conversation> = read("conversations.json");
    let expected: Value = read("expected.json");
    assert_eq!(templates.len(), 5);
    for case in &templates {
        assert_same(case, &conversations, &as_outcomes(&expected[&case.file]));
    }
}

/// Runs the reference renderer on every conversation.
fn reference(case: &TemplateCase, conversations: &[Conversation]) -> Value {
    let request = json!({
        "template": source(case),
        "bos_token": case.bos_token,
        "eos_token": case.eos_token,
        "now": NOW,
        "renders": conversations.iter().map(|c| json!({
            "messages": c.messages,
            "tools": c.tools,
            "add_generation_prompt": c.add_generation_prompt,
        })).collect::<Vec<_>>(),
    });
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/apply_chat_template.py");
    let packages = skilleval::model_path::cache_dir().join("bfcl");
    let mut child = Command::new("python3")
        .arg("-s")
        .arg(&script)
        .env("PYTHONPATH", &packages)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 starts");
    std::io::Write::write_all(
        child.stdin.as_mut().unwrap(),
        request.to_string().as_bytes(),
    )
    .unwrap();
    drop(child.stdin.take());
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "the reference renderer failed: is jinja2 installed (bash scripts/setup.sh --bfcl)?"
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

/// Truth: an official tool — jinja2 run now, as transformers runs it, on every template and
/// conversation; the kept `expected.json` must be what it writes today.
#[test]
#[cfg_attr(not(feature = "full-tier"), ignore = "full tier")]
fn jinja2_run_now_agrees_with_skilleval_and_with_the_kept_prompts() {
    let templates: Vec<TemplateCase> = read("templates.json");
    let conversations: Vec<Conversation> = read("conversations.json");
    let expected: Value = read("expected.json");
    for case in &templates {
        let theirs = reference(case, &conversations);
        assert_eq!(
            theirs, expected[&case.file],
            "{}: expected.json is stale",
            case.family
        );
        assert_same(case, &conversations, &as_outcomes(&theirs));
    }
}

/// Truth: the model file — the SmolLM2 template of the test data is the one its GGUF carries,
/// with the tokens the file names.
#[test]
#[cfg_attr(not(feature = "full-tier"), ignore = "full tier")]
fn the_smollm2_template_is_the_model_file_s_own() {
    let _turn = common::model::turn();
    let meta = skilleval::harness::backend::gguf::read_metadata(&common::model::smol_model_path())
        .unwrap();
    let templates: Vec<TemplateCase> = read("templates.json");
    let smol = templates
        .iter()
        .find(|t| t.file == "smollm2.jinja")
        .unwrap();
    assert_eq!(
        meta.get("tokenizer.chat_template"),
        Some(source(smol).as_str())
    );
    assert_eq!(meta.bos_token.as_deref(), Some(smol.bos_token.as_str()));
    assert_eq!(meta.eos_token.as_deref(), Some(smol.eos_token.as_str()));
}

/// Cuts a ChatML prompt back into its messages, and the generation prompt it ends with.
fn chatml_messages(prompt: &str) -> (Value, bool) {
    let body = prompt.strip_suffix("<|im_start|>assistant\n");
    let mut messages = Vec::new();
    for turn in body.unwrap_or(prompt).split_terminator("<|im_end|>\n") {
        let turn = turn
            .strip_prefix("<|im_start|>")
            .expect("a turn opens with <|im_start|>");
        let (role, content) = turn.split_once('\n').expect("the role's line");
        messages.push(json!({"role": role, "content": content}));
    }
    (Value::from(messages), body.is_some())
}

/// Truth: an official tool — SmolLM2-135M-Instruct runs the shipped weather pack under its own
/// template, and every prompt the run sent, cut back into its messages, is what jinja2 renders
/// from them as transformers does. The manifest names the template by its hash.
#[test]
#[cfg_attr(not(feature = "full-tier"), ignore = "full tier")]
fn smollm2_runs_a_shipped_pack_under_its_own_template() {
    let _turn = common::model::turn();
    use skilleval::eval::pack::Pack;
    use skilleval::eval::runner::{self, RunOptions};
    use skilleval::harness::backend::llama::{LlamaBackend, LlamaOptions};
    use skilleval::harness::backend::{Backend, PromptLog};
    use skilleval::harness::template::Family;

    let mut options = LlamaOptions::new(common::model::smol_model_path());
    options.n_ctx = 4096;
    let mut model = LlamaBackend::load(&options).expect("SmolLM2 loads");
    assert!(
        matches!(model.family(), Family::Own(_)),
        "{:?}",
        model.family()
    );
    let recorded = model
        .info()
        .chat_template
        .expect("the template is recorded");
    let templates: Vec<TemplateCase> = read("templates.json");
    let smol = templates
        .iter()
        .find(|t| t.file == "smollm2.jinja")
        .unwrap();
    let digest = {
        use sha2::Digest;
        format!("{:x}", sha2::Sha256::digest(source(smol).as_bytes()))
    };
    assert_eq!(recorded.sha256, digest);
    assert!(
        recorded.source.ends_with(": tokenizer.chat_template"),
        "{recorded:?}"
    );

    let output = tempfile::tempdir().unwrap();
    let mut opts = RunOptions::new(Pack::load("weather").expect("the shipped pack"));
    opts.output_root = output.path().to_path_buf();
    opts.repeats = 1;
    opts.limit = Some(2);
    let log = output.path().join("prompts.jsonl");
    let result = {
        let backend: &mut dyn Backend = &mut model;
        let mut logged = PromptLog::create(backend, &log).unwrap();
        let result = runner::run(&mut logged, &opts).expect("the run completes");
        logged.flush().unwrap();
        result
    };
    let manifest = std::fs::read_to_string(result.dir.join("manifest.json")).unwrap();
    assert!(
        manifest.contains(&digest),
        "the manifest names the template"
    );

    let prompts: Vec<String> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["prompt"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert!(!prompts.is_empty());
    eprintln!(
        "the run's first prompt, as SmolLM2's own template rendered it:\n{}",
        prompts[0]
    );
    let conversations: Vec<Conversation> = prompts
        .iter()
        .enumerate()
        .map(|(i, prompt)| {
            let (messages, add_generation_prompt) = chatml_messages(prompt);
            Conversation {
                name: format!("prompt {i}"),
                messages,
                tools: None,
                add_generation_prompt,
            }
        })
        .collect();
    let theirs = as_outcomes(&reference(smol, &conversations));
    for (prompt, theirs) in prompts.iter().zip(theirs) {
        assert_eq!(
            Ok(prompt),
            theirs.as_ref(),
            "jinja2 renders the run's prompt from its messages"
        );
    }
}
