//! `summary.json` and `summary.csv`: every figure of both comparisons, for other programs.

use crate::eval::stats::{RepeatsNeeded, Summary, Verdict};

/// The summary as pretty JSON, exactly as `Summary` serializes.
pub fn json(summary: &Summary) -> serde_json::Result<String> {
    serde_json::to_string_pretty(summary)
}

/// One line per row of each comparison: its categories, its total, then its laws. Rates and
/// differences as fractions, missing values empty.
pub fn csv(summary: &Summary) -> Result<String, csv::Error> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    writer.write_record([
        "comparison",
        "reference",
        "treatment",
        "kind",
        "name",
        "samples",
        "pairs",
        "reference_rate",
        "reference_min",
        "reference_max",
        "treatment_rate",
        "treatment_min",
        "treatment_max",
        "delta",
        "delta_low",
        "delta_high",
        "p_value",
        "p_adjusted",
        "level",
        "mde",
        "mde_floored",
        "verdict",
        "repeats_for_target",
        "gapped_pairs",
        "unpaired_runs",
        "reference_errored",
        "treatment_errored",
        "reference_gapped",
        "treatment_gapped",
        "held_reference",
        "held_treatment",
        "held_p_adjusted",
        "held_verdict",
    ])?;
    for comparison in summary.comparisons() {
        let kinds = comparison
            .categories
            .iter()
            .map(|r| ("category", r))
            .chain([("total", &comparison.total)])
            .chain(comparison.laws.iter().map(|r| ("law", r)));
        for (kind, row) in kinds {
            let optional = |value: Option<f64>| value.map(|v| v.to_string()).unwrap_or_default();
            let name_of = |verdict: Verdict| {
                serde_json::to_value(verdict)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default()
            };
            let verdict = name_of(row.verdict);
            let held = row.held.as_ref();
            let repeats = match row.repeats_for_target {
                RepeatsNeeded::Repeats(r) => r.to_string(),
                RepeatsNeeded::MoreSamples => "more_samples".into(),
                RepeatsNeeded::Unknown => String::new(),
            };
            writer.write_record([
                comparison.name.clone(),
                comparison.reference.name().to_string(),
                comparison.treatment.name().to_string(),
                kind.to_string(),
                row.name.clone(),
                row.samples.to_string(),
                row.pairs.to_string(),
                optional(row.reference.rate),
                optional(row.reference.band.map(|b| b.min)),
                optional(row.reference.band.map(|b| b.max)),
                optional(row.treatment.rate),
                optional(row.treatment.band.map(|b| b.min)),
                optional(row.treatment.band.map(|b| b.max)),
                optional(row.delta),
                optional(row.interval.map(|i| i.low)),
                optional(row.interval.map(|i| i.high)),
                row.p_value.to_string(),
                row.p_adjusted.to_string(),
                row.level.to_string(),
                optional(row.mde),
                row.mde_floored.to_string(),
                verdict,
                repeats,
                row.gapped_pairs.to_string(),
                row.unpaired_runs.to_string(),
                row.reference.errored.to_string(),
                row.treatment.errored.to_string(),
                row.reference.gapped.to_string(),
                row.treatment.gapped.to_string(),
                optional(held.map(|h| h.reference)),
                optional(held.map(|h| h.treatment)),
                optional(held.map(|h| h.p_adjusted)),
                held.map(|h| name_of(h.verdict)).unwrap_or_default(),
            ])?;
        }
    }
    let bytes = writer
        .into_inner()
        .map_err(|e| csv::Error::from(e.into_error()))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

#[cfg(test)]
mod tests {
    use super::super::test_outcomes::known_summary;
    use super::*;

    #[test]
    fn json_round_trips_the_summary() {
        let summary = known_summary();
        let text = json(&summary).unwrap();
        let back: Summary = serde_json::from_str(&text).unwrap();
        assert_eq!(back, summary);
        assert!(text.contains("\"verdict\": \"worse\""), "{text}");
        assert!(text.contains("\"held\""), "{text}");
        assert!(text.contains("\"p_adjusted\""), "{text}");
    }

    #[test]
    fn csv_has_a_row_per_category_total_and_law_of_each_comparison() {
        let text = csv(&known_summary()).unwrap();
        let mut reader = csv::Reader::from_reader(text.as_bytes());
        let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
        let wording: Vec<(&str, &str)> = rows
            .iter()
            .filter(|r| &r[0] == "wording")
            .map(|r| (&r[3], &r[4]))
            .collect();
        assert_eq!(
            wording,
            [
                ("category", "chitchat"),
                ("category", "city_country"),
                ("category", "plain_city"),
                ("category", "rare_place"),
                ("total", "total"),
                ("law", "calls-weather-with-place-as-written"),
                ("law", "names-the-city"),
                ("law", "no-unsupported-numbers"),
            ]
        );
        assert_eq!(rows.iter().filter(|r| &r[0] == "skill_effect").count(), 8);
        let plain_city = rows
            .iter()
            .find(|r| &r[0] == "wording" && &r[4] == "plain_city")
            .unwrap();
        assert_eq!(&plain_city[7], "0.25");
        assert_eq!(&plain_city[10], "1");
        assert_eq!(&plain_city[13], "0.75");
        assert_eq!(&plain_city[21], "better");
        let rare_place = rows
            .iter()
            .find(|r| &r[0] == "wording" && &r[4] == "rare_place")
            .unwrap();
        assert_eq!(&rare_place[23], "6", "rare_place gaps");
    }
}
