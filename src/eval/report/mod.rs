//! A run's summary as people and machines read it: the terminal table (`table.rs`), the
//! pull-request markdown (`markdown.rs`), `summary.json` and `summary.csv` (`summary_files.rs`),
//! the self-contained HTML page (`html.rs`, with its forest plots in `forest.rs` and the samples
//! whose arms disagree in `pairs.rs`), JUnit XML for CI (`junit.rs`), and two runs side by side
//! (`compare.rs`). `files.rs` writes a run folder's reports from the run as `record::load`
//! reads it back, so any run's reports can be rebuilt from its journal and manifest. Renderers
//! return text; writing files is `files.rs`'s business. The wording they share is in
//! `headline.rs` (the findings in words), `notes.rs` (the lines under a table), `legend.rs` (what
//! the figures mean) and `figures.rs` (titles, cells and how figures print).
//!
//! Every rendering starts with the skill's own effect (baseline against control), says plainly
//! when removing the skill's body changed nothing, then gives the wording comparison, the
//! per-law rows and the repeats a 10 pp effect would need.

pub mod compare;
pub mod errors;
pub(crate) mod figures;
pub mod files;
mod forest;
pub mod gaps;
mod headline;
pub mod html;
pub mod junit;
mod legend;
mod markdown;
pub(crate) mod markup;
mod notes;
pub mod pairs;
pub mod pinned;
mod summary_files;
mod table;
#[cfg(test)]
mod test_outcomes;

pub use markdown::markdown;
pub use summary_files::{csv, json};
pub use table::table;

#[cfg(test)]
mod tests {
    use super::headline::{CHANGE_WITHOUT_SKILL_EFFECT, NO_DESCRIPTION_EFFECT, NO_SKILL_EFFECT};
    use super::test_outcomes::{known_outcomes, known_summary, push_units};
    use super::*;
    use crate::eval::stats::summarize;

    #[test]
    fn a_control_without_the_description_is_named_as_such() {
        let mut summary = summarize(&known_outcomes(true)).unwrap();
        summary.label_control("description");
        for text in [table(&summary), markdown(&summary, "t", "s")] {
            assert!(
                text.contains("control (the skill with its description removed)"),
                "{text}"
            );
            assert!(text.contains(&NO_DESCRIPTION_EFFECT[1..]), "{text}");
            assert!(!text.contains("body"), "{text}");
        }
        let mut summary = known_summary();
        summary.label_control("description");
        assert!(table(&summary).contains("The skill's description changes what the model does"));
    }

    #[test]
    fn a_skill_body_that_changes_nothing_is_said_plainly() {
        let summary = summarize(&known_outcomes(true)).unwrap();
        let skill = summary.skill_effect.as_ref().unwrap();
        assert!(!skill.any_change());
        for text in [table(&summary), markdown(&summary, "t", "s")] {
            assert!(text.contains(&NO_SKILL_EFFECT[1..]), "{text}");
            // The wording's changes are still named, and not called equal, and the headline
            // says what a change can mean when the body itself changed nothing.
            assert!(text.contains("Worse: city_country"), "{text}");
            assert!(text.contains(CHANGE_WITHOUT_SKILL_EFFECT), "{text}");
            assert!(!text.contains("cannot show an effect"), "{text}");
        }
        // JUnit fails the skill effect's case, where CI can act on it.
        let xml = junit::junit(&summary, "r");
        assert!(xml.contains("type=\"no-skill-effect\""), "{xml}");
        assert!(
            xml.contains("<testsuite name=\"skill effect (r)\" tests=\"1\" failures=\"1\""),
            "{xml}"
        );
        // With the body mattering, the report names where, and the case passes.
        let text = table(&known_summary());
        assert!(!text.contains(&NO_SKILL_EFFECT[1..]), "{text}");
        assert!(!text.contains(CHANGE_WITHOUT_SKILL_EFFECT), "{text}");
        let xml = junit::junit(&known_summary(), "r");
        assert!(xml.contains("skilleval.skill_effect"), "{xml}");
        assert!(!xml.contains("no-skill-effect"), "{xml}");
        // Better means the baseline, with the body, beats the control, without it.
        assert!(
            text.contains("against the control, without it): more often with it: city_country"),
            "{text}"
        );
    }

    #[test]
    fn no_change_anywhere_is_not_read_as_equal_wordings() {
        // Control, baseline and variant alike.
        let mut outcomes = Vec::new();
        for sample in 0..12 {
            push_units(
                &mut outcomes,
                ("plain_city", sample, 0),
                [sample < 6; 3],
                false,
            );
        }
        let summary = summarize(&outcomes).unwrap();
        let text = markdown(&summary, "t", "s");
        assert!(text.contains("No category or law changed"), "{text}");
        assert!(
            text.contains("this does not show that the wordings are equal"),
            "{text}"
        );
    }

    #[test]
    fn an_empty_summary_renders_without_data() {
        let summary = summarize(&[]).unwrap();
        let text = markdown(&summary, "t", "s");
        assert!(text.contains("No data: no pair of runs"), "{text}");
        assert!(text.contains("--no-control"), "{text}");
        assert!(table(&summary).contains("no data"));
        assert!(csv(&summary)
            .unwrap()
            .lines()
            .last()
            .unwrap()
            .starts_with("wording,baseline,variant,total,total,0,0,,"));
    }
}
