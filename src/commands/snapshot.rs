//! `mcp-fuzz snapshot`: capture a server's tools/list, or normalize a saved capture, into a
//! deterministic snapshot file.

use crate::cli::SnapshotArgs;
use crate::errors::CliError;
use crate::output::{write_atomically, write_stdout};
use crate::{config, input, session};
use mcp_fuzz_compat::normalize::{SnapshotMeta, snapshot, snapshot_of_capture, to_bytes};
use mcp_fuzz_engine::config::MAX_PAGES;
use mcp_fuzz_engine::server::ListError;

/// `mcp-fuzz snapshot`.
pub fn run(args: &SnapshotArgs) -> anyhow::Result<u8> {
    let document = match &args.normalize {
        Some(path) => snapshot_of_capture(&input::read_capture(path)?.0),
        None => capture_live(args)?,
    };
    let bytes = to_bytes(&document);
    match &args.output {
        Some(path) => write_atomically(path, &bytes)?,
        None => write_stdout(std::str::from_utf8(&bytes).expect("JSON is UTF-8"))?,
    }
    Ok(crate::exit_code::SUCCESS)
}

fn capture_live(args: &SnapshotArgs) -> anyhow::Result<serde_json::Value> {
    let spec = config::server(&args.target)?;
    let (server, listing) = session::block_on(async {
        let mut instance = session::start(&spec).await?;
        let server = instance.connection().map(|c| c.server.clone()).unwrap_or_default();
        let listing = instance.list_tools(MAX_PAGES).await;
        instance.close().await;
        let listing = listing.map_err(|e| match e {
            ListError::Connect(c) => session::start_error(&c, &spec.target),
            ListError::Listing(l) => {
                CliError::ServerStart(format!("{l}; the server started but did not list its tools"))
            }
        })?;
        Ok((server, listing))
    })?;
    let skipped: Vec<String> = listing
        .problems
        .iter()
        .map(|p| match &p.name {
            Some(name) => format!("item {} (`{name}`): {}", p.index, p.reason),
            None => format!("item {}: {}", p.index, p.reason),
        })
        .collect();
    for line in &skipped {
        warn(&format!("tools/list {line}; it is left out of the snapshot"));
    }
    if let Some(truncated) = &listing.truncated {
        warn(truncated);
    }
    let meta = SnapshotMeta {
        server_name: server.name,
        server_version: server.version,
        protocol_version: server.protocol_version,
        skipped,
        truncated: listing.truncated,
    };
    let items: Vec<serde_json::Value> = listing.tools.into_iter().map(|t| t.raw).collect();
    Ok(snapshot(&items, &meta))
}

#[expect(clippy::print_stderr, reason = "warnings go to stderr; stdout carries the snapshot")]
fn warn(message: &str) {
    eprintln!("warning: {message}");
}
