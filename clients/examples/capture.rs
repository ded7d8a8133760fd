//! Captures a tools file through real clients and prints each [`Capture`] as JSON.
//!
//! ```sh
//! cargo build -p mcp-fuzz-fixtures --bin fx-serve-tools
//! cargo run -p mcp-fuzz-clients --example capture -- fixtures/clients/real/edge.json codex-cli mcpo
//! ```
//!
//! The file is served verbatim by `fx-serve-tools` (`target/debug/fx-serve-tools`, or the path in
//! `FX_SERVE_TOOLS`); with no client named, all five run in parallel. Bisection over the listing
//! is on (a lost listing names its culprits). Set `MCP_FUZZ_KEEP_SCRATCH=1` to keep each client's
//! throwaway directory.

use mcp_fuzz_clients::real::{CaptureOptions, RealClient, ServerSpec, SubsetServer, capture_all};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

fn fx_serve_tools() -> PathBuf {
    std::env::var_os("FX_SERVE_TOOLS").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/debug/fx-serve-tools"),
        PathBuf::from,
    )
}

#[expect(clippy::print_stdout, clippy::print_stderr, reason = "an example prints its result")]
fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let Some(file) = args.next() else {
        eprintln!(
            "usage: capture TOOLS.json [CLIENT...]  (clients: inspector mcpo codex-cli claude-code gemini-cli)"
        );
        return ExitCode::from(2);
    };
    let mut clients = Vec::new();
    for name in args {
        match RealClient::from_name(&name) {
            Some(c) => clients.push(c),
            None => {
                eprintln!("unknown client {name:?}");
                return ExitCode::from(2);
            }
        }
    }
    if clients.is_empty() {
        clients = RealClient::ALL.to_vec();
    }
    let server = fx_serve_tools();
    let file = std::fs::canonicalize(&file).unwrap_or_else(|_| PathBuf::from(&file));
    let spec = ServerSpec::new(&server).env("FX_TOOLS_FILE", file.to_string_lossy());
    let subsets = std::env::temp_dir().join(format!("mcp-fuzz-subsets-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&subsets);
    let counter = Arc::new(AtomicU64::new(0));
    let (dir, program) = (subsets.clone(), server.clone());
    let subset: SubsetServer = Arc::new(move |tools: &[Value]| {
        let path = dir.join(format!("subset-{}.json", counter.fetch_add(1, Ordering::Relaxed)));
        std::fs::write(&path, json!({ "tools": tools }).to_string()).map_err(|e| e.to_string())?;
        Ok(ServerSpec::new(&program).env("FX_TOOLS_FILE", path.to_string_lossy()))
    });
    let options = CaptureOptions {
        subset_server: Some(subset),
        keep_scratch: std::env::var_os("MCP_FUZZ_KEEP_SCRATCH").is_some(),
        ..CaptureOptions::default()
    };
    let captures = capture_all(&clients, &spec, &options);
    let _ = std::fs::remove_dir_all(&subsets);
    println!("{}", serde_json::to_string_pretty(&captures).expect("a capture serialises"));
    ExitCode::SUCCESS
}
