//! The routing pack as shipped: its variants change only the tested skill's description, its
//! control offers that skill by name alone, and on the real default model, with its calls held to
//! what each round offers, every call the model makes is one it was offered, and the report
//! names the description as what the control removed.

mod common;

use std::path::{Path, PathBuf};

use skilleval::eval::arm::ControlPart;
use skilleval::eval::pack::Pack;
use skilleval::eval::runner::{self, RunOptions};

fn pack_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("packs/routing")
}

fn pack() -> Pack {
    Pack::load(pack_dir().to_str().unwrap()).expect("the routing pack loads")
}

fn variants() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(pack_dir().join("variants"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    files.sort();
    files
}

#[test]
fn variants_change_only_the_description_and_the_control_removes_it() {
    let pack = pack();
    assert!(pack.constrained_calls);
    assert_eq!(pack.control, ControlPart::Description);
    assert!(variants().len() >= 2);
    for file in variants() {
        let trees = runner::skill_trees(&pack, None, std::slice::from_ref(&file)).unwrap();
        let base = trees.baseline.get(&pack.skill).unwrap();
        let variant = trees.first_variant().get(&pack.skill).unwrap();
        assert_eq!(variant.body, base.body, "{}", file.display());
        assert_ne!(
            variant.meta.description,
            base.meta.description,
            "{}",
            file.display()
        );
        let control = trees.control.get(&pack.skill).unwrap();
        assert_eq!(control.meta.description, "");
        assert_eq!(control.body, base.body);
    }
}

#[test]
#[cfg_attr(not(feature = "full-tier"), ignore = "full tier")]
fn on_the_real_model_every_call_is_one_its_round_offered() {
    let out = tempfile::tempdir().unwrap();
    let mut opts = RunOptions::new(pack());
    opts.variants = vec![pack_dir().join("variants/sharper.md")];
    opts.limit = Some(4);
    opts.repeats = 1;
    opts.output_root = out.path().to_path_buf();
    let mut backend = common::model::backend();
    let result = runner::run(&mut *backend, &opts).unwrap();
    // Control, baseline and variant × four samples, one of each skill's category.
    assert_eq!(result.entries.len(), 3 * 4);
    common::model::assert_calls_offered(&opts.pack, &result.entries);
    // The control removed the description, and the report says so.
    let skill_effect = result.summary.skill_effect.as_ref().unwrap();
    assert_eq!(skill_effect.label.as_deref(), Some("description"));
    let report = std::fs::read_to_string(result.dir.join("report.md")).unwrap();
    assert!(
        report.contains("the skill with its description removed"),
        "{report}"
    );
}
