//! The server under test: where it is ([`Target`], with its secrets), how a report shows it
//! ([`TargetInfo`], with every secret redacted), what it said about itself ([`ServerInfo`]), and one
//! `tools/call` as it went over the wire ([`Exchange`]).

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::PathBuf;

/// Where the server is.
#[derive(Debug, Clone)]
pub enum Target {
    /// A command whose stdin/stdout speak MCP.
    Stdio {
        /// Program and arguments.
        command: Vec<String>,
        /// Extra environment (`--env`).
        env: Vec<(String, String)>,
        /// Pass the caller's whole environment (`--inherit-env`).
        inherit_env: bool,
        /// Working directory (`--cwd`).
        cwd: Option<PathBuf>,
    },
    /// A streamable HTTP endpoint.
    Http {
        /// The endpoint URL; with [`Launch`], it may hold `{port}`.
        url: String,
        /// Extra request headers; their values are secrets and never printed.
        headers: Vec<(String, String)>,
        /// The command that serves it, when mcp-fuzz starts (and restarts) the server itself
        /// (`--http URL -- command`); none for a server someone else runs.
        launch: Option<Launch>,
    },
}

/// A local command serving a streamable HTTP endpoint: started in its own process group like a
/// stdio server, and reached over HTTP once its port is open.
#[derive(Debug, Clone)]
pub struct Launch {
    /// Program and arguments; `{port}` in any of them is the port mcp-fuzz chose.
    pub command: Vec<String>,
    /// Extra environment (`--env`); `{port}` in a value is the port too.
    pub env: Vec<(String, String)>,
    /// Pass the caller's whole environment (`--inherit-env`).
    pub inherit_env: bool,
    /// Working directory (`--cwd`).
    pub cwd: Option<PathBuf>,
}

/// The place-holder in an HTTP URL, command or environment value for the free loopback port
/// mcp-fuzz picks for each process it starts (also passed as `PORT`).
pub const PORT_PLACEHOLDER: &str = "{port}";

/// [`Launch`] as a report shows it: environment values redacted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LaunchInfo {
    /// Program and arguments.
    pub command: Vec<String>,
    /// `KEY=[REDACTED]` for each `--env`.
    #[serde(default)]
    pub env: Vec<String>,
    /// `--inherit-env`.
    #[serde(default)]
    pub inherit_env: bool,
    /// `--cwd`.
    #[serde(default)]
    pub cwd: Option<String>,
}

/// The server as the report shows it: secrets redacted, enough to start it again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "transport")]
pub enum TargetInfo {
    /// A command speaking MCP over stdio.
    #[serde(rename = "stdio", rename_all = "camelCase")]
    Stdio {
        /// Program and arguments.
        command: Vec<String>,
        /// `KEY=[REDACTED]` for each `--env`.
        #[serde(default)]
        env: Vec<String>,
        /// `--inherit-env`.
        #[serde(default)]
        inherit_env: bool,
        /// `--cwd`.
        #[serde(default)]
        cwd: Option<String>,
    },
    /// A streamable HTTP endpoint.
    #[serde(rename = "streamable-http")]
    Http {
        /// The endpoint, as given to `--http`.
        url: String,
        /// `Name: [REDACTED]` for each `--header`.
        #[serde(default)]
        headers: Vec<String>,
        /// The command mcp-fuzz started to serve it, if it started one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        launch: Option<LaunchInfo>,
    },
}

impl Target {
    /// A printable description with every secret (env values, header values) redacted.
    #[must_use]
    pub fn redacted(&self) -> TargetInfo {
        match self {
            Self::Stdio { command, env, inherit_env, cwd } => TargetInfo::Stdio {
                command: command.clone(),
                env: env.iter().map(|(k, _)| format!("{k}=[REDACTED]")).collect(),
                inherit_env: *inherit_env,
                cwd: cwd.as_ref().map(|p| p.display().to_string()),
            },
            Self::Http { url, headers, launch } => TargetInfo::Http {
                url: url.clone(),
                headers: headers.iter().map(|(k, _)| format!("{k}: [REDACTED]")).collect(),
                launch: launch.as_ref().map(|l| LaunchInfo {
                    command: l.command.clone(),
                    env: l.env.iter().map(|(k, _)| format!("{k}=[REDACTED]")).collect(),
                    inherit_env: l.inherit_env,
                    cwd: l.cwd.as_ref().map(|p| p.display().to_string()),
                }),
            },
        }
    }
}

impl TargetInfo {
    /// The server recorded here, when it can be started again: a stdio command (its
    /// environment values were redacted and must be given again) or an HTTP URL (its headers
    /// too).
    #[must_use]
    pub fn restartable(&self) -> Option<Target> {
        match self {
            Self::Stdio { command, inherit_env, cwd, .. } => {
                (!command.is_empty()).then(|| Target::Stdio {
                    command: command.clone(),
                    env: Vec::new(),
                    inherit_env: *inherit_env,
                    cwd: cwd.as_ref().map(Into::into),
                })
            }
            Self::Http { url, launch, .. } => Some(Target::Http {
                url: url.clone(),
                headers: Vec::new(),
                launch: launch.as_ref().map(|l| Launch {
                    command: l.command.clone(),
                    env: Vec::new(),
                    inherit_env: l.inherit_env,
                    cwd: l.cwd.as_ref().map(Into::into),
                }),
            }),
        }
    }
}

/// What the server said about itself.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerInfo {
    /// `serverInfo.name`.
    pub name: Option<String>,
    /// `serverInfo.version`.
    pub version: Option<String>,
    /// The negotiated protocol version.
    pub protocol_version: Option<String>,
}

/// One `tools/call` as it went over the wire.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Exchange {
    /// The JSON-RPC request, with the id it went out with (also when no response came).
    pub request: Value,
    /// The JSON-RPC response, when one came (none after a timeout, an exit or an oversize line).
    pub response: Option<Value>,
    /// Whether `response` holds the exact bytes the server wrote (stdio), or was rebuilt from
    /// the reply (HTTP).
    pub raw: bool,
}

/// Replaces every header value in `text` with `[REDACTED]`.
#[must_use]
pub fn redact(text: &str, headers: &[(String, String)]) -> String {
    headers
        .iter()
        .filter(|(_, v)| !v.is_empty())
        .fold(text.to_owned(), |t, (_, v)| t.replace(v.as_str(), "[REDACTED]"))
}
