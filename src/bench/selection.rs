//! Which entries a bench run puts to the model: the categories named on the command line,
//! a custom corpus, `--ids` and `--limit`, and the memory prerequisites the entries need.

use std::path::{Path, PathBuf};

use anyhow::bail;

use super::corpus::{load_category, load_files, memory_prerequisites, vendored_categories, Entry};
use super::overall::LEADERBOARD_CATEGORIES;
use super::score::ExtraCategory;

/// One category's entries, as selected for a run.
#[derive(Debug, Clone)]
pub struct CategoryEntries {
    pub name: String,
    pub entries: Vec<Entry>,
    /// Not one of the vendored categories: scored from these entries, not the corpus.
    pub custom: bool,
    /// A memory category's prerequisite conversations, per scenario its entries need, in
    /// BFCL's order: they run first, each scenario's one after another.
    pub prerequisites: Vec<Vec<Entry>>,
}

/// A question file in BFCL's shape given on the command line.
#[derive(Debug, Clone)]
pub struct CustomCorpus {
    pub questions: PathBuf,
    pub answers: Option<PathBuf>,
    pub name: String,
}

/// `all` or category names, comma-separated pieces allowed, in the order given, each once.
pub fn parse_categories(names: &[String]) -> anyhow::Result<Vec<String>> {
    let mut chosen: Vec<String> = Vec::new();
    let vendored = vendored_categories();
    for name in names.iter().flat_map(|n| n.split(',')).map(str::trim) {
        let expanded: Vec<&str> = match name {
            "" => continue,
            "all" => vendored.clone(),
            known if vendored.contains(&known) => vec![known],
            unknown => bail!(
                "unknown BFCL category {unknown:?}: use all or {}",
                vendored.join(", ")
            ),
        };
        for category in expanded {
            if !chosen.iter().any(|c| c == category) {
                chosen.push(category.to_string());
            }
        }
    }
    Ok(chosen)
}

/// Loads the chosen vendored categories and the custom corpus, keeps the entries `ids` names
/// (all when empty), and cuts each category to `limit` entries. A memory category gets the
/// prerequisite conversations of the scenarios its entries need.
pub fn select(
    corpus_root: &Path,
    categories: &[String],
    custom: Option<&CustomCorpus>,
    limit: Option<usize>,
    ids: &[String],
) -> anyhow::Result<Vec<CategoryEntries>> {
    let mut selected = Vec::new();
    for name in categories {
        selected.push(CategoryEntries {
            name: name.clone(),
            entries: load_category(corpus_root, name)?,
            custom: false,
            prerequisites: Vec::new(),
        });
    }
    if let Some(corpus) = custom {
        if LEADERBOARD_CATEGORIES.contains(&corpus.name.as_str()) {
            bail!(
                "--category-name {:?} is a BFCL category; give --corpus {} a name of its own, \
                 so that its score is not read as BFCL's",
                corpus.name,
                corpus.questions.display()
            );
        }
        if corpus.answers.is_none() && !corpus.name.contains("relevance") {
            bail!(
                "--corpus {} needs --answers, unless its --category-name says relevance or \
                 irrelevance",
                corpus.questions.display()
            );
        }
        selected.push(CategoryEntries {
            name: corpus.name.clone(),
            entries: load_files(&corpus.questions, corpus.answers.as_deref(), &corpus.name)?,
            custom: true,
            prerequisites: Vec::new(),
        });
    }
    if selected.is_empty() {
        bail!("nothing to run: give --bfcl CATEGORIES (or all), or --corpus FILE");
    }
    if !ids.is_empty() {
        if let Some(unknown) = ids.iter().find(|id| {
            !selected
                .iter()
                .any(|c| c.entries.iter().any(|e| &e.id == *id))
        }) {
            bail!(
                "--ids: no entry {unknown:?} in the chosen categories ({})",
                selected
                    .iter()
                    .map(|c| c.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        for category in &mut selected {
            category.entries.retain(|e| ids.contains(&e.id));
        }
        selected.retain(|c| !c.entries.is_empty());
    }
    if let Some(limit) = limit {
        for category in &mut selected {
            category.entries.truncate(limit);
        }
    }
    for category in selected.iter_mut().filter(|c| !c.custom) {
        let mut scenarios: Vec<&str> = Vec::new();
        for entry in &category.entries {
            let scenario = entry
                .multi_turn
                .as_ref()
                .and_then(|m| m.scenario.as_deref());
            if let Some(scenario) = scenario.filter(|s| !scenarios.contains(s)) {
                scenarios.push(scenario);
            }
        }
        category.prerequisites = scenarios
            .iter()
            .map(|scenario| memory_prerequisites(corpus_root, &category.name, scenario))
            .collect::<Result<_, _>>()?;
    }
    Ok(selected)
}

/// The custom categories of a selection, for scoring.
pub fn extra_categories(selected: &[CategoryEntries]) -> Vec<ExtraCategory> {
    selected
        .iter()
        .filter(|c| c.custom)
        .map(|c| ExtraCategory {
            name: c.name.clone(),
            entries: c.entries.clone(),
        })
        .collect()
}

/// Whether a selection holds multi-turn entries, which need BFCL's helper.
pub fn has_multi_turn(selected: &[CategoryEntries]) -> bool {
    selected
        .iter()
        .any(|c| c.entries.iter().any(|e| e.multi_turn.is_some()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn categories_expand_all_and_keep_order() {
        let chosen = parse_categories(&["parallel,simple_python".into(), "parallel".into()]);
        assert_eq!(chosen.unwrap(), ["parallel", "simple_python"]);
        assert_eq!(
            parse_categories(&["all".into()]).unwrap(),
            vendored_categories()
        );
        let err = parse_categories(&["simple".into()])
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown BFCL category \"simple\""), "{err}");
    }

    #[test]
    fn a_custom_corpus_may_not_take_a_bfcl_name_and_relevance_needs_no_answers() {
        let root = super::super::corpus::default_root();
        let corpus = |name: &str| CustomCorpus {
            questions: root.join("BFCL_v4_live_relevance.json"),
            answers: None,
            name: name.into(),
        };
        let err = select(&root, &[], Some(&corpus("live_relevance")), None, &[])
            .unwrap_err()
            .to_string();
        assert!(err.contains("is a BFCL category"), "{err}");
        let selected = select(&root, &[], Some(&corpus("my_relevance")), Some(2), &[]).unwrap();
        assert_eq!(selected[0].entries.len(), 2);
        let err = select(&root, &[], Some(&corpus("my_simple")), None, &[])
            .unwrap_err()
            .to_string();
        assert!(err.contains("needs --answers"), "{err}");
    }
}
