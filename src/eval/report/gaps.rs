//! The calls no recording answered in a run, read from its journal: which tool, with which
//! arguments, in how many units and which arms, so that a skill author can record them or write
//! them by hand (`skilleval fixtures RUN` writes a stub for each).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::eval::record::journal::JournalEntry;

/// One call no recording answered, however many units made it.
#[derive(Debug, Clone, PartialEq)]
pub struct GapCall {
    pub tool: String,
    /// The arguments as the model made them (after coercion), at their first occurrence.
    pub arguments: Value,
    pub units: usize,
    pub arms: BTreeSet<String>,
    /// The writes before the call in its conversation: the state it was made in.
    pub after: Vec<crate::harness::tools::PriorWrite>,
}

/// Every gap of the journal, most frequent first, then by tool and arguments.
pub fn gap_calls(entries: &[JournalEntry]) -> Vec<GapCall> {
    let mut by_call: BTreeMap<(String, String), GapCall> = BTreeMap::new();
    for entry in entries {
        let mut seen_here = BTreeSet::new();
        for call in entry.transcript.calls() {
            if call.meta.get("gap").and_then(Value::as_bool) != Some(true) {
                continue;
            }
            let after: Vec<crate::harness::tools::PriorWrite> = call
                .meta
                .get("after")
                .and_then(|a| serde_json::from_value(a.clone()).ok())
                .unwrap_or_default();
            let key = (
                call.name.clone(),
                format!("{} {}", call.arguments, serde_json::json!(after)),
            );
            let gap = by_call.entry(key.clone()).or_insert_with(|| GapCall {
                tool: call.name.clone(),
                arguments: call.arguments.clone(),
                units: 0,
                arms: BTreeSet::new(),
                after,
            });
            if seen_here.insert(key) {
                gap.units += 1;
            }
            gap.arms.insert(entry.arm.name().to_string());
        }
    }
    let mut gaps: Vec<GapCall> = by_call.into_values().collect();
    gaps.sort_by_key(|g| std::cmp::Reverse(g.units));
    gaps
}

fn line(gap: &GapCall) -> String {
    let after = match gap.after.len() {
        0 => String::new(),
        n => format!(" (after {n} write(s))"),
    };
    format!(
        "{} {}{after} — {} unit(s); {}",
        gap.tool,
        gap.arguments,
        gap.units,
        gap.arms.iter().cloned().collect::<Vec<_>>().join(", ")
    )
}

const WHAT_NEXT: &str =
    "write stubs for them with `skilleval fixtures RUN`, or record them with `--record gaps`";

/// For the terminal: the first `shown` gaps, how many more `report.md` lists, and the command
/// that writes their stubs, naming the run by its folder so that it works from where it is read.
pub fn terminal(gaps: &[GapCall], run_dir: &std::path::Path, shown: usize) -> String {
    if gaps.is_empty() {
        return String::new();
    }
    let mut out = format!("Calls no recording answered ({}):\n", gaps.len());
    for gap in gaps.iter().take(shown) {
        out.push_str(&format!("  {}\n", line(gap)));
    }
    if gaps.len() > shown {
        out.push_str(&format!(
            "  … {} more, all in report.md\n",
            gaps.len() - shown
        ));
    }
    let run = run_dir.display().to_string();
    out.push_str(&format!(
        "  {}\n",
        WHAT_NEXT.replace("RUN", &shell_word(&run))
    ));
    out
}

/// `word` as one shell word: quoted when it holds anything but plain path characters.
pub fn shell_word(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._-+:@%=,".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// For `report.md`: every gap.
pub fn markdown(gaps: &[GapCall], run: &str) -> String {
    if gaps.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "\n## Calls no recording answered\n\n{} call(s); {}.\n\n| tool | arguments | units | arms |\n|---|---|---:|---|\n",
        gaps.len(),
        WHAT_NEXT.replace("RUN", run)
    );
    for gap in gaps {
        out.push_str(&format!(
            "| {} | `{}` | {} | {} |\n",
            gap.tool,
            gap.arguments.to_string().replace('|', "\\|"),
            gap.units,
            gap.arms.iter().cloned().collect::<Vec<_>>().join(", ")
        ));
    }
    out
}

/// For `report.html`: every gap, as a section.
pub fn html(gaps: &[GapCall], run: &str) -> String {
    if gaps.is_empty() {
        return String::new();
    }
    let esc = super::markup::escape;
    let mut out = format!(
        "<section id=\"gaps\"><h2>Calls no recording answered</h2>\n<p>{} call(s); {}.</p>\n<table><thead><tr><th>tool</th><th>arguments</th><th>units</th><th>arms</th></tr></thead><tbody>\n",
        gaps.len(),
        esc(&WHAT_NEXT.replace("RUN", run))
    );
    for gap in gaps {
        out.push_str(&format!(
            "<tr><td>{}</td><td><code>{}</code></td><td>{}</td><td>{}</td></tr>\n",
            esc(&gap.tool),
            esc(&gap.arguments.to_string()),
            gap.units,
            esc(&gap.arms.iter().cloned().collect::<Vec<_>>().join(", "))
        ));
    }
    out.push_str("</tbody></table></section>\n");
    out
}
