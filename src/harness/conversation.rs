//! The scripted user of a conversation: what it says after each reply of the model (keyed on
//! whether that reply asked a question, asked for approval, or answered), and which writes it
//! approves. Deterministic and offline, so a conversation replays exactly.

use serde::{Deserialize, Serialize};

/// What a reply without calls did, as the scripted user reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Act {
    /// Asked the user something.
    Question,
    /// Asked the user to allow a change: a question that names one (see `asks_approval`).
    Approval,
    /// Answered without asking.
    Answer,
}

impl Act {
    pub fn name(self) -> &'static str {
        match self {
            Act::Question => "question",
            Act::Approval => "approval",
            Act::Answer => "answer",
        }
    }

    /// A question of either kind.
    pub fn asks(self) -> bool {
        self != Act::Answer
    }
}

/// Words that make a question one asking leave to change something. Kept short and plain:
/// what a skill's "confirm before you delete" wording makes a model write.
const APPROVAL_WORDS: [&str; 16] = [
    "sure",
    "confirm",
    "proceed",
    "go ahead",
    "shall i",
    "should i",
    "want me to",
    "may i",
    "ok to",
    "okay to",
    "delete",
    "remove",
    "overwrite",
    "permanently",
    "do you approve",
    "allow me",
];

/// What a reply without calls did. A question when it looks like one by the seed harness's
/// rule (`looks_like_a_question`), or when its last question has the shape of a confirmation
/// (`confirmation_shape`), which the seed never reads from prose. A question asks for approval
/// when it has that shape, or when it is a yes/no question (its question opens with no asking
/// word: "Which note should I open?" asks for a value) holding one of the approval words
/// (whole words, any case).
pub fn classify(reply: &str) -> Act {
    let confirms = confirmation_shape(reply);
    let Some(question) = question_sentence(reply) else {
        if confirms {
            return Act::Approval;
        }
        return Act::Answer;
    };
    let padded = format!(" {} ", fold_words(reply).join(" "));
    let asks_for_a_value = opening_words(question)
        .first()
        .is_some_and(|first| ASKING_WORDS.contains(&first.as_str()));
    if confirms
        || !asks_for_a_value
            && APPROVAL_WORDS
                .iter()
                .any(|w| padded.contains(&format!(" {w} ")))
    {
        Act::Approval
    } else {
        Act::Question
    }
}

/// Auxiliaries and modals that open a yes/no question, their negated forms as `fold_words`
/// splits them ("isn't" is `isn`, `t`). `do` and `have` are left out: they also open
/// imperatives ("Have a safe flight.", "Don't forget your passport."), so `DO_HAVE` asks more
/// of them.
const QUESTION_AUXILIARIES: [&str; 32] = [
    "am", "is", "are", "was", "were", "does", "did", "has", "had", "can", "could", "shall",
    "should", "will", "would", "may", "might", "must", "isn", "aren", "wasn", "weren", "doesn",
    "didn", "hasn", "haven", "hadn", "couldn", "shouldn", "won", "wouldn", "mustn",
];

/// `do` and `have` open a question only before a subject: a pronoun or a determiner ("Do you
/// want…", "Have you got…"); before anything else they are imperatives ("Do let me know.").
const DO_HAVE: [&str; 3] = ["do", "don", "have"];
const SUBJECTS: [&str; 17] = [
    "you", "i", "we", "they", "he", "she", "it", "there", "this", "that", "these", "those", "your",
    "any", "anyone", "anything", "the",
];

/// Words a question may open with before its asking word or auxiliary ("So, what is…",
/// "Sorry, could you…"); a polite imperative stays one ("Please tell me…" opens with `tell`).
const OPENING_COURTESIES: [&str; 13] = [
    "please", "ok", "okay", "so", "alright", "just", "and", "but", "also", "well", "sorry", "hi",
    "hello",
];

/// The seed harness's question rule, with this word list written down: the reply's last
/// sentence (the last one holding a word) starts like a question, past any courtesy word: an
/// asking word (`ASKING_WORDS`) or an auxiliary (`QUESTION_AUXILIARIES`, `DO_HAVE` before a
/// subject). A `?` is neither needed ("Could you tell me the title.") nor enough ("It is 12°C
/// in Paris, right?"). Unlike the seed, the last sentence that ends in `?` is tested the same
/// way, so a warning after the question leaves it one ("Delete it? It cannot be undone.").
pub fn looks_like_a_question(reply: &str) -> bool {
    question_sentence(reply).is_some()
}

/// The sentence that makes the reply a question: its last sentence, else its last sentence
/// that ends in `?`, when that starts like a question.
fn question_sentence(reply: &str) -> Option<&str> {
    let last = last_sentence(reply);
    if starts_like_a_question(last) {
        return Some(last);
    }
    let end = last_question_mark(reply)?;
    let start = sentence_starts(&reply[..end]).last().unwrap_or(0);
    let sentence = &reply[start..=end];
    starts_like_a_question(sentence).then_some(sentence)
}

/// Where the reply's last `?` that ends a sentence stands (`?` then white space, a closing
/// mark or the end: "…?" inside a URL's query ends no sentence).
fn last_question_mark(reply: &str) -> Option<usize> {
    reply.rmatch_indices('?').map(|(i, _)| i).find(|&i| {
        reply[i + 1..]
            .chars()
            .next()
            .is_none_or(|next| CLOSING_MARKS.contains(&next))
    })
}

/// Whether `sentence` opens as a question does; one that ends in `!` is an exclamation
/// ("What a view!").
fn starts_like_a_question(sentence: &str) -> bool {
    if sentence.trim_end_matches(CLOSING_MARKS).ends_with('!') {
        return false;
    }
    let words = opening_words(sentence);
    let Some(first) = words.first().map(String::as_str) else {
        return false;
    };
    ASKING_WORDS.contains(&first)
        || QUESTION_AUXILIARIES.contains(&first)
        || DO_HAVE.contains(&first)
            && words
                .get(1)
                .is_some_and(|next| SUBJECTS.contains(&next.as_str()))
}

/// The sentence's words from the first that is no courtesy word.
fn opening_words(sentence: &str) -> Vec<String> {
    let mut words = fold_words(sentence);
    let courtesies = words
        .iter()
        .take_while(|w| OPENING_COURTESIES.contains(&w.as_str()))
        .count();
    words.drain(..courtesies);
    words
}

/// Marks that may follow a sentence's own end: quotes, brackets, emphasis.
const CLOSING_MARKS: &[char] = &['"', '\'', ')', ']', '*', '_', '`', ' ', '\n', '\t', '\r'];

/// Where each sentence of `text` starts: after a line break, or after `.`, `!`, `?` or `:`
/// followed by white space (a decimal point, as in 42.50, ends no sentence).
fn sentence_starts(text: &str) -> impl Iterator<Item = usize> + '_ {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let starts: Vec<usize> = chars
        .windows(2)
        .filter(|w| w[0].1 == '\n' || ".!?:".contains(w[0].1) && w[1].1.is_whitespace())
        .map(|w| w[1].0)
        .collect();
    std::iter::once(0).chain(starts)
}

/// The reply's last sentence that holds a word (a closing emoji or "…" is no sentence).
fn last_sentence(reply: &str) -> &str {
    let starts: Vec<usize> = sentence_starts(reply).collect();
    let mut end = reply.len();
    for &start in starts.iter().rev() {
        let sentence = &reply[start..end];
        if sentence.chars().any(char::is_alphanumeric) {
            return sentence.trim();
        }
        end = start;
    }
    ""
}

/// Lower-case words, every character that is neither a letter nor a digit a break (an
/// apostrophe too: "I'll" is `i`, `ll`).
fn fold_words(text: &str) -> Vec<String> {
    text.to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

/// Words that open a question asking for something (a value, a choice), never for a yes.
const ASKING_WORDS: [&str; 10] = [
    "what", "which", "who", "whom", "whose", "where", "when", "why", "how", "whats",
];

/// Auxiliaries and modals: a yes/no question opens with one ("Shall I…", "Do you want…").
const AUXILIARIES: [&str; 22] = [
    "shall", "should", "can", "could", "may", "might", "will", "would", "must", "do", "does",
    "did", "is", "are", "am", "was", "were", "have", "has", "had", "want", "need",
];

/// Words no imperative opens with: pronouns, determiners, prepositions, conjunctions, answer
/// words and days, which open a noun or a clause ("Any other note?", "Tomorrow at 3 pm?").
const NOT_A_VERB: [&str; 62] = [
    "i",
    "you",
    "we",
    "they",
    "he",
    "she",
    "it",
    "this",
    "that",
    "these",
    "those",
    "there",
    "here",
    "the",
    "a",
    "an",
    "any",
    "anything",
    "anyone",
    "some",
    "something",
    "someone",
    "another",
    "other",
    "all",
    "each",
    "every",
    "no",
    "not",
    "none",
    "my",
    "your",
    "our",
    "their",
    "its",
    "one",
    "in",
    "on",
    "at",
    "for",
    "from",
    "to",
    "with",
    "by",
    "about",
    "and",
    "or",
    "but",
    "if",
    "so",
    "yes",
    "ok",
    "okay",
    "please",
    "thanks",
    "today",
    "tomorrow",
    "tonight",
    "now",
    "next",
    "also",
    "just",
];

/// Courtesy words a question may open with before its verb.
const SOFTENERS: [&str; 6] = ["please", "ok", "okay", "so", "alright", "just"];

/// A confirmation by its shape, whatever its words: the reply's last question is a yes/no
/// question (it opens with no asking word and offers no choice with "or") that puts the
/// pending action to the user, in one of three shapes:
/// 1. the speaker offers to act: an auxiliary then "I" or "we" ("Can I book it now?"), or
///    "… you want/like me to …" ("Would you like me to file it?");
/// 2. an imperative naming the action: three words or more (or two, the second a pronoun:
///    "Book it?"), opening with a word that is no auxiliary, pronoun, determiner, preposition,
///    conjunction, answer word nor day, with no comma after it ("File 42.50 EUR under
///    meals?", "Book room B2 for Tuesday 3 pm?");
/// 3. a short tag of four words at most ("OK?", "Is that right?") after a sentence in which
///    the speaker announces the act ("I will renew Dune until 12 May. OK?").
///
/// A courtesy word before the verb ("Please renew Dune for three weeks?") is passed over. An offer that asks for nothing to do ("Can I help with anything else?") is no
/// confirmation.
fn confirmation_shape(reply: &str) -> bool {
    let Some(end) = reply.rfind('?') else {
        return false;
    };
    let before = &reply[..end];
    let start = sentence_starts(before).last().unwrap_or(0);
    let sentence = before[start..].trim();
    let sentence_words = fold_words(sentence);
    let yes_no = sentence_words
        .first()
        .is_some_and(|first| !ASKING_WORDS.contains(&first.as_str()))
        && !sentence_words.iter().any(|w| w == "or" || w == "else");
    if !yes_no {
        return false;
    }
    let announced = fold_words(&reply[..start]).windows(3).any(|w| {
        let w: Vec<&str> = w.iter().map(String::as_str).collect();
        matches!(
            w[..],
            ["i", "will" | "ll" | "would" | "d" | "shall", _] | ["let", "me", _]
        ) || matches!(w[..], ["i", "am" | "m", "going" | "about"])
    });
    let tag = sentence_words.len() <= 4 && start > 0 && announced;
    // A courtesy word before the verb ("Please renew Dune?", "OK so file it?") is passed over.
    let mut question = sentence;
    while let Some(token) = question.split_whitespace().next() {
        let folded = fold_words(token);
        if folded.len() != 1 || !SOFTENERS.contains(&folded[0].as_str()) {
            break;
        }
        question = question[token.len()..].trim_start();
    }
    let words = fold_words(question);
    let Some(first) = words.first().map(String::as_str) else {
        return tag;
    };
    let offers = AUXILIARIES.contains(&first)
        && (matches!(words.get(1).map(String::as_str), Some("i" | "we"))
            || words.windows(3).any(|w| {
                matches!(w[0].as_str(), "want" | "like" | "need") && w[1] == "me" && w[2] == "to"
            }));
    let first_raw = question.split_whitespace().next().unwrap_or("");
    // Two words make an imperative only with a pronoun as its object ("Book it?").
    let object = matches!(
        words.get(1).map(String::as_str),
        Some("it" | "this" | "that" | "them" | "these" | "those")
    );
    let imperative = (words.len() >= 3 || words.len() == 2 && object)
        && !AUXILIARIES.contains(&first)
        && !starts_like_a_question(question)
        && !NOT_A_VERB.contains(&first)
        && first.chars().all(char::is_alphabetic)
        && !first_raw.ends_with(',')
        && !ends_in_rhetorical_tag(question);
    offers || imperative || tag
}

/// Tags a statement ends in without asking anything ("Sounds like a plan, right?").
const RHETORICAL_TAGS: [&[&str]; 8] = [
    &["right"],
    &["you", "know"],
    &["yeah"],
    &["no"],
    &["eh"],
    &["huh"],
    &["isn", "t", "it"],
    &["don", "t", "you", "think"],
];

/// Whether the words after the sentence's last comma are a rhetorical tag.
fn ends_in_rhetorical_tag(sentence: &str) -> bool {
    sentence.rsplit_once(',').is_some_and(|(_, tail)| {
        let tail = fold_words(tail);
        RHETORICAL_TAGS.iter().any(|tag| tail == *tag)
    })
}

/// Which writes the scripted user allows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Approval {
    /// Every write runs.
    #[default]
    Always,
    /// No write runs.
    Never,
    /// A write runs only once the model asked for approval and the user replied.
    WhenConfirmed,
}

/// One reply of the script: said once, the first time the model's reply did `on`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reply {
    pub on: Act,
    pub say: String,
}

/// The user's side of a conversation, as a sample's `user` field gives it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Script {
    #[serde(default)]
    pub replies: Vec<Reply>,
    /// Said to a question no reply is left for; without it such a question ends the
    /// conversation.
    #[serde(default)]
    pub default: Option<String>,
    /// The most the user says after the opening message.
    #[serde(default = "default_turns")]
    pub turns: u32,
    #[serde(default)]
    pub approve: Approval,
}

fn default_turns() -> u32 {
    2
}

/// The most turns a script may give: each turn is a whole loop of rounds.
pub const MAX_TURNS: u32 = 8;

impl Script {
    /// A script from a sample's `user` value, every key checked by name: serde alone would
    /// take a list for the object, a map for `approve`, and name no key of a wrong type.
    pub fn from_value(value: &serde_json::Value) -> Result<Script, String> {
        use serde_json::Value;
        let Value::Object(user) = value else {
            return Err("field `user` must be an object: {\"replies\": […], \"default\": …, \"turns\": N, \"approve\": …}".into());
        };
        for (key, value) in user {
            let fits = match key.as_str() {
                "replies" => value.is_array(),
                "default" => value.is_string() || value.is_null(),
                "turns" => value.is_u64(),
                "approve" => value.is_string(),
                _ => {
                    return Err(format!(
                        "field `user.{key}` is unknown (known: replies, default, turns, approve)"
                    ))
                }
            };
            if !fits {
                let wanted: String = match key.as_str() {
                    "replies" => "a list of {\"on\": …, \"say\": …}".into(),
                    "turns" => format!("a whole number from 1 to {MAX_TURNS}"),
                    "approve" => "\"always\", \"never\" or \"when_confirmed\"".into(),
                    _ => "a string".into(),
                };
                return Err(format!("field `user.{key}` must be {wanted}, not {value}"));
            }
        }
        for (i, reply) in user
            .get("replies")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let Value::Object(reply) = reply else {
                return Err(format!(
                    "field `user.replies[{i}]` must be an object {{\"on\": …, \"say\": …}}"
                ));
            };
            for (key, value) in reply {
                let fits = match key.as_str() {
                    "on" | "say" => value.is_string(),
                    _ => {
                        return Err(format!(
                            "field `user.replies[{i}].{key}` is unknown (known: on, say)"
                        ))
                    }
                };
                if !fits {
                    return Err(format!(
                        "field `user.replies[{i}].{key}` must be a string, not {value}"
                    ));
                }
            }
        }
        let script: Script =
            serde_json::from_value(value.clone()).map_err(|e| format!("field `user`: {e}"))?;
        script.check()?;
        Ok(script)
    }

    /// The script's own mistakes, said plainly: each names the key.
    pub fn check(&self) -> Result<(), String> {
        if self.turns == 0 || self.turns > MAX_TURNS {
            return Err(format!(
                "field `user.turns`: {} is outside 1..={MAX_TURNS}",
                self.turns
            ));
        }
        for (i, reply) in self.replies.iter().enumerate() {
            if reply.say.trim().is_empty() {
                return Err(format!("field `user.replies[{i}].say` is empty"));
            }
        }
        // The n-th reply of a kind is said only after the n - 1 before it, each a turn.
        for (i, reply) in self.replies.iter().enumerate() {
            let nth = self.replies[..=i]
                .iter()
                .filter(|r| r.on == reply.on)
                .count();
            if nth > self.turns as usize {
                return Err(format!(
                    "field `user.replies[{i}]`: can never be said: it is `{}` reply number {nth}, and `user.turns` is {}, so the user speaks at most {} time(s)",
                    reply.on.name(),
                    self.turns,
                    self.turns
                ));
            }
        }
        if self.default.as_deref().is_some_and(|d| d.trim().is_empty()) {
            return Err("field `user.default` is empty".into());
        }
        if self.replies.is_empty() && self.default.is_none() {
            return Err(
                "field `user`: give `replies` or a `default`, or the user never speaks".into(),
            );
        }
        Ok(())
    }
}

/// What the user said after one reply of the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserTurn {
    /// What the model's reply did.
    pub on: Act,
    pub said: String,
}

/// A script being played: which replies are spent, and what was said so far.
#[derive(Debug, Clone)]
pub struct ScriptedUser<'a> {
    script: &'a Script,
    spent: Vec<bool>,
    turns: u32,
    confirmed: bool,
}

impl<'a> ScriptedUser<'a> {
    pub fn new(script: &'a Script) -> Self {
        ScriptedUser {
            script,
            spent: vec![false; script.replies.len()],
            turns: 0,
            confirmed: false,
        }
    }

    /// What the user says after a reply that did `act`, or `None`: the conversation ends. An
    /// approval question takes an `approval` reply first, else a `question` one; any question
    /// takes the default when no reply is left.
    pub fn respond(&mut self, act: Act) -> Option<UserTurn> {
        if self.turns >= self.script.turns {
            return None;
        }
        let wanted: &[Act] = match act {
            Act::Approval => &[Act::Approval, Act::Question],
            Act::Question => &[Act::Question],
            Act::Answer => &[Act::Answer],
        };
        let found = wanted.iter().find_map(|want| {
            self.script
                .replies
                .iter()
                .enumerate()
                .find(|(i, r)| !self.spent[*i] && r.on == *want)
                .map(|(i, _)| i)
        });
        let said = match found {
            Some(i) => {
                self.spent[i] = true;
                // Only the script's own answer to an approval question is a yes.
                if self.script.replies[i].on == Act::Approval {
                    self.confirmed = true;
                }
                self.script.replies[i].say.clone()
            }
            None if act.asks() => self.script.default.clone()?,
            None => return None,
        };
        self.turns += 1;
        Some(UserTurn { on: act, said })
    }

    pub fn approval(&self) -> Approval {
        self.script.approve
    }

    /// Whether a write may run now.
    pub fn approves_write(&self) -> bool {
        match self.script.approve {
            Approval::Always => true,
            Approval::Never => false,
            Approval::WhenConfirmed => self.confirmed,
        }
    }
}

/// What the model is shown for a write the user did not approve.
pub fn refusal_text(tool: &str, approval: Approval) -> String {
    match approval {
        Approval::WhenConfirmed => format!(
            "The user has not approved this call to {tool}; nothing was changed. Ask the user first."
        ),
        _ => format!("The user refused this call to {tool}; nothing was changed."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn questions_and_approval_questions_are_told_apart() {
        assert_eq!(classify("It is 12°C in Paris."), Act::Answer);
        assert_eq!(
            classify("What is the tracking number?"),
            Act::Question,
            "a question that asks for a value"
        );
        assert_eq!(
            classify("Are you sure you want to delete notes.txt?"),
            Act::Approval
        );
        assert_eq!(classify("Shall I remove it?"), Act::Approval);
        // "sure" inside another word is no approval word.
        assert_eq!(classify("Which measure do you mean?"), Act::Question);
    }

    fn script(json: &str) -> Script {
        let s: Script = serde_json::from_str(json).unwrap();
        s.check().unwrap();
        s
    }

    #[test]
    fn replies_are_spent_once_and_the_default_answers_the_rest() {
        let s = script(
            r#"{"replies":[{"on":"question","say":"1Z42"}],"default":"I don't know.","turns":3}"#,
        );
        let mut user = ScriptedUser::new(&s);
        assert_eq!(user.respond(Act::Question).unwrap().said, "1Z42");
        assert_eq!(user.respond(Act::Question).unwrap().said, "I don't know.");
        // An answer with no `answer` reply ends the conversation.
        assert_eq!(user.respond(Act::Answer), None);
        assert_eq!(user.respond(Act::Question).unwrap().said, "I don't know.");
        // The turn budget is spent.
        assert_eq!(user.respond(Act::Question), None);
    }

    #[test]
    fn a_write_waits_for_the_users_yes_when_the_script_says_so() {
        let s =
            script(r#"{"replies":[{"on":"approval","say":"Yes."}],"approve":"when_confirmed"}"#);
        let mut user = ScriptedUser::new(&s);
        assert!(!user.approves_write());
        // A plain question is no confirmation, and with no question reply it ends the talk.
        assert_eq!(user.respond(Act::Question), None);
        assert!(!user.approves_write());
        assert_eq!(user.respond(Act::Approval).unwrap().said, "Yes.");
        assert!(user.approves_write());
    }

    #[test]
    fn a_script_that_cannot_speak_is_refused_by_name() {
        let s: Script = serde_json::from_str(r#"{"turns":2}"#).unwrap();
        assert!(s.check().unwrap_err().contains("`user`"));
        let s: Script = serde_json::from_str(r#"{"default":"x","turns":0}"#).unwrap();
        assert!(s.check().unwrap_err().contains("user.turns"));
        assert!(serde_json::from_str::<Script>(r#"{"default":"x","approve":"maybe"}"#).is_err());
    }
}
