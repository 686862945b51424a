//! `score` on a server: the sampler's probability of each token of a continuation, read from
//! llama.cpp's server (raw and post-sampler probabilities, one position per request on the
//! cached prompt) or from vLLM's prompt log-probabilities (every position in one request); any
//! other server is refused in one line.
//!
//! Both servers list the most likely tokens of a position with their raw log-probabilities
//! (the softmax at temperature 1 over the whole vocabulary). With top-k `k`, the top `k` of
//! them fix the run's sampler exactly: top-k, top-p over their softmax, temperature, as the
//! embedded backend chains them (`sampler_distribution`). The likelihood at a temperature `t`
//! other than 1 needs the whole vocabulary's sum at `t`: llama.cpp's server gives it as the
//! post-sampler probability of its top token under a temperature-only sampler; vLLM does not,
//! and the tokens it leaves out are counted as if each had the least listed probability.

use std::time::Instant;

use anyhow::{anyhow, bail};
use serde_json::{json, Value};

use super::{ContinuationScore, Sampling, ScoreRequest, TokenScore};

/// What this file needs of a server connection (`openai::OpenAiBackend`).
pub trait ScoreServer {
    /// POSTs JSON to a path: the JSON answer, or one line naming the URL.
    fn post(&self, path: &str, body: &Value) -> anyhow::Result<Value>;
    /// The server's base URL.
    fn endpoint(&self) -> &str;
    /// The model to name in a request.
    fn model(&self) -> Option<&str>;
    /// Who the server says owns the model (`owned_by` at `/v1/models`).
    fn owned_by(&self) -> Option<&str>;
}

/// A bias that makes a token the one drawn whatever the others' logits are: llama.cpp's
/// server reports the raw probabilities, before any bias, of the token it drew.
const FORCING_BIAS: f64 = 1000.0;

/// How a server can give the probabilities `score` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScoreSource {
    /// llama.cpp's server: `/completion` with `n_probs`, raw and `post_sampling_probs`.
    LlamaServer,
    /// vLLM: `prompt_logprobs` at `/v1/completions`.
    Vllm,
}

impl ScoreSource {
    /// What the server that says it owns the model (`owned_by`) gives, or the one-line refusal.
    pub fn of(endpoint: &str, owned_by: Option<&str>) -> anyhow::Result<Self> {
        match owned_by {
            Some("llamacpp") => Ok(ScoreSource::LlamaServer),
            Some("vllm") => Ok(ScoreSource::Vllm),
            other => bail!(
                "--endpoint {endpoint}: the server (owned_by {:?}) gives neither llama.cpp's post-sampler probabilities nor vLLM's prompt log-probabilities, so it cannot score; serve the model with llama-server or vLLM, or score in this process (--backend llama)",
                other.unwrap_or("")
            ),
        }
    }
}

/// One position of a continuation as a server lists it: the token there, its text, its raw
/// log-probability, and the most likely tokens with theirs.
#[derive(Debug, Clone, PartialEq)]
pub struct ListedPosition {
    pub token: i64,
    pub bytes: Vec<u8>,
    pub logprob: f64,
    pub top: Vec<(i64, f64)>,
}

/// The tokens the sampler can draw, with their probabilities, from the raw log-probabilities
/// of the most likely tokens (at least top-k of them): greedy takes the best alone; else
/// top-k, then top-p over the softmax of what is left (the smallest prefix whose mass reaches
/// `top_p`, at least one token), then the softmax at the temperature, as llama.cpp chains its
/// samplers.
pub fn sampler_distribution(top: &[(i64, f64)], sampling: &Sampling) -> Vec<(i64, f64)> {
    let mut kept = top.to_vec();
    kept.sort_by(|a, b| b.1.total_cmp(&a.1));
    if sampling.temperature <= 0.0 {
        kept.truncate(1);
        return kept.into_iter().map(|(t, _)| (t, 1.0)).collect();
    }
    kept.truncate(sampling.top_k.max(1) as usize);
    let Some(&(_, best)) = kept.first() else {
        return Vec::new();
    };
    let top_p = f64::from(sampling.top_p.clamp(0.0, 1.0));
    if top_p < 1.0 {
        let weights: Vec<f64> = kept.iter().map(|(_, l)| (l - best).exp()).collect();
        let total: f64 = weights.iter().sum();
        let mut mass = 0.0;
        let mut keep = kept.len();
        for (i, w) in weights.iter().enumerate() {
            mass += w / total;
            if mass >= top_p {
                keep = i + 1;
                break;
            }
        }
        kept.truncate(keep);
    }
    let t = f64::from(sampling.temperature);
    let weights: Vec<f64> = kept.iter().map(|(_, l)| ((l - best) / t).exp()).collect();
    let total: f64 = weights.iter().sum();
    kept.iter()
        .zip(weights)
        .map(|((id, _), w)| (*id, w / total))
        .collect()
}

/// The temperature the likelihood is read at: the run's, or 1 for greedy.
fn likelihood_temperature(sampling: &Sampling) -> f64 {
    if sampling.temperature > 0.0 {
        f64::from(sampling.temperature)
    } else {
        1.0
    }
}

/// The token's probability under the softmax at `t` over the whole vocabulary, from its raw
/// log-probability and one token's (`anchor`: its raw log-probability and its probability at
/// `t`): their ratio at `t` is the ratio of raw probabilities to the power 1/t.
fn likelihood_from_anchor(logprob: f64, anchor_logprob: f64, anchor_at_t: f64, t: f64) -> f64 {
    anchor_at_t * ((logprob - anchor_logprob) / t).exp()
}

/// The likelihood at `t` from the listed tokens alone: the unlisted mass counted as tokens of
/// the least listed probability (exact at `t` = 1).
fn likelihood_from_listed(position: &ListedPosition, t: f64) -> f64 {
    if (t - 1.0).abs() < 1e-12 {
        return position.logprob.exp();
    }
    let listed: Vec<f64> = position.top.iter().map(|(_, l)| l.exp()).collect();
    let least = listed
        .iter()
        .copied()
        .fold(1.0_f64, f64::min)
        .max(f64::MIN_POSITIVE);
    let unlisted = (1.0 - listed.iter().sum::<f64>()).max(0.0);
    let sum_at_t: f64 =
        listed.iter().map(|p| p.powf(1.0 / t)).sum::<f64>() + unlisted * least.powf(1.0 / t - 1.0);
    position.logprob.exp().powf(1.0 / t) / sum_at_t
}

/// A scored token from its listed position and likelihood.
fn token_score(
    position: &ListedPosition,
    sampling: &Sampling,
    likelihood: f64,
    end: usize,
) -> TokenScore {
    let probability = sampler_distribution(&position.top, sampling)
        .iter()
        .find(|(id, _)| *id == position.token)
        .map_or(0.0, |(_, p)| *p);
    TokenScore {
        piece: String::from_utf8_lossy(&position.bytes).into_owned(),
        end,
        probability,
        likelihood: likelihood.max(f64::MIN_POSITIVE),
    }
}

/// [`super::Backend::score`] for a server.
pub fn score(
    server: &dyn ScoreServer,
    request: &ScoreRequest,
) -> anyhow::Result<ContinuationScore> {
    match ScoreSource::of(server.endpoint(), server.owned_by())? {
        ScoreSource::LlamaServer => score_on_llama_server(server, request),
        ScoreSource::Vllm => score_on_vllm(server, request),
    }
}

/// The prompt's tokens and the continuation's, as the embedded backend cuts them: the two
/// texts tokenized as one (special tokens read in the template's markers only, when the content
/// spells one), else the continuation alone when the seam merges.
fn split_tokens(
    tokenize: &dyn Fn(&str, bool) -> anyhow::Result<Vec<i64>>,
    request: &ScoreRequest,
) -> anyhow::Result<(Vec<i64>, Vec<i64>)> {
    let tokens_of = |text: &str| -> anyhow::Result<Vec<i64>> {
        let whole = tokenize(text, true)?;
        if request.markers.is_empty() {
            return Ok(whole);
        }
        let pieces = crate::harness::template::pieces(text, &request.markers);
        let mut spells_a_marker = false;
        for (piece, marker) in &pieces {
            if !marker && tokenize(piece, true)? != tokenize(piece, false)? {
                spells_a_marker = true;
                break;
            }
        }
        if !spells_a_marker {
            return Ok(whole);
        }
        let mut tokens = Vec::new();
        for (piece, marker) in pieces {
            tokens.extend(tokenize(piece, marker)?);
        }
        Ok(tokens)
    };
    let prompt = tokens_of(&request.prompt)?;
    let whole = tokens_of(&format!("{}{}", request.prompt, request.continuation))?;
    if prompt.is_empty() {
        bail!("the prompt is empty");
    }
    let continuation = if whole.starts_with(&prompt) {
        whole[prompt.len()..].to_vec()
    } else {
        tokenize(&request.continuation, false)?
    };
    if continuation.is_empty() {
        bail!("the continuation to score is empty");
    }
    Ok((prompt, continuation))
}

/// A JSON list of token ids.
fn token_ids(value: &Value, url: &str) -> anyhow::Result<Vec<i64>> {
    value
        .as_array()
        .and_then(|tokens| tokens.iter().map(Value::as_i64).collect::<Option<Vec<_>>>())
        .ok_or_else(|| anyhow!("{url}: the answer has no list of token ids"))
}

/// llama.cpp's server: per position, one request on the cached prompt (the position's token
/// drawn by a bias, so the answer lists its raw log-probability and its text), and, at a
/// temperature other than 1, one more whose temperature-only sampler gives the whole
/// vocabulary's sum at that temperature.
fn score_on_llama_server(
    server: &dyn ScoreServer,
    request: &ScoreRequest,
) -> anyhow::Result<ContinuationScore> {
    let started = Instant::now();
    let url = format!("{}/completion", server.endpoint());
    let tokenize = |text: &str, special: bool| -> anyhow::Result<Vec<i64>> {
        let answer = server.post(
            "/tokenize",
            &json!({"content": text, "add_special": false, "parse_special": special}),
        )?;
        token_ids(
            &answer["tokens"],
            &format!("{}/tokenize", server.endpoint()),
        )
    };
    let (prompt, continuation) = split_tokens(&tokenize, request)?;
    let sampling = &request.sampling;
    let t = likelihood_temperature(sampling);
    let listed = sampling.top_k.max(1);
    let mut context = prompt.clone();
    let mut tokens = Vec::with_capacity(continuation.len());
    let mut end = 0;
    let mut cached_prompt_tokens = 0;
    for (i, &token) in continuation.iter().enumerate() {
        let raw = server.post(
            "/completion",
            &json!({
                "prompt": context, "n_predict": 1, "n_probs": listed,
                "post_sampling_probs": false, "samplers": ["top_k"], "top_k": 1,
                "logit_bias": [[token, FORCING_BIAS]], "cache_prompt": true,
            }),
        )?;
        if i == 0 {
            cached_prompt_tokens = raw["timings"]["cache_n"].as_u64().unwrap_or(0) as u32;
        }
        let position = llama_server_position(&raw, &url)?;
        if position.token != token {
            bail!(
                "{url}: the server drew token {} where the bias asked for {token}",
                position.token
            );
        }
        let likelihood = if (t - 1.0).abs() < 1e-12 {
            position.logprob.exp()
        } else {
            let at_t = server.post(
                "/completion",
                &json!({
                    "prompt": context, "n_predict": 1, "n_probs": 1,
                    "post_sampling_probs": true, "samplers": ["temperature"],
                    "temperature": t, "cache_prompt": true,
                }),
            )?;
            let (anchor, anchor_at_t) = llama_server_top_post_sampling(&at_t, &url)?;
            let anchor_logprob = position
                .top
                .iter()
                .find(|(id, _)| *id == anchor)
                .map(|(_, l)| *l)
                .ok_or_else(|| {
                    anyhow!("{url}: the most likely token {anchor} at temperature {t} is not among the raw top {listed}")
                })?;
            likelihood_from_anchor(position.logprob, anchor_logprob, anchor_at_t, t)
        };
        end += position.bytes.len();
        tokens.push(token_score(&position, sampling, likelihood, end));
        context.push(token);
    }
    Ok(ContinuationScore {
        tokens,
        prompt_tokens: prompt.len() as u32,
        cached_prompt_tokens,
        secs: started.elapsed().as_secs_f64(),
    })
}

/// The one generated position of a llama.cpp `/completion` answer with raw probabilities
/// (`completion_probabilities[0]`: `id`, `bytes`, `logprob`, `top_logprobs`).
pub fn llama_server_position(answer: &Value, url: &str) -> anyhow::Result<ListedPosition> {
    let row = &answer["completion_probabilities"][0];
    let missing = || {
        anyhow!("{url}: the answer has no completion_probabilities[0] with id, bytes, logprob and top_logprobs (a llama.cpp server too old for raw probabilities?)")
    };
    let token = row["id"].as_i64().ok_or_else(missing)?;
    let logprob = row["logprob"].as_f64().ok_or_else(missing)?;
    let bytes = row["bytes"]
        .as_array()
        .and_then(|b| {
            b.iter()
                .map(|v| v.as_u64().and_then(|v| u8::try_from(v).ok()))
                .collect::<Option<Vec<u8>>>()
        })
        .ok_or_else(missing)?;
    let top = row["top_logprobs"]
        .as_array()
        .and_then(|top| {
            top.iter()
                .map(|e| Some((e["id"].as_i64()?, e["logprob"].as_f64()?)))
                .collect::<Option<Vec<_>>>()
        })
        .ok_or_else(missing)?;
    Ok(ListedPosition {
        token,
        bytes,
        logprob,
        top,
    })
}

/// The most likely token of a llama.cpp answer with post-sampler probabilities, and its
/// probability (`completion_probabilities[0].top_probs[0]`).
fn llama_server_top_post_sampling(answer: &Value, url: &str) -> anyhow::Result<(i64, f64)> {
    let top = &answer["completion_probabilities"][0]["top_probs"][0];
    match (top["id"].as_i64(), top["prob"].as_f64()) {
        (Some(id), Some(p)) => Ok((id, p)),
        _ => bail!(
            "{url}: the answer has no completion_probabilities[0].top_probs[0] with id and prob"
        ),
    }
}

/// vLLM: the prompt and the continuation sent as one prompt of token ids, with the top-k
/// log-probabilities of every prompt position (`prompt_logprobs`).
fn score_on_vllm(
    server: &dyn ScoreServer,
    request: &ScoreRequest,
) -> anyhow::Result<ContinuationScore> {
    let started = Instant::now();
    let tokenize_url = format!("{}/tokenize", server.endpoint());
    let tokenize = |text: &str, _special: bool| -> anyhow::Result<Vec<i64>> {
        let mut body = json!({"prompt": text, "add_special_tokens": false});
        if let Some(model) = server.model() {
            body["model"] = json!(model);
        }
        token_ids(&server.post("/tokenize", &body)?["tokens"], &tokenize_url)
    };
    // vLLM's tokenizer reads special tokens wherever the text spells them: no markers.
    let unmarked = ScoreRequest {
        markers: Vec::new(),
        ..request.clone()
    };
    let (prompt, continuation) = split_tokens(&tokenize, &unmarked)?;
    let all: Vec<i64> = prompt.iter().chain(&continuation).copied().collect();
    let mut body = json!({
        "prompt": all, "max_tokens": 1, "temperature": 0.0,
        "prompt_logprobs": request.sampling.top_k.max(1),
    });
    if let Some(model) = server.model() {
        body["model"] = json!(model);
    }
    let url = format!("{}/v1/completions", server.endpoint());
    let answer = server.post("/v1/completions", &body)?;
    let positions = vllm_positions(&answer, &all, prompt.len(), &url)?;
    let t = likelihood_temperature(&request.sampling);
    let mut end = 0;
    let tokens = positions
        .iter()
        .map(|position| {
            end += position.bytes.len();
            let likelihood = likelihood_from_listed(position, t);
            token_score(position, &request.sampling, likelihood, end)
        })
        .collect();
    Ok(ContinuationScore {
        tokens,
        prompt_tokens: prompt.len() as u32,
        cached_prompt_tokens: answer["usage"]["prompt_tokens_details"]["cached_tokens"]
            .as_u64()
            .unwrap_or(0) as u32,
        secs: started.elapsed().as_secs_f64(),
    })
}

/// The positions from `from` on of a vLLM answer's `choices[0].prompt_logprobs`: per position a
/// map from token id to `{logprob, rank, decoded_token}` holding the top-k and the prompt's own
/// token there.
pub fn vllm_positions(
    answer: &Value,
    tokens: &[i64],
    from: usize,
    url: &str,
) -> anyhow::Result<Vec<ListedPosition>> {
    let Some(listed) = answer["choices"][0]["prompt_logprobs"].as_array() else {
        bail!("{url}: the answer has no choices[0].prompt_logprobs (is this vLLM?)");
    };
    if listed.len() != tokens.len() {
        bail!(
            "{url}: prompt_logprobs has {} positions for a prompt of {} tokens",
            listed.len(),
            tokens.len()
        );
    }
    (from..tokens.len())
        .map(|at| {
            let entries = listed[at]
                .as_object()
                .ok_or_else(|| anyhow!("{url}: prompt_logprobs[{at}] is not a map of token ids"))?;
            let mut top = Vec::new();
            let mut own = None;
            for (id, entry) in entries {
                let id: i64 = id.parse().map_err(|_| {
                    anyhow!("{url}: prompt_logprobs[{at}] has the key {id:?}, not a token id")
                })?;
                let logprob = entry["logprob"]
                    .as_f64()
                    .ok_or_else(|| anyhow!("{url}: prompt_logprobs[{at}][{id}] has no logprob"))?;
                if id == tokens[at] {
                    let text = entry["decoded_token"].as_str().unwrap_or("");
                    own = Some((logprob, text.as_bytes().to_vec()));
                }
                // The prompt's own token is listed beside the top-k even when ranked below
                // them; `sampler_distribution` keeps the top-k only.
                top.push((id, logprob));
            }
            let (logprob, bytes) = own.ok_or_else(|| {
                anyhow!(
                    "{url}: prompt_logprobs[{at}] does not list the prompt's own token {}",
                    tokens[at]
                )
            })?;
            Ok(ListedPosition {
                token: tokens[at],
                bytes,
                logprob,
                top,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sampling(temperature: f32, top_k: i32, top_p: f32) -> Sampling {
        Sampling {
            temperature,
            top_k,
            top_p,
            seed: 0,
        }
    }

    /// Truth: worked by hand. Raw probabilities .5, .3, .15, .05; top-k 3 keeps the first
    /// three, whose softmax is .526, .316, .158: top-p .8 is reached at the second.
    #[test]
    fn the_sampler_is_top_k_then_top_p_then_the_temperature() {
        let top = [
            (7, 0.05_f64.ln()),
            (1, 0.5_f64.ln()),
            (2, 0.3_f64.ln()),
            (3, 0.15_f64.ln()),
        ];
        let at_1 = sampler_distribution(&top, &sampling(1.0, 3, 0.8));
        assert_eq!(at_1.iter().map(|(t, _)| *t).collect::<Vec<_>>(), [1, 2]);
        assert!((at_1[0].1 - 0.625).abs() < 1e-12, "{at_1:?}");
        // At temperature .5 the kept weights are squared: .25 and .09.
        let at_half = sampler_distribution(&top, &sampling(0.5, 3, 0.8));
        assert!((at_half[0].1 - 0.25 / 0.34).abs() < 1e-12, "{at_half:?}");
        // Top-k 2 then: the third token is cut before top-p reads the mass.
        let k2 = sampler_distribution(&top, &sampling(1.0, 2, 1.0));
        assert!((k2[1].1 - 0.375).abs() < 1e-12, "{k2:?}");
        assert_eq!(
            sampler_distribution(&top, &sampling(0.0, 40, 0.95)),
            [(1, 1.0)]
        );
    }

    /// Truth: worked by hand. Listed .5 and .3 (and .2 unlisted): at temperature 1 the token's
    /// own raw probability; at .5 the unlisted .2 counts as .2/.3 tokens of .3.
    #[test]
    fn the_likelihood_from_listed_tokens_is_exact_at_temperature_one() {
        let position = ListedPosition {
            token: 2,
            bytes: b"x".to_vec(),
            logprob: 0.3_f64.ln(),
            top: vec![(1, 0.5_f64.ln()), (2, 0.3_f64.ln())],
        };
        assert!((likelihood_from_listed(&position, 1.0) - 0.3).abs() < 1e-12);
        let at_half = 0.09 / (0.25 + 0.09 + 0.2 * 0.3);
        assert!((likelihood_from_listed(&position, 0.5) - at_half).abs() < 1e-12);
        // From an anchor: .5 at temperature .5 is .25/Z, so .3 is .09/Z.
        let z = 0.4;
        let got = likelihood_from_anchor(0.3_f64.ln(), 0.5_f64.ln(), 0.25 / z, 0.5);
        assert!((got - 0.09 / z).abs() < 1e-12);
    }

    /// Truth: a response in the shape vLLM documents for `prompt_logprobs` (written here, not
    /// recorded from a vLLM server, which cannot run on this machine): the first position
    /// null, then per position the top-k and the prompt's own token.
    #[test]
    fn vllm_prompt_logprobs_are_read_per_position() {
        let answer = json!({"choices": [{"text": "x", "prompt_logprobs": [
            null,
            {"9": {"logprob": -0.2, "rank": 1, "decoded_token": "Hi"}},
            {"5": {"logprob": -3.0, "rank": 7, "decoded_token": " there"},
             "4": {"logprob": -0.1, "rank": 1, "decoded_token": "!"},
             "8": {"logprob": -2.5, "rank": 2, "decoded_token": "?"}}
        ]}]});
        let positions = vllm_positions(&answer, &[2, 9, 5], 1, "u").unwrap();
        assert_eq!(positions.len(), 2);
        assert_eq!(positions[1].token, 5);
        assert_eq!(positions[1].bytes, b" there");
        assert_eq!(positions[1].logprob, -3.0);
        // Ranked 7th, the token is cut by top-k 2 and kept by top-k 3.
        let p = |k| token_score(&positions[1], &sampling(1.0, k, 1.0), 0.0, 0).probability;
        assert_eq!(p(2), 0.0);
        assert!(p(3) > 0.0);
        let short = vllm_positions(&answer, &[2, 9], 1, "u").unwrap_err();
        assert!(format!("{short}").contains("3 positions for a prompt of 2"));
        let wrong = vllm_positions(&answer, &[2, 9, 6], 1, "u").unwrap_err();
        assert!(format!("{wrong}").contains("own token 6"), "{wrong}");
    }

    /// Truth: a change. Only llama.cpp's server and vLLM can score; another is one line.
    #[test]
    fn a_server_without_probabilities_is_refused_in_one_line() {
        assert_eq!(
            ScoreSource::of("http://h", Some("llamacpp")).unwrap(),
            ScoreSource::LlamaServer
        );
        assert_eq!(
            ScoreSource::of("http://h", Some("vllm")).unwrap(),
            ScoreSource::Vllm
        );
        let refused = format!(
            "{}",
            ScoreSource::of("http://h", Some("openai")).unwrap_err()
        );
        assert!(refused.contains("cannot score"), "{refused}");
        assert!(!refused.contains('\n'));
    }
}
