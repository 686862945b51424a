//! Our prompt renderer against prompts rendered by BFCL's own code
//! (`scripts/bfcl/render_prompts.py` writes the fixture).

use std::fs;
use std::path::Path;

use serde_json::Value;
use skilleval::bench::corpus::{default_root, load_category, CATEGORIES};
use skilleval::bench::prompt::render_messages;
use skilleval::harness::template::Role;

fn role_name(role: Role) -> &'static str {
    match role {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
    }
}

#[test]
fn prompts_are_byte_identical_to_bfcl() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/bfcl/prompts.jsonl");
    let text = fs::read_to_string(&fixture).expect("fixture");
    let mut checked = 0;
    let mut with_system_turn = 0;
    let (mut java, mut javascript) = (0, 0);
    let mut corpora = std::collections::HashMap::new();
    for line in text.lines() {
        let expected: Value = serde_json::from_str(line).unwrap();
        let id = expected["id"].as_str().unwrap();
        let category = expected["category"].as_str().unwrap();
        let entries = corpora
            .entry(category.to_string())
            .or_insert_with(|| load_category(&default_root(), category).unwrap());
        let entry = entries
            .iter()
            .find(|e| e.id == id)
            .expect("entry in corpus");
        let ours = render_messages(entry);
        let theirs = expected["messages"].as_array().unwrap();
        assert_eq!(ours.len(), theirs.len(), "{id}: message count");
        for (i, (mine, want)) in ours.iter().zip(theirs).enumerate() {
            assert_eq!(
                role_name(mine.role),
                want["role"].as_str().unwrap(),
                "{id}[{i}] role"
            );
            assert_eq!(
                mine.content,
                want["content"].as_str().unwrap(),
                "{id}[{i}] content"
            );
        }
        if ours[0].content.contains("Java 8 SDK syntax") {
            java += 1;
        }
        if ours[0].content.contains("in JavaScript syntax") {
            javascript += 1;
        }
        if entry.turns[0][0].role == Role::System {
            with_system_turn += 1;
        }
        checked += 1;
    }
    assert!(checked >= 40, "only {checked} prompts in the fixture");
    assert!(
        with_system_turn > 0,
        "fixture lacks an entry with its own system message"
    );
    assert!(
        java >= 8 && javascript >= 8,
        "{java} Java and {javascript} JavaScript prompts"
    );
    for category in CATEGORIES {
        assert!(
            corpora.contains_key(category),
            "no {category} prompt in the fixture"
        );
    }
}
