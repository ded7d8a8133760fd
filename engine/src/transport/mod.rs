//! The only module that talks MCP: spawning a stdio server (own process group, minimal
//! environment, stderr drained) or connecting over streamable HTTP, the handshake, raw
//! `tools/list` pages and raw `tools/call` replies.
//!
//! rmcp carries every message; around it this module keeps what a judge needs and rmcp hides:
//! the child's exit status (watched directly, since a grandchild may hold stdout open), junk on
//! stdout, oversize lines and the exact bytes of each response. See `DESIGN.md` beside this file.

pub mod asks;
pub mod http_probe;
mod launch;
pub mod listing;
mod progress;
pub mod raw;
mod wire;

pub use launch::{check as check_launch, side_by_side};
pub use progress::{Late, LateWatch};

use asks::{ClientFeatures, Heard};
pub use mcp_fuzz_compat::capture::excerpt;
pub use mcp_fuzz_model::outcome::ExitInfo;
pub use mcp_fuzz_model::target::{Exchange, Launch, ServerInfo, Target, TargetInfo, redact};
use mcp_fuzz_process::Group;
use progress::{Book, Handler};
use rmcp::model::{
    ClientCapabilities, ClientConfig, ClientRequest, CustomRequest, Implementation, PingRequest,
    ProtocolVersion, ServerResult,
};
use rmcp::service::{PeerRequestOptions, RoleClient, RunningService, ServiceError, ServiceExt};
use serde_json::{Map, Value, json};
use std::collections::VecDeque;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::sync::{oneshot, watch};
use wire::{WireReader, WireState, WireWriter};

/// Environment variables a stdio server inherits by default (plus `LC_*`).
pub const ENV_ALLOWLIST: &[&str] =
    &["PATH", "HOME", "USER", "LANG", "TMPDIR", "TERM", "SYSTEMROOT", "APPDATA", "USERPROFILE"];

/// Lines of server stderr kept for reports.
const STDERR_LINES: usize = 40;
/// Characters kept per stderr line.
const STDERR_LINE_CHARS: usize = 400;

/// Limits of one connection.
#[derive(Debug, Clone)]
pub struct ConnectOptions {
    /// Time allowed for spawn plus handshake.
    pub startup_timeout: Duration,
    /// Largest response line accepted.
    pub max_response_bytes: usize,
    /// Longest a call may take: progress extends its timeout up to this, and a call past its
    /// timeout is watched until this for a late answer (`--max-call-time`).
    pub max_call_time: Duration,
    /// Directories declared as the client's roots (`--roots`): with any, the `roots`
    /// capability is declared and `roots/list` answers them; with none, no capability at all.
    pub roots: Vec<PathBuf>,
    /// The client features declared besides roots (`--client-capabilities`, `--elicit`).
    pub client: ClientFeatures,
    /// What the server asked and told on every connection made with these options (shared
    /// by their clones): the protocol phase judges it.
    pub heard: Arc<Heard>,
    /// The sandbox every server process starts in (`None`: `--no-sandbox`, or a server
    /// someone else runs).
    pub sandbox: Option<Arc<crate::sandbox::Sandbox>>,
}

/// Why a connection could not be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConnectError {
    /// The program could not be started.
    #[error("failed to start `{program}`: {source}")]
    Spawn {
        /// The program as given after `--` (not resolved on `PATH`).
        program: String,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// No `initialize` answer in time.
    #[error("the server did not answer `initialize` within {0:?}")]
    StartupTimeout(Duration, Vec<String>),
    /// The process exited during start-up.
    #[error("the server exited during start-up ({status})")]
    ExitedDuringStartup {
        /// Exit description.
        status: String,
        /// Last stderr lines.
        stderr: Vec<String>,
    },
    /// A launched HTTP server's port did not open in time.
    #[error("the server did not open {addr} within {timeout:?}")]
    NoPort {
        /// `host:port`.
        addr: String,
        /// `--startup-timeout`.
        timeout: Duration,
        /// Last output lines.
        stderr: Vec<String>,
    },
    /// Nothing answers at the address of a server someone else runs.
    #[error(
        "nothing answers at {addr}: the server went away (mcp-fuzz did not start it, so it \
         cannot restart it; give its command after `--`, as in `--http URL -- COMMAND`, to have \
         it started and restarted)"
    )]
    Gone {
        /// `host:port`.
        addr: String,
    },
    /// The handshake failed.
    #[error("the MCP handshake failed: {message}")]
    Handshake {
        /// What rmcp reported.
        message: String,
        /// Last stderr lines.
        stderr: Vec<String>,
    },
    /// The target is unusable (empty command, bad header).
    #[error("{0}")]
    Invalid(String),
}

impl ConnectError {
    /// The last stderr lines of the server, when there are any.
    #[must_use]
    pub fn stderr_tail(&self) -> &[String] {
        match self {
            Self::StartupTimeout(_, s)
            | Self::ExitedDuringStartup { stderr: s, .. }
            | Self::NoPort { stderr: s, .. }
            | Self::Handshake { stderr: s, .. } => s,
            _ => &[],
        }
    }
}

/// The answer to one request, before any judgement.
#[derive(Debug, Clone)]
pub enum Reply {
    /// A result object, as the server sent it.
    Result(Value),
    /// A JSON-RPC error.
    RpcError {
        /// The error code.
        code: i64,
        /// The error message.
        message: String,
        /// The error's `data`, when it has any.
        data: Option<Value>,
    },
    /// No answer (and no progress) within the timeout; the call is still watched for a late
    /// answer.
    Timeout(LateWatch),
    /// Cancelled because it could not finish within `--max-call-time`: why (its progress rate,
    /// or the limit reached while it still reported progress).
    Slow(String),
    /// The process died.
    Exited(ExitInfo),
    /// A response longer than the limit (dropped): its size, or (`at_least`: over HTTP, where
    /// the body is refused once past the limit) a lower bound.
    Oversize {
        /// Bytes.
        bytes: u64,
        /// `bytes` is a lower bound.
        at_least: bool,
    },
    /// An HTTP status where a JSON-RPC answer was due (a `5xx`, a redirect...), with the start
    /// of the body.
    Http {
        /// The status code.
        status: u16,
        /// What the body said (may be empty).
        detail: String,
    },
    /// Something that is not a valid MCP reply.
    Protocol(String),
}

/// What an HTTP answer that rmcp could not take as a JSON-RPC one was, when it is one: an
/// error status, a redirect, a body over the limit, a body that is not JSON-RPC. `None` for a
/// failure of the connection itself (refused, reset), which may be the server's death.
fn http_reply(error: &(dyn std::error::Error + Send + Sync + 'static)) -> Option<Reply> {
    use rmcp::transport::streamable_http_client::StreamableHttpError as E;
    let error = error.downcast_ref::<E<reqwest::Error>>()?;
    Some(match error {
        E::HttpStatus(s) => Reply::Http { status: s.status, detail: String::new() },
        E::UnexpectedServerResponse(text) => match http_status(text) {
            Some((status, body)) => Reply::Http { status, detail: body.trim().to_owned() },
            None => {
                let text = text.strip_prefix(RMCP_PARSE).unwrap_or(text);
                Reply::Protocol(format!("an answer that is not JSON-RPC ({text})"))
            }
        },
        E::ResponseBodyTooLarge { max_size } => {
            Reply::Oversize { bytes: *max_size as u64 + 1, at_least: true }
        }
        E::UnexpectedContentType(ct) => Reply::Protocol(format!(
            "an answer with Content-Type {}, neither application/json nor text/event-stream",
            ct.as_deref().map_or_else(|| "(none)".to_owned(), |c| format!("`{c}`"))
        )),
        E::Deserialize(e) => Reply::Protocol(format!("an answer that is not JSON-RPC: {e}")),
        E::Sse(e) => Reply::Protocol(format!("a malformed SSE stream: {e}")),
        E::SessionExpired => Reply::Http {
            status: 404,
            detail: "the session the server issued is unknown to it now".into(),
        },
        _ => return None,
    })
}

/// Why an HTTP handshake failed, in the words of the answer when the server gave one.
fn handshake_failure(e: &rmcp::service::ClientInitializeError, url: &str) -> String {
    use rmcp::service::ClientInitializeError as E;
    let E::TransportError { error, .. } = e else { return e.to_string() };
    let Some(reply) = http_reply(&*error.error) else { return causes(&*error.error) };
    let hint = match &reply {
        Reply::Http { status: 300..=399 | 404 | 405, .. } => format!(
            " (is {url} the server's MCP endpoint? servers usually serve it at `/mcp`; give \
             --http the URL that answers a POST of `initialize`)"
        ),
        _ => String::new(),
    };
    format!("`initialize` was answered with {}{hint}", listing::describe(&reply))
}

/// An error and its causes, each once (reqwest's own text leaves the cause, such as a TLS
/// failure, to its sources).
fn causes(error: &(dyn std::error::Error + 'static)) -> String {
    use rmcp::transport::streamable_http_client::StreamableHttpError as E;
    let mut text = error.to_string();
    // rmcp's `Client` variant does not name its error as its source.
    let mut next = match error.downcast_ref::<E<reqwest::Error>>() {
        Some(E::Client(inner)) => Some(inner as &(dyn std::error::Error + 'static)),
        _ => error.source(),
    };
    while let Some(e) = next {
        let more = e.to_string();
        if !text.contains(&more) {
            text = format!("{text}: {more}");
        }
        next = e.source();
    }
    text
}

/// How rmcp starts the text of a JSON body that is not a JSON-RPC message.
const RMCP_PARSE: &str = "could not parse JSON response as ServerJsonRpcMessage: ";

/// The status and body of rmcp's text for a status it has no variant for (`HTTP 307 Temporary
/// Redirect: body`).
fn http_status(text: &str) -> Option<(u16, &str)> {
    let rest = text.strip_prefix("HTTP ")?;
    let status = rest.get(..3)?.parse().ok()?;
    let body = rest.split_once(": ").map_or("", |(_, b)| b);
    Some((status, body))
}

/// One live server.
pub struct Connection {
    client: RunningService<RoleClient, Handler>,
    book: Arc<Book>,
    max_call_time: Duration,
    wire: Option<Arc<WireState>>,
    exit: Option<watch::Receiver<Option<ExitInfo>>>,
    kill: Option<oneshot::Sender<()>>,
    /// The server's process group (a server mcp-fuzz started).
    group: Option<Arc<Group>>,
    /// A launched HTTP server's stdin, held open.
    _stdin: Option<tokio::process::ChildStdin>,
    stderr: Arc<Mutex<VecDeque<String>>>,
    /// What the server said about itself.
    pub server: ServerInfo,
    /// The capabilities the server declared in its `initialize` answer (`{}` when unknown).
    pub capabilities: Value,
}

/// With `--roots`, waits (at most [`ROOTS_WAIT`]) for the server to ask for them and a moment
/// more for it to take them in, so that the first call already sees them: a server such as
/// server-filesystem asks right after the handshake, while the first call may already be on
/// its way.
async fn roots_settled(asked: &tokio::sync::Notify, roots: &[PathBuf]) {
    if roots.is_empty() {
        return;
    }
    if tokio::time::timeout(ROOTS_WAIT, asked.notified()).await.is_ok() {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// How long a server that declared no interest in roots may take to ask for them.
const ROOTS_WAIT: Duration = Duration::from_millis(500);

fn client_handler(
    book: &Arc<Book>,
    opts: &ConnectOptions,
    roots_asked: &Arc<tokio::sync::Notify>,
) -> Handler {
    let roots = &opts.roots;
    let mut capabilities = ClientCapabilities::default();
    if !roots.is_empty() {
        capabilities.roots = Some(rmcp::model::RootsCapabilities::default());
    }
    if opts.client.sampling {
        capabilities.sampling = Some(rmcp::model::SamplingCapability::default());
    }
    if opts.client.elicitation {
        capabilities.elicitation = Some(
            rmcp::model::ElicitationCapability::new()
                .with_form(rmcp::model::FormElicitationCapability::default()),
        );
    }
    let info =
        ClientConfig::new(capabilities, Implementation::new("mcp-fuzz", env!("CARGO_PKG_VERSION")))
            .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE);
    let roots = roots
        .iter()
        .map(|p| {
            let abs = std::path::absolute(p).unwrap_or_else(|_| p.clone());
            (
                format!("file://{}", abs.display()),
                abs.file_name().map(|n| n.to_string_lossy().into_owned()),
            )
        })
        .collect();
    Handler {
        info,
        book: Arc::clone(book),
        roots,
        roots_asked: Arc::clone(roots_asked),
        features: opts.client,
        heard: Arc::clone(&opts.heard),
        elicited: std::sync::atomic::AtomicU64::new(0),
    }
}

/// After the handshake: with `logging` declared by the server, asks for every level of log
/// message (`logging/setLevel` debug), so that the run hears them, and notes how it was
/// answered.
// Logging is in the 2025-11-25 specification servers follow; rmcp marks it deprecated ahead of
// SEP-2577.
#[allow(deprecated)]
async fn set_level(client: &RunningService<RoleClient, Handler>, opts: &ConnectOptions) {
    let declared = client.peer_info().is_some_and(|p| p.capabilities.logging.is_some());
    if !declared || opts.heard.set_level_failed() {
        return;
    }
    let params = rmcp::model::SetLevelRequestParams::new(asks::set_level());
    let wait = opts.startup_timeout.min(Duration::from_secs(5));
    let problem = match tokio::time::timeout(wait, client.set_level(params)).await {
        Ok(Ok(())) => None,
        Ok(Err(e)) => Some(format!("answered {}", causes(&e))),
        Err(_) => Some(format!("no answer within {} s", wait.as_secs())),
    };
    opts.heard.set_level(problem);
}

fn tail(stderr: &Mutex<VecDeque<String>>) -> Vec<String> {
    stderr.lock().expect("stderr lock").iter().cloned().collect()
}

impl Connection {
    /// Starts (stdio) or reaches (HTTP) the server and completes the handshake.
    ///
    /// # Errors
    /// [`ConnectError`] when the server cannot be started or initialised.
    pub async fn connect(target: &Target, opts: &ConnectOptions) -> Result<Self, ConnectError> {
        match target {
            Target::Stdio { command, env, inherit_env, cwd } => {
                Self::stdio(command, env, *inherit_env, cwd.as_ref(), opts).await
            }
            Target::Http { url, headers, launch } => {
                Self::http(url, headers, launch.as_ref(), opts).await
            }
        }
    }

    async fn stdio(
        command: &[String],
        env: &[(String, String)],
        inherit_env: bool,
        cwd: Option<&PathBuf>,
        opts: &ConnectOptions,
    ) -> Result<Self, ConnectError> {
        let Spawned { stdin, stdout, stderr, exit_rx, kill_tx, group } =
            spawn(command, env, inherit_env, cwd, opts.sandbox.as_deref())?;
        let wire = Arc::new(WireState::hearing(&opts.heard));
        let reader = WireReader::new(stdout, opts.max_response_bytes, Arc::clone(&wire));
        let writer = WireWriter::new(stdin, Arc::clone(&wire));
        let mut exit_watch = exit_rx.clone();
        let book = Arc::new(Book::default());
        let roots_asked = Arc::new(tokio::sync::Notify::new());
        let handshake = tokio::time::timeout(
            opts.startup_timeout,
            client_handler(&book, opts, &roots_asked).serve((reader, writer)),
        );
        let outcome = tokio::select! {
            r = handshake => Some(r),
            _ = exit_watch.wait_for(Option::is_some) => None,
        };
        let client = match outcome {
            Some(Ok(Ok(c))) => c,
            Some(Ok(Err(e))) => {
                tokio::time::sleep(Duration::from_millis(50)).await;
                let exited = exit_rx.borrow().clone();
                group.kill();
                let stderr = tail(&stderr);
                return Err(match exited {
                    Some(info) => {
                        ConnectError::ExitedDuringStartup { status: info.to_string(), stderr }
                    }
                    None => ConnectError::Handshake { message: e.to_string(), stderr },
                });
            }
            Some(Err(_)) => {
                group.kill();
                tokio::time::sleep(Duration::from_millis(50)).await;
                return Err(ConnectError::StartupTimeout(opts.startup_timeout, tail(&stderr)));
            }
            None => {
                // Let the stderr drain catch the last words.
                tokio::time::sleep(Duration::from_millis(100)).await;
                let info =
                    exit_rx.borrow().clone().unwrap_or(ExitInfo { code: None, signal: None });
                group.kill();
                return Err(ConnectError::ExitedDuringStartup {
                    status: info.to_string(),
                    stderr: tail(&stderr),
                });
            }
        };
        client.set_response_cache_config(rmcp::ClientCacheConfig::disabled()).await;
        roots_settled(&roots_asked, &opts.roots).await;
        set_level(&client, opts).await;
        let server = server_info(&client);
        let capabilities = client
            .peer_info()
            .and_then(|p| serde_json::to_value(&p.capabilities).ok())
            .unwrap_or_else(|| json!({}));
        Ok(Self {
            capabilities,
            client,
            book,
            max_call_time: opts.max_call_time,
            wire: Some(wire),
            exit: Some(exit_rx),
            kill: Some(kill_tx),
            group: Some(group),
            _stdin: None,
            stderr,
            server,
        })
    }

    async fn http(
        url: &str,
        headers: &[(String, String)],
        launch: Option<&Launch>,
        opts: &ConnectOptions,
    ) -> Result<Self, ConnectError> {
        use rmcp::transport::StreamableHttpClientTransport;
        use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
        let mut map = std::collections::HashMap::new();
        for (k, v) in headers {
            let name = http::HeaderName::from_bytes(k.as_bytes())
                .map_err(|_| ConnectError::Invalid(format!("`{k}` is not a valid header name")))?;
            let value = http::HeaderValue::from_str(v).map_err(|_| {
                ConnectError::Invalid(format!(
                    "the value of header `{k}` is not valid ([REDACTED])"
                ))
            })?;
            map.insert(name, value);
        }
        let launched = match launch {
            Some(l) => {
                Some(launch::start(url, l, opts.startup_timeout, opts.sandbox.as_deref()).await?)
            }
            None => None,
        };
        let startup_timeout = launched.as_ref().map_or(opts.startup_timeout, |l| l.remaining);
        let url = launched.as_ref().map_or(url, |l| l.url.as_str());
        let stderr_of =
            |l: &Option<launch::Launched>| l.as_ref().map_or_else(Vec::new, |l| tail(&l.stderr));
        let end = |l: &Option<launch::Launched>| {
            if let Some(l) = l {
                l.group.kill();
            }
        };
        // reqwest's TLS asks rustls for the process's provider: ring (see engine/Cargo.toml). An
        // error means one is installed already, which serves as well.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let mut cfg = StreamableHttpClientTransportConfig::with_uri(url.to_owned())
            .custom_headers(map)
            .reinit_on_expired_session(false);
        // One limit for a response however it comes: a JSON body, an SSE event, or a line.
        cfg.max_json_response_size = opts.max_response_bytes;
        cfg.max_sse_event_size = opts.max_response_bytes;
        // A redirect is the server's answer, judged as such: followed, it would hide where the
        // endpoint is (and send the request on to wherever it points).
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| {
            ConnectError::Invalid(format!("cannot set up the HTTP client: {e}"))
        })?;
        let transport = StreamableHttpClientTransport::with_client(http, cfg);
        let book = Arc::new(Book::default());
        let roots_asked = Arc::new(tokio::sync::Notify::new());
        let client = match tokio::time::timeout(
            startup_timeout,
            client_handler(&book, opts, &roots_asked).serve(transport),
        )
        .await
        {
            Ok(Ok(c)) => c,
            Ok(Err(e)) => {
                end(&launched);
                if launched.is_none()
                    && let Some(addr) = launch::endpoint(url)
                    && !launch::accepts(&addr).await
                {
                    return Err(ConnectError::Gone { addr });
                }
                return Err(ConnectError::Handshake {
                    message: redact(&handshake_failure(&e, url), headers),
                    stderr: stderr_of(&launched),
                });
            }
            Err(_) => {
                end(&launched);
                return Err(ConnectError::StartupTimeout(
                    opts.startup_timeout,
                    stderr_of(&launched),
                ));
            }
        };
        client.set_response_cache_config(rmcp::ClientCacheConfig::disabled()).await;
        roots_settled(&roots_asked, &opts.roots).await;
        set_level(&client, opts).await;
        let server = server_info(&client);
        let capabilities = client
            .peer_info()
            .and_then(|p| serde_json::to_value(&p.capabilities).ok())
            .unwrap_or_else(|| json!({}));
        let (exit, group, stderr) = match &launched {
            Some(l) => (Some(l.exit_rx.clone()), Some(Arc::clone(&l.group)), Arc::clone(&l.stderr)),
            None => (gone_watch(url), None, Arc::new(Mutex::new(VecDeque::new()))),
        };
        let (kill, stdin) = launched.map(|l| (l.kill_tx, l.stdin)).unzip();
        Ok(Self {
            capabilities,
            client,
            book,
            max_call_time: opts.max_call_time,
            exit,
            group,
            stderr,
            wire: None,
            kill,
            _stdin: stdin,
            server,
        })
    }

    /// The last lines the server wrote to stderr.
    #[must_use]
    pub fn stderr_tail(&self) -> Vec<String> {
        tail(&self.stderr)
    }

    /// Breaches of the stdio framing or of JSON-RPC outside any call (a banner at start-up, a
    /// reply to a notification): the first of each breach described with its bytes, and how
    /// many of that breach.
    #[must_use]
    pub fn stray_violations(&self) -> Vec<(String, u64)> {
        self.wire.as_ref().map_or_else(Vec::new, |w| {
            w.stray().1.iter().map(|(v, n)| (v.to_string(), *n)).collect()
        })
    }

    /// How the process ended, if it has.
    #[must_use]
    pub fn exited(&self) -> Option<ExitInfo> {
        self.exit.as_ref().and_then(|rx| rx.borrow().clone())
    }

    /// Sends one request and waits for its reply, the process's death, an oversize line or the
    /// timeout, whichever comes first.
    pub async fn request(&self, method: &str, params: Option<Value>, timeout: Duration) -> Reply {
        self.request_keeping(method, params, timeout, None, &mut None).await
    }

    /// [`Connection::request`], keeping the exact bytes of the response in `raw` when asked, and
    /// the JSON-RPC id the request went out with in `id` (also when no response came).
    async fn request_keeping(
        &self,
        method: &str,
        params: Option<Value>,
        timeout: Duration,
        mut raw: Option<&mut Option<Vec<u8>>>,
        id: &mut Option<Value>,
    ) -> Reply {
        if let Some(info) = self.exited() {
            return Reply::Exited(info);
        }
        let ticket = self.wire.as_ref().map(|w| w.begin_call());
        let reply =
            self.request_in_flight(method, params, timeout, raw.as_deref_mut(), id, ticket).await;
        let (Some(w), Some(ticket)) = (&self.wire, ticket) else { return reply };
        // A breach on the wire decides, also when a reply came after it: rmcp never saw the
        // offending line, and what it saw may be a later message.
        let violation = w.take_violation(ticket);
        w.end_call(ticket);
        match (violation, reply) {
            (Some(v), r) if !matches!(r, Reply::Exited(_)) => {
                if let Some(slot) = raw {
                    *slot = None;
                }
                Reply::Protocol(v.to_string())
            }
            (_, r) => r,
        }
    }

    async fn request_in_flight(
        &self,
        method: &str,
        params: Option<Value>,
        timeout: Duration,
        mut raw: Option<&mut Option<Vec<u8>>>,
        id: &mut Option<Value>,
        ticket: Option<wire::Ticket>,
    ) -> Reply {
        let req = ClientRequest::CustomRequest(CustomRequest::new(method, params));
        // No rmcp timeout: the deadline below moves with progress, and a call past it is watched.
        let handle =
            match self.client.send_request_with_option(req, PeerRequestOptions::no_options()).await
            {
                Ok(h) => h,
                Err(e) => return self.failure(e).await,
            };
        let start = Instant::now();
        *id = serde_json::to_value(&handle.id).ok();
        if let (Some(w), Some(t), Some(id)) = (&self.wire, ticket, id.as_ref()) {
            w.bind(t, id);
        }
        let token = handle.progress_token.clone();
        let (request_id, peer, mut rx) = (handle.id.clone(), handle.peer.clone(), handle.rx);
        let mut exit = self.exit.clone();
        let wire = self.wire.clone();
        let limit = start + self.max_call_time;
        let keep = raw.is_some();
        let reply = loop {
            let died = async {
                match exit.as_mut() {
                    Some(rx) => {
                        let _ = rx.wait_for(Option::is_some).await;
                    }
                    None => std::future::pending::<()>().await,
                }
            };
            // An oversize line or a breach of the framing ends the call at once.
            let wire_event = async {
                match (&wire, ticket) {
                    (Some(w), Some(ticket)) => loop {
                        let notified = w.notify.notified();
                        if let Some(n) = w.oversize(ticket) {
                            return Reply::Oversize { bytes: n, at_least: false };
                        }
                        if let Some(v) = w.take_violation(ticket) {
                            return Reply::Protocol(v.to_string());
                        }
                        notified.await;
                    },
                    _ => std::future::pending::<Reply>().await,
                }
            };
            let progressed = self.book.notify.notified();
            let track = self.book.get(&token);
            if let Some(why) = track.and_then(|t| t.unbounded(start, self.max_call_time)) {
                cancel(&peer, &request_id, "mcp-fuzz: the progress rate shows it cannot finish")
                    .await;
                break Reply::Slow(why);
            }
            // The timeout runs from the last progress report, never past the limit.
            let quiet_since = track.map_or(start, |t| t.last_at().max(start));
            let deadline = (quiet_since + timeout).min(limit);
            tokio::select! {
                r = &mut rx => break match r {
                    Ok(Ok(result)) => self.result_of(result, raw.as_deref_mut(), ticket),
                    Ok(Err(e)) => self.failure(e).await,
                    Err(_) => self.failure(ServiceError::TransportClosed).await,
                },
                () = died => {
                    // A reply may have raced the exit; the process is gone either way.
                    break Reply::Exited(
                        self.exited().unwrap_or(ExitInfo { code: None, signal: None }),
                    );
                }
                r = wire_event => break r,
                () = progressed => {}
                () = tokio::time::sleep_until(deadline.into()) => {
                    if Instant::now() < limit && self.book.get(&token) != track {
                        continue;
                    }
                    if track.is_some() && Instant::now() >= limit {
                        cancel(&peer, &request_id, "mcp-fuzz: --max-call-time reached").await;
                        break Reply::Slow(format!(
                            "still reporting progress after {} s (--max-call-time), so it was \
                             cancelled",
                            self.max_call_time.as_secs()
                        ));
                    }
                    break Reply::Timeout(watch_late(rx, peer, request_id, start, limit));
                }
            }
        };
        self.book.forget(&token);
        // An error answer leaves its bytes on the wire state; a result's were kept above.
        if keep
            && let Some(slot) = raw
            && slot.is_none()
        {
            *slot = self.taken_response(ticket);
        }
        reply
    }

    /// The exact bytes of the call's response, if the wire kept them.
    fn taken_response(&self, ticket: Option<wire::Ticket>) -> Option<Vec<u8>> {
        self.wire.as_ref().zip(ticket).and_then(|(w, t)| w.take_response(t))
    }

    fn result_of(
        &self,
        result: ServerResult,
        keep: Option<&mut Option<Vec<u8>>>,
        ticket: Option<wire::Ticket>,
    ) -> Reply {
        // Prefer the exact bytes: rmcp's typed results drop unknown fields and fill defaults.
        if let Some(raw) = self.taken_response(ticket) {
            if let Some(slot) = keep {
                *slot = Some(raw.clone());
            }
            return result_from_raw(&raw);
        }
        match result {
            ServerResult::CustomResult(c) => Reply::Result(c.0),
            other => serde_json::to_value(&other)
                .map_or_else(|e| Reply::Protocol(e.to_string()), Reply::Result),
        }
    }

    async fn failure(&self, e: ServiceError) -> Reply {
        match e {
            ServiceError::McpError(err) => Reply::RpcError {
                code: i64::from(err.code.0),
                message: err.message.to_string(),
                data: err.data,
            },
            ServiceError::Timeout { .. } => Reply::Timeout(LateWatch::ended(Instant::now())),
            ServiceError::UnexpectedResponse => {
                Reply::Protocol("a response that does not fit the request".into())
            }
            ServiceError::TransportSend(sent) if let Some(reply) = http_reply(&*sent.error) => {
                reply
            }
            other => {
                // The transport is gone: give the exit watcher a moment to report.
                if let Some(rx) = &self.exit {
                    let mut rx = rx.clone();
                    let _ = tokio::time::timeout(
                        Duration::from_millis(500),
                        rx.wait_for(Option::is_some),
                    )
                    .await;
                }
                // rmcp's own text names its transport's generic types before the cause.
                let cause = match &other {
                    ServiceError::TransportSend(sent) => causes(&*sent.error),
                    other => other.to_string(),
                };
                match self.exited() {
                    Some(info) => Reply::Exited(info),
                    None => Reply::Protocol(format!("transport failure: {cause}")),
                }
            }
        }
    }

    /// Calls a tool with `arguments` (sent exactly as given).
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: &Map<String, Value>,
        timeout: Duration,
    ) -> Reply {
        self.request("tools/call", Some(json!({"name": name, "arguments": arguments})), timeout)
            .await
    }

    /// [`Connection::call_tool`], also returning the exchange: the request as sent and the
    /// response exactly as the server wrote it (over HTTP, where the bytes are not seen, the
    /// response is rebuilt from the reply).
    pub async fn call_tool_recorded(
        &self,
        name: &str,
        arguments: &Map<String, Value>,
        timeout: Duration,
    ) -> (Reply, Exchange) {
        let params = json!({"name": name, "arguments": arguments});
        let (mut raw, mut sent_id) = (None, None);
        let reply = self
            .request_keeping(
                "tools/call",
                Some(params.clone()),
                timeout,
                Some(&mut raw),
                &mut sent_id,
            )
            .await;
        let parsed = raw.as_deref().and_then(|b| serde_json::from_slice::<Value>(b).ok());
        // The id the request went out with; the response's own, when rmcp could not say.
        let id = sent_id
            .or_else(|| parsed.as_ref().and_then(|v| v.get("id")).cloned())
            .unwrap_or(Value::Null);
        let (response, raw_bytes) = match parsed {
            Some(v) => (Some(v), true),
            None => match &reply {
                Reply::Result(r) => (Some(json!({"jsonrpc": "2.0", "id": id, "result": r})), false),
                Reply::RpcError { code, message, data } => {
                    let mut error = json!({"code": code, "message": message});
                    if let Some(d) = data {
                        error["data"] = d.clone();
                    }
                    (Some(json!({"jsonrpc": "2.0", "id": id, "error": error})), false)
                }
                _ => (None, false),
            },
        };
        let request = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params});
        (reply, Exchange { request, response, raw: raw_bytes })
    }

    /// Whether the server answers `ping` in time.
    pub async fn ping(&self, timeout: Duration) -> bool {
        let req = ClientRequest::PingRequest(PingRequest::default());
        match self
            .client
            .send_request_with_option(req, PeerRequestOptions::with_timeout(timeout))
            .await
        {
            Ok(h) => {
                tokio::time::timeout(timeout, h.await_response()).await.is_ok_and(|r| r.is_ok())
            }
            Err(_) => false,
        }
    }

    /// Kills the server's whole process group and stops the connection, while calls still in
    /// flight on it (from other tasks) hold it: they end as the process exits.
    pub fn kill(&self) {
        self.kill_group();
        self.client.cancellation_token().cancel();
    }

    /// Ends the connection and kills the server's whole process group.
    pub async fn close(mut self) {
        if let Some(k) = self.kill.take() {
            let _ = k.send(());
        }
        self.kill_group();
        if let Some(mut rx) = self.exit.take() {
            let _ =
                tokio::time::timeout(Duration::from_secs(2), rx.wait_for(Option::is_some)).await;
        }
        let _ = tokio::time::timeout(Duration::from_secs(1), self.client.close()).await;
    }

    /// `SIGKILL` to the server's whole process group, once (an HTTP server is not ours to kill).
    fn kill_group(&self) {
        if let Some(group) = &self.group {
            group.kill();
        }
    }
}

/// How often the address of a server someone else runs is tried while a connection lives.
const GONE_POLL: Duration = Duration::from_secs(1);

/// For a server someone else runs over HTTP (no process to watch): a watch that reports an exit
/// once its address has refused connections twice in a row, so that a call in flight ends as
/// the server's death instead of waiting out its timeout. It stops with the connection.
fn gone_watch(url: &str) -> Option<watch::Receiver<Option<ExitInfo>>> {
    let addr = launch::endpoint(url)?;
    let (tx, rx) = watch::channel(None);
    tokio::spawn(async move {
        let mut misses = 0;
        while misses < 2 {
            tokio::select! {
                // Every receiver is gone: the connection ended.
                () = tx.closed() => return,
                () = tokio::time::sleep(GONE_POLL) => {}
            }
            misses = if launch::accepts(&addr).await { 0 } else { misses + 1 };
        }
        let _ = tx.send(Some(ExitInfo { code: None, signal: None }));
    });
    Some(rx)
}

/// Keeps the last [`STDERR_LINES`] lines of `pipe` in `tail`, from a task of its own.
pub(crate) fn drain<R>(pipe: R, tail: &Arc<Mutex<VecDeque<String>>>)
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
{
    let tail = Arc::clone(tail);
    tokio::spawn(async move {
        let mut lines = BufReader::new(pipe).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            let mut q = tail.lock().expect("stderr lock");
            if q.len() == STDERR_LINES {
                q.pop_front();
            }
            q.push_back(line.chars().take(STDERR_LINE_CHARS).collect());
        }
    });
}

/// A stdio server just started: its pipes, its stderr tail (drained by a task), the watch on
/// its exit status, the switch that kills its process group and the group itself (shared with
/// the task that watches the exit, and killed at the latest when the last holder drops it).
pub(crate) struct Spawned {
    pub stdin: tokio::process::ChildStdin,
    pub stdout: tokio::process::ChildStdout,
    pub stderr: Arc<Mutex<VecDeque<String>>>,
    pub exit_rx: watch::Receiver<Option<ExitInfo>>,
    pub kill_tx: oneshot::Sender<()>,
    pub group: Arc<Group>,
}

/// Starts a stdio server in a process group of its own (`mcp_fuzz_process::in_own_group`), with
/// the minimal environment unless `inherit_env`; a task drains its stderr and another watches its
/// exit.
pub(crate) fn spawn(
    command: &[String],
    env: &[(String, String)],
    inherit_env: bool,
    cwd: Option<&PathBuf>,
    sandbox: Option<&crate::sandbox::Sandbox>,
) -> Result<Spawned, ConnectError> {
    let placed = sandbox.map(|s| s.prepare(command, env, cwd));
    let (command, env, cwd) = match &placed {
        Some((c, e, w)) => (c.as_slice(), e.as_slice(), Some(w)),
        None => (command, env, cwd),
    };
    let (program, args) = command
        .split_first()
        .ok_or_else(|| ConnectError::Invalid("no server command given after `--`".into()))?;
    let mut cmd = std::process::Command::new(program);
    cmd.args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    mcp_fuzz_process::in_own_group(&mut cmd);
    if !inherit_env {
        cmd.env_clear();
        for (k, v) in std::env::vars_os() {
            let name = k.to_string_lossy();
            if ENV_ALLOWLIST.contains(&name.as_ref()) || name.starts_with("LC_") {
                cmd.env(&k, &v);
            }
        }
    }
    cmd.envs(env.iter().map(|(k, v)| (k, v)));
    if let Some(dir) = cwd {
        cmd.current_dir(dir);
    }
    // The exit is awaited, so the child is tokio's; the conversion keeps all of the above.
    let mut cmd = tokio::process::Command::from(cmd);
    cmd.kill_on_drop(true);
    let mut child =
        cmd.spawn().map_err(|source| ConnectError::Spawn { program: program.clone(), source })?;
    let group = Arc::new(Group::led_by(child.id().expect("a child not yet waited for has a pid")));
    let stdout = child.stdout.take().expect("stdout is piped");
    let stdin = child.stdin.take().expect("stdin is piped");
    let stderr_pipe = child.stderr.take().expect("stderr is piped");
    let stderr = Arc::new(Mutex::new(VecDeque::new()));
    drain(stderr_pipe, &stderr);
    let (exit_tx, exit_rx) = watch::channel(None);
    let (kill_tx, kill_rx) = oneshot::channel::<()>();
    let watched = Arc::clone(&group);
    tokio::spawn(async move {
        let status = tokio::select! {
            s = child.wait() => s,
            _ = kill_rx => {
                watched.kill();
                child.wait().await
            }
        };
        let info = status.map_or(ExitInfo { code: None, signal: None }, |s| {
            use std::os::unix::process::ExitStatusExt;
            ExitInfo { code: s.code(), signal: s.signal() }
        });
        let _ = exit_tx.send(Some(info));
    });
    Ok(Spawned { stdin, stdout, stderr, exit_rx, kill_tx, group })
}

impl Drop for Connection {
    fn drop(&mut self) {
        if let Some(k) = self.kill.take() {
            let _ = k.send(());
        }
        self.kill_group();
    }
}

/// A response line's `result`. Only `result` is built; `jsonrpc` and `id` are skipped over
/// without allocating, since this runs on every call.
fn result_from_raw(raw: &[u8]) -> Reply {
    /// `"result": null` is kept as `Some(Null)` (a shape violation for the judge), told apart
    /// from an absent `result`.
    #[derive(serde::Deserialize)]
    struct Envelope {
        #[serde(default, deserialize_with = "present")]
        result: Option<Value>,
    }
    fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
        <Value as serde::Deserialize>::deserialize(d).map(Some)
    }
    match serde_json::from_slice::<Envelope>(raw) {
        Ok(Envelope { result: Some(r) }) => Reply::Result(r),
        Ok(Envelope { result: None }) => Reply::Protocol(format!(
            "response without `result`: {}",
            serde_json::from_slice::<Value>(raw).map_or_else(|e| e.to_string(), |v| excerpt(&v))
        )),
        Err(e) => Reply::Protocol(format!("malformed response: {e}")),
    }
}

/// Tells the server a request is given up on.
async fn cancel(peer: &rmcp::Peer<RoleClient>, id: &rmcp::model::RequestId, reason: &str) {
    let params =
        rmcp::model::CancelledNotificationParam::new(Some(id.clone()), Some(reason.to_owned()));
    let _ = peer.notify_cancelled(params).await;
}

/// Watches a call past its timeout, until its answer or `limit` (then it is cancelled).
fn watch_late(
    rx: oneshot::Receiver<Result<ServerResult, ServiceError>>,
    peer: rmcp::Peer<RoleClient>,
    id: rmcp::model::RequestId,
    start: Instant,
    limit: Instant,
) -> LateWatch {
    let (tx, watch) = LateWatch::new(start, limit);
    let stop = watch.stop_signal();
    tokio::spawn(async move {
        let late = tokio::select! {
            r = rx => match r {
                Ok(Ok(_) | Err(ServiceError::McpError(_))) => Late::Answered(start.elapsed()),
                _ => Late::Unanswered(start.elapsed()),
            },
            () = tokio::time::sleep_until(limit.into()) => {
                cancel(&peer, &id, "mcp-fuzz: no answer within --max-call-time").await;
                Late::Unanswered(start.elapsed())
            }
            () = stop.notified() => {
                cancel(&peer, &id, "mcp-fuzz: no answer within the timeout").await;
                Late::Unanswered(start.elapsed())
            }
        };
        let _ = tx.send(late);
    });
    watch
}

fn server_info(client: &RunningService<RoleClient, Handler>) -> ServerInfo {
    client.peer_info().map_or_else(ServerInfo::default, |p| ServerInfo {
        name: p.server_info.as_ref().map(|i| i.name.clone()),
        version: p.server_info.as_ref().map(|i| i.version.clone()),
        protocol_version: Some(p.protocol_version.to_string()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_http_status_in_rmcps_words_is_read_back_and_nothing_else_is() {
        assert_eq!(http_status("HTTP 307 Temporary Redirect: "), Some((307, "")));
        assert_eq!(http_status("HTTP 404 Not Found: no such page"), Some((404, "no such page")));
        assert_eq!(http_status("HTTP 4"), None);
        assert_eq!(http_status("expected value at line 1 column 1"), None);
        use rmcp::transport::streamable_http_client::StreamableHttpError as E;
        let e: E<reqwest::Error> = E::UnexpectedServerResponse("HTTP 502 Bad Gateway: down".into());
        assert!(matches!(
            http_reply(&e),
            Some(Reply::Http { status: 502, detail }) if detail == "down"
        ));
        let e: E<reqwest::Error> = E::ResponseBodyTooLarge { max_size: 100 };
        assert!(matches!(http_reply(&e), Some(Reply::Oversize { bytes: 101, at_least: true })));
        assert!(http_reply(&E::<reqwest::Error>::TransportChannelClosed).is_none());
    }

    #[test]
    fn result_from_raw_keeps_exactly_the_result() {
        let r = result_from_raw(br#"{"jsonrpc":"2.0","id":7,"result":{"content":[],"x":1}}"#);
        assert!(matches!(r, Reply::Result(v) if v == json!({"content": [], "x": 1})));
        let null = result_from_raw(br#"{"jsonrpc":"2.0","id":7,"result":null}"#);
        assert!(matches!(null, Reply::Result(Value::Null)), "{null:?}");
        let missing = result_from_raw(br#"{"jsonrpc":"2.0","id":7}"#);
        assert!(
            matches!(&missing, Reply::Protocol(m) if m.starts_with("response without `result`")),
            "{missing:?}"
        );
        let twice = result_from_raw(br#"{"id":7,"result":1,"result":2}"#);
        assert!(matches!(&twice, Reply::Protocol(m) if m.contains("duplicate")), "{twice:?}");
    }
}
