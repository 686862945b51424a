//! Every flag of every command says what it does in `--help`, and every command's long help ends
//! with two or three examples.

use clap::CommandFactory;
use skilleval::cli::Cli;

/// Every command, with the path of names that reaches it.
fn walk(command: &clap::Command, path: String, out: &mut Vec<(String, clap::Command)>) {
    out.push((path.clone(), command.clone()));
    for sub in command.get_subcommands() {
        if sub.get_name() != "help" {
            walk(sub, format!("{path} {}", sub.get_name()), out);
        }
    }
}

fn commands() -> Vec<(String, clap::Command)> {
    let mut command = Cli::command();
    command.build();
    let mut out = Vec::new();
    walk(&command, "skilleval".into(), &mut out);
    out
}

#[test]
fn every_flag_has_a_description() {
    let mut bare = Vec::new();
    for (path, command) in commands() {
        for arg in command.get_arguments() {
            let id = arg.get_id().as_str();
            if id == "help" || id == "version" {
                continue;
            }
            let described = arg
                .get_help()
                .or(arg.get_long_help())
                .is_some_and(|h| !h.to_string().trim().is_empty());
            if !described {
                bare.push(format!("{path} --{}", arg.get_long().unwrap_or(id)));
            }
        }
    }
    assert!(bare.is_empty(), "flags without help: {bare:?}");
    // The walk saw the commands it should.
    let names: Vec<String> = commands().into_iter().map(|(p, _)| p).collect();
    for expected in [
        "skilleval run",
        "skilleval chat",
        "skilleval generate",
        "skilleval doctor",
        "skilleval report",
        "skilleval compare",
        "skilleval bench run",
        "skilleval bench score",
    ] {
        assert!(
            names.iter().any(|n| n == expected),
            "{expected} in {names:?}"
        );
    }
}

#[test]
fn every_command_ends_its_long_help_with_examples() {
    for (path, command) in commands() {
        let help = command
            .get_after_long_help()
            .map(|h| h.to_string())
            .unwrap_or_default();
        let (_, examples) = help
            .rsplit_once("Examples:\n")
            .unwrap_or_else(|| panic!("{path}: no examples in its long help"));
        let lines: Vec<&str> = examples.lines().collect();
        assert!(
            (2..=3).contains(&lines.len()),
            "{path}: {} examples",
            lines.len()
        );
        for line in lines {
            assert!(
                line.trim_start().starts_with("skilleval "),
                "{path}: {line:?} is not a skilleval command"
            );
        }
    }
}

#[test]
fn long_help_prints_the_examples_last() {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_skilleval"))
        .args(["run", "--help"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success());
    let tail = text.trim_end().lines().last().unwrap_or_default();
    assert!(tail.trim_start().starts_with("skilleval run "), "{text}");
    assert!(
        text.contains("--repeats <REPEATS>\n          Times each sample runs"),
        "{text}"
    );
}
