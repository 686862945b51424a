//! `report.html`: one self-contained page (no network, no external files): the headline, a
//! forest plot of Δ per category and per law for each comparison with its full table, each row
//! linked to the pairs behind it, the samples whose arms' outcomes differ for some row with both
//! transcripts side by side and a filter by comparison, category, law and verdict, then the
//! manifest and the run's timing.
//!
//! The page is rendered here, in full: its small script only filters the samples (also when a
//! row's pair count is clicked) and, once done, sets `data-rendered="ok"` on `<body>`. Everything the page shows is also in its data
//! block, `<script type="application/json" id="data">` (see [`data`]), for other programs.
//! Every text from the run is escaped; the data block escapes `<`, `>` and `&` as JSON
//! `\u` escapes so that no text can close it.

use serde_json::{json, Value};

use super::figures::{cells, comparison_title, headers, rows_of};
use super::forest;
use super::headline::{skill_effect_statement, wording_headlines};
use super::legend::legend;
use super::markup::{escape, verdict_class};
use super::notes::{errored_statement, several_variants_note};
use super::pairs::{self, Pair, Side, PAIRS_SHOWN};
use crate::eval::record::RunRecord;
use crate::eval::stats::{Comparison, Row, Summary};

/// What the page's data block holds: the run's identity and statements, every row of every
/// comparison, the pairs shown, the manifest and the profile.
pub fn data(record: &RunRecord, summary: &Summary) -> Value {
    let (pairs, left_out) = pairs::differing(record, summary);
    let comparisons: Vec<Value> = summary
        .comparisons()
        .map(|c| {
            json!({
                "name": c.name,
                "title": comparison_title(c),
                "reference": c.reference,
                "treatment": c.treatment,
                "categories": c.categories.iter().map(row_data).collect::<Vec<_>>(),
                "total": row_data(&c.total),
                "laws": c.laws.iter().map(row_data).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({
        "run_id": record.manifest.run_id,
        "pack": record.manifest.pack,
        "skill": record.manifest.skill,
        "statements": statements(summary),
        "comparisons": comparisons,
        "pairs": pairs,
        "pairs_left_out": left_out,
        "prompts_note": record.prompts_note,
        "manifest": as_written(&record.manifest),
        "profile": as_written(&record.profile),
    })
}

/// A value as its JSON file holds it: through text, so that an `f32` reads 0.7, not the
/// 0.699999988 of its conversion to `f64`.
fn as_written(value: &impl serde::Serialize) -> Value {
    serde_json::to_string(value)
        .and_then(|text| serde_json::from_str(&text))
        .expect("a manifest and a profile serialize")
}

/// The figures of one row, as fractions.
fn row_data(row: &Row) -> Value {
    json!({
        "name": row.name,
        "samples": row.samples,
        "reference_rate": row.reference.rate,
        "treatment_rate": row.treatment.rate,
        "delta": row.delta,
        "low": row.interval.map(|i| i.low),
        "high": row.interval.map(|i| i.high),
        "p": row.p_value,
        "p_adjusted": row.p_adjusted,
        "mde": row.mde,
        "verdict": verdict_class(row),
        "label": row.verdict_label(),
    })
}

fn statements(summary: &Summary) -> Vec<String> {
    let mut out = Vec::new();
    out.extend(wording_headlines(summary));
    if let Some(skill) = &summary.skill_effect {
        out.push(format!("Skill effect: {}", skill_effect_statement(skill)));
    } else {
        out.push("Skill effect: not measured (--no-control).".into());
    }
    out.extend(errored_statement(summary));
    out
}

/// The page.
pub fn render(record: &RunRecord, summary: &Summary, settings: &str) -> String {
    let data = data(record, summary);
    let (pairs, left_out) = pairs::differing(record, summary);
    let title = format!(
        "skilleval: {} · {}",
        record.manifest.pack, record.manifest.run_id
    );
    let mut out = format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<header>\n<h1>{}</h1>\n",
        escape(&title),
        escape(&title)
    );
    for statement in statements(summary) {
        out.push_str(&format!(
            "<p class=\"headline\">{}</p>\n",
            escape(&statement)
        ));
    }
    out.push_str(&format!(
        "<p class=\"settings\">{}</p>\n<nav><a href=\"#comparisons\">Comparisons</a> · <a href=\"#samples\">Samples that differ</a> · <a href=\"#run\">Run</a></nav>\n</header>\n",
        escape(settings)
    ));
    out.push_str("<main>\n<section id=\"comparisons\">\n");
    for comparison in summary.comparisons() {
        out.push_str(&comparison_section(comparison, &pairs));
    }
    if let Some(note) = several_variants_note(summary) {
        out.push_str(&format!("<p class=\"legend\">{}</p>\n", escape(&note)));
    }
    out.push_str(&format!(
        "<p class=\"legend\">{}</p>\n</section>\n",
        escape(&legend(summary))
    ));
    out.push_str(&samples_section(record, summary, &pairs, &left_out));
    out.push_str(&run_section(record));
    out.push_str("</main>\n");
    out.push_str(&format!(
        "<script type=\"application/json\" id=\"data\">{}</script>\n<script>{SCRIPT}</script>\n</body>\n</html>\n",
        script_safe_json(&data)
    ));
    out
}

/// JSON that cannot end the `<script>` element it sits in: `<`, `>` and `&` appear only inside
/// strings, where their `\u` escapes mean the same.
fn script_safe_json(value: &Value) -> String {
    serde_json::to_string(value)
        .expect("a JSON value serializes")
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}

fn comparison_section(comparison: &Comparison, pairs: &[Pair]) -> String {
    let title = comparison_title(comparison);
    let mut out = format!(
        "<section class=\"comparison\" id=\"{}\">\n<h2>{}</h2>\n",
        escape(&comparison.name),
        escape(&title)
    );
    let categories: Vec<&Row> = comparison.categories.iter().collect();
    out.push_str("<figure>\n");
    out.push_str(&forest::svg(
        &format!("{title}: Δ per category"),
        "category",
        &categories,
        Some(&comparison.total),
    ));
    out.push_str("<figcaption>Per category, and the total: the pass rate, or the share of laws held where that alone carried the verdict (labelled \u{201c}laws held\u{201d}).</figcaption>\n</figure>\n");
    out.push_str(&html_table(comparison, &rows_of(comparison), true, pairs));
    for note in super::notes::comparison_notes(comparison) {
        out.push_str(&format!("<p class=\"note\">{}</p>\n", escape(&note)));
    }
    if !comparison.laws.is_empty() {
        let laws: Vec<&Row> = comparison.laws.iter().collect();
        out.push_str("<figure>\n");
        out.push_str(&forest::svg(
            &format!("{title}: Δ per law"),
            "law",
            &laws,
            None,
        ));
        out.push_str("<figcaption>Per law: the pass rate of each law over the runs it applied to; adjusted with every other row of the comparison.</figcaption>\n</figure>\n");
        out.push_str("<details><summary>Per-law table</summary>\n");
        out.push_str(&html_table(comparison, &laws, false, pairs));
        out.push_str("</details>\n");
    }
    out.push_str("</section>\n");
    out
}

/// The pairs behind a row of `comparison`, shown under "Samples that differ": for a category
/// (or the total) those whose pass or share of laws held differs, for a law those in which it
/// held on one side only.
fn backing<'a>(
    pairs: &'a [Pair],
    comparison: &'a Comparison,
    row: &'a Row,
    category_row: bool,
) -> impl Iterator<Item = &'a Pair> {
    pairs.iter().filter(move |p| {
        p.comparison == comparison.name
            && if category_row {
                (p.pass_differs || p.held_differs)
                    && (row.name == "total" || p.category == row.name)
            } else {
                p.laws.contains(&row.name)
            }
    })
}

/// A row's pair count, a link that filters "Samples that differ" to them.
fn pairs_link(comparison: &Comparison, row: &Row, category_row: bool, count: usize) -> String {
    if count == 0 {
        return "0".into();
    }
    let filter = match (category_row, row.name.as_str()) {
        (true, "total") => String::new(),
        (true, name) => format!(" data-category=\"{}\"", escape(name)),
        (false, name) => format!(" data-law=\"{}\"", escape(name)),
    };
    format!(
        "<a class=\"pairs-link\" href=\"#samples\" data-comparison=\"{}\"{filter}>{count}</a>",
        escape(&comparison.name)
    )
}

fn html_table(comparison: &Comparison, rows: &[&Row], categories: bool, pairs: &[Pair]) -> String {
    let mut header = headers(
        comparison.reference.name(),
        comparison.treatment.name(),
        if categories { "category" } else { "law" },
    );
    header.push("pairs shown".into());
    let mut out = String::from("<table>\n<thead><tr>");
    for (i, cell) in header.iter().enumerate() {
        let class = if (1..=6).contains(&i) {
            " class=\"num\""
        } else {
            ""
        };
        out.push_str(&format!("<th{class}>{}</th>", escape(cell)));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for row in rows {
        let total = categories && row.name == "total";
        out.push_str(&format!(
            "<tr class=\"{}{}\">",
            verdict_class(row),
            if total { " total" } else { "" }
        ));
        for (i, cell) in cells(row, categories, 1).iter().enumerate() {
            let class = if (1..=6).contains(&i) {
                " class=\"num\""
            } else {
                ""
            };
            out.push_str(&format!("<td{class}>{}</td>", escape(cell)));
        }
        let count = backing(pairs, comparison, row, categories).count();
        out.push_str(&format!(
            "<td class=\"num\">{}</td></tr>\n",
            pairs_link(comparison, row, categories, count)
        ));
    }
    out.push_str("</tbody>\n</table>\n");
    out
}

/// `<option>`s for a filter: "all", then each value.
fn options(all: &str, values: impl IntoIterator<Item = (String, String)>) -> String {
    let mut out = format!("<option value=\"\">{}</option>", escape(all));
    for (value, label) in values {
        out.push_str(&format!(
            "<option value=\"{}\">{}</option>",
            escape(&value),
            escape(&label)
        ));
    }
    out
}

fn samples_section(
    record: &RunRecord,
    summary: &Summary,
    pairs: &[Pair],
    left_out: &std::collections::BTreeMap<String, usize>,
) -> String {
    let mut out = String::from("<section id=\"samples\">\n<h2>Samples that differ</h2>\n");
    out.push_str("<p>Each (sample, repeat) whose two arms' outcomes differ for a row of the comparison: the pass (one passed, the other failed), the share of laws held, or a law that held on one side only. A pair with a fixture gap on either side is scored as judged, as in the statistics, and shown here with the gap marked. Each row's count in the tables above shows its pairs.</p>\n");
    if let Some(note) = &record.prompts_note {
        out.push_str(&format!("<p class=\"note\">{}</p>\n", escape(note)));
    }
    for (comparison, count) in left_out {
        out.push_str(&format!(
            "<p class=\"note\">{}: {count} more pair(s) beyond the first {PAIRS_SHOWN} are not shown.</p>\n",
            escape(comparison)
        ));
    }
    let comparisons = summary
        .wordings()
        .chain(&summary.skill_effect)
        .map(|c| (c.name.clone(), comparison_title(c)));
    let mut categories: Vec<String> = pairs.iter().map(|p| p.category.clone()).collect();
    categories.sort();
    categories.dedup();
    // A law filter picks the pairs in which the law held on one side only: its row's pairs.
    let mut laws: Vec<String> = pairs.iter().flat_map(|p| p.laws.clone()).collect();
    laws.sort();
    laws.dedup();
    let verdicts = [
        "better",
        "worse",
        "inconclusive",
        "mixed",
        "no_change",
        "too_few_samples",
    ]
    .map(|v| (v.to_string(), format!("a row {}", v.replace('_', " "))));
    out.push_str(&format!(
        "<form id=\"filters\" class=\"filters\">\n<label>Comparison <select id=\"filter-comparison\">{}</select></label>\n<label>Category <select id=\"filter-category\">{}</select></label>\n<label>Law <select id=\"filter-law\">{}</select></label>\n<label>Verdict <select id=\"filter-verdict\">{}</select></label>\n<output id=\"shown\">{} pair(s)</output>\n</form>\n",
        options("all", comparisons),
        options("all", categories.iter().map(|c| (c.clone(), c.clone()))),
        options("any", laws.iter().map(|l| (l.clone(), l.clone()))),
        options("any", verdicts),
        pairs.len()
    ));
    if pairs.is_empty() {
        out.push_str("<p>None: every scored pair came out the same in both arms.</p>\n");
    }
    for pair in pairs {
        out.push_str(&pair_article(pair));
    }
    out.push_str("</section>\n");
    out
}

/// What differs in a pair, for its heading: who passed, else what the laws did.
fn pair_outcome(pair: &Pair) -> String {
    let (reference, treatment) = (&pair.reference, &pair.treatment);
    if pair.pass_differs {
        let (class, winner) = if pair.treatment_passed {
            ("gain", treatment)
        } else {
            ("loss", reference)
        };
        return format!(
            "<span class=\"{class}\">{} passed</span>",
            winner.arm.name()
        );
    }
    let both = if treatment.passed { "passed" } else { "failed" };
    let class = match treatment.laws_held.partial_cmp(&reference.laws_held) {
        Some(std::cmp::Ordering::Greater) => "gain",
        Some(std::cmp::Ordering::Less) => "loss",
        _ => "even",
    };
    format!(
        "<span class=\"{class}\">both {both}; laws held {:.0}% → {:.0}%</span>",
        reference.laws_held * 100.0,
        treatment.laws_held * 100.0
    )
}

fn pair_article(pair: &Pair) -> String {
    let laws_attr = serde_json::to_string(&pair.laws).expect("strings serialize");
    let verdicts_attr = serde_json::to_string(&pair.verdicts()).expect("strings serialize");
    let laws_note = if pair.laws.is_empty() {
        String::new()
    } else {
        format!(
            " <span class=\"row-laws\">· law(s) held on one side only: {}</span>",
            escape(&pair.laws.join(", "))
        )
    };
    let mut out = format!(
        "<article class=\"pair\" data-comparison=\"{}\" data-category=\"{}\" data-backs-category=\"{}\" data-sample=\"{}\" data-repeat=\"{}\" data-laws=\"{}\" data-verdicts=\"{}\">\n<h3><code>{}</code> · {} · repeat {} · seed {} · {} <span class=\"category-verdict {}\">(category {})</span>{laws_note}</h3>\n",
        escape(&pair.comparison),
        escape(&pair.category),
        pair.pass_differs || pair.held_differs,
        escape(&pair.sample_id),
        pair.repeat,
        escape(&laws_attr),
        escape(&verdicts_attr),
        escape(&pair.sample_id),
        escape(&pair.category),
        pair.repeat,
        pair.seed,
        pair_outcome(pair),
        escape(&pair.verdict),
        escape(&pair.verdict.replace('_', " ")),
    );
    if let Some(prompt) = &pair.prompt {
        out.push_str(&format!(
            "<div class=\"prompt\"><span class=\"tag\">prompt</span><pre>{}</pre></div>\n",
            escape(prompt)
        ));
    }
    out.push_str("<div class=\"panes\">\n");
    out.push_str(&pane(&pair.reference));
    out.push_str(&pane(&pair.treatment));
    out.push_str("</div>\n</article>\n");
    out
}

/// One arm's transcript: its laws (the failed ones marked), each round's text with its calls and
/// their replayed results, how the loop stopped, and the reply.
fn pane(side: &Side) -> String {
    let mut out = format!(
        "<div class=\"pane {}{}\" data-arm=\"{}\">\n<h4>{} · {}{}</h4>\n<p class=\"laws\">",
        if side.passed { "passed" } else { "failed" },
        if side.gapped { " gapped" } else { "" },
        side.arm.name(),
        side.arm.name(),
        if side.passed {
            "passed"
        } else if side.errored {
            "errored"
        } else {
            "failed"
        },
        if side.gapped {
            " · <span class=\"gap\">gap: a call met no recording; scored as judged</span>"
        } else {
            ""
        }
    );
    for law in &side.applied_laws {
        let failed = side.failed_laws.contains(law);
        out.push_str(&format!(
            "<span class=\"law {}\">{}{}</span> ",
            if failed { "failed" } else { "held" },
            if failed { "✗ " } else { "✓ " },
            escape(law)
        ));
    }
    // Journals older than `applied_laws` name only the failed ones.
    for law in side
        .failed_laws
        .iter()
        .filter(|l| !side.applied_laws.contains(l))
    {
        out.push_str(&format!(
            "<span class=\"law failed\">✗ {}</span> ",
            escape(law)
        ));
    }
    out.push_str("</p>\n");
    for (index, round) in side.rounds.iter().enumerate() {
        out.push_str(&format!(
            "<div class=\"round\"><span class=\"tag\">round {}</span><pre>{}</pre>\n",
            index + 1,
            escape(&round.text)
        ));
        for call in &round.calls {
            out.push_str(&format!(
                "<div class=\"call\"><code>→ {}({}){}</code><pre class=\"result{}\">{}</pre></div>\n",
                escape(&call.name),
                escape(&call.arguments),
                match call.approved {
                    Some(false) => " · not approved",
                    Some(true) => " · approved",
                    None => "",
                },
                if call.is_error { " error" } else { "" },
                escape(&call.result)
            ));
        }
        if let Some((on, said)) = &round.user {
            out.push_str(&format!(
                "<div class=\"user\"><span class=\"tag\">user, to the {}</span><pre>{}</pre></div>\n",
                escape(on),
                escape(said)
            ));
        }
        out.push_str("</div>\n");
    }
    out.push_str(&format!(
        "<div class=\"reply\"><span class=\"tag\">reply · {}</span><pre>{}</pre></div>\n</div>\n",
        escape(&side.stop),
        escape(&side.reply)
    ));
    out
}

fn run_section(record: &RunRecord) -> String {
    let m = &record.manifest;
    let optional = |v: &Option<String>| v.clone().unwrap_or_else(|| "—".into());
    let facts: Vec<(&str, String)> = vec![
        ("run", m.run_id.clone()),
        ("pack · skill", format!("{} · {}", m.pack, m.skill)),
        (
            "model",
            format!(
                "{} ({})",
                optional(&m.backend.model_name),
                optional(&m.backend.model_path)
            ),
        ),
        ("model sha256", optional(&m.model_sha256)),
        (
            "backend",
            format!(
                "{} · llama-cpp-2 {} · {} threads · context {} · parallel {}",
                m.backend.name, m.llama_cpp_2_version, m.backend.threads, m.backend.n_ctx, m.parallel
            ),
        ),
        (
            "seeds",
            format!(
                "run seed {} · {} samples × {} repeats, one seed per (sample, repeat) shared by its arms",
                m.run_seed, m.samples, m.repeats
            ),
        ),
        (
            "sampling",
            serde_json::to_string(&m.sampling).unwrap_or_default(),
        ),
        ("skills", format!("{} at {}", m.skills_dir, optional(&m.skills_git_revision))),
        ("variant", optional(&m.variant)),
        ("baseline body sha256", m.baseline_body_sha256.clone()),
        ("variant body sha256", m.variant_body_sha256.clone()),
        ("control body sha256", optional(&m.control_body_sha256)),
        ("corpus", format!("{} ({})", m.corpus, m.corpus_sha256)),
        ("skilleval", m.skilleval_version.clone()),
    ];
    let mut out = String::from("<section id=\"run\">\n<h2>Run</h2>\n<table class=\"facts\">\n");
    for (name, value) in facts {
        out.push_str(&format!(
            "<tr><th>{}</th><td><code>{}</code></td></tr>\n",
            escape(name),
            escape(&value)
        ));
    }
    out.push_str("</table>\n<h3>Timing</h3>\n");
    match &record.profile {
        Some(profile) => out.push_str(&format!(
            "<pre>{}\n{}</pre>\n",
            escape(&profile.line()),
            escape(&profile.table())
        )),
        None => out.push_str("<p>No profile.json in the run folder.</p>\n"),
    }
    out.push_str(&format!(
        "<details><summary>manifest.json</summary><pre>{}</pre></details>\n</section>\n",
        escape(&serde_json::to_string_pretty(m).unwrap_or_default())
    ));
    out
}

const STYLE: &str = r#"
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0 auto;max-width:1200px;padding:0 16px 48px;color:#1f2328}
h1{font-size:22px}h2{font-size:18px;border-bottom:1px solid #d0d7de;padding-bottom:4px;margin-top:32px}h3{font-size:14px}
.headline{font-weight:600}.settings,.legend,.note{color:#57606a}
table{border-collapse:collapse;margin:8px 0}th,td{border:1px solid #d0d7de;padding:3px 8px;text-align:left}
.num{text-align:right}tr.total td{font-weight:600}
tr.better td:last-child{color:#1a7f37;font-weight:600}tr.worse td:last-child{color:#cf222e;font-weight:600}tr.inconclusive td:last-child{color:#9a6700}tr.mixed td:last-child{color:#cf222e;font-weight:600}
svg.forest{max-width:100%;height:auto;font-size:12px}
svg .grid{stroke:#d0d7de}svg .zero{stroke:#57606a}svg .rule{stroke:#d0d7de}svg .mde{fill:#afb8c1;opacity:.45}
svg .ci{stroke-width:3;stroke:#57606a}svg .tick,svg .axis,svg .nodata{fill:#57606a}svg .label.total{font-weight:700}
svg .mark{stroke:#fff;stroke-width:1.5;fill:#57606a}
svg .held-mark{fill:#fff;stroke:#8250df;stroke-width:2}svg .ci.held{stroke-dasharray:4 2}
svg .better .mark,svg .better .ci{fill:#1a7f37;stroke:#1a7f37}svg .worse .mark,svg .worse .ci{fill:#cf222e;stroke:#cf222e}
svg .inconclusive .mark,svg .inconclusive .ci{fill:#bf8700;stroke:#bf8700}svg .mixed .mark,svg .mixed .ci{fill:#8250df;stroke:#8250df}svg .too_few_samples .mark,svg .too_few_samples .ci{fill:#afb8c1;stroke:#afb8c1}
.filters{display:flex;gap:16px;flex-wrap:wrap;align-items:center;position:sticky;top:0;background:#fff;padding:8px 0;border-bottom:1px solid #d0d7de}
.pair{border:1px solid #d0d7de;border-radius:6px;margin:12px 0;padding:8px 12px}.pair h3{margin:4px 0}
.gain{color:#1a7f37}.loss{color:#cf222e}.category-verdict,.row-laws{color:#57606a;font-weight:400}.gap{color:#9a6700}
.panes{display:grid;grid-template-columns:1fr 1fr;gap:12px}
.pane{border-left:4px solid #afb8c1;padding-left:8px;min-width:0}.pane.passed{border-color:#1a7f37}.pane.failed{border-color:#cf222e}
.pane h4{margin:4px 0}
pre{white-space:pre-wrap;word-break:break-word;background:#f6f8fa;padding:6px;margin:2px 0 6px;border-radius:4px}
.call code{white-space:pre-wrap;word-break:break-all}.result{background:#eef6ff}.result.error{background:#ffebe9}
.user pre{background:#fff8c5}
.tag{font-size:11px;color:#57606a;text-transform:uppercase;letter-spacing:.04em}
.law{display:inline-block;border-radius:10px;padding:0 8px;margin:1px 0;font-size:12px}
.law.held{background:#dafbe1;color:#116329}.law.failed{background:#ffebe9;color:#a40e26;font-weight:700;outline:1px solid #cf222e}
.facts th{white-space:nowrap;vertical-align:top}.facts code{word-break:break-all}
"#;

const SCRIPT: &str = r#"
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("data").textContent);
  var pairs = Array.prototype.slice.call(document.querySelectorAll("article.pair"));
  var names = ["comparison", "category", "law", "verdict"];
  var selects = names.map(function (n) { return document.getElementById("filter-" + n); });
  var shown = document.getElementById("shown");
  // Set by a category's (or the total's) pair count: only the pairs behind that row, those
  // whose pass or share of laws held differs.
  var categoryRow = false;
  function apply() {
    var want = {};
    names.forEach(function (n, i) { want[n] = selects[i].value; });
    var count = 0;
    pairs.forEach(function (p) {
      var laws = JSON.parse(p.dataset.laws);
      var verdicts = JSON.parse(p.dataset.verdicts);
      var ok = (!want.comparison || p.dataset.comparison === want.comparison) &&
        (!want.category || p.dataset.category === want.category) &&
        (!want.law || laws.indexOf(want.law) >= 0) &&
        (!want.verdict || verdicts.indexOf(want.verdict) >= 0) &&
        (!categoryRow || p.dataset.backsCategory === "true");
      p.hidden = !ok;
      if (ok) { count += 1; }
    });
    shown.textContent = count + " of " + pairs.length + " pair(s) shown";
  }
  selects.forEach(function (s) {
    s.addEventListener("change", function () { categoryRow = false; apply(); });
  });
  // A row's pair count shows that row's pairs.
  Array.prototype.forEach.call(document.querySelectorAll("a.pairs-link"), function (a) {
    a.addEventListener("click", function () {
      names.forEach(function (n, i) { selects[i].value = a.dataset[n] || ""; });
      categoryRow = !a.dataset.law;
      apply();
    });
  });
  apply();
  var marks = document.querySelectorAll("svg.forest circle.mark").length;
  var rows = data.comparisons.reduce(function (n, c) {
    return n + c.categories.concat([c.total], c.laws).filter(function (r) { return r.delta !== null; }).length;
  }, 0);
  if (marks === rows && pairs.length === data.pairs.length) {
    document.body.dataset.rendered = "ok";
  } else {
    console.error("report: " + marks + " marks for " + rows + " rows, " + pairs.length + " panes for " + data.pairs.length + " pairs");
  }
})();
"#;
