//! The scripted user's reading of a reply: an approval question, another question, or an
//! answer, against a person's labels on replies shaped as small models write them
//! (`tests/data/reply-acts.tsv`). The rule is stated in docs/packs.md ("Conversations").

use skilleval::harness::conversation::{classify, Act};

/// Truth: a person's labels. Every labelled reply is read as the person read it; before the
/// confirmation shape, replies such as "File 42.50 EUR under meals?" read as plain questions.
#[test]
fn replies_are_read_as_a_person_labelled_them() {
    let table = include_str!("data/reply-acts.tsv");
    let mut wrong = Vec::new();
    let mut rows = 0;
    for line in table
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let (label, reply) = line.split_once('\t').expect("LABEL<TAB>REPLY");
        let expected = match label {
            "approval" => Act::Approval,
            "question" => Act::Question,
            "answer" => Act::Answer,
            other => panic!("unknown label {other:?}"),
        };
        rows += 1;
        let got = classify(reply);
        if got != expected {
            wrong.push(format!("{reply:?}: read as {got:?}, labelled {expected:?}"));
        }
    }
    assert!(rows >= 40, "{rows} rows");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
