//! The life of a command that talks to a server: an async runtime, Ctrl-C, the error of a server
//! that will not start, and closing it.
//!
//! Every command that starts a server runs its work through [`block_on`]: on Ctrl-C (SIGINT) or
//! SIGTERM the work is dropped, which drops its connections, which kills each server's process
//! group (the server lives in a group of its own and does not get the terminal's SIGINT), and
//! the command exits 130 (SIGINT) or 143 (SIGTERM: a CI job cancelled, `timeout`).

use crate::errors::CliError;
use anyhow::Context as _;
use mcp_fuzz_engine::server::{Instance, ServerSpec};
use mcp_fuzz_engine::transport::{ConnectError, Target};
use std::fmt::Write as _;
use std::future::Future;

/// Runs `work` to completion on a fresh single-threaded runtime, or stops it on SIGINT or
/// SIGTERM.
///
/// # Errors
/// `work`'s error, [`CliError::Interrupted`] or [`CliError::Terminated`], or a runtime that
/// cannot start.
pub fn block_on<T>(work: impl Future<Output = anyhow::Result<T>>) -> anyhow::Result<T> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("failed to start the async runtime")?;
    runtime.block_on(async {
        use tokio::signal::unix::{SignalKind, signal};
        // Both listen before the work starts a server: a signal that came between the start of
        // a server and the first poll of a lazy listener would be lost when the process
        // ignores SIGINT until then (a background job without job control).
        let mut int = signal(SignalKind::interrupt()).context("failed to listen for SIGINT")?;
        let mut term = signal(SignalKind::terminate()).context("failed to listen for SIGTERM")?;
        tokio::select! {
            biased;
            _ = int.recv() => Err(CliError::Interrupted.into()),
            _ = term.recv() => Err(CliError::Terminated.into()),
            r = work => r,
        }
    })
}

/// Starts the server and completes the handshake.
///
/// # Errors
/// [`CliError::ServerStart`] with what happened and the server's last stderr lines or advice.
pub async fn start(spec: &ServerSpec) -> Result<Instance<'_>, CliError> {
    Instance::start(spec).await.map_err(|e| start_error(&e, &spec.target))
}

/// The error for a server that did not start: what happened, its last stderr lines or advice.
pub fn start_error(e: &ConnectError, target: &Target) -> CliError {
    let tail = e.stderr_tail();
    let mut msg = format!("{e}");
    if tail.is_empty() {
        msg.push_str(match target {
            Target::Stdio { .. } => "; check the command and that it speaks MCP over stdio",
            Target::Http { launch: Some(_), .. } => {
                "; check that the command serves the URL: `{port}` in the URL is the port it is \
                 given as PORT (or as `{port}` in its arguments), on 127.0.0.1"
            }
            Target::Http { .. } => {
                "; check the URL, that the server is up, and the --header values it needs"
            }
        });
    } else {
        let _ = write!(msg, "; the server's last stderr lines:\n  {}", tail.join("\n  "));
    }
    CliError::ServerStart(msg)
}
