//! JUnit XML for CI: the wording comparison (variant against baseline) as test cases, one per
//! category, the total, and one per law, each a `<failure>` when its verdict is `worse`. These
//! are the rows `--fail-on worse` reads (it counts the categories and the total), with the laws
//! added so that CI names the rule a wording broke. When the control ran, one more case says
//! whether the skill's body changes what the model does at all: it fails when it does not,
//! since the wording rows then cannot show that the model follows either wording (what
//! `--fail-on no-skill-effect` acts on). Every row's figures go into the case's `<system-out>`.

use super::figures::{delta_and_interval, mde, p_value, variant_column};
use crate::eval::stats::{Comparison, Row, Summary};

/// The JUnit document of a run's wording comparisons; `run_id` names the test suites. A run
/// with several variants has a pair of suites per variant.
pub fn junit(summary: &Summary, run_id: &str) -> String {
    let several = summary.wordings().count() > 1;
    let mut suites: Vec<(String, String, &Comparison, Vec<&Row>)> = Vec::new();
    for wording in summary.wordings() {
        let categories: Vec<&Row> = wording.categories.iter().chain([&wording.total]).collect();
        let laws: Vec<&Row> = wording.laws.iter().collect();
        for (kind, rows) in [("category", categories), ("law", laws)] {
            let (suite, class) = if several {
                (
                    format!("wording per {kind}, {} ({run_id})", variant_column(wording)),
                    format!("skilleval.wording.{}.{kind}", wording.treatment.name()),
                )
            } else {
                (
                    format!("wording per {kind} ({run_id})"),
                    format!("skilleval.wording.{kind}"),
                )
            };
            suites.push((suite, class, wording, rows));
        }
    }
    let skill_case = summary.skill_effect.as_ref().map(skill_effect_case);
    let skill_failed = skill_case.as_ref().is_some_and(|(failed, _)| *failed);
    let tests: usize = suites.iter().map(|(.., rows)| rows.len()).sum::<usize>()
        + usize::from(skill_case.is_some());
    let failures = suites
        .iter()
        .flat_map(|(.., rows)| rows.iter())
        .filter(|r| r.declined())
        .count()
        + usize::from(skill_failed);
    let mut out = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"{}\" tests=\"{tests}\" failures=\"{failures}\">\n",
        escape(&format!("skilleval {run_id}"))
    );
    if let Some((failed, case)) = &skill_case {
        out.push_str(&format!(
            "  <testsuite name=\"{}\" tests=\"1\" failures=\"{}\" errors=\"0\" skipped=\"0\">\n{case}  </testsuite>\n",
            escape(&format!("skill effect ({run_id})")),
            usize::from(*failed)
        ));
    }
    for (suite, class, wording, rows) in &suites {
        let failed = rows.iter().filter(|r| r.declined()).count();
        out.push_str(&format!(
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failed}\" errors=\"0\" skipped=\"0\">\n",
            escape(suite),
            rows.len()
        ));
        for row in rows {
            let figures = figures(row, wording);
            out.push_str(&format!(
                "    <testcase classname=\"{}\" name=\"{}\" time=\"0\">\n",
                escape(class),
                escape(&row.name)
            ));
            if row.declined() {
                out.push_str(&format!(
                    "      <failure message=\"{}\" type=\"worse\">{}</failure>\n",
                    escape(&format!(
                        "{} {}: Δ {} pp",
                        row.name,
                        row.verdict_label(),
                        delta_and_interval(row, 1)
                    )),
                    escape(&figures)
                ));
            }
            out.push_str(&format!(
                "      <system-out>{}</system-out>\n    </testcase>\n",
                escape(&figures)
            ));
        }
        out.push_str("  </testsuite>\n");
    }
    out.push_str("</testsuites>\n");
    out
}

/// The skill effect's one test case, and whether it failed: the control against the
/// baseline, failed when no row changed beyond noise.
fn skill_effect_case(skill: &Comparison) -> (bool, String) {
    let part = super::figures::removed_part(skill);
    let failed = !skill.any_change();
    let figures = figures(&skill.total, skill);
    let mut case = format!(
        "    <testcase classname=\"skilleval.skill_effect\" name=\"{}\" time=\"0\">\n",
        escape(&format!("the skill's {part} changes what the model does"))
    );
    if failed {
        case.push_str(&format!(
            "      <failure message=\"{}\" type=\"no-skill-effect\">{}</failure>\n",
            escape(&format!(
                "removing the skill's {part} changed nothing beyond noise: the wording rows cannot show that the model follows either wording"
            )),
            escape(&figures)
        ));
    }
    case.push_str(&format!(
        "      <system-out>{}</system-out>\n    </testcase>\n",
        escape(&figures)
    ));
    (failed, case)
}

/// "plain_city: baseline 25.0%, variant 100.0%, Δ +75.0 [+48.9,+100.0] pp, p .004 (adj. .012),
/// MDE 44 pp, n 12: better".
fn figures(row: &Row, wording: &Comparison) -> String {
    let rate = |r: Option<f64>| r.map_or("—".into(), |r| format!("{:.1}%", r * 100.0));
    format!(
        "{}: {} {}, {} {}, Δ {} pp, p {} (adj. {}), MDE {}, n {}: {}",
        row.name,
        wording.reference.name(),
        rate(row.reference.rate),
        wording.treatment.name(),
        rate(row.treatment.rate),
        delta_and_interval(row, 1),
        p_value(row.p_value),
        p_value(row.p_adjusted),
        match row.mde {
            Some(_) => format!("{} pp", mde(row)),
            None => mde(row),
        },
        row.samples,
        row.verdict_label()
    )
}

/// Text for XML content and attribute values; characters XML 1.0 forbids become U+FFFD.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{fffe}' || c == '\u{ffff}' => out.push('\u{fffd}'),
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xml_escapes_markup_and_control_characters() {
        assert_eq!(
            escape("a<b & \"c\"\u{1}"),
            "a&lt;b &amp; &quot;c&quot;\u{fffd}"
        );
    }
}
