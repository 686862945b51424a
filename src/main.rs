use std::process::ExitCode;

use clap::Parser;
use skilleval::cli::{run_command, Cli};

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run_command(cli.command) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            // One line: the chain of causes joined, no backtrace.
            let message = format!("{e:#}").replace('\n', " ");
            eprintln!("error: {message}");
            ExitCode::from(1)
        }
    }
}
