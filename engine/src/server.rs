//! One server under test: how to reach it ([`ServerSpec`]) and a live instance of it
//! ([`Instance`]) that connects lazily, calls, judges each reply and restarts the server after an
//! exit or an unanswered hang. This is the engine's probe API: the campaign's workers, shrinking,
//! `mcp-fuzz call`, `replay` and `clients --call` all call tools through it.

use crate::classify::{Outcome, classify};
use crate::client::{ConnectError, ConnectOptions, Connection, Exchange, LateWatch, Reply, Target};
use crate::tools::{Listing, list_all};
use serde_json::{Map, Value};
use std::time::Duration;

/// How to reach a server and how long to wait for it.
#[derive(Debug, Clone)]
pub struct ServerSpec {
    /// Where it is.
    pub target: Target,
    /// Start-up and response limits.
    pub connect: ConnectOptions,
    /// Per-call timeout.
    pub timeout: Duration,
}

/// One live server instance (or none yet): connected on first use, reconnected after it died or
/// stopped answering.
pub struct Instance<'s> {
    spec: &'s ServerSpec,
    conn: Option<Connection>,
    connected_once: bool,
    /// Restarts of this instance (reconnections after the first connection).
    pub restarts: u64,
    /// `tools/call` requests made through this instance.
    pub calls: u64,
    /// `tools/call` requests on the current connection.
    calls_on_conn: u64,
    /// The next connection replaces one closed on purpose ([`Instance::renew`]): no restart.
    renewing: bool,
    /// For each death of the process during a call: the number of that call on its process.
    deaths_at: Vec<u64>,
    /// Wire breaches outside any call on connections already closed: how many, and the first
    /// few distinct ones.
    stray: (u64, Vec<String>),
}

/// Distinct server-wide wire breaches kept per instance.
const MAX_STRAY_KEPT: usize = 3;

/// One call, judged.
pub struct Called {
    /// How the reply was judged.
    pub outcome: Outcome,
    /// Whether the server died or hung and was dropped (the next call starts a fresh one).
    pub restarted: bool,
    /// The result, when asked for and the call returned one.
    pub result: Option<Value>,
    /// The exchange, when asked for.
    pub exchange: Option<Exchange>,
    /// The server's stderr tail after the call, when the exchange was asked for.
    pub stderr: Vec<String>,
    /// The watch on a call that got no answer in time: a late answer makes it slow, none a hang.
    pub late: Option<LateWatch>,
}

/// What to keep of a call besides its outcome.
#[derive(Debug, Clone, Copy, Default)]
pub struct Keep {
    /// The JSON-RPC exchange and the stderr tail (for case files).
    pub exchange: bool,
    /// The result (for output feeding).
    pub result: bool,
    /// The watch on a call that gets no answer in time; without it such a call is cancelled at
    /// once.
    pub late: bool,
}

impl<'s> Instance<'s> {
    /// An instance of `spec`, with an already open connection if there is one.
    #[must_use]
    pub fn new(spec: &'s ServerSpec, conn: Option<Connection>) -> Self {
        Self {
            spec,
            connected_once: conn.is_some(),
            conn,
            restarts: 0,
            calls: 0,
            calls_on_conn: 0,
            renewing: false,
            deaths_at: Vec::new(),
            stray: (0, Vec::new()),
        }
    }

    /// Connects to the server now.
    ///
    /// # Errors
    /// [`ConnectError`] when the server cannot be started or initialised.
    pub async fn start(spec: &'s ServerSpec) -> Result<Self, ConnectError> {
        let conn = Connection::connect(&spec.target, &spec.connect).await?;
        Ok(Self::new(spec, Some(conn)))
    }

    /// The live connection, if any.
    #[must_use]
    pub fn connection(&self) -> Option<&Connection> {
        self.conn.as_ref()
    }

    async fn ensure(&mut self) -> Result<&Connection, ConnectError> {
        if self.conn.is_none() {
            let c = Connection::connect(&self.spec.target, &self.spec.connect).await?;
            if self.connected_once && !self.renewing {
                self.restarts += 1;
            }
            self.renewing = false;
            self.connected_once = true;
            self.calls_on_conn = 0;
            self.conn = Some(c);
        }
        Ok(self.conn.as_ref().expect("just connected"))
    }

    /// Ends the connection (if any) and kills the server's process group.
    pub async fn close(&mut self) {
        if let Some(c) = self.conn.take() {
            let (n, first) = c.stray_violations();
            self.stray.0 += n;
            for d in first {
                if self.stray.1.len() < MAX_STRAY_KEPT && !self.stray.1.contains(&d) {
                    self.stray.1.push(d);
                }
            }
            c.close().await;
        }
    }

    /// Breaches of the stdio framing or of JSON-RPC outside any call, over every connection
    /// this instance made: how many, and the first few distinct ones.
    #[must_use]
    pub fn stray_violations(&self) -> (u64, Vec<String>) {
        let (mut n, mut first) = self.stray.clone();
        if let Some(c) = &self.conn {
            let (m, more) = c.stray_violations();
            n += m;
            for d in more {
                if first.len() < MAX_STRAY_KEPT && !first.contains(&d) {
                    first.push(d);
                }
            }
        }
        (n, first)
    }

    /// Ends the connection on purpose, so that the next call runs on a fresh process (not
    /// counted as a restart).
    pub async fn renew(&mut self) {
        if self.conn.is_some() {
            self.close().await;
            self.renewing = true;
        }
    }

    /// For each death of the server during a call, the number of that call on its process.
    #[must_use]
    pub fn deaths_at(&self) -> &[u64] {
        &self.deaths_at
    }

    /// Reads every page of `tools/list` (at most `max_pages`).
    ///
    /// # Errors
    /// [`ListError`] when the server cannot be started or the first page cannot be had.
    pub async fn list_tools(&mut self, max_pages: usize) -> Result<Listing, ListError> {
        let timeout = self.spec.timeout;
        let conn = self.ensure().await.map_err(ListError::Connect)?;
        list_all(conn, max_pages, timeout).await.map_err(ListError::Listing)
    }

    /// Calls `tool` with `arguments`, judges the reply (with the tool's `outputSchema`
    /// validator, if any), and drops the server if it died or stopped answering `ping`.
    ///
    /// # Errors
    /// [`ConnectError`] when the server cannot be (re)started.
    pub async fn call(
        &mut self,
        tool: &str,
        arguments: &Map<String, Value>,
        output: Option<&jsonschema::Validator>,
        keep: Keep,
    ) -> Result<Called, ConnectError> {
        let timeout = self.spec.timeout;
        let conn = self.ensure().await?;
        let (reply, exchange) = if keep.exchange {
            let (r, e) = conn.call_tool_recorded(tool, arguments, timeout).await;
            (r, Some(e))
        } else {
            (conn.call_tool(tool, arguments, timeout).await, None)
        };
        let result = match &reply {
            Reply::Result(v) if keep.result => Some(v.clone()),
            _ => None,
        };
        let late = match &reply {
            Reply::Timeout(w) if keep.late => Some(w.clone()),
            Reply::Timeout(w) => {
                w.give_up();
                None
            }
            _ => None,
        };
        let outcome = classify(reply, output, || conn.stderr_tail());
        let stderr = if keep.exchange { conn.stderr_tail() } else { Vec::new() };
        let restarted = match &outcome {
            Outcome::Exited { .. } => true,
            Outcome::Timeout | Outcome::UpstreamTimeout { .. } => {
                !conn.ping(Duration::from_secs(2).min(timeout)).await
            }
            _ => false,
        };
        self.calls += 1;
        self.calls_on_conn += 1;
        if matches!(outcome, Outcome::Exited { .. }) {
            self.deaths_at.push(self.calls_on_conn);
        }
        if restarted {
            self.close().await;
        }
        Ok(Called { outcome, restarted, result, exchange, stderr, late })
    }
}

/// Why a listing could not be had.
#[derive(Debug, thiserror::Error)]
pub enum ListError {
    /// The server could not be started or initialised.
    #[error(transparent)]
    Connect(ConnectError),
    /// `tools/list` failed outright.
    #[error("{0}")]
    Listing(String),
}

/// A validator for a tool's `outputSchema`, formats not asserted; `None` when it does not
/// compile (a schema that cannot be used judges nothing).
#[must_use]
pub fn output_validator(schema: Option<&Value>) -> Option<jsonschema::Validator> {
    schema.and_then(|s| jsonschema::options().should_validate_formats(false).build(s).ok())
}
