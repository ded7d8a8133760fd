//! `mcp-fuzz init`: probe the server briefly and write a commented starter `mcp-fuzz.toml`
//! (never over an existing file without `--force`; atomically).

use crate::cli::InitArgs;
use crate::errors::CliError;
use crate::output::{write_atomically, write_new_atomically};
use crate::{config, exit_code, session};
use mcp_fuzz_engine::init::{probe, starter};
use mcp_fuzz_engine::run::RunError;
use std::io::Write as _;

/// `mcp-fuzz init`.
pub fn run(args: &InitArgs) -> anyhow::Result<u8> {
    let path = &args.output;
    if path.exists() && !args.force {
        return Err(CliError::Usage(format!(
            "{} already exists; pass --force to overwrite it, or --output FILE to write another",
            path.display()
        ))
        .into());
    }
    let mut spec = config::server(&args.target)?;
    // The probe calls tools: in a sandbox, as a run does.
    let _sandbox = spec.enter_sandbox().map_err(CliError::from)?;
    let seen = session::block_on(async {
        probe(&spec).await.map_err(|e| match e {
            RunError::Connect(c) => session::start_error(&c, &spec.target).into(),
            other => CliError::ServerStart(other.to_string()).into(),
        })
    })?;
    let text = starter(&seen, &spec.target);
    if args.force {
        write_atomically(path, text.as_bytes())
    } else {
        write_new_atomically(path, text.as_bytes())
    }?;
    let stubs = text.lines().filter(|l| l.starts_with("# ") && l.contains(" = [\"...\"]")).count();
    // A closed stderr is no reason to fail: the file is written.
    let _ = writeln!(
        std::io::stderr(),
        "mcp-fuzz: wrote {}: {} tool(s), {stubs} hint stub(s) to fill in; run `mcp-fuzz` to fuzz the server",
        path.display(),
        seen.tools.len()
    );
    Ok(exit_code::SUCCESS)
}
