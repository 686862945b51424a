//! `skilleval init` for a skill with a write that needs the user's confirmation and a read tool
//! that takes no argument: the pack it writes holds the world, the scripted user who confirms,
//! and the laws that hold the write to that confirmation, and passes `check` as written.

mod common;

use common::cli::{outcome, skilleval};

const SKILL: &str = "---\nname: room-booking\ndescription: Books meeting rooms and lists what is booked.\nallowed-tools: list_bookings book_room\n---\nTo see what is booked, call list_bookings. To book a room, first restate the room and the day and ask the user to confirm; call book_room only after they say yes.\n";

const TOOL: &str = "import json, os, sys\ncall = json.load(sys.stdin)\nledger = os.path.join(os.environ['SKILLEVAL_SCRATCH'], 'bookings.txt')\nif sys.argv[1] == 'book':\n    open(ledger, 'a').write(call['room'] + ' ' + call['day'] + '\\n')\n    print('Booked ' + call['room'] + ' on ' + call['day'] + '.')\nelse:\n    print(open(ledger).read() if os.path.exists(ledger) else 'Nothing is booked.')\n";

/// Truth: a change (`--args list_bookings=` was refused as "write it as NAME=VALUE", and init
/// had no `--write`, so the world, the scripted user and the confirmation laws were all
/// written by hand); and `check`, which must agree with the pack as written.
#[test]
fn init_writes_a_confirmed_write_and_a_tool_without_arguments_that_pass_check() {
    let temp = tempfile::tempdir().unwrap();
    let skill_dir = temp.path().join("skills/room-booking");
    std::fs::create_dir_all(&skill_dir).unwrap();
    std::fs::write(skill_dir.join("SKILL.md"), SKILL).unwrap();
    let pack = temp.path().join("pack");
    std::fs::create_dir_all(pack.join("tools")).unwrap();
    std::fs::write(pack.join("tools/rooms.py"), TOOL).unwrap();
    let skill = skill_dir.join("SKILL.md").display().to_string();
    let out = pack.display().to_string();
    let (code, stdout, stderr) = outcome(&skilleval(&[
        "init",
        "--skill",
        &skill,
        "--out",
        &out,
        "--command",
        "list_bookings=python3 tools/rooms.py list",
        "--args",
        "list_bookings=",
        "--command",
        "book_room=python3 tools/rooms.py book",
        "--args",
        "book_room=room,day",
        "--write",
        "book_room",
        "--prompt",
        "book_room=Book room B2 for Tuesday.",
        "--prompt",
        "list_bookings=What is booked this week?",
        "--prompt",
        "none=What is a quorum?",
    ]));
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains(": agree"), "{stdout}");
    let toml: toml::Value =
        toml::from_str(&std::fs::read_to_string(pack.join("pack.toml")).unwrap()).unwrap();
    let tools = toml["tools"].as_array().unwrap();
    let book = tools
        .iter()
        .find(|t| t["name"].as_str() == Some("book_room"))
        .unwrap();
    assert_eq!(book["effect"].as_str(), Some("write"));
    let list = tools
        .iter()
        .find(|t| t["name"].as_str() == Some("list_bookings"))
        .unwrap();
    assert_eq!(list["key_arguments"].as_array().map(Vec::len), Some(0));
    assert!(tools.iter().all(|t| t["world"].as_str() == Some("world")));
    assert!(pack.join("world").is_dir());
    let laws = toml["laws"].as_array().unwrap();
    let law = |name: &str| {
        laws.iter()
            .find(|l| l["name"].as_str() == Some(name))
            .unwrap_or_else(|| panic!("no law {name}"))
    };
    assert_eq!(
        law("confirms-before-book_room")["kind"].as_str(),
        Some("confirms_before_call")
    );
    assert_eq!(
        law("confirms-before-book_room")["purpose"].as_bool(),
        Some(true)
    );
    assert_eq!(
        law("no-write-without-approval")["kind"].as_str(),
        Some("no_unapproved_write")
    );
    assert_eq!(
        law("no-write-without-approval")["purpose"].as_bool(),
        Some(true)
    );
    // The stop law does not reward a conversation that skips the confirmation.
    assert_eq!(
        law("answers")["except_categories"].as_array().unwrap()[0].as_str(),
        Some("needs_book_room")
    );
    let corpus = std::fs::read_to_string(pack.join("corpus.jsonl")).unwrap();
    let booking: serde_json::Value = corpus
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|s| s["category"] == "needs_book_room")
        .unwrap();
    assert_eq!(booking["user"]["approve"], "when_confirmed");
    assert_eq!(booking["user"]["replies"][0]["on"], "approval");
    // The pack checks as written, again; and a new prompt for the tool with no argument, with
    // no case of its own, is passable: its reference call is the call with no arguments.
    let (code, stdout, stderr) = outcome(&skilleval(&["check", "--pack", &out]));
    assert_eq!(code, 0, "{stdout}{stderr}");
    let mut corpus = corpus;
    corpus.push_str("{\"id\": \"list-new\", \"category\": \"needs_list_bookings\", \"prompt\": \"Is anything booked on Monday?\"}\n");
    std::fs::write(pack.join("corpus.jsonl"), corpus).unwrap();
    let (code, stdout, stderr) = outcome(&skilleval(&["check", "--pack", &out]));
    assert_eq!(code, 0, "{stdout}{stderr}");
}
