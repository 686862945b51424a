//! The conversation laws judged against small hand-built exchanges: code-derived expectations
//! (the packs' judge cases are the person's labels).

use super::tests::{call, transcript};
use super::*;
use crate::harness::backend::{FinishReason, GenMetrics};
use crate::harness::transcript::{CallRecord, Round};
use serde_json::json;

mod exchange {
    use super::*;
    use crate::harness::conversation::{Act, UserTurn};

    fn round(text: &str, calls: Vec<CallRecord>, user: Option<UserTurn>) -> Round {
        Round {
            raw: text.into(),
            finish: FinishReason::Eos,
            metrics: GenMetrics::default(),
            calls,
            prose: text.into(),
            repairs: vec![],
            problems: vec![],
            reask: None,
            user,
        }
    }

    fn said(on: Act, text: &str) -> Round {
        let user = UserTurn {
            on,
            said: "BA117".into(),
        };
        round(text, vec![], Some(user))
    }

    fn calling(calls: Vec<CallRecord>) -> Round {
        round("", calls, None)
    }

    fn exchange(rounds: Vec<Round>, reply: &str) -> Transcript {
        let mut t = transcript(vec![], reply);
        let last = t.rounds.pop().unwrap();
        t.rounds = rounds;
        t.rounds.push(last);
        t
    }

    /// The model asks which flight, the user answers, the model makes `call` and answers.
    fn asked_then(call: CallRecord) -> Transcript {
        exchange(
            vec![said(Act::Question, "Which flight?"), calling(vec![call])],
            "On time.",
        )
    }

    fn holds(law: &str, t: &Transcript) -> bool {
        let law: Law = toml::from_str::<toml::Value>(law)
            .unwrap()
            .try_into()
            .expect("a law");
        let sample = json!({"flight": "BA117"}).as_object().cloned().unwrap();
        judge(&[law], "c", &sample, "Is my flight on time?", t).passed
    }

    #[test]
    fn asking_counts_only_before_the_first_call() {
        let law = r#"name = "a"
kind = "asks_before_call"
tool = "flight_status""#;
        let status = || {
            call(
                "flight_status",
                json!({"flight": "BA117"}),
                "BA117: on time.",
            )
        };
        let asked_first = asked_then(status());
        let called_first = exchange(
            vec![
                calling(vec![status()]),
                said(Act::Question, "Which flight?"),
            ],
            "On time.",
        );
        assert!(holds(law, &asked_first));
        assert!(!holds(law, &called_first));
        assert!(!holds(law, &exchange(vec![], "It is on time.")));
    }

    #[test]
    fn a_plain_question_is_no_confirmation_and_a_refused_write_is_unapproved() {
        let confirm = r#"name = "c"
kind = "confirms_before_call"
tool = "delete_note""#;
        let unapproved = r#"name = "u"
kind = "no_unapproved_write""#;
        let mut refused = call("delete_note", json!({"name": "todo"}), "not approved");
        refused.approved = Some(false);
        let mut allowed = refused.clone();
        allowed.approved = Some(true);
        let plain = exchange(
            vec![
                said(Act::Question, "Which note?"),
                calling(vec![allowed.clone()]),
            ],
            "Deleted.",
        );
        let approval = exchange(
            vec![said(Act::Approval, "Delete todo?"), calling(vec![allowed])],
            "Deleted.",
        );
        assert!(!holds(confirm, &plain));
        assert!(holds(confirm, &approval));
        assert!(holds(unapproved, &approval));
        assert!(!holds(
            unapproved,
            &exchange(vec![calling(vec![refused])], "Deleted.")
        ));
    }

    /// Truth: docs/packs.md's "with no such call, it asked at all" (a change: an exchange
    /// ending on the model's question, which the script did not answer, failed both laws).
    #[test]
    fn with_no_call_a_question_the_exchange_ends_on_counts_as_asked() {
        let asks = "name = \"a\"\nkind = \"asks_before_call\"\ntool = \"flight_status\"";
        let confirms = "name = \"c\"\nkind = \"confirms_before_call\"\ntool = \"file_expense\"";
        let ends_on = |reply: &str| exchange(vec![], reply);
        assert!(holds(asks, &ends_on("What is your flight number?")));
        assert!(!holds(asks, &ends_on("Please tell me your flight number.")));
        assert!(holds(confirms, &ends_on("File 42.50 EUR under meals?")));
        assert!(!holds(confirms, &ends_on("What is the amount?")));
        assert!(!holds(confirms, &ends_on("I filed 42.50 EUR under meals.")));
    }

    #[test]
    fn the_users_value_counts_only_in_a_call_after_the_user_said_it() {
        let law = r#"name = "f"
kind = "argument_from_user"
tool = "flight_status"
argument = "flight"
field = "flight"
fold = true"#;
        let status = || {
            call(
                "flight_status",
                json!({"flight": "ba117"}),
                "BA117: on time.",
            )
        };
        let after = asked_then(status());
        let guessed = exchange(vec![calling(vec![status()])], "On time.");
        assert!(holds(law, &after));
        assert!(!holds(law, &guessed));
    }

    #[test]
    fn a_call_after_and_the_last_result_read_the_order_of_calls() {
        let after = r#"name = "l"
kind = "calls_after"
tool = "list_notes"
after = "create_note""#;
        let last = r#"name = "r"
kind = "reply_mentions_last_result"
tool = "list_notes"
from_result_pattern = "^Notes: ([a-z]+)""#;
        let create = call("create_note", json!({"name": "a"}), "Created a.");
        let list = |first: &str| call("list_notes", json!({}), &format!("Notes: {first}, b."));
        let good = exchange(
            vec![calling(vec![list("old"), create.clone(), list("fresh")])],
            "Your notes: fresh, b.",
        );
        assert!(holds(after, &good));
        assert!(holds(last, &good));
        let stale = exchange(
            vec![calling(vec![list("old"), create, list("fresh")])],
            "Your notes: old, b.",
        );
        assert!(
            !holds(last, &stale),
            "the first list is not the last result"
        );
        let before = exchange(
            vec![calling(vec![
                list("old"),
                call("create_note", json!({"name": "a"}), "Created a."),
            ])],
            "Done.",
        );
        assert!(!holds(after, &before));
    }
}

mod confirmation_without_a_call {
    use super::*;

    /// Doing nothing confirms nothing: a run that never deletes and never asks fails the law
    /// (a control arm without the skill would otherwise pass it every time).
    #[test]
    fn a_run_that_neither_asks_nor_deletes_has_not_confirmed() {
        let law: Law = toml::from_str::<toml::Value>(
            "name = \"c\"\nkind = \"confirms_before_call\"\ntool = \"delete_note\"",
        )
        .unwrap()
        .try_into()
        .unwrap();
        let sample = serde_json::Map::new();
        let t = transcript(vec![], "Okay.");
        assert!(!judge(&[law], "c", &sample, "Delete todo", &t).passed);
    }
}
