//! `mcp-fuzz snapshot`: capture a server's tools/list, or normalize a saved capture, into a
//! deterministic snapshot file.

use crate::cli::SnapshotArgs;
use crate::errors::CliError;
use crate::r#gen::{origin, read};
use crate::run_cmd::{connect_options, runtime, secs, target, write_atomically};
use crate::tools_list::parse_capture;
use anyhow::Context as _;
use mcp_fuzz_compat::normalize::{SnapshotMeta, snapshot, snapshot_of_capture, to_bytes};
use mcp_fuzz_engine::client::Connection;
use mcp_fuzz_engine::tools::list_all;
use std::io::Write as _;

/// The page cap of `tools/list`, the same as `run`'s.
const MAX_PAGES: usize = 100;

/// `mcp-fuzz snapshot`.
pub fn run(args: &SnapshotArgs) -> anyhow::Result<()> {
    let document = match &args.normalize {
        Some(path) => {
            let origin = origin(path);
            let text = read(path, &origin)?;
            let capture = parse_capture(&text)
                .map_err(|error| CliError::Capture { origin: origin.clone(), error })?;
            snapshot_of_capture(&capture)
        }
        None => capture_live(args)?,
    };
    let bytes = to_bytes(&document);
    match &args.output {
        Some(path) => write_atomically(path, &bytes),
        None => {
            let mut out = std::io::stdout().lock();
            out.write_all(&bytes).context("failed to write the snapshot to standard output")
        }
    }
}

fn capture_live(args: &SnapshotArgs) -> anyhow::Result<serde_json::Value> {
    let target = target(&args.target)?;
    let options = connect_options(&args.target)?;
    let timeout = secs(args.target.timeout, "--timeout")?;
    let listed = runtime()?.block_on(async {
        tokio::select! {
            listed = async {
                let connection = Connection::connect(&target, &options).await.map_err(|e| {
                    let tail = e.stderr_tail();
                    if tail.is_empty() {
                        CliError::ServerStart(format!("{e}; check the command or URL and that it speaks MCP"))
                    } else {
                        CliError::ServerStart(format!("{e}; the server's last stderr lines:\n  {}", tail.join("\n  ")))
                    }
                })?;
                let server = connection.server.clone();
                let listing = list_all(&connection, MAX_PAGES, timeout).await;
                connection.close().await;
                let listing = listing.map_err(|e| CliError::ServerStart(format!("{e}; the server started but did not list its tools")))?;
                Ok::<_, CliError>((server, listing))
            } => Some(listed),
            _ = tokio::signal::ctrl_c() => None,
        }
    });
    let (server, listing) = listed.ok_or(CliError::Interrupted)??;
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
    Ok(snapshot(&listing.items, &meta))
}

#[expect(clippy::print_stderr, reason = "warnings go to stderr; stdout carries the snapshot")]
fn warn(message: &str) {
    eprintln!("warning: {message}");
}
