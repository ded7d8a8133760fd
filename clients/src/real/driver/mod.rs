//! One driver per client: write its configuration into the scratch directory, run it once
//! against the (tapped) server, and read what it exposed from its output, its provider request
//! and its logs.

mod claude;
mod codex;
mod gemini;
mod inspector;
mod mcpo;

use super::discover::Installation;
use super::process::{MARKER_VAR, Proc};
use super::scratch::Scratch;
use super::spec::{CapturedTool, LostTool, ReasonSource, ServerSpec};
use super::tap::Transcript;
use super::{RealClient, RealError};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// Why: once the provider has answered, an agent CLI exits within a fraction of a second; this
/// bounds the wait before its group is killed anyway (the capture is complete either way).
pub(super) const EXIT_GRACE: Duration = Duration::from_secs(5);

/// Everything a driver needs for one run.
pub(crate) struct Run<'a> {
    pub install: &'a Installation,
    /// The server as the client must start it (already behind the tap).
    pub server: &'a ServerSpec,
    pub scratch: &'a Scratch,
    pub marker: &'a str,
    pub timeout: Duration,
    pub deadline: Instant,
    pub client_env: &'a BTreeMap<String, String>,
}

/// A culprit a client named for a lost listing: by name, or by its index in the listing.
#[derive(Debug, Clone)]
pub(crate) struct Culprit {
    pub name: Option<String>,
    pub index: Option<usize>,
    pub reason: String,
}

/// The client lost the whole listing.
#[derive(Debug, Clone)]
pub(crate) struct ListingLoss {
    pub reason: String,
    pub source: ReasonSource,
    pub culprits: Vec<Culprit>,
}

/// What a driver read from one run.
pub(crate) struct Outcome {
    pub request: Value,
    pub tools: Vec<CapturedTool>,
    /// Tools the client said it skipped (named as the server listed them where the client says so).
    pub lost: Vec<LostTool>,
    pub loss: Option<ListingLoss>,
    pub notes: Vec<String>,
}

/// A run that produced nothing usable, with the client's stderr.
pub(crate) struct Failed {
    pub error: RealError,
    pub stderr: Vec<u8>,
    /// Boxed: a transcript is large and failures are rare.
    pub transcript: Option<Box<Transcript>>,
}

impl From<RealError> for Failed {
    fn from(error: RealError) -> Self {
        Self { error, stderr: Vec::new(), transcript: None }
    }
}

impl Failed {
    pub(super) fn with_stderr(error: RealError, stderr: Vec<u8>) -> Self {
        Self { error, stderr, transcript: None }
    }
}

/// The Inspector CLI's `tools/call` (see `inspector::call`).
pub(crate) fn inspector_call(
    run: &Run<'_>,
    tool: &str,
    arguments: &Value,
) -> Result<String, Failed> {
    inspector::call(run, tool, arguments)
}

/// mcpo's `POST /<tool>` for each call (see `mcpo::call`).
pub(crate) fn mcpo_call(
    run: &Run<'_>,
    calls: &[super::Call],
    answered: impl FnMut(Option<(u16, Vec<u8>)>),
) -> Result<(), Failed> {
    mcpo::call(run, calls, answered)
}

/// Why `client` leaves out the listed tool `name` without a word, when something about the tool
/// explains it.
pub(crate) fn silent_reason(client: RealClient, name: &str) -> Option<String> {
    match client {
        RealClient::GeminiCli => gemini::silent_reason(name),
        _ => None,
    }
}

/// Runs the driver of `run.install.client`.
pub(crate) fn run(run: &Run<'_>) -> Result<Outcome, Failed> {
    match run.install.client {
        RealClient::Inspector => inspector::run(run),
        RealClient::Mcpo => mcpo::run(run),
        RealClient::CodexCli => codex::run(run),
        RealClient::ClaudeCode => claude::run(run),
        RealClient::GeminiCli => gemini::run(run),
    }
}

/// The client's command with a minimal environment: `PATH` (ours, so `node` is found), `HOME`
/// in the scratch directory, `TERM=dumb`, no colour, the capture marker, then the caller's extra
/// variables. Runs in `cwd`.
pub(super) fn command(run: &Run<'_>, home: &Path, cwd: &Path) -> Command {
    let mut c = Command::new(&run.install.program);
    c.env_clear()
        .env(
            "PATH",
            std::env::var("PATH").unwrap_or_else(|_| "/usr/local/bin:/usr/bin:/bin".into()),
        )
        .env("HOME", home)
        .env("TERM", "dumb")
        .env("NO_COLOR", "1")
        .env("LANG", "C.UTF-8")
        .env(MARKER_VAR, run.marker)
        .envs(run.client_env)
        .current_dir(cwd);
    c
}

/// Spawns `command` as the client.
pub(super) fn spawn(run: &Run<'_>, command: Command) -> Result<Proc, Failed> {
    Proc::spawn(command, run.marker).map_err(|source| {
        Failed::from(RealError::Spawn {
            client: run.install.client,
            program: run.install.program.clone(),
            source,
        })
    })
}

/// The timeout error of this run.
pub(super) fn timeout(run: &Run<'_>, stage: &'static str) -> RealError {
    RealError::Timeout { client: run.install.client, timeout: run.timeout, stage }
}

/// Runs an agent CLI against a provider stand-in: waits for the request with tools, then (briefly)
/// for the client to exit, then ends the group. Returns the captured body and the output.
pub(super) fn drive_agent(
    run: &Run<'_>,
    provider: &super::provider::Provider,
    command: Command,
) -> Result<(Value, super::process::Output), Failed> {
    let mut proc = spawn(run, command)?;
    let captured = provider.wait_captured(run.deadline, || proc.try_status().is_some());
    if captured.is_some() {
        let grace = (Instant::now() + EXIT_GRACE).min(run.deadline);
        proc.wait_until(grace);
    }
    let timed_out = captured.is_none() && proc.try_status().is_none();
    let output = proc.finish();
    match captured {
        Some(body) => Ok((body, output)),
        None => {
            let error = if timed_out {
                timeout(run, "waiting for the request that carries the tools")
            } else {
                let seen: Vec<String> = provider
                    .seen()
                    .iter()
                    .map(|s| {
                        format!(
                            "{} {} ({} bytes, tools: {})",
                            s.method, s.path, s.bytes, s.has_tools
                        )
                    })
                    .chain(provider.unreadable())
                    .collect();
                RealError::NoOutput {
                    client: run.install.client,
                    reason: format!(
                        "it exited ({}) without sending a request that carries tools; requests seen: [{}]",
                        output.status.map_or("killed".into(), |s| s.to_string()),
                        seen.join("; ")
                    ),
                }
            };
            Err(Failed::with_stderr(error, output.stderr))
        }
    }
}

/// JSON text of a string, also valid as a TOML basic string (TOML forbids a raw DEL).
pub(super) fn quoted(s: &str) -> String {
    serde_json::to_string(s).expect("a string serialises").replace('\u{7f}', "\\u007f")
}

/// A captured tool with only the rendering filled in.
pub(super) fn tool(
    shown_name: &str,
    description: Option<&Value>,
    input_schema: Option<&Value>,
) -> CapturedTool {
    CapturedTool {
        server_name: None,
        shown_name: shown_name.to_owned(),
        namespace: None,
        description: description.and_then(Value::as_str).map(str::to_owned),
        input_schema: input_schema.cloned(),
        output_schema: None,
        strict: None,
        notes: Vec::new(),
    }
}

/// The first `tools.N` index in `path` (a dotted or bracketed issue path).
pub(super) fn index_after_tools(text: &str) -> Option<usize> {
    let rest = text.split("tools.").nth(1)?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_strings_are_valid_toml_and_json() {
        assert_eq!(quoted("a\"b\\c\u{7f}\n"), "\"a\\\"b\\\\c\\u007f\\n\"");
    }

    #[test]
    fn tool_indexes_are_read_from_issue_paths() {
        assert_eq!(index_after_tools("tools.12.inputSchema.type: x"), Some(12));
        assert_eq!(index_after_tools("nothing"), None);
    }
}
