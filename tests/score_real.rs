//! `skilleval score` on the real default model, each test against a truth the scorer did not
//! produce: the sampler's own draws (the scored probability is their expectation), the sampled
//! run's per-law verdicts on the planted weather wordings (a shipped journal), and an A/A, whose
//! truth is "no difference" by construction.

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use skilleval::eval::pack::Pack;
use skilleval::eval::runner::{self, RunOptions};
use skilleval::eval::score::measure::StepKind;
use skilleval::eval::score::rows::{ScoreComparison, ScoreVerdict};
use skilleval::eval::score::{self, ScoreSummary};
use skilleval::eval::stats::{self, Verdict};
use skilleval::harness::backend::{Backend, GenRequest, Sampling, ScoreRequest};
use skilleval::harness::template::{render_marked, Family, Message};

fn weather() -> Pack {
    Pack::load(&format!("{}/packs/weather", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

fn variant(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("packs/weather/variants")
        .join(name)
}

/// Scores the weather pack on the shared model.
fn score_weather(
    variants: &[&str],
    categories: &[&str],
    limit: Option<usize>,
    control: bool,
) -> (
    ScoreSummary,
    Vec<skilleval::eval::score::measure::StepScore>,
) {
    let out = tempfile::tempdir().unwrap();
    let mut opts = RunOptions::new(weather());
    opts.variants = variants.iter().map(|v| variant(v)).collect();
    opts.categories = categories.iter().map(|c| c.to_string()).collect();
    opts.limit = limit;
    opts.repeats = 1;
    opts.control = control;
    opts.output_root = out.path().to_path_buf();
    let prepared = runner::prepare(&opts).unwrap();
    let references = score::references(&prepared).unwrap();
    let mut backend = common::model::backend();
    score::score(
        &mut *backend,
        &prepared,
        &references,
        score::ScoreSettings::default(),
        None,
        false,
    )
    .unwrap()
}

#[test]
#[cfg_attr(not(feature = "full-tier"), ignore = "full tier")]
fn the_scored_probability_is_what_the_sampler_draws() {
    // Truth: the sampler itself. A short prompt, 400 draws of four tokens at the pack's
    // sampler; the share of draws that begin with a text must match its scored probability.
    let rendered = render_marked(
        Family::Gemma,
        &[Message::user(
            "Pick a fruit and name it in one word, nothing else.",
        )],
    )
    .expect("Gemma's format renders");
    let sampling = Sampling {
        temperature: 0.7,
        top_k: 40,
        top_p: 0.95,
        seed: 0,
    };
    let mut backend = common::model::backend();
    let draws = 400u32;
    let mut texts: Vec<String> = Vec::new();
    for seed in 0..draws {
        let request = GenRequest {
            prompt: rendered.text.clone(),
            max_tokens: 4,
            stop: vec!["<end_of_turn>".into()],
            sampling: Sampling { seed, ..sampling },
            grammar: None,
            markers: rendered.markers.clone(),
        };
        texts.push(backend.generate(&request).unwrap().text);
    }
    // The two commonest first words, each checked against its scored probability.
    let mut counts: BTreeMap<String, u32> = BTreeMap::new();
    for t in &texts {
        let word: String = t.chars().take_while(|c| c.is_alphabetic()).collect();
        if !word.is_empty() {
            *counts.entry(word).or_default() += 1;
        }
    }
    let mut common: Vec<(String, u32)> = counts.into_iter().collect();
    common.sort_by_key(|b| std::cmp::Reverse(b.1));
    assert!(!common.is_empty(), "{texts:?}");
    for (word, _) in common.iter().take(2) {
        let seen = texts
            .iter()
            .filter(|t| t.starts_with(word.as_str()))
            .count() as f64
            / f64::from(draws);
        let scored = backend
            .score(&ScoreRequest {
                prompt: rendered.text.clone(),
                markers: rendered.markers.clone(),
                continuation: word.clone(),
                sampling,
            })
            .unwrap()
            .probability();
        let sd = (scored * (1.0 - scored) / f64::from(draws))
            .sqrt()
            .max(0.01);
        assert!(
            (seen - scored).abs() <= 4.0 * sd,
            "{word:?}: drawn {seen:.3} of {draws}, scored {scored:.3}"
        );
    }
    // Greedy: the greedy reply's text scores 1, any other 0.
    let greedy = Sampling {
        temperature: 0.0,
        ..sampling
    };
    let request = GenRequest {
        prompt: rendered.text.clone(),
        max_tokens: 3,
        stop: vec!["<end_of_turn>".into()],
        sampling: greedy,
        grammar: None,
        markers: rendered.markers.clone(),
    };
    let text = backend.generate(&request).unwrap().text;
    let scored = backend
        .score(&ScoreRequest {
            prompt: rendered.text.clone(),
            markers: rendered.markers.clone(),
            continuation: text.clone(),
            sampling: greedy,
        })
        .unwrap();
    assert_eq!(scored.probability(), 1.0, "{text:?}: {scored:?}");
}

#[test]
#[cfg_attr(not(feature = "full-tier"), ignore = "full tier")]
fn an_a_a_scores_exactly_no_difference() {
    // Truth by construction: the baseline scored twice.
    let (summary, steps) = score_weather(&[], &["plain_city", "not_weather"], Some(6), false);
    let aa = &summary.comparisons[0];
    assert!(!aa.rows.is_empty());
    for row in &aa.rows {
        assert_eq!(row.difference, 0.0, "{row:?}");
        assert_eq!(row.ratio, 1.0, "{row:?}");
        assert_eq!((row.up, row.down), (0, 0), "{row:?}");
        assert!(
            matches!(
                row.verdict,
                ScoreVerdict::NoMaterialChange
                    | ScoreVerdict::Diagnostic
                    | ScoreVerdict::OutOfReach
            ),
            "{row:?}"
        );
    }
    let by_arm = |arm: &str| -> Vec<f64> {
        steps
            .iter()
            .filter(|s| s.arm.name() == arm)
            .map(|s| s.probability)
            .collect()
    };
    assert_eq!(by_arm("baseline"), by_arm("variant"), "bit for bit");
}

/// The step a sampled law reads, where one does. `reports-result` has none: the reference
/// answer names the resolved place and restates the result at once, and a wording that drops
/// the place (drops-place.md) makes that answer less likely while its own shorter answers
/// report the result more often (docs/score.md, "Where the score and the sampled run part").
fn step_of(law: &str) -> Option<StepKind> {
    match law {
        "calls-weather-lookup" => Some(StepKind::Calls),
        "passes-place-as-written" => Some(StepKind::Arguments),
        "names-resolved-place" => Some(StepKind::AnswerWords),
        "no-call-when-not-asked" => Some(StepKind::NoCall),
        _ => None,
    }
}

fn total(comparison: &ScoreComparison, step: StepKind) -> &skilleval::eval::score::rows::ScoreRow {
    comparison
        .rows
        .iter()
        .find(|r| r.category.is_none() && r.step == step)
        .unwrap_or_else(|| panic!("{} has no {step:?} row", comparison.name))
}

#[test]
#[cfg_attr(not(feature = "full-tier"), ignore = "full tier")]
fn planted_wordings_move_where_the_sampled_run_called_them() {
    // Truth: a sampled run's per-law verdicts (tests/data/journals/four-wordings.jsonl: b.md,
    // no-call.md, drops-place.md and reworded.md over four categories, 3 repeats each), which
    // the scorer never reads. Every law the sampled run called worse or better must move the
    // same way in the scored row of its step; the neutral edit must stay inside the margin.
    let names = ["b.md", "no-call.md", "drops-place.md", "reworded.md"];
    let categories = ["plain_city", "city_country", "city_us_state", "not_weather"];
    let (summary, _) = score_weather(&names, &categories, Some(16), false);
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/journals/four-wordings.jsonl"),
    )
    .unwrap();
    let outcomes: Vec<stats::Outcome> = text
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let sampled = stats::summarize(&outcomes).unwrap();
    let mut checked = 0;
    for (wording, name) in sampled.wordings().zip(names) {
        let scored = summary.comparisons.iter().find(|c| c.name == name).unwrap();
        for law in &wording.laws {
            eprintln!("{name} {}: sampled {:?}", law.name, law.verdict);
            let Some(step) = step_of(&law.name) else {
                continue;
            };
            let row = total(scored, step);
            match law.verdict {
                Verdict::Worse => {
                    assert!(
                        row.ratio < 1.0,
                        "{name} {}: sampled worse, scored {row:?}",
                        law.name
                    );
                    checked += 1;
                }
                Verdict::Better => {
                    assert!(
                        row.ratio > 1.0,
                        "{name} {}: sampled better, scored {row:?}",
                        law.name
                    );
                    checked += 1;
                }
                _ => {}
            }
        }
    }
    for c in &summary.comparisons {
        eprintln!("{}", skilleval::eval::score::report::headline(c));
    }
    assert!(checked >= 3, "only {checked} sampled verdicts to check");
    let neutral = summary
        .comparisons
        .iter()
        .find(|c| c.name == "reworded.md")
        .unwrap();
    assert!(
        !neutral.any(ScoreVerdict::Worse) && !neutral.any(ScoreVerdict::Better),
        "the neutral edit: {:?}",
        neutral.rows
    );
    let no_call = summary
        .comparisons
        .iter()
        .find(|c| c.name == "no-call.md")
        .unwrap();
    assert_eq!(total(no_call, StepKind::Calls).verdict, ScoreVerdict::Worse);
}

#[test]
#[cfg_attr(not(feature = "full-tier"), ignore = "full tier")]
fn the_scored_call_probability_tracks_the_sampled_call_rate() {
    // Truth: the README command's sampled run (tests/data/journals/readme-command.jsonl: control,
    // baseline and b.md over three categories, 6 repeats), which the scorer never reads. Per
    // (sample, arm), the share of repeats that called weather_lookup against the scored
    // probability that the reply opens a call.
    // 30 of the 44 samples keep 90 pairs and a shorter CI.
    let (_, steps) = score_weather(
        &["b.md"],
        &["city_country", "plain_city", "not_weather"],
        Some(30),
        true,
    );
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/journals/readme-command.jsonl"),
    )
    .unwrap();
    // (sample, arm) → (repeats that called, repeats).
    let mut observed: BTreeMap<(String, String), (f64, f64)> = BTreeMap::new();
    for line in text.lines() {
        let unit: serde_json::Value = serde_json::from_str(line).unwrap();
        let failed = |law: &str| {
            unit["failed_laws"]
                .as_array()
                .unwrap()
                .iter()
                .any(|l| l == law)
        };
        let applied = |law: &str| {
            unit["applied_laws"]
                .as_array()
                .unwrap()
                .iter()
                .any(|l| l == law)
        };
        let called = if applied("calls-weather-lookup") {
            !failed("calls-weather-lookup")
        } else if applied("no-call-when-not-asked") {
            failed("no-call-when-not-asked")
        } else {
            continue;
        };
        let key = (
            unit["sample_id"].as_str().unwrap().to_string(),
            unit["arm"].as_str().unwrap().to_string(),
        );
        let entry = observed.entry(key).or_default();
        entry.0 += f64::from(u8::from(called));
        entry.1 += 1.0;
    }
    let mut pairs: Vec<(f64, f64)> = Vec::new();
    for step in &steps {
        let scored_call = match step.kind {
            StepKind::Calls => step.probability,
            StepKind::NoCall => 1.0 - step.probability,
            _ => continue,
        };
        if let Some((called, repeats)) =
            observed.get(&(step.sample_id.clone(), step.arm.name().to_string()))
        {
            pairs.push((scored_call, called / repeats));
        }
    }
    assert!(pairs.len() >= 80, "{} pairs", pairs.len());
    let n = pairs.len() as f64;
    let (mx, my) = (
        pairs.iter().map(|p| p.0).sum::<f64>() / n,
        pairs.iter().map(|p| p.1).sum::<f64>() / n,
    );
    let cov: f64 = pairs.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let vx: f64 = pairs.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let vy: f64 = pairs.iter().map(|p| (p.1 - my).powi(2)).sum();
    let r = cov / (vx * vy).sqrt();
    eprintln!(
        "{} (sample, arm) pairs: correlation {r:.3}, mean scored {mx:.3}, mean drawn {my:.3}",
        pairs.len()
    );
    assert!(r >= 0.85, "correlation {r:.3}");
    // Calibrated: over all pairs the mean scored probability is the mean drawn rate, within
    // what 6 repeats of each pair allow.
    assert!((mx - my).abs() <= 0.06, "scored {mx:.3}, drawn {my:.3}");
}

#[test]
#[cfg_attr(not(feature = "full-tier"), ignore = "full tier")]
fn scoring_in_lanes_is_as_close_to_the_run_as_scoring_alone() {
    // Truth: the sampled run's own computation, called straight on llama.cpp (the prompt in the
    // sequential engine's chunks, then one token at a time). llama.cpp's logits on this model
    // move with the shape of a batch by far more than their last bits (docs/score.md, "Lanes
    // and the engine's own noise"), so neither scoring path reproduces the run's bits; the
    // lanes must be no further from them than the one-at-a-time path is. A lane read off the
    // wrong position or the wrong stream would be: a 0.95 call opener moves by ~0.9.
    let skill = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("packs/weather/skills/weather/SKILL.md"),
    )
    .unwrap();
    let questions = [
        "What's the weather in Paris?",
        "Is it raining in Oslo, Norway?",
        "Tell me a joke",
        "Will it snow in Denver?",
        "What is 2+2?",
        "forecast Tokyo",
        "Humidity in Mumbai",
        "Wind in Chicago?",
    ];
    let requests: Vec<ScoreRequest> = questions
        .iter()
        .map(|q| {
            let rendered =
                render_marked(Family::Gemma, &[Message::user(format!("{skill}\n\n{q}"))])
                    .expect("Gemma's format renders");
            ScoreRequest {
                prompt: format!("{}<start_of_turn>model\n", rendered.text),
                markers: rendered.markers,
                continuation:
                    "<function=weather_lookup>\n<parameter=city>\nParis\n</parameter>\n</function>"
                        .into(),
                sampling: Sampling {
                    temperature: 0.8,
                    ..Sampling::default()
                },
            }
        })
        .collect();
    let mut backend = common::model::backend();
    let alone: Vec<_> = requests.iter().map(|r| backend.score(r).unwrap()).collect();
    let lanes: Vec<_> = backend
        .score_batch(&requests)
        .answers
        .into_iter()
        .map(|a| a.unwrap())
        .collect();
    // The run's computation is made while the backend is held: one model at a time on the cores.
    let (mut from_alone, mut from_lanes, mut count) = (0.0f64, 0.0f64, 0usize);
    for ((request, a), l) in requests.iter().zip(&alone).zip(&lanes) {
        let run = common::model::likelihoods_as_a_run_computes_them(request);
        assert_eq!(run.len(), a.tokens.len());
        assert_eq!(run.len(), l.tokens.len());
        for ((r, a), l) in run.iter().zip(&a.tokens).zip(&l.tokens) {
            from_alone += (a.likelihood - r).abs();
            from_lanes += (l.likelihood - r).abs();
            count += 1;
        }
    }
    drop(backend);
    let (from_alone, from_lanes) = (from_alone / count as f64, from_lanes / count as f64);
    eprintln!(
        "mean |likelihood difference| from the run's computation over {count} tokens: \
         one at a time {from_alone:.4}, lanes {from_lanes:.4}"
    );
    assert!(
        from_lanes <= 1.5 * from_alone + 0.002,
        "lanes {from_lanes:.4}, one at a time {from_alone:.4}"
    );
}
