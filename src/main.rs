//! The `mcp-fuzz` binary: thin wiring over the library crates.
//!
//! `main` parses the arguments, dispatches to the command and maps the outcome to an exit code
//! (the table is in [`exit_code`]). Errors print once, as `error: {:#}`, on stderr; a closed
//! stdout pipe (`mcp-fuzz gen ... | head`) ends the run quietly with success.

mod cli;
mod errors;
mod exit_code;
mod r#gen; // `gen` is a reserved keyword since edition 2024.
mod tools_list;

use clap::Parser as _;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => {
            // `--help` and `--version` arrive here too, printed to stdout with success.
            let code = if error.use_stderr() { exit_code::USAGE } else { exit_code::SUCCESS };
            // Printing fails only on a closed stream, and then there is no one left to tell.
            let _ = error.print();
            return ExitCode::from(code);
        }
    };
    match run(&cli) {
        Ok(()) => ExitCode::from(exit_code::SUCCESS),
        Err(error) if errors::is_broken_pipe(&error) => ExitCode::from(exit_code::SUCCESS),
        Err(error) => {
            report(&error);
            ExitCode::from(errors::exit_code_for(&error))
        }
    }
}

fn run(cli: &cli::Cli) -> anyhow::Result<()> {
    match &cli.command {
        cli::Command::Gen(args) => r#gen::run(args),
    }
}

#[expect(clippy::print_stderr, reason = "the binary reports its errors on stderr")]
fn report(error: &anyhow::Error) {
    eprintln!("error: {error:#}");
}
