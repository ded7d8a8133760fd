//! The `mcp-fuzz` binary: thin wiring over the library crates.
//!
//! `main` parses the arguments, dispatches to the command and maps the outcome to an exit code
//! (the table is in [`exit_code`]). Errors print once, as `error: {:#}`, on stderr; a closed
//! stdout pipe (`mcp-fuzz gen ... | head`) ends the run quietly with success.

mod cli;
mod commands;
mod config;
mod errors;
mod exit_code;
mod input;
mod output;
mod session;

use clap::Parser as _;
use std::process::ExitCode;

fn main() -> ExitCode {
    kill_servers_on_panic();
    let cli = match cli::Cli::try_parse_from(with_default_command(std::env::args_os().collect())) {
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
        Ok(code) => ExitCode::from(code),
        Err(error) if errors::is_broken_pipe(&error) => ExitCode::from(exit_code::SUCCESS),
        Err(error) => {
            report(&error);
            ExitCode::from(errors::exit_code_for(&error))
        }
    }
}

/// A panic is a bug in mcp-fuzz: kill every server and client it started (their process groups,
/// so grandchildren too, and the clients' helpers by their marker), print the panic, and end the
/// run with status 101. The run is not continued, since its servers are gone and any report would
/// be wrong.
fn kill_servers_on_panic() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        mcp_fuzz_process::kill_all();
        mcp_fuzz_clients::real::stop_all();
        default(info);
        #[expect(clippy::print_stderr, reason = "the last words of a crashing run")]
        {
            eprintln!(
                "error: mcp-fuzz hit an internal error (a bug, not a finding about the server); \
                 every server it started has been killed. Please report it with the command line \
                 and the message above."
            );
        }
        std::process::exit(i32::from(exit_code::INTERNAL_ERROR));
    }));
}

fn run(cli: &cli::Cli) -> anyhow::Result<u8> {
    use commands::{call, clients, diff, r#gen, init, merge, replay, run, serve_listing, snapshot};
    match &cli.command {
        cli::Command::Gen(args) => r#gen::run(args),
        cli::Command::Run(args) => run::run(args),
        cli::Command::Init(args) => init::run(args),
        cli::Command::Call(args) => call::run(args),
        cli::Command::Snapshot(args) => snapshot::run(args),
        cli::Command::Diff(args) => diff::run(args),
        cli::Command::Report(cli::ReportCommand::Merge(args)) => merge::run(args),
        cli::Command::Clients(args) => clients::run(args),
        cli::Command::Replay(args) => replay::run(args),
        cli::Command::ServeListing(args) => serve_listing::run(args),
    }
}

/// `run` is the default command: `mcp-fuzz --fail-under 90 -- node server.js`, and `mcp-fuzz`
/// alone (the server named in mcp-fuzz.toml).
fn with_default_command(mut args: Vec<std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    const TOP_LEVEL: &[&str] = &[
        "gen",
        "run",
        "init",
        "call",
        "replay",
        "snapshot",
        "diff",
        "report",
        "clients",
        "serve-listing",
        "help",
        "-h",
        "--help",
        "-V",
        "--version",
    ];
    let first = args.get(1).map(|a| a.to_str().unwrap_or_default().to_owned());
    if first.is_none_or(|f| !TOP_LEVEL.contains(&f.as_str())) {
        args.insert(1.min(args.len()), "run".into());
    }
    args
}

#[expect(clippy::print_stderr, reason = "the binary reports its errors on stderr")]
fn report(error: &anyhow::Error) {
    eprintln!("error: {error:#}");
}
