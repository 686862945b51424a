//! What the HTML pieces of a report share: escaping text, and the CSS class of a verdict.

use crate::eval::stats::{Row, Verdict};

/// Text for HTML content and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// The verdict class of a row: its verdict, or `inconclusive` as `Row::verdict_label` says it.
pub fn verdict_class(row: &Row) -> &'static str {
    match row.verdict {
        Verdict::Better => "better",
        Verdict::Worse => "worse",
        Verdict::NoChange if row.verdict_label() == "inconclusive" => "inconclusive",
        Verdict::NoChange => "no_change",
        Verdict::TooFewSamples => "too_few_samples",
        Verdict::NoData => "no_data",
        Verdict::Mixed => "mixed",
    }
}
