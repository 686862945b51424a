//! The scripted user's reading of a reply: an approval question, another question, or an
//! answer, against a person's labels on replies shaped as small models write them
//! (`tests/data/reply-acts.tsv`). The rule is stated in docs/packs.md ("Conversations").

use skilleval::harness::conversation::{classify, Act};

/// Truth: a person's labels. Every labelled reply is read as the person read it, except the
/// rows marked `LABEL>READING`: the readings the rule departs to on purpose (the seed
/// harness's rule, applied by hand from its README, and the one place skilleval departs from
/// that), held there, each differing from the person's (or the mark is stale). Under the `?`
/// rule before it, the rhetorical tags ("…, right?") read as questions and the questions
/// without `?` as answers.
#[test]
fn replies_are_read_as_a_person_labelled_them() {
    let table = include_str!("data/reply-acts.tsv");
    let mut wrong = Vec::new();
    let mut rows = 0;
    let mut departures = 0;
    for line in table
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let (label, reply) = line.split_once('\t').expect("LABEL<TAB>REPLY");
        let (person, reading) = match label.split_once('>') {
            Some((person, reading)) => {
                departures += 1;
                assert_ne!(
                    person, reading,
                    "{line:?}: a mark that differs from nothing"
                );
                (act(person), act(reading))
            }
            None => (act(label), act(label)),
        };
        rows += 1;
        let got = classify(reply);
        if got != reading {
            wrong.push(format!(
                "{reply:?}: read as {got:?}, expected {reading:?} (the person: {person:?})"
            ));
        }
    }
    assert!(rows >= 70, "{rows} rows");
    // The rule parts from the person on few, named shapes; a rule that parted on many more
    // rows would no longer be the one the table was labelled against.
    assert!(departures <= 8, "{departures} marked rows");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

fn act(label: &str) -> Act {
    match label {
        "approval" => Act::Approval,
        "question" => Act::Question,
        "answer" => Act::Answer,
        other => panic!("unknown label {other:?}"),
    }
}
