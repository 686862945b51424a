//! A model behind an OpenAI-compatible server (`--backend openai --endpoint URL`): the harness's
//! own rendered prompt goes to `POST <endpoint>/v1/completions`, so the harness keeps its chat
//! template and call grammar, and the server only continues text. No model file is loaded here.
//!
//! The chat format is `--family`, else what the model's chat template (from a llama.cpp server)
//! or its name says, as for a GGUF file. Each request
//! carries the seed, temperature, top-p, `max_tokens` and the stop strings; a llama.cpp server
//! (it says `owned_by: llamacpp` at `/v1/models`) also gets top-k, the
//! embedded backend's sampler order with min-p off, a fresh prefill per request (no reuse of the
//! previous prompt's cache, whose batch boundaries would differ from a fresh prefill's) unless
//! `--server-prompt-cache` asks for reuse, and `verbose` for how the generation ended. The API key comes from `$SKILLEVAL_API_KEY` and is sent
//! as `Authorization: Bearer`. Connection errors, 5xx and 429 are retried with exponential
//! backoff a bounded number of times; anything else is one line naming the endpoint.

use std::time::{Duration, Instant};

use anyhow::{anyhow, bail};
use serde_json::{json, Value};

use super::llama::first_stop;
use super::{
    Backend, BackendInfo, ChatRound, ContinuationScore, FinishReason, GenMetrics, GenRequest,
    Generation, ScoreRequest,
};
use crate::harness::template::Family;

/// The environment variable that holds the server's API key, if it needs one.
pub const API_KEY_VAR: &str = "SKILLEVAL_API_KEY";

/// Rendered prompts spell out the beginning-of-sequence marker, but a completions server
/// tokenizes the prompt with the model's special tokens and adds that marker itself: sent as it
/// is, the prompt would start with two.
const BOS_MARKERS: [&str; 2] = ["<bos>", "<|begin_of_text|>"];

/// The most characters one token of any vocabulary spells, as a bound on a server's reply: a
/// reply longer than its `max_tokens` could spell is cut there.
const MAX_CHARS_PER_TOKEN: usize = 128;

#[derive(Debug, Clone)]
pub struct OpenAiOptions {
    /// The server's base URL, e.g. `http://127.0.0.1:8080` (a trailing `/v1` is allowed).
    pub endpoint: String,
    /// The model to ask for; default: the first one the server lists at `/v1/models`.
    pub model: Option<String>,
    /// Chat format instead of the one the server's chat template (or model name) gives.
    pub family: Option<Family>,
    /// Tries per request after the first, on connection errors, 5xx and 429.
    pub retries: u32,
    /// Wait before the first retry; doubled after each.
    pub backoff: Duration,
    /// Longest wait for one response.
    pub timeout: Duration,
    pub api_key: Option<String>,
    /// Let a llama.cpp server start a prompt from the prefix its slot holds from an earlier
    /// one: far less prefill, but transcripts no longer replay exactly.
    pub prompt_cache: bool,
    /// Send each round as chat messages and tools to `/v1/chat/completions`, so the server
    /// renders the prompt with its own template and reads calls with its own parser.
    pub chat_api: bool,
}

impl OpenAiOptions {
    /// Options for `endpoint`, with the API key from the environment.
    pub fn new(endpoint: &str) -> anyhow::Result<Self> {
        Ok(OpenAiOptions {
            endpoint: base_url(endpoint)?,
            model: None,
            family: None,
            retries: 4,
            backoff: Duration::from_millis(500),
            timeout: Duration::from_secs(600),
            api_key: std::env::var(API_KEY_VAR).ok().filter(|k| !k.is_empty()),
            prompt_cache: false,
            chat_api: false,
        })
    }
}

/// `endpoint` without a trailing `/` or `/v1`, checked to be an http(s) URL.
pub fn base_url(endpoint: &str) -> anyhow::Result<String> {
    let trimmed = endpoint.trim().trim_end_matches('/');
    let trimmed = trimmed.strip_suffix("/v1").unwrap_or(trimmed);
    let rest = trimmed
        .strip_prefix("http://")
        .or_else(|| trimmed.strip_prefix("https://"));
    match rest {
        Some(host) if !host.is_empty() && !host.starts_with('/') => Ok(trimmed.to_string()),
        _ => bail!("--endpoint {endpoint:?}: give the server's URL, e.g. http://127.0.0.1:8080"),
    }
}

/// One handle on the server; forks are clones sharing the connection pool, one per worker.
#[derive(Clone)]
pub struct OpenAiBackend {
    agent: ureq::Agent,
    options: OpenAiOptions,
    family: Family,
    model: Option<String>,
    /// The server is llama.cpp's: it takes the sampler settings the embedded backend uses.
    llama_cpp: bool,
    /// Who the server says owns the model (`owned_by` at `/v1/models`): `llamacpp`, `vllm`…
    owned_by: Option<String>,
    info: BackendInfo,
}

/// What went wrong with one HTTP exchange, and whether trying again may help.
struct Failure {
    message: String,
    retry: bool,
    /// The server's own `Retry-After`, in seconds.
    retry_after: Option<u64>,
}

impl OpenAiBackend {
    /// Asks the server which model it serves (and, for llama.cpp, its chat template) and checks
    /// that it answers at all; a server that cannot be reached is one line after the retries.
    pub fn connect(options: &OpenAiOptions) -> anyhow::Result<Self> {
        let started = Instant::now();
        let agent = ureq::AgentBuilder::new()
            .timeout_connect(Duration::from_secs(10))
            .timeout(options.timeout)
            .build();
        let mut backend = OpenAiBackend {
            agent,
            options: options.clone(),
            family: Family::Gemma,
            model: options.model.clone(),
            llama_cpp: false,
            owned_by: None,
            info: BackendInfo::default(),
        };
        let models = backend.get("/v1/models")?;
        let listed = models
            .as_ref()
            .and_then(|m| m["data"].as_array())
            .cloned()
            .unwrap_or_default();
        let chosen = match &options.model {
            Some(name) => listed.iter().find(|m| m["id"].as_str() == Some(name)),
            None => listed.first(),
        };
        if let (Some(name), false) = (&options.model, listed.is_empty()) {
            if chosen.is_none() {
                let ids: Vec<&str> = listed.iter().filter_map(|m| m["id"].as_str()).collect();
                bail!(
                    "--model {name:?}: {} does not serve it (it serves: {})",
                    options.endpoint,
                    ids.join(", ")
                );
            }
        }
        if backend.model.is_none() {
            backend.model = chosen.and_then(|m| m["id"].as_str()).map(str::to_string);
        }
        backend.owned_by = chosen
            .and_then(|m| m["owned_by"].as_str())
            .map(str::to_string);
        backend.llama_cpp = backend.owned_by.as_deref() == Some("llamacpp");
        let name = backend.model.clone().unwrap_or_default();
        backend.family = match options.family {
            Some(Family::Own(_)) => bail!(
                "--endpoint {}: --family own renders with the model file's chat template, which this backend does not load; pick gemma, chatml, llama3 or transcript",
                options.endpoint
            ),
            Some(family) => family,
            None => backend.detect_family(&name).ok_or_else(|| {
                anyhow!(
                    "--endpoint {}: cannot tell the chat format of model {name:?}; pass --family gemma|chatml|llama3|transcript",
                    options.endpoint
                )
            })?,
        };
        backend.info = BackendInfo {
            name: "openai".into(),
            endpoint: Some(options.endpoint.clone()),
            model_name: backend.model.clone(),
            load_secs: started.elapsed().as_secs_f64(),
            sequences: 1,
            server_prompt_cache: backend.llama_cpp.then_some(options.prompt_cache),
            server_api: options.chat_api.then(|| "chat".to_string()),
            ..Default::default()
        };
        Ok(backend)
    }

    /// The chat format of the server's model, found as for a GGUF file: from its chat template,
    /// else from its name. llama.cpp's server tells the template, but reports a ChatML one of its
    /// own for a model file that has none: a template whose turn markers are not special tokens
    /// of the model's vocabulary is not the model's, and is ignored. Another server is judged by
    /// the model's name alone.
    fn detect_family(&self, name: &str) -> Option<Family> {
        const TURN_MARKERS: [&str; 3] = ["<start_of_turn>", "<|im_start|>", "<|start_header_id|>"];
        let template = if self.llama_cpp {
            self.get("/props")
                .ok()
                .flatten()
                .and_then(|props| props["chat_template"].as_str().map(str::to_string))
        } else {
            None
        };
        let template = template.filter(|t| {
            TURN_MARKERS
                .iter()
                .filter(|marker| t.contains(*marker))
                .all(|marker| self.is_one_special_token(marker))
        });
        Family::detect("", name, template.as_deref())
    }

    /// Whether llama.cpp's server tokenizes `text` as one special token.
    fn is_one_special_token(&self, text: &str) -> bool {
        let url = format!("{}/tokenize", self.options.endpoint);
        let body = json!({"content": text, "add_special": false, "parse_special": true});
        self.with_retries(|| {
            self.authorized(self.agent.post(&url))
                .set("Content-Type", "application/json")
                .send_string(&body.to_string())
                .map_err(Box::new)
        })
        .ok()
        .and_then(|answer| answer["tokens"].as_array().map(Vec::len))
            == Some(1)
    }

    /// GETs `path`: the JSON body, or `None` when the server has no such route (404).
    fn get(&self, path: &str) -> anyhow::Result<Option<Value>> {
        let url = format!("{}{path}", self.options.endpoint);
        match self.with_retries(|| {
            self.authorized(self.agent.get(&url))
                .call()
                .map_err(Box::new)
        }) {
            Ok(value) => Ok(Some(value)),
            Err(failure) if failure.message.starts_with("HTTP 404") => Ok(None),
            Err(failure) => Err(anyhow!("{url}: {}", failure.message)),
        }
    }

    /// POSTs `body` as JSON to `path`: the JSON answer, or one line naming the URL.
    fn post(&self, path: &str, body: &Value) -> anyhow::Result<Value> {
        let url = format!("{}{path}", self.options.endpoint);
        let body = body.to_string();
        self.with_retries(|| {
            self.authorized(self.agent.post(&url))
                .set("Content-Type", "application/json")
                .send_string(&body)
                .map_err(Box::new)
        })
        .map_err(|failure| anyhow!("{url}: {}", failure.message))
    }

    /// How this server gives the probabilities `score` reads, or the one-line refusal.
    pub fn score_source(&self) -> anyhow::Result<super::server_score::ScoreSource> {
        super::server_score::ScoreSource::of(&self.options.endpoint, self.owned_by.as_deref())
    }

    fn authorized(&self, request: ureq::Request) -> ureq::Request {
        match &self.options.api_key {
            Some(key) => request.set("Authorization", &format!("Bearer {key}")),
            None => request,
        }
    }

    /// Sends a request until it succeeds, fails for good, or the retries run out; waits
    /// `backoff`, twice that, four times that… between tries (or what `Retry-After` asks).
    fn with_retries(
        &self,
        send: impl Fn() -> Result<ureq::Response, Box<ureq::Error>>,
    ) -> Result<Value, Failure> {
        let mut wait = self.options.backoff;
        let mut tries = 0;
        loop {
            tries += 1;
            let failure =
                match send().map_err(|e| *e) {
                    Ok(response) => match response
                        .into_string()
                        .map_err(|e| e.to_string())
                        .and_then(|text| {
                            serde_json::from_str::<Value>(&text).map_err(|e| e.to_string())
                        }) {
                        Ok(value) => return Ok(value),
                        Err(e) => Failure {
                            message: format!("the answer is not JSON: {e}"),
                            retry: false,
                            retry_after: None,
                        },
                    },
                    Err(ureq::Error::Status(code, response)) => status_failure(code, response),
                    // Without the URL ureq puts first: the caller names it once.
                    Err(ureq::Error::Transport(transport)) => Failure {
                        message: {
                            let text = transport.to_string();
                            let url = transport.url().map(|u| format!("{u}: "));
                            match url.and_then(|u| text.strip_prefix(&u).map(str::to_string)) {
                                Some(rest) => rest,
                                None => text,
                            }
                        },
                        retry: true,
                        retry_after: None,
                    },
                };
            if !failure.retry || tries > self.options.retries {
                let message = if failure.retry {
                    format!("{} (after {tries} tries)", failure.message)
                } else {
                    failure.message
                };
                return Err(Failure { message, ..failure });
            }
            let pause = failure
                .retry_after
                .map(Duration::from_secs)
                .unwrap_or(wait)
                .min(Duration::from_secs(30));
            std::thread::sleep(pause);
            // Bounded, so that many retries never overflow the doubling.
            wait = wait.saturating_mul(2).min(Duration::from_secs(30));
        }
    }

    /// A reply as a generation: cut at a stop string or at what `max_tokens` can spell, where
    /// the server did not, with the server's counts and times.
    fn generation(
        &self,
        request: &GenRequest,
        url: &str,
        mut text: String,
        mut finish: FinishReason,
        answer: &Value,
        started: Instant,
    ) -> Generation {
        // A server that ignored a stop string: cut where the embedded backend would have.
        if let Some((at, stop)) = first_stop(&text, &request.stop) {
            text.truncate(at);
            finish = FinishReason::Stop(stop);
        }
        // A server that ignored `max_tokens` (or sent junk): what that many tokens could
        // spell is kept, so the journal holds no more than a reply could be.
        let most = (request.max_tokens as usize).saturating_mul(MAX_CHARS_PER_TOKEN);
        if let Some((cut, _)) = text.char_indices().nth(most) {
            static SAID: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
            if !SAID.swap(true, std::sync::atomic::Ordering::Relaxed) {
                eprintln!(
                    "skilleval: warning: {url}: a reply held {} characters, more than {} tokens (the round's budget) can spell; it is cut to {most} characters and counted as out of tokens (said once)",
                    text.chars().count(),
                    request.max_tokens
                );
            }
            text.truncate(cut);
            finish = FinishReason::MaxTokens;
        }
        let usage = &answer["usage"];
        let timings = &answer["timings"];
        let count = |v: &Value| v.as_u64().unwrap_or(0) as u32;
        let ms = |v: &Value| v.as_f64().map(|ms| ms / 1000.0);
        let wall = started.elapsed().as_secs_f64();
        let prefill_secs = ms(&timings["prompt_ms"]).unwrap_or(0.0);
        let decode_secs = ms(&timings["predicted_ms"]).unwrap_or(wall);
        Generation {
            text,
            finish,
            metrics: GenMetrics {
                prompt_tokens: count(&usage["prompt_tokens"]),
                cached_prompt_tokens: count(&usage["prompt_tokens_details"]["cached_tokens"]),
                generated_tokens: count(&usage["completion_tokens"]),
                prefill_secs,
                decode_secs,
                // The server's first token time is not reported: its prefill is the nearest.
                ttft_secs: prefill_secs,
            },
        }
    }

    /// The request body for one generation.
    fn body(&self, request: &GenRequest) -> Value {
        let s = &request.sampling;
        let mut body = json!({
            "prompt": without_bos(&request.prompt),
            "max_tokens": request.max_tokens,
            "temperature": s.temperature.max(0.0),
            "top_p": s.top_p,
            "seed": s.seed,
            "stop": request.stop,
            "stream": false,
        });
        if let Some(model) = &self.model {
            body["model"] = json!(model);
        }
        if self.llama_cpp {
            body["top_k"] = json!(s.top_k);
            body["min_p"] = json!(0.0);
            body["samplers"] = json!(["top_k", "top_p", "temperature"]);
            body["cache_prompt"] = json!(self.options.prompt_cache);
            body["verbose"] = json!(true);
            if let Some(grammar) = &request.grammar {
                // Type 1: a trigger word, as the embedded sampler is given.
                body["grammar"] = json!(grammar.gbnf);
                body["grammar_lazy"] = json!(true);
                body["grammar_triggers"] = json!([{"type": 1, "value": grammar.trigger}]);
            }
        }
        body
    }
}

impl super::server_score::ScoreServer for OpenAiBackend {
    fn post(&self, path: &str, body: &Value) -> anyhow::Result<Value> {
        OpenAiBackend::post(self, path, body)
    }

    fn endpoint(&self) -> &str {
        &self.options.endpoint
    }

    fn model(&self) -> Option<&str> {
        self.model.as_deref()
    }

    fn owned_by(&self) -> Option<&str> {
        self.owned_by.as_deref()
    }
}

/// The prompt without the leading beginning-of-sequence marker the server adds itself.
fn without_bos(prompt: &str) -> &str {
    BOS_MARKERS
        .iter()
        .find_map(|marker| prompt.strip_prefix(marker))
        .unwrap_or(prompt)
}

/// A failure for an HTTP status: 5xx and 429 may pass, anything else will not.
fn status_failure(code: u16, response: ureq::Response) -> Failure {
    let retry_after = response
        .header("Retry-After")
        .and_then(|v| v.trim().parse::<u64>().ok());
    let text = response.into_string().unwrap_or_default();
    let said = serde_json::from_str::<Value>(&text)
        .ok()
        .and_then(|v| {
            v["error"]["message"]
                .as_str()
                .or(v["error"].as_str())
                .map(str::to_string)
        })
        .unwrap_or_else(|| text.chars().take(200).collect());
    let said = said.replace('\n', " ");
    let hint = match code {
        401 | 403 => format!(" (is ${API_KEY_VAR} set to the server's key?)"),
        _ => String::new(),
    };
    let refused = if (400..500).contains(&code) && code != 429 {
        format!(" ({})", super::REFUSED)
    } else {
        String::new()
    };
    Failure {
        message: format!("HTTP {code}: {}{hint}{refused}", said.trim()),
        retry: code == 429 || code >= 500,
        retry_after,
    }
}

/// How the server says the generation ended: llama.cpp's own account when it gave one, else
/// the OpenAI `finish_reason` ("length", or "stop" for an end-of-turn or a stop string).
fn finish_of(answer: &Value, choice: &Value) -> FinishReason {
    let verbose = &answer["__verbose"];
    match verbose["stop_type"].as_str() {
        Some("limit") => return FinishReason::MaxTokens,
        Some("word") => {
            return FinishReason::Stop(verbose["stopping_word"].as_str().unwrap_or("").into())
        }
        Some("eos") => return FinishReason::Eos,
        _ => {}
    }
    match choice["finish_reason"].as_str() {
        Some("length") => FinishReason::MaxTokens,
        _ => FinishReason::Eos,
    }
}

impl Backend for OpenAiBackend {
    fn family(&self) -> Family {
        self.family
    }

    fn info(&self) -> BackendInfo {
        self.info.clone()
    }

    fn generate(&mut self, request: &GenRequest) -> anyhow::Result<Generation> {
        let started = Instant::now();
        let url = format!("{}/v1/completions", self.options.endpoint);
        if self.options.chat_api {
            bail!("{url}: --server-api chat needs the round's messages, which this request lacks");
        }
        if request.grammar.is_some() && !self.llama_cpp {
            bail!(
                "{url}: the pack holds calls to a grammar (constrained_calls), which only a llama.cpp server takes"
            );
        }
        let answer = self.post("/v1/completions", &self.body(request))?;
        let choice = &answer["choices"][0];
        let Some(text) = choice["text"].as_str() else {
            bail!("{url}: the answer has no choices[0].text");
        };
        let finish = finish_of(&answer, choice);
        Ok(self.generation(request, &url, text.to_string(), finish, &answer, started))
    }

    /// With `--server-api chat`, the round as chat messages and tools to the chat endpoint;
    /// else the rendered prompt to the completion endpoint.
    fn generate_chat(
        &mut self,
        request: &GenRequest,
        chat: &ChatRound,
    ) -> anyhow::Result<Generation> {
        if !self.options.chat_api {
            return self.generate(request);
        }
        let started = Instant::now();
        let url = format!("{}/v1/chat/completions", self.options.endpoint);
        if request.grammar.is_some() {
            bail!(
                "{url}: the pack holds calls to a grammar (constrained_calls), which the server's own call parser cannot take; use the completion endpoint (--server-api completion)"
            );
        }
        let mut body = self.body(request);
        if let Some(fields) = body.as_object_mut() {
            // The server's template ends the turn and its parser reads the calls.
            for field in ["prompt", "stop", "verbose"] {
                fields.remove(field);
            }
        }
        body["messages"] = super::openai_chat::messages(chat);
        if !chat.tools.is_empty() {
            body["tools"] = super::openai_chat::tools(chat);
        }
        let answer = self.post("/v1/chat/completions", &body)?;
        let (text, finish) = super::openai_chat::reply(&answer, chat.format, &url)?;
        Ok(self.generation(request, &url, text, finish, &answer, started))
    }

    fn score(&mut self, request: &ScoreRequest) -> anyhow::Result<ContinuationScore> {
        super::server_score::score(self, request)
    }

    fn fork(&self) -> Option<Box<dyn Backend + Send>> {
        Some(Box::new(self.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_are_normalized_and_checked() {
        assert_eq!(
            base_url("http://127.0.0.1:8080/v1/").unwrap(),
            "http://127.0.0.1:8080"
        );
        assert_eq!(base_url("https://h").unwrap(), "https://h");
        for bad in ["127.0.0.1:8080", "http://", "ftp://h", ""] {
            assert!(base_url(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_servers_own_bos_is_not_doubled() {
        assert_eq!(without_bos("<bos><start_of_turn>"), "<start_of_turn>");
        assert_eq!(without_bos("<|im_start|>user"), "<|im_start|>user");
    }
}
