//! One server under test: how to reach it ([`ServerSpec`]) and a live instance of it
//! ([`Instance`]) that connects lazily, calls, judges each reply and restarts the server after an
//! exit or an unanswered hang. This is the engine's probe API: the campaign's workers, shrinking,
//! `mcp-fuzz call`, `replay` and `clients --call` all call tools through it.

use crate::judge::{Outcome, classify, looks_like_retry, looks_like_upstream};
use crate::sandbox::{SANDBOX_PLACEHOLDER, Sandbox, SandboxError};
use crate::transport::listing::{Listing, list_all};
use crate::transport::{
    ConnectError, ConnectOptions, Connection, Exchange, Late, LateWatch, Reply, Target,
};
use serde_json::{Map, Value};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// How to reach a server and how long to wait for it.
#[derive(Debug, Clone)]
pub struct ServerSpec {
    /// Where it is.
    pub target: Target,
    /// Start-up and response limits.
    pub connect: ConnectOptions,
    /// Whether and how its processes are sandboxed ([`ServerSpec::enter_sandbox`] makes the
    /// sandbox they start in).
    pub sandboxing: crate::sandbox::SandboxOptions,
    /// Per-call timeout.
    pub timeout: Duration,
    /// The warm spares of every instance of this server (shared by the clones of the spec).
    pub spares: Arc<Spares>,
    /// The call number its processes seem to die on, whatever the calls (shared likewise).
    pub call_limit: Arc<CallLimit>,
}

impl ServerSpec {
    /// Makes the sandbox this spec asks for and points its processes and roots into it:
    /// `None` when the sandbox is off, or for a server someone else runs (`--http` alone).
    ///
    /// # Errors
    /// [`SandboxError`] when it cannot be made, or `{sandbox}` is used with the sandbox off.
    pub fn enter_sandbox(&mut self) -> Result<Option<Arc<Sandbox>>, SandboxError> {
        let words: Vec<&String> = match &self.target {
            Target::Stdio { command, env, .. } => {
                command.iter().chain(env.iter().map(|(_, v)| v)).collect()
            }
            Target::Http { launch: Some(l), .. } => {
                l.command.iter().chain(l.env.iter().map(|(_, v)| v)).collect()
            }
            Target::Http { launch: None, .. } => return Ok(None),
        };
        let marked = |w: &str| w.contains(SANDBOX_PLACEHOLDER);
        let placeholder = words.iter().any(|w| marked(w))
            || self.connect.roots.iter().any(|r| marked(&r.to_string_lossy()));
        if self.sandboxing.off {
            return if placeholder { Err(SandboxError::Placeholder) } else { Ok(None) };
        }
        let sandbox = Arc::new(Sandbox::create(&self.sandboxing)?);
        for root in &mut self.connect.roots {
            *root = sandbox.root_dir(root);
        }
        self.connect.sandbox = Some(Arc::clone(&sandbox));
        Ok(Some(sandbox))
    }
}

/// A call limit seen while the run goes on: once two deaths of the server's processes in a
/// row fell on the same call number (at least [`MIN_CALL_LIMIT`]), every process is replaced by
/// a fresh one (a warm spare) before it makes that call, so the tools after it do not lose
/// cases to deaths their inputs did not cause. Whether the limit is real is proved after the
/// campaign ([`crate::phase::limit`]), from the deaths seen before it was suspected.
///
/// See: issue 29 item 2 (a server dying on its 40th call cost 10 tools a `gave-up`).
#[derive(Debug, Default)]
pub struct CallLimit {
    /// The call number of the last death (0: none yet).
    last_death: AtomicU64,
    /// The suspected limit (0: none).
    limit: AtomicU64,
    /// Processes replaced before the limit.
    recycled: AtomicU64,
}

/// The lowest call number a limit is suspected at.
///
/// Why: deaths caused by the input fall on small call numbers after each restart (a tool that
/// dies on every negative number meets them a few calls apart); two in a row on the same
/// number of eight or more are what a counter does, and a wrong suspicion costs at most one
/// fresh process per seven calls.
const MIN_CALL_LIMIT: u64 = 8;

impl CallLimit {
    /// Notes a death on call `n` of its process; suspects a limit when the last death fell on
    /// the same number.
    fn died_on(&self, n: u64) {
        let last = self.last_death.swap(n, Ordering::Relaxed);
        if last == n && n >= MIN_CALL_LIMIT {
            self.limit.store(n, Ordering::Relaxed);
        }
    }

    /// The suspected limit, if any.
    #[must_use]
    pub fn suspected(&self) -> Option<u64> {
        Some(self.limit.load(Ordering::Relaxed)).filter(|&n| n > 0)
    }

    /// Processes replaced before the suspected limit.
    #[must_use]
    pub fn recycled(&self) -> u64 {
        self.recycled.load(Ordering::Relaxed)
    }
}

/// Server processes started ahead of need, past their handshake, so that a restart, a
/// fresh-process re-run or a sequence walk takes a ready process instead of waiting for a
/// start. Whether they pay is measured once: how long the server took to start the first time.
/// An instance keeps [`SPARES_PER_INSTANCE`] spares starting or ready, from its first replaced
/// process on (a server that never dies and is never renewed never gets one).
///
/// See: issue 29 (a Python SDK server takes about 1.2 s from spawn to the end of its
/// handshake; a run that restarts it 35 times waited 45 s).
#[derive(Debug, Default)]
pub struct Spares {
    /// How long the first start took.
    start: OnceLock<Duration>,
    /// Spares started.
    started: AtomicU64,
    /// Spares that died or failed to start before they were used.
    lost: AtomicU64,
}

/// A start time from which spares pay.
///
/// Why: a fixture server starts in 2-5 ms, a Node.js SDK server in about 0.3 s and a Python
/// SDK server in about 1.2 s; below a quarter of a second a spare saves less than the process
/// it keeps alive costs.
const SPARES_PAY_FROM: Duration = Duration::from_millis(250);

impl Spares {
    /// Spares started so far.
    #[must_use]
    pub fn started(&self) -> u64 {
        self.started.load(Ordering::Relaxed)
    }

    /// Spares that died or failed to start before they were used.
    #[must_use]
    pub fn lost(&self) -> u64 {
        self.lost.load(Ordering::Relaxed)
    }

    /// How long the server's first start took, once measured.
    #[must_use]
    pub fn start_time(&self) -> Option<Duration> {
        self.start.get().copied()
    }

    /// Counts a spare started elsewhere (the protocol phase's raw processes).
    pub(crate) fn count_started(&self) {
        self.started.fetch_add(1, Ordering::Relaxed);
    }

    /// Whether a spare pays for this server: it is a local process that starts slowly, and can
    /// run beside another (a launched HTTP server on a `{port}` of its own).
    pub(crate) fn pay(&self, target: &Target) -> bool {
        let local = match target {
            Target::Stdio { .. } => true,
            Target::Http { url, launch, .. } => {
                launch.is_some() && crate::transport::side_by_side(url, launch.as_ref())
            }
        };
        local && self.start_time().is_some_and(|t| t >= SPARES_PAY_FROM)
    }
}

/// Spares an instance keeps starting or ready.
///
/// Why: deaths come in bursts (a tool that exits on every negative number meets a run of
/// them in its boundary cases, shrinking replays one again and again); one spare covers one
/// restart per start time, three cover a burst while the next ones start, and three Python
/// processes (about 50 MB each) stay well within the memory the README states.
const SPARES_PER_INSTANCE: usize = 3;

/// A spare being started, or started.
type Spare = tokio::task::JoinHandle<Result<Connection, ConnectError>>;

/// One live server instance (or none yet): connected on first use, reconnected after it died or
/// stopped answering.
pub struct Instance<'s> {
    spec: &'s ServerSpec,
    /// The per-call timeout: the spec's, or a tool's own ([`Instance::set_timeout`]).
    timeout: Duration,
    /// Shared with the calls still waiting in the background ([`Waiting`]).
    conn: Option<Arc<Connection>>,
    connected_once: bool,
    /// Restarts of this instance (reconnections after the first connection).
    pub restarts: u64,
    /// `tools/call` requests made through this instance.
    pub calls: u64,
    /// `tools/call` requests on the current connection.
    calls_on_conn: u64,
    /// The next connection replaces one closed on purpose ([`Instance::renew`]): no restart.
    renewing: bool,
    /// Wire breaches outside any call on connections already closed.
    stray: Strays,
    /// The `tools/call` requests sent to the current process, in order (`None` once past
    /// [`MAX_HISTORY`]): a failure that needs earlier calls is replayed from them.
    history: Option<History>,
    /// A process of the server was replaced (a restart or a renewal): spares may pay.
    replaced: bool,
    /// The next processes, started ahead of need ([`Spares`]), oldest first.
    spares: std::collections::VecDeque<Spare>,
    /// Its deaths count towards a suspected call limit, and its processes are replaced before
    /// it ([`CallLimit`]): the tools phase's instances, whose calls are independent cases.
    recycles: bool,
}

pub use mcp_fuzz_model::report::History;

/// Calls remembered per server process.
///
/// Why: a failure that needs earlier calls is replayed from the process's start; past a
/// thousand calls the replay alone would cost more than the rest of the run.
const MAX_HISTORY: usize = 1_000;

/// Distinct server-wide wire breaches kept per instance.
const MAX_STRAY_KEPT: usize = 10;

/// Breaches of the wire outside any call, one entry per breach (a banner, a reply to a
/// notification, an answer to an unknown id...): the first seen, described with its bytes, and
/// how many of that breach.
///
/// See: issue 30 item 4 (breaches of different kinds were one finding whose first example was
/// the banner).
#[derive(Debug, Clone, Default)]
pub struct Strays(Vec<(String, u64)>);

impl Strays {
    /// Counts `n` breaches like `detail`: with the entry of the same breach, or as a new one.
    pub fn add(&mut self, detail: String, n: u64) {
        let breach = |d: &str| Outcome::ProtocolViolation { detail: d.to_owned() }.cause();
        let key = breach(&detail);
        if let Some((_, count)) = self.0.iter_mut().find(|(d, _)| breach(d) == key) {
            *count += n;
        } else if self.0.len() < MAX_STRAY_KEPT {
            self.0.push((detail, n));
        }
    }

    /// Adds every entry of `more`.
    pub fn extend(&mut self, more: impl IntoIterator<Item = (String, u64)>) {
        for (detail, n) in more {
            self.add(detail, n);
        }
    }

    /// Each breach's first example and count, in the order first seen.
    pub fn iter(&self) -> impl Iterator<Item = &(String, u64)> {
        self.0.iter()
    }
}

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
    /// Its number among the `tools/call` requests sent to its server process (1 for the
    /// first): a process that dies on the same number whatever the calls has a call limit.
    pub call_no: u64,
    /// For an answer that may be a failure: the calls its process had been sent, this one
    /// last (`None` for a process past the history's limit, and for calls that ended in the
    /// background).
    pub history: Option<History>,
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
            timeout: spec.timeout,
            connected_once: conn.is_some(),
            conn: conn.map(Arc::new),
            restarts: 0,
            calls: 0,
            calls_on_conn: 0,
            renewing: false,
            stray: Strays::default(),
            history: Some(History::default()),
            replaced: false,
            spares: std::collections::VecDeque::new(),
            recycles: false,
        }
    }

    /// A new instance of the same server with the same timeout, not started yet: for checks
    /// whose calls must not change the state this instance's process has built.
    #[must_use]
    pub fn sibling(&self) -> Self {
        let mut other = Self::new(self.spec, None);
        other.timeout = self.timeout;
        other
    }

    /// This instance's deaths count towards a suspected call limit, and its processes are
    /// replaced before it. Not for sequences, whose state a replaced process would lose (and
    /// whose deaths come from that state), nor for the proof of the limit and the history
    /// replays, which must run into it.
    #[must_use]
    pub fn recycling(mut self) -> Self {
        self.recycles = true;
        self
    }

    /// Connects to the server now.
    ///
    /// # Errors
    /// [`ConnectError`] when the server cannot be started or initialised.
    pub async fn start(spec: &'s ServerSpec) -> Result<Self, ConnectError> {
        let conn = connect_timed(spec).await?;
        Ok(Self::new(spec, Some(conn)))
    }

    /// The per-call timeout.
    #[must_use]
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Calls from now on wait `timeout` (a tool's own, from a per-tool override).
    pub fn set_timeout(&mut self, timeout: Duration) {
        self.timeout = timeout;
    }

    /// The live connection, if any.
    #[must_use]
    pub fn connection(&self) -> Option<&Connection> {
        self.conn.as_deref()
    }

    async fn ensure(&mut self) -> Result<&Arc<Connection>, ConnectError> {
        if self.conn.is_none() {
            let c = match self.take_spare().await {
                Some(c) => c,
                None => connect_timed(self.spec).await?,
            };
            if self.connected_once && !self.renewing {
                self.restarts += 1;
            }
            self.replaced |= self.connected_once;
            self.renewing = false;
            self.connected_once = true;
            self.calls_on_conn = 0;
            self.history = Some(History::default());
            self.conn = Some(Arc::new(c));
            self.warm_spare();
        }
        Ok(self.conn.as_ref().expect("just connected"))
    }

    /// The oldest spare that is alive past its handshake, if any was started; the dead ones
    /// before it are closed and counted.
    async fn take_spare(&mut self) -> Option<Connection> {
        while let Some(spare) = self.spares.pop_front() {
            match spare.await {
                Ok(Ok(c)) if c.exited().is_none() => return Some(c),
                Ok(Ok(c)) => c.close().await,
                Ok(Err(_)) | Err(_) => {}
            }
            self.spec.spares.lost.fetch_add(1, Ordering::Relaxed);
        }
        None
    }

    /// Starts processes ahead of need, up to [`SPARES_PER_INSTANCE`], once a process of this
    /// instance was replaced, if spares pay for the server.
    fn warm_spare(&mut self) {
        let spares = &self.spec.spares;
        if !self.replaced || !spares.pay(&self.spec.target) {
            return;
        }
        while self.spares.len() < SPARES_PER_INSTANCE {
            spares.started.fetch_add(1, Ordering::Relaxed);
            let (target, connect) = (self.spec.target.clone(), self.spec.connect.clone());
            self.spares.push_back(tokio::spawn(async move {
                Connection::connect(&target, &connect).await
            }));
        }
    }

    /// Ends the connection (if any) and the spare, and kills their process groups.
    pub async fn close(&mut self) {
        for spare in std::mem::take(&mut self.spares) {
            spare.abort();
            if let Ok(Ok(c)) = spare.await {
                c.close().await;
            }
        }
        self.drop_connection().await;
    }

    /// Ends the connection (if any) and kills its server's process group; the spare stays.
    async fn drop_connection(&mut self) {
        if let Some(c) = self.conn.take() {
            self.stray.extend(c.stray_violations());
            // Calls waiting in the background hold it too: they end as its process dies.
            match Arc::try_unwrap(c) {
                Ok(c) => c.close().await,
                Err(shared) => shared.kill(),
            }
        }
    }

    /// Breaches of the stdio framing or of JSON-RPC outside any call, over every connection
    /// this instance made, by breach.
    #[must_use]
    pub fn stray_violations(&self) -> Strays {
        let mut all = self.stray.clone();
        if let Some(c) = &self.conn {
            all.extend(c.stray_violations());
        }
        all
    }

    /// Ends the connection on purpose, so that the next call runs on a fresh process (not
    /// counted as a restart).
    pub async fn renew(&mut self) {
        self.drop_connection().await;
        self.renewing = true;
    }

    /// Makes sure a live process is ready (started, or replaced before a suspected call
    /// limit) before the next call, so that what its start does is over before the call.
    ///
    /// # Errors
    /// [`ConnectError`] when the server cannot be (re)started.
    pub async fn ready(&mut self) -> Result<(), ConnectError> {
        self.recycle().await;
        self.ensure().await.map(|_| ())
    }

    /// Replaces the process before it makes the call a suspected limit would kill it on.
    async fn recycle(&mut self) {
        let limit = self.spec.call_limit.suspected();
        if self.recycles
            && self.conn.is_some()
            && limit.is_some_and(|n| self.calls_on_conn + 1 >= n)
        {
            self.spec.call_limit.recycled.fetch_add(1, Ordering::Relaxed);
            self.renew().await;
        }
    }

    /// Adds a call to the current process's history (copied only when a failure kept the
    /// history as it was).
    fn remember(&mut self, tool: &str, arguments: &Map<String, Value>) {
        if let Some(h) = &mut self.history {
            if h.len() >= MAX_HISTORY {
                self.history = None;
            } else {
                Arc::make_mut(h).push((tool.to_owned(), arguments.clone()));
            }
        }
    }

    /// Reads every page of `tools/list` (at most `max_pages`).
    ///
    /// # Errors
    /// [`ListError`] when the server cannot be started or the first page cannot be had.
    pub async fn list_tools(&mut self, max_pages: usize) -> Result<Listing, ListError> {
        let timeout = self.timeout;
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
        let timeout = self.timeout;
        self.recycle().await;
        let conn = Arc::clone(self.ensure().await?);
        self.remember(tool, arguments);
        let (reply, exchange) = send(&conn, tool, arguments, keep, timeout).await;
        Ok(self.judged(&conn, reply, exchange, output, keep).await)
    }

    /// [`Instance::call`], but a call still unanswered after `patience`, while the server
    /// answers a `ping`, is left to finish in the background: the server serves other calls
    /// meanwhile, so the next case need not wait for a hang. [`Waiting::finish`] judges it.
    ///
    /// A server that does not answer the `ping` either (it serves one call at a time, or is
    /// stuck), or whose stderr names an unreachable upstream, is waited for as
    /// [`Instance::call`] does.
    ///
    /// # Errors
    /// [`ConnectError`] when the server cannot be (re)started.
    pub async fn call_patiently(
        &mut self,
        tool: &str,
        arguments: &Map<String, Value>,
        output: Option<&jsonschema::Validator>,
        keep: Keep,
        patience: Duration,
    ) -> Result<Attempt, ConnectError> {
        let timeout = self.timeout;
        self.recycle().await;
        let conn = Arc::clone(self.ensure().await?);
        self.remember(tool, arguments);
        // Polled here first; moved into a task of its own only if it outlasts its patience
        // (most calls answer in microseconds: no task for them).
        let mut call = {
            let (conn, tool, arguments) = (Arc::clone(&conn), tool.to_owned(), arguments.clone());
            Box::pin(async move { send(&conn, &tool, &arguments, keep, timeout).await })
        };
        // A call that waits on an unreachable upstream is not left in the background: its
        // outcome decides whether the tool is called at all any more.
        let serving = async {
            tokio::time::sleep(patience).await;
            let upstream =
                conn.stderr_tail().iter().any(|l| looks_like_upstream(l) || looks_like_retry(l));
            if upstream || !conn.ping(timeout).await {
                std::future::pending::<()>().await;
            }
        };
        let (reply, exchange) = tokio::select! {
            biased;
            r = &mut call => r,
            () = serving => {
                self.calls += 1;
                self.calls_on_conn += 1;
                let task = tokio::spawn(call);
                let call_no = self.calls_on_conn;
                return Ok(Attempt::Waiting(Waiting { task, conn, call_no }));
            }
        };
        Ok(Attempt::Done(self.judged(&conn, reply, exchange, output, keep).await))
    }

    /// Sends one request of any method (`prompts/get`, `resources/read`...) and returns its raw
    /// reply, with the stderr tail after it. A request unanswered within the timeout is watched
    /// until `--max-call-time`, as a tool call is: answered by then, it is [`Reply::Slow`] (slow,
    /// not hung); else it is given up on (cancelled) and returned as [`Reply::Timeout`]. The
    /// server is dropped, for a fresh one on the next call, when it died or no longer answers
    /// `ping`.
    ///
    /// # Errors
    /// [`ConnectError`] when the server cannot be (re)started.
    pub async fn request(
        &mut self,
        method: &str,
        params: Value,
    ) -> Result<(Reply, Vec<String>), ConnectError> {
        let timeout = self.timeout;
        let conn = Arc::clone(self.ensure().await?);
        let reply = match conn.request(method, Some(params), timeout).await {
            Reply::Timeout(w) => match w.settle(w.limit()).await {
                Late::Answered(after) => Reply::Slow(format!(
                    "answered after {:.1} s, past the {} s timeout",
                    after.as_secs_f64(),
                    timeout.as_secs_f64()
                )),
                _ => {
                    w.give_up();
                    Reply::Timeout(w)
                }
            },
            other => other,
        };
        let stderr = conn.stderr_tail();
        let dead = match &reply {
            Reply::Exited(_) => true,
            Reply::Timeout(_) => !conn.ping(Duration::from_secs(2).min(timeout)).await,
            _ => false,
        };
        if dead {
            self.drop_connection().await;
        }
        Ok((reply, stderr))
    }

    /// Judges a reply that came on `conn`, and drops the server if it died or stopped
    /// answering `ping`.
    async fn judged(
        &mut self,
        conn: &Connection,
        reply: Reply,
        exchange: Option<Exchange>,
        output: Option<&jsonschema::Validator>,
        keep: Keep,
    ) -> Called {
        let timeout = self.timeout;
        let (result, late) = kept(&reply, keep);
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
        let call_no = self.calls_on_conn;
        // What the process had been sent, when this call may be a failure that needs it.
        let history = (!matches!(
            outcome,
            Outcome::Ok | Outcome::ToolError { .. } | Outcome::InvalidParams { .. }
        ))
        .then(|| self.history.clone())
        .flatten();
        if self.recycles && matches!(outcome, Outcome::Exited { .. }) {
            self.spec.call_limit.died_on(call_no);
        }
        if restarted {
            self.drop_connection().await;
        }
        Called { outcome, restarted, result, exchange, stderr, late, call_no, history }
    }
}

/// Starts the server and completes the handshake, measuring the first start of `spec`'s server
/// (whether spares pay for it).
async fn connect_timed(spec: &ServerSpec) -> Result<Connection, ConnectError> {
    let started = Instant::now();
    let c = Connection::connect(&spec.target, &spec.connect).await?;
    let _ = spec.spares.start.set(started.elapsed());
    Ok(c)
}

/// Sends one `tools/call` and waits for its reply, recording the exchange when asked.
async fn send(
    conn: &Connection,
    tool: &str,
    arguments: &Map<String, Value>,
    keep: Keep,
    timeout: Duration,
) -> Ended {
    if keep.exchange {
        let (r, e) = conn.call_tool_recorded(tool, arguments, timeout).await;
        (r, Some(e))
    } else {
        (conn.call_tool(tool, arguments, timeout).await, None)
    }
}

/// What a background call's task gives back: the reply, and the exchange when asked for.
type Ended = (Reply, Option<Exchange>);

/// A call's reply from its task (a task that panicked is the engine's fault, said so).
fn joined(r: Result<Ended, tokio::task::JoinError>) -> Ended {
    r.unwrap_or_else(|e| (Reply::Protocol(format!("mcp-fuzz's call task failed: {e}")), None))
}

/// What `keep` asks to keep of a reply: its result, and the watch on a call that got no answer
/// in time (a call not watched is given up on at once).
fn kept(reply: &Reply, keep: Keep) -> (Option<Value>, Option<LateWatch>) {
    let result = match reply {
        Reply::Result(v) if keep.result => Some(v.clone()),
        _ => None,
    };
    let late = match reply {
        Reply::Timeout(w) if keep.late => Some(w.clone()),
        Reply::Timeout(w) => {
            w.give_up();
            None
        }
        _ => None,
    };
    (result, late)
}

/// A call made by [`Instance::call_patiently`].
#[expect(clippy::large_enum_variant, reason = "one per call or tool, moved once and taken apart")]
pub enum Attempt {
    /// It ended within its patience (or the server served nothing else meanwhile).
    Done(Called),
    /// It is still running, in the background.
    Waiting(Waiting),
}

/// A call running in the background, on the connection it was sent on.
pub struct Waiting {
    task: tokio::task::JoinHandle<Ended>,
    conn: Arc<Connection>,
    /// Its number among the calls on its process.
    call_no: u64,
}

impl Waiting {
    /// Whether the call has ended (answered, given up, or cut off).
    #[must_use]
    pub fn is_finished(&self) -> bool {
        self.task.is_finished()
    }

    /// Judges a call left in the background by [`Instance::call_patiently`], once it ends;
    /// `None` when the server died meanwhile (maybe by another call: run it again to know).
    pub async fn finish(
        self,
        output: Option<&jsonschema::Validator>,
        keep: Keep,
    ) -> Option<Called> {
        let (reply, exchange) = joined(self.task.await);
        if matches!(reply, Reply::Exited(_)) {
            return None;
        }
        let (result, late) = kept(&reply, keep);
        let conn = self.conn;
        let outcome = classify(reply, output, || conn.stderr_tail());
        let stderr = if keep.exchange { conn.stderr_tail() } else { Vec::new() };
        Some(Called {
            outcome,
            restarted: false,
            result,
            exchange,
            stderr,
            late,
            call_no: self.call_no,
            history: None,
        })
    }

    /// Nothing more is wanted of this call: it ends on its own deadline and is then given up
    /// on (the server is told to stop it), without a watch for a late answer.
    pub fn abandon(self) {
        tokio::spawn(async move {
            if let Ok((Reply::Timeout(w), _)) = self.task.await {
                w.give_up();
            }
        });
    }
}

/// How long a case's call runs before, if the server still answers a `ping`, it is left to
/// finish in the background while the next cases go on: a quarter of `--timeout`, at most 1 s.
///
/// Why: an answer normally takes milliseconds; a call still running after a second is most
/// likely a hang, and each one would otherwise hold up the campaign for the whole timeout.
#[must_use]
pub fn patience(timeout: Duration) -> Duration {
    (timeout / 4).clamp(Duration::from_millis(50), Duration::from_secs(1))
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
