//! What the benches of `mcp-fuzz-cli` share: where the fixture servers are, and how they are
//! started. A crate of its own (not a module each bench includes) so that criterion is in the
//! workspace's normal dependency graph: see this crate's `Cargo.toml`.

use mcp_fuzz_engine::server::ServerSpec;
use mcp_fuzz_engine::transport::{ConnectOptions, Target};

use std::path::{Path, PathBuf};
use std::time::Duration;

/// A stdio server `command` run with `env` only (nothing inherited), under the limits every
/// bench uses: 10 s to start and per request, 60 s per call, 16 MiB per response.
pub fn stdio(command: &Path, env: &[(&str, &str)]) -> ServerSpec {
    ServerSpec {
        target: Target::Stdio {
            command: vec![command.display().to_string()],
            env: env.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect(),
            inherit_env: false,
            cwd: None,
        },
        connect: ConnectOptions {
            startup_timeout: Duration::from_secs(10),
            max_response_bytes: 16 << 20,
            max_call_time: Duration::from_secs(60),
            roots: Vec::new(),
            client: mcp_fuzz_engine::transport::asks::ClientFeatures::default(),
            heard: std::sync::Arc::default(),
            sandbox: None,
        },
        sandboxing: mcp_fuzz_engine::sandbox::SandboxOptions::default(),
        timeout: Duration::from_secs(10),
        spares: std::sync::Arc::default(),
        call_limit: std::sync::Arc::default(),
    }
}

/// The release build of fixture server `name`, which must exist.
pub fn fixture(name: &str) -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(
        || PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../target")),
        PathBuf::from,
    );
    let path = target.join("release").join(name);
    assert!(
        path.exists(),
        "{} is missing: run `cargo build --release -p mcp-fuzz-fixtures` first",
        path.display()
    );
    path
}
