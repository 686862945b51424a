//! `skilleval generate`: one reply to one prompt, the text on stdout and the generation's
//! figures on stderr (or both as JSON).

use clap::Args;

use super::args::ModelArgs;
use crate::harness::backend::{Backend, GenMetrics, GenRequest, Sampling};
use crate::harness::template::{self, Message};

pub const EXAMPLES: &str = "Examples:
  skilleval generate --prompt \"Name three rivers.\"
  skilleval generate --prompt \"Name three rivers.\" --model smollm2 --json
  skilleval generate --raw --prompt \"The capital of France is\" --max-tokens 8 > out.txt";

#[derive(Args, Debug)]
pub struct GenerateArgs {
    /// The prompt, sent in the model's chat format unless --raw
    #[arg(long)]
    pub prompt: String,
    #[command(flatten)]
    pub model: ModelArgs,
    /// Seed of the sampler
    #[arg(long, default_value_t = 0)]
    pub seed: u32,
    /// Sampling temperature; 0 is greedy
    #[arg(long, default_value_t = 0.0)]
    pub temperature: f32,
    /// Most tokens to generate
    #[arg(long, default_value_t = 128)]
    pub max_tokens: u32,
    /// Send the prompt as it is, without the chat format
    #[arg(long)]
    pub raw: bool,
    /// Print the text and the figures as one JSON object on stdout
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: GenerateArgs) -> anyhow::Result<u8> {
    let mut backend = args.model.load()?;
    let family = backend.family();
    let prompt = if args.raw {
        args.prompt
    } else {
        template::render(family, &[Message::user(args.prompt)])?
    };
    let sampling = Sampling {
        temperature: args.temperature,
        seed: args.seed,
        ..Sampling::default()
    };
    let request = GenRequest::in_turn(family, prompt, args.max_tokens, sampling);
    let generation = backend.generate(&request)?;
    if args.json {
        let mut out = serde_json::json!({
            "text": generation.text,
            "finish": generation.finish,
        });
        out["figures"] = generation_figures(&backend, &generation.metrics);
        crate::outln!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        crate::outln!("{}", generation.text.trim_end());
        print_figures(&backend, &generation.metrics);
    }
    Ok(0)
}

/// A generation's figures, for stderr or `--json`: rates over the time of their own phase.
fn generation_figures(backend: &dyn Backend, m: &GenMetrics) -> serde_json::Value {
    let info = backend.info();
    serde_json::json!({
        "model": info.model_path,
        "model_load_secs": info.load_secs,
        "threads": info.threads,
        "prompt_tokens": m.prompt_tokens,
        "prefill_tokens_per_sec": m.prefill_tokens_per_sec(),
        "generated_tokens": m.generated_tokens,
        "decode_tokens_per_sec": m.decode_tokens_per_sec(),
        "first_token_secs": m.ttft_secs,
    })
}

fn print_figures(backend: &dyn Backend, m: &GenMetrics) {
    let info = backend.info();
    eprintln!("---");
    eprintln!(
        "model load      {:.2} s ({} threads)",
        info.load_secs, info.threads
    );
    eprintln!("prompt tokens   {}", m.prompt_tokens);
    eprintln!("prefill         {:.1} tokens/s", m.prefill_tokens_per_sec());
    eprintln!("generated       {} tokens", m.generated_tokens);
    eprintln!("decode          {:.1} tokens/s", m.decode_tokens_per_sec());
    eprintln!("first token     {:.3} s", m.ttft_secs);
}
