//! Calls through a real client: the arguments take the client's own call path (mcpo:
//! `POST /<tool>` on the proxy; the Inspector CLI: `--method tools/call`), the server runs behind
//! the tap, and the server's own answer to the `tools/call` the client sent is read from the
//! wire. What the client made of the arguments on the way is kept in the client's words. This is
//! how `mcp-fuzz clients --call` sends a canary of a client that can call.

use super::RealClient;
use super::capture::{CaptureOptions, Prepared};
use super::discover::Installation;
use super::driver;
use super::spec::ServerSpec;
use serde_json::Value;
use std::time::{Duration, Instant};

/// Why: a client's own message about a call (mcpo's HTTP body, the Inspector's output) is kept
/// for the report; past this it is cut.
const CLIENT_WORDS: usize = 500;
/// Why: the tap copies the server's answer to mcpo and to its file one after the other; a
/// fraction of a second covers the gap on a loaded machine.
const SETTLE: Duration = Duration::from_secs(1);

/// One call to send.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// The tool, as the server lists it.
    pub tool: String,
    /// The arguments, as the model would send them.
    pub arguments: Value,
}

/// What became of one call sent through a client.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Through {
    /// The server answered the `tools/call` the client sent.
    Answered {
        /// The arguments the server received: the client's rewrite of the ones given (mcpo
        /// drops properties its model does not declare; the Inspector CLI converts values to
        /// their schema type), or the same value.
        sent: Value,
        /// The server's JSON-RPC response (`result` or `error`), as sent.
        response: Value,
        /// What the client said (its HTTP status and body, or its output).
        client: String,
    },
    /// The client sent no `tools/call`: it refused the arguments itself.
    NotSent {
        /// What the client said.
        client: String,
    },
    /// The server ended while the call was in flight.
    ServerExited {
        /// The arguments the server received.
        sent: Value,
        /// Its exit status as the shell gives it (a signal N is 128 + N), when known.
        status: Option<i32>,
        /// What the client said.
        client: String,
    },
    /// The client sent the call and the server did not answer before the client gave up or
    /// the deadline passed.
    NoAnswer {
        /// The arguments the server received.
        sent: Value,
        /// What the client said.
        client: String,
    },
}

/// Whether `client` has a call path mcp-fuzz can drive (mcpo and the Inspector CLI; the agent
/// CLIs call tools only when their model asks).
#[must_use]
pub fn can_call(client: RealClient) -> bool {
    matches!(client, RealClient::Mcpo | RealClient::Inspector)
}

/// Sends every call through `install`'s client to `spec`'s server, in order: mcpo is started
/// once for all of them, the Inspector CLI runs once per call. Each client run gets
/// `options.timeout`.
///
/// # Errors
/// The client cannot call ([`can_call`]), or it could not be started (with the reason).
pub fn call_through(
    install: &Installation,
    spec: &ServerSpec,
    calls: &[Call],
    options: &CaptureOptions,
) -> Result<Vec<Through>, String> {
    match install.client {
        RealClient::Mcpo => through_mcpo(install, spec, calls, options),
        RealClient::Inspector => {
            calls.iter().map(|call| through_inspector(install, spec, call, options)).collect()
        }
        other => Err(format!("{other} has no call path mcp-fuzz can drive")),
    }
}

fn words(text: &str) -> String {
    mcp_fuzz_generators::text::clip(text.trim(), CLIENT_WORDS)
}

fn failed(f: &driver::Failed) -> String {
    let tail = super::process::tail(&f.stderr, 5);
    if tail.is_empty() { f.error.to_string() } else { format!("{}; stderr: {tail}", f.error) }
}

/// Judges what the tap saw of one call: `record` is the `tools/call` the client sent for it.
fn judged(
    record: Option<&super::tap::CallRecord>,
    server_exit: Option<i32>,
    client: String,
) -> Through {
    match record {
        None => Through::NotSent { client },
        Some(r) => {
            let sent = r.arguments.clone();
            match &r.response {
                Some(response) => Through::Answered { sent, response: response.clone(), client },
                None if server_exit.is_some() => {
                    Through::ServerExited { sent, status: server_exit, client }
                }
                None => Through::NoAnswer { sent, client },
            }
        }
    }
}

fn through_inspector(
    install: &Installation,
    spec: &ServerSpec,
    call: &Call,
    options: &CaptureOptions,
) -> Result<Through, String> {
    let prepared = Prepared::new(install, spec, options).map_err(|f| failed(&f))?;
    let said = driver::inspector_call(&prepared.run(install, options), &call.tool, &call.arguments);
    // The CLI may end on the closed pipe a moment before the tap records the server's exit.
    let settle = Instant::now() + SETTLE;
    let mut transcript = prepared.tap.read();
    let pending = |t: &super::tap::Transcript| {
        t.server_exit.is_none()
            && t.calls.iter().find(|r| r.name == call.tool).is_none_or(|r| r.response.is_none())
    };
    while Instant::now() < settle && pending(&transcript) {
        std::thread::sleep(Duration::from_millis(10));
        transcript = prepared.tap.read();
    }
    let record = transcript.calls.iter().find(|r| r.name == call.tool);
    // When the CLI did not finish, the server may still have answered or died: the tap says.
    let client = match said {
        Ok(stdout) => words(&stdout),
        Err(f) => failed(&f),
    };
    Ok(judged(record, transcript.server_exit, client))
}

fn through_mcpo(
    install: &Installation,
    spec: &ServerSpec,
    calls: &[Call],
    options: &CaptureOptions,
) -> Result<Vec<Through>, String> {
    let prepared = Prepared::new(install, spec, options).map_err(|f| failed(&f))?;
    let mut out = Vec::new();
    let mut seen = 0;
    driver::mcpo_call(&prepared.run(install, options), calls, |answer| {
        // `tee` may hand the server's answer to mcpo a moment before it lands in the transcript.
        let settle = Instant::now() + SETTLE;
        let mut transcript = prepared.tap.read();
        while Instant::now() < settle
            && transcript.server_exit.is_none()
            && transcript.calls.get(seen).is_some_and(|r| r.response.is_none())
        {
            std::thread::sleep(Duration::from_millis(10));
            transcript = prepared.tap.read();
        }
        let client = match answer {
            Some((status, body)) => {
                format!("HTTP {status}: {}", words(&String::from_utf8_lossy(&body)))
            }
            None => "no HTTP answer from mcpo".to_owned(),
        };
        let new = transcript.calls.get(seen);
        seen = transcript.calls.len();
        out.push(judged(new, transcript.server_exit, client));
    })
    .map_err(|f| failed(&f))?;
    Ok(out)
}
