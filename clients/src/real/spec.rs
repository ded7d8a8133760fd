//! What every part of a capture shares: the server a client is pointed at ([`ServerSpec`],
//! [`SubsetServer`] for bisection) and the per-tool results each driver fills ([`CapturedTool`],
//! [`LostTool`] with its [`ReasonSource`]). Capture, the drivers and the tap all use these; none
//! of them is used here.

use super::RealError;
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

/// How to start the MCP server (stdio) the client connects to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ServerSpec {
    /// The executable (a bare name is looked up on the spec's `PATH`, else ours).
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
    /// Variables the client is told to set for the server (each client filters its own
    /// environment before handing it to a server; these go through the client's configuration).
    pub env: BTreeMap<String, String>,
    /// Its working directory (default: the caller's).
    pub cwd: Option<PathBuf>,
}

impl ServerSpec {
    /// A spec running `program` with no arguments.
    #[must_use]
    pub fn new(program: impl Into<PathBuf>) -> Self {
        Self { program: program.into(), args: Vec::new(), env: BTreeMap::new(), cwd: None }
    }

    /// Adds one argument.
    #[must_use]
    pub fn arg(mut self, arg: impl Into<String>) -> Self {
        self.args.push(arg.into());
        self
    }

    /// Sets one environment variable for the server.
    #[must_use]
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.insert(key.into(), value.into());
        self
    }

    /// Sets the server's working directory.
    #[must_use]
    pub fn cwd(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cwd = Some(dir.into());
        self
    }

    pub(crate) fn check(&self) -> Result<(), RealError> {
        let bad = |reason: String| Err(RealError::BadSpec { reason });
        if self.program.as_os_str().is_empty() {
            return bad("the server program is empty".into());
        }
        for (k, v) in &self.env {
            if k.is_empty() || k.contains('=') || k.contains('\0') || v.contains('\0') {
                return bad(format!("environment entry {k:?} cannot be passed to a process"));
            }
        }
        if self.args.iter().any(|a| a.contains('\0'))
            || self.program.to_string_lossy().contains('\0')
        {
            return bad("an argument contains a NUL byte".into());
        }
        Ok(())
    }
}

/// Builds a server that lists only the given tools (the raw tool objects, in order): what
/// bisection needs to find the one tool that makes a client lose a whole listing. The test
/// fixtures provide one around `fx-serve-tools`.
pub type SubsetServer = Arc<dyn Fn(&[Value]) -> Result<ServerSpec, String> + Send + Sync>;

/// One tool as the client exposes it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CapturedTool {
    /// The name the server listed, mapped back from [`Self::shown_name`] (`None` when it could
    /// not be mapped unambiguously).
    pub server_name: Option<String>,
    /// The name the client shows the model (prefixes, rewritten characters, cut length); for
    /// mcpo, the OpenAPI `operationId`.
    pub shown_name: String,
    /// The namespace the tool sits in, for clients that group tools (Codex: `mcp__srv`).
    pub namespace: Option<String>,
    /// The description as sent.
    pub description: Option<String>,
    /// The input schema exactly as the client sent it (for mcpo: the request body's schema with
    /// its `components` references resolved); `None` when the client sends none.
    pub input_schema: Option<Value>,
    /// The output schema the client keeps, when it shows one (the Inspector CLI prints it).
    pub output_schema: Option<Value>,
    /// The `strict` flag the client set, where it sets one (Codex sends `false`).
    pub strict: Option<bool>,
    /// What the client's log says about this tool (normalised, truncated...).
    pub notes: Vec<String>,
}

/// Where the reason for a lost tool comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReasonSource {
    /// A log file the client wrote.
    ClientLog,
    /// The client's stderr.
    Stderr,
    /// The client said nothing; the tool is simply absent.
    Silent,
    /// Found by re-running the client on subsets of the listing.
    Bisection,
}

/// A tool the server listed that the client does not expose.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LostTool {
    /// The name the server listed.
    pub name: String,
    /// Why, in the client's words where it gave any.
    pub reason: String,
    /// Where the reason comes from.
    pub source: ReasonSource,
}
