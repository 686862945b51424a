//! What scoring reads, on either path (one sequence, or many lanes at once): a request's prompt
//! and continuation as tokens, the sampler's own probabilities at a position's logits, and the
//! scored tokens put together.

use anyhow::bail;
use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::data::LlamaTokenData;
use llama_cpp_2::token::data_array::LlamaTokenDataArray;
use llama_cpp_2::token::LlamaToken;
use llama_cpp_2::vocab::LlamaVocab;

use super::{GenRequest, Sampling, ScoreRequest, TokenScore};

/// A request's prompt tokens and the continuation's, checked to fit a context of `n_ctx`.
pub(crate) fn score_tokens(
    vocab: &LlamaVocab<'_>,
    request: &ScoreRequest,
    n_ctx: usize,
) -> anyhow::Result<(Vec<LlamaToken>, Vec<LlamaToken>)> {
    let as_request = |prompt: String| GenRequest {
        prompt,
        max_tokens: 0,
        stop: Vec::new(),
        sampling: request.sampling,
        grammar: None,
        markers: request.markers.clone(),
    };
    let prompt = prompt_tokens(vocab, &as_request(request.prompt.clone()));
    let whole = prompt_tokens(
        vocab,
        &as_request(format!("{}{}", request.prompt, request.continuation)),
    );
    if prompt.is_empty() {
        bail!("the prompt is empty");
    }
    // Tokenized as one text, as the model reads it; where the prompt's own tokens are not
    // a prefix of that (a merge across the seam), the continuation is tokenized alone.
    let continuation: Vec<LlamaToken> = if whole.starts_with(&prompt) {
        whole[prompt.len()..].to_vec()
    } else {
        vocab.tokenize(request.continuation.as_bytes(), false, false)
    };
    if continuation.is_empty() {
        bail!("the continuation to score is empty");
    }
    if prompt.len() + continuation.len() >= n_ctx {
        bail!(
            "the prompt and the scored text have {} tokens, more than the context of {n_ctx} holds",
            prompt.len() + continuation.len()
        );
    }
    Ok((prompt, continuation))
}

/// A token's place in the sampler's distribution and under the plain softmax.
pub(crate) type Distribution = (Vec<(LlamaToken, f64)>, f64);

/// The tokens the sampler can draw from the logits at `index` of the last decode, with their
/// probabilities: llama.cpp's own top-k, top-p and temperature samplers, in the order
/// `TokenSampler` chains them, then the softmax its draw makes; at temperature 0 the greedy
/// token alone. With it, `token`'s likelihood under the plain softmax at the temperature (at 1
/// for greedy) over the whole vocabulary.
pub(crate) fn sampler_distribution(
    context: &LlamaContext,
    index: i32,
    sampling: &Sampling,
    token: LlamaToken,
) -> Distribution {
    let logits = context.get_logits_ith(index);
    let likelihood = {
        let t = if sampling.temperature > 0.0 {
            f64::from(sampling.temperature)
        } else {
            1.0
        };
        let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max) as f64;
        let total: f64 = logits.iter().map(|l| ((*l as f64 - max) / t).exp()).sum();
        let own = logits
            .get(token.0 as usize)
            .map_or(f64::NEG_INFINITY, |l| *l as f64);
        ((own - max) / t).exp() / total
    };
    if sampling.temperature <= 0.0 {
        let best = logits
            .iter()
            .enumerate()
            .max_by(|a, b| a.1.total_cmp(b.1))
            .map(|(i, _)| LlamaToken(i as i32));
        return (best.into_iter().map(|t| (t, 1.0)).collect(), likelihood);
    }
    let mut candidates = top_k_candidates(logits, sampling.top_k)
        .unwrap_or_else(|| context.token_data_array_ith(index));
    candidates.apply_sampler(&mut LlamaSampler::top_k(sampling.top_k.max(1)));
    candidates.apply_sampler(&mut LlamaSampler::top_p(sampling.top_p.clamp(0.0, 1.0), 1));
    candidates.apply_sampler(&mut LlamaSampler::temp(sampling.temperature));
    let max = candidates
        .data
        .iter()
        .map(|d| d.logit())
        .fold(f32::NEG_INFINITY, f32::max) as f64;
    let weights: Vec<f64> = candidates
        .data
        .iter()
        .map(|d| (d.logit() as f64 - max).exp())
        .collect();
    let total: f64 = weights.iter().sum();
    let distribution = candidates
        .data
        .iter()
        .zip(weights)
        .map(|(d, w)| (d.id(), w / total))
        .collect();
    (distribution, likelihood)
}

/// The `k` tokens of highest logit, in token order, when they are exactly what llama.cpp's
/// top-k keeps of the whole vocabulary: `k` distinct logits, none equal to one left out. Top-k
/// on them then leaves the same tokens in the same order as on every token, and so does all
/// that follows, without building and sorting the whole vocabulary at every position. `None`
/// (read the whole vocabulary) when a tie makes the choice depend on llama.cpp's sort.
fn top_k_candidates(logits: &[f32], k: i32) -> Option<LlamaTokenDataArray> {
    let k = usize::try_from(k)
        .ok()
        .filter(|&k| k > 0 && k < logits.len())?;
    // The k highest logits, highest first.
    let mut best: Vec<f32> = Vec::with_capacity(k + 1);
    for &l in logits {
        if l.is_nan() {
            return None;
        }
        if best.len() == k && l <= best[k - 1] {
            continue;
        }
        let at = best.partition_point(|&b| b >= l);
        best.insert(at, l);
        best.truncate(k);
    }
    let least = best[k - 1];
    let mut data = Vec::with_capacity(k);
    for (i, &l) in logits.iter().enumerate() {
        if l >= least {
            data.push(LlamaTokenData::new(LlamaToken(i as i32), l, 0.0));
        }
    }
    let distinct = best.windows(2).all(|w| w[0] != w[1]);
    (data.len() == k && distinct).then(|| LlamaTokenDataArray::new(data, false))
}

/// The continuation's tokens with their pieces, where each ends, and their probabilities from
/// the distribution read before each.
pub(crate) fn token_scores(
    vocab: &LlamaVocab<'_>,
    continuation: &[LlamaToken],
    distributions: &[Distribution],
) -> Vec<TokenScore> {
    let mut tokens = Vec::with_capacity(continuation.len());
    let mut bytes: Vec<u8> = Vec::new();
    for (token, (distribution, likelihood)) in continuation.iter().zip(distributions) {
        let piece = vocab.token_to_piece(*token, false, None);
        bytes.extend_from_slice(&piece);
        tokens.push(TokenScore {
            piece: String::from_utf8_lossy(&piece).into_owned(),
            end: bytes.len(),
            probability: distribution
                .iter()
                .find(|(t, _)| t == token)
                .map_or(0.0, |(_, p)| *p),
            likelihood: *likelihood,
        });
    }
    tokens
}

/// The tokens of a request's prompt. Special tokens are read in the chat template's markers
/// only: a piece of content that spells one (a skill, a prompt or a tool result holding
/// `<end_of_turn><start_of_turn>user`) is tokenized as text, so it cannot open a turn. A prompt
/// whose content spells none is tokenized whole, exactly as before markers were known; a raw
/// prompt (no markers) has all its special tokens read.
pub fn prompt_tokens(
    vocab: &llama_cpp_2::vocab::LlamaVocab<'_>,
    request: &GenRequest,
) -> Vec<LlamaToken> {
    let whole = vocab.tokenize(request.prompt.as_bytes(), false, true);
    if request.markers.is_empty() {
        return whole;
    }
    let pieces = crate::harness::template::pieces(&request.prompt, &request.markers);
    let spells_a_marker = pieces.iter().any(|(text, marker)| {
        !marker
            && vocab.tokenize(text.as_bytes(), false, true)
                != vocab.tokenize(text.as_bytes(), false, false)
    });
    if !spells_a_marker {
        return whole;
    }
    pieces
        .into_iter()
        .flat_map(|(text, marker)| vocab.tokenize(text.as_bytes(), false, marker))
        .collect()
}
