//! The surfaces beside tools: prompts (`prompts/get`), resources (`resources/read` of listed
//! resources and of unknown URIs), resource templates (RFC 6570, expanded with generated values)
//! and completions (`completion/complete`), each called with valid, invalid and odd inputs and
//! judged by the rules tools are: a JSON-RPC error is how a server refuses bad input; a crash, a
//! hang, a result that breaks its MCP shape, an oversize answer are failures; -32603 Internal
//! error is a warning on generated input and a failure on what the server itself listed.
//!
//! A surface the server does not declare in its capabilities is not called (the report says so).
//! Only reads are sent (`prompts/get`, `resources/read`, `completion/complete`), so the
//! `readOnlyHint` gate has nothing to hold back here. Findings are one per item and outcome
//! kind, with the first request that showed it, shrunk (arguments dropped, strings halved) while
//! it fails with the same cause, within `--shrink-time`. A request unanswered within `--timeout`
//! is watched until `--max-call-time`, as a tool call is: answered by then, it is slow (a
//! warning); else it is a hang.
//!
//! See: issue 15; <https://modelcontextprotocol.io/specification/2025-11-25/server/prompts>,
//! <https://modelcontextprotocol.io/specification/2025-11-25/server/resources>,
//! <https://modelcontextprotocol.io/specification/2025-11-25/server/utilities/completion>.

mod complete;
mod listed;
mod prompts;
mod resources;
pub(crate) mod shape;

use crate::config::{MAX_PAGES, RunConfig};
use crate::events::PhaseFinished;
use crate::finding::{FindingKind, Severity};
use crate::judge::words::{self, compact, describe_request};
use crate::judge::{Caller, Outcome, looks_like_validation, outcome};
use crate::phase::{PhaseOutcome, Section, Sofar};
use crate::report::{Finding, SurfaceItem, SurfaceKind, SurfaceRef, SurfacesSummary};
use crate::server::Instance;
use crate::transport::Reply;
use mcp_fuzz_model::wording::reads_as_exception;
use serde_json::{Map, Value, json};
use shape::Shape;
use std::collections::BTreeMap;
use std::time::Instant;

/// What the phase found and did.
struct Surfaces {
    /// The report's `surfaces` section (`None` when the server offers none of them).
    pub summary: Option<SurfacesSummary>,
    /// Its findings.
    pub findings: Vec<Finding>,
    /// Server restarts it caused.
    pub restarts: u64,
}

/// How much a request's input is vouched for, which decides what a refusal or -32603 means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Intent {
    /// The server listed it (a listed resource's URI): it must be served.
    Listed,
    /// Generated to be valid (required arguments present, plausible strings).
    Valid,
    /// Invalid by the listing (a required argument missing): a result is leniency.
    Invalid,
    /// Odd (wrong types, huge or strange strings, unknown URIs): anything but a crash, a hang
    /// or a broken result.
    Odd,
}

/// One request to make: where it goes in the report, what to send, how to judge it.
pub(crate) struct SurfaceCase {
    pub surface: SurfaceRef,
    /// Index of the item in its list of the summary.
    pub item: usize,
    pub method: &'static str,
    pub params: Value,
    pub shape: Shape,
    pub intent: Intent,
    /// The case in words ("missing topic").
    pub label: String,
    /// The shrinkable part of the request (prompt arguments, template variables), with how
    /// to build the params from it.
    pub shrink: Option<(Map<String, Value>, Rebuild)>,
}

/// Builds a probe's params from a smaller shrinkable part.
pub(crate) type Rebuild = fn(&SurfaceCase, &Map<String, Value>) -> Value;

/// Hangs after which the phase stops sending requests (each costs a timeout).
///
/// Why: a server that hangs on every read would otherwise cost a timeout per request; three
/// hangs show the pattern and are reported.
const MAX_HANGS: usize = 3;

/// Candidate requests tried to shrink one finding.
const MAX_SHRINK_STEPS: usize = 40;

/// The phase's state: the server, the summary being filled, the findings by item and kind.
pub(crate) struct SurfacesRun<'c, 's> {
    cfg: &'c RunConfig,
    slot: Instance<'s>,
    summary: SurfacesSummary,
    findings: Vec<Finding>,
    /// (item, kind) -> index in `findings`.
    seen: BTreeMap<(String, String), usize>,
    hangs: usize,
    deadline: Option<Instant>,
    stopped: Option<String>,
    /// The result of the last request that got one (completions read their values from it).
    last_result: Option<Value>,
    /// Told of each request sent (the run's progress).
    progress: &'c dyn Fn(u64),
}

/// Runs the phase on a server process of its own.
pub(crate) async fn run(sofar: &Sofar<'_>) -> PhaseOutcome {
    let called = call_all(sofar.cfg, sofar.capabilities, sofar.deadline, sofar.progress).await;
    PhaseOutcome {
        findings: called.findings,
        calls: 0,
        restarts: called.restarts,
        finished: called.summary.as_ref().map(|s| PhaseFinished::Surfaces { requests: s.requests }),
        section: Section::Surfaces(called.summary),
    }
}

/// Calls the prompts, resources, templates and completions the server declares.
async fn call_all(
    cfg: &RunConfig,
    capabilities: &Value,
    deadline: Option<Instant>,
    progress: &dyn Fn(u64),
) -> Surfaces {
    let beyond = cfg.campaign.beyond;
    let offers = |cap: &str| capabilities.get(cap).is_some_and(|c| !c.is_null());
    let mut phase = SurfacesRun {
        cfg,
        slot: Instance::new(&cfg.server, None),
        summary: SurfacesSummary::default(),
        findings: Vec::new(),
        seen: BTreeMap::new(),
        hangs: 0,
        deadline,
        stopped: None,
        last_result: None,
        progress,
    };
    let not_declared = |what: &str| format!("the server does not declare the `{what}` capability");
    let prompts = if !beyond.prompts {
        phase.summary.skipped.insert("prompts".into(), "--no-prompts".into());
        None
    } else if offers("prompts") {
        Some(prompts::list(&mut phase).await)
    } else {
        phase.summary.skipped.insert("prompts".into(), not_declared("prompts"));
        None
    };
    let resources = if !beyond.resources {
        phase.summary.skipped.insert("resources".into(), "--no-resources".into());
        None
    } else if offers("resources") {
        Some(resources::list(&mut phase).await)
    } else {
        phase.summary.skipped.insert("resources".into(), not_declared("resources"));
        None
    };
    let nothing = prompts.as_ref().is_none_or(Vec::is_empty)
        && resources.as_ref().is_none_or(listed::Listed::is_empty);
    // Completions first: their values are the best plausible arguments.
    let completed = if nothing {
        listed::Completed::default()
    } else if offers("completions") {
        complete::run(&mut phase, prompts.as_deref().unwrap_or_default(), resources.as_ref()).await
    } else {
        phase.summary.skipped.insert("completions".into(), not_declared("completions"));
        listed::Completed::default()
    };
    if let Some(p) = &prompts {
        prompts::run(&mut phase, p, &completed).await;
    }
    if let Some(r) = &resources {
        resources::run(&mut phase, r, &completed).await;
    }
    phase.slot.close().await;
    let restarts = phase.slot.restarts;
    if let Some(why) = phase.stopped.take() {
        phase.summary.skipped.insert("rest".into(), why);
    }
    let offered_none = phase.summary.prompts.is_empty()
        && phase.summary.resources.is_empty()
        && phase.summary.templates.is_empty()
        && phase.summary.requests == 0;
    let summary = (!offered_none || !phase.findings.is_empty()).then_some(phase.summary);
    Surfaces { summary, findings: phase.findings, restarts }
}

impl SurfacesRun<'_, '_> {
    /// Whether requests may still be sent.
    fn open(&mut self) -> bool {
        if self.stopped.is_some() {
            return false;
        }
        if self.deadline.is_some_and(|d| Instant::now() >= d) {
            self.stopped = Some("the run's --time-budget ran out".into());
        } else if self.hangs >= MAX_HANGS {
            self.stopped = Some(format!(
                "{MAX_HANGS} requests got no answer within the timeout; the rest were not sent"
            ));
        }
        self.stopped.is_none()
    }

    /// The list `kind`'s items live in.
    fn items(&mut self, kind: SurfaceKind) -> &mut Vec<SurfaceItem> {
        match kind {
            SurfaceKind::Prompt => &mut self.summary.prompts,
            SurfaceKind::Resource => &mut self.summary.resources,
            SurfaceKind::ResourceTemplate => &mut self.summary.templates,
            SurfaceKind::Completion => &mut self.summary.completions,
        }
    }

    /// Adds an item to the summary; its index.
    fn item(&mut self, kind: SurfaceKind, name: &str) -> usize {
        let items = self.items(kind);
        items.push(SurfaceItem { name: name.to_owned(), ..SurfaceItem::default() });
        items.len() - 1
    }

    /// Sends a listing request (`prompts/list`...) and returns its result, or a finding.
    async fn list_page(&mut self, method: &str, params: Value) -> Result<Value, String> {
        let (reply, stderr) = self.request(method, params.clone()).await?;
        self.summary.requests += 1;
        (self.progress)(1);
        match reply {
            Reply::Result(v) => Ok(v),
            other => {
                let outcome = outcome(other, || stderr, Caller::Surface);
                let what = describe_request(&outcome);
                if matches!(outcome, Outcome::Exited { .. } | Outcome::Timeout) {
                    let mut f = Finding::general(
                        None,
                        if matches!(outcome, Outcome::Timeout) {
                            FindingKind::Hang
                        } else {
                            FindingKind::of(&outcome)
                        },
                        Severity::Failure,
                        format!("`{method}` failed: {what}"),
                    );
                    f.outcome = Some(outcome);
                    f.request = Some(json!({"method": method, "params": params}));
                    self.findings.push(f);
                }
                Err(format!("`{method}` failed: {what}"))
            }
        }
    }

    async fn request(
        &mut self,
        method: &str,
        params: Value,
    ) -> Result<(Reply, Vec<String>), String> {
        let r = self.slot.request(method, params).await.map_err(|e| {
            format!("the server could not be (re)started for the phase beyond tools: {e}")
        });
        if let Err(e) = &r {
            self.stopped = Some(e.clone());
        }
        r
    }

    /// Sends one probe, records its outcome on its item, and makes or counts its finding.
    async fn probe(&mut self, probe: SurfaceCase) -> Option<Outcome> {
        if !self.open() {
            return None;
        }
        let judged = self.send(&probe, &probe.params.clone()).await?;
        let outcome = &judged.outcome;
        if matches!(outcome, Outcome::Timeout) {
            self.hangs += 1;
        }
        let item = &mut self.items(probe.surface.kind)[probe.item];
        item.requests += 1;
        *item.outcomes.entry(outcome.kind().to_string()).or_default() += 1;
        match outcome {
            Outcome::Ok => item.succeeded += 1,
            Outcome::InvalidParams { .. }
            | Outcome::InternalError { .. }
            | Outcome::RpcError { .. } => item.errors += 1,
            _ => {}
        }
        if let Some((kind, severity, what)) = verdict(&judged, probe.intent, &self.timeout_text()) {
            let key = (probe.surface.to_string(), kind.as_str().to_owned());
            if let Some(&at) = self.seen.get(&key) {
                self.findings[at].occurrences += 1;
            } else {
                let finding = self.finding(&probe, kind, severity, what, outcome.clone()).await;
                self.seen.insert(key, self.findings.len());
                self.findings.push(finding);
            }
        }
        Some(judged.outcome)
    }

    async fn send(&mut self, probe: &SurfaceCase, params: &Value) -> Option<Judged> {
        let (reply, stderr) = self.request(probe.method, params.clone()).await.ok()?;
        self.summary.requests += 1;
        (self.progress)(1);
        self.last_result = match &reply {
            Reply::Result(v) => Some(v.clone()),
            _ => None,
        };
        Some(judge(reply, stderr, probe.shape))
    }

    /// Every item of every page of a listing (`prompts/list` and `prompts`), with the page cap
    /// and the repeated-cursor guard of `tools/list`; a listing that fails or loops is a
    /// finding, and what came before it is kept.
    async fn list_all(&mut self, method: &str, key: &str) -> Vec<Value> {
        let mut items = Vec::new();
        let mut cursor: Option<String> = None;
        let mut cursors: Vec<String> = Vec::new();
        for _ in 0..MAX_PAGES {
            if !self.open() {
                return items;
            }
            let params = cursor.as_ref().map_or_else(|| json!({}), |c| json!({"cursor": c}));
            let Ok(page) = self.list_page(method, params).await else { return items };
            match page.get(key).and_then(Value::as_array) {
                Some(list) => items.extend(list.iter().cloned()),
                None => {
                    self.warn(format!("a `{method}` result has no `{key}` array"));
                    return items;
                }
            }
            cursor = page.get("nextCursor").and_then(Value::as_str).map(str::to_owned);
            match &cursor {
                None => return items,
                Some(c) if cursors.contains(c) => {
                    self.warn(format!("`{method}` repeats the cursor {c:?}; listing stopped"));
                    return items;
                }
                Some(c) => cursors.push(c.clone()),
            }
        }
        self.warn(format!("`{method}` still had pages after {MAX_PAGES}; listing stopped"));
        items
    }

    /// A server-wide protocol-violation warning about a listing.
    fn warn(&mut self, message: String) {
        self.findings.push(Finding::general(
            None,
            FindingKind::ProtocolViolation,
            Severity::Warning,
            message,
        ));
    }

    /// An item of a listing, or a warning saying why it cannot be used.
    fn usable<T>(&mut self, index: usize, method: &str, parsed: Result<T, String>) -> Option<T> {
        parsed.map_err(|why| self.warn(format!("`{method}` item {index} was skipped: {why}"))).ok()
    }

    /// How long a request is watched before it is a hang, in words.
    fn timeout_text(&self) -> String {
        format!("{} s", self.cfg.server.connect.max_call_time.as_secs_f64())
    }

    /// The finding for a probe's first failure of a kind, shrunk when that is cheap.
    async fn finding(
        &mut self,
        probe: &SurfaceCase,
        kind: FindingKind,
        severity: Severity,
        what: String,
        outcome: Outcome,
    ) -> Finding {
        let shrinkable = severity == Severity::Failure || kind == FindingKind::Slow;
        let mut f = Finding::general(
            None,
            kind,
            severity,
            format!("{} ({}): {what}", probe.surface, probe.label),
        );
        f.surface = Some(probe.surface.clone());
        f.request = Some(json!({"method": probe.method, "params": probe.params}));
        f.arguments = probe.shrink.as_ref().map(|(m, _)| m.clone());
        if shrinkable
            && self.cfg.campaign.shrink.enabled
            && let Some((args, build)) = &probe.shrink
        {
            let smaller = self.shrink(probe, args.clone(), *build, &outcome).await;
            if &smaller != args {
                f.request = Some(json!({"method": probe.method, "params": build(probe, &smaller)}));
                f.minimal_arguments = Some(smaller);
            }
        }
        f.outcome = Some(outcome);
        f
    }

    /// Drops arguments and halves strings while the request still fails as `first` did (the
    /// same cause; for a slow or hung request, slow or hung again), within `--shrink-time` and
    /// [`MAX_SHRINK_STEPS`] requests.
    async fn shrink(
        &mut self,
        probe: &SurfaceCase,
        mut args: Map<String, Value>,
        build: Rebuild,
        first: &Outcome,
    ) -> Map<String, Value> {
        let shrink = &self.cfg.campaign.shrink;
        let until = Instant::now() + shrink.time;
        let most = MAX_SHRINK_STEPS.min(usize::try_from(shrink.max_steps).unwrap_or(usize::MAX));
        let mut steps = 0;
        let mut progress = true;
        while progress && steps < most {
            progress = false;
            for candidate in smaller(&args) {
                if steps >= most || Instant::now() >= until || !self.open() {
                    return args;
                }
                steps += 1;
                let Some(o) = self.send(probe, &build(probe, &candidate)).await else {
                    return args;
                };
                if same_failure(first, &o.outcome) {
                    args = candidate;
                    progress = true;
                    break;
                }
            }
        }
        args
    }
}

/// One request beside tools, as `mcp-fuzz call --prompt/--resource/--complete` sends it (the
/// replay line of this phase's findings).
pub enum Request<'a> {
    /// `prompts/get` of the prompt `name` with `arguments`.
    Prompt {
        /// The prompt's name.
        name: &'a str,
        /// Its arguments (`None`: no `arguments` member at all).
        arguments: Option<&'a Map<String, Value>>,
    },
    /// `resources/read` of `uri`.
    Resource {
        /// The resource's URI.
        uri: &'a str,
    },
    /// `completion/complete` with these params (`ref`, `argument`, `context`).
    Complete {
        /// The request's params.
        params: &'a Value,
    },
}

impl<'a> Request<'a> {
    /// The request a case file recorded (`{"method": ..., "params": ...}`), if it is one of
    /// these.
    #[must_use]
    pub fn recorded(request: &'a Value) -> Option<Self> {
        let params = request.get("params")?;
        Some(match request.get("method")?.as_str()? {
            "prompts/get" => Self::Prompt {
                name: params.get("name")?.as_str()?,
                arguments: params.get("arguments").and_then(Value::as_object),
            },
            "resources/read" => Self::Resource { uri: params.get("uri")?.as_str()? },
            "completion/complete" => Self::Complete { params },
            _ => return None,
        })
    }
}

/// What one [`Request`] got.
pub struct Answered {
    /// Its outcome, judged as the phase judges it (a result by its MCP shape).
    pub outcome: Outcome,
    /// The result, when one came.
    pub result: Option<Value>,
    /// Whether the phase would report it as a failure (a crash, a hang, an oversize or broken
    /// answer), whatever the input was.
    pub fails: bool,
}

/// Sends one request on `slot` and judges it as the phase does.
///
/// # Errors
/// [`crate::transport::ConnectError`] when the server cannot be started.
pub async fn request_once(
    slot: &mut Instance<'_>,
    request: Request<'_>,
) -> Result<Answered, crate::transport::ConnectError> {
    let (method, params, shape) = match request {
        Request::Prompt { name, arguments } => {
            let mut params = json!({"name": name});
            if let Some(a) = arguments {
                params["arguments"] = Value::Object(a.clone());
            }
            ("prompts/get", params, Shape::Prompt)
        }
        Request::Resource { uri } => ("resources/read", json!({"uri": uri}), Shape::Read),
        Request::Complete { params } => ("completion/complete", params.clone(), Shape::Complete),
    };
    let (reply, stderr) = slot.request(method, params).await?;
    let result = match &reply {
        Reply::Result(v) => Some(v.clone()),
        _ => None,
    };
    let judged = judge(reply, stderr, shape);
    let fails = verdict(&judged, Intent::Odd, "").is_some_and(|v| v.1 == Severity::Failure);
    Ok(Answered { outcome: judged.outcome, result, fails })
}

/// Whether `now` fails as `first` did: a slow or hung request slow or hung again (its time is
/// not its cause), anything else with the same cause (kind, code, exit, normalised message).
fn same_failure(first: &Outcome, now: &Outcome) -> bool {
    match first {
        Outcome::Slow { .. } | Outcome::Timeout => now.kind() == first.kind(),
        _ => now.cause() == first.cause(),
    }
}

/// Simpler maps than `args`: one key fewer, or one string cut to half its length.
fn smaller(args: &Map<String, Value>) -> Vec<Map<String, Value>> {
    let mut out = Vec::new();
    for key in args.keys() {
        let mut m = args.clone();
        m.remove(key);
        out.push(m);
    }
    for (key, v) in args {
        if let Some(s) = v.as_str().filter(|s| s.chars().count() > 1) {
            let half: String = s.chars().take(s.chars().count() / 2).collect();
            let mut m = args.clone();
            m.insert(key.clone(), Value::String(half));
            out.push(m);
        }
    }
    out
}

/// A reply to a surface request, judged: its outcome, and whether a breach of its result's
/// shape is a minor one (a warning).
pub(crate) struct Judged {
    pub outcome: Outcome,
    pub minor: bool,
}

/// Judges a reply to a surface request: a result by its shape, anything else as every reply is.
fn judge(reply: Reply, stderr: Vec<String>, shape: Shape) -> Judged {
    match reply {
        Reply::Result(v) => match shape::check(shape, &v) {
            None => Judged { outcome: Outcome::Ok, minor: false },
            Some(b) => {
                Judged { outcome: Outcome::ProtocolViolation { detail: b.detail }, minor: b.minor }
            }
        },
        other => Judged { outcome: outcome(other, || stderr, Caller::Surface), minor: false },
    }
}

/// Whether an outcome is a finding, and which: kind, severity and what happened.
fn verdict(
    judged: &Judged,
    intent: Intent,
    timeout: &str,
) -> Option<(FindingKind, Severity, String)> {
    let o = &judged.outcome;
    let f = |k, s, w: String| Some((k, s, w));
    match o {
        Outcome::Exited { exit, .. } => {
            f(FindingKind::Exited, Severity::Failure, format!("the server process ended ({exit})"))
        }
        Outcome::Timeout => {
            f(FindingKind::Hang, Severity::Failure, format!("no answer within {timeout}"))
        }
        Outcome::Slow { detail } => f(FindingKind::Slow, Severity::Warning, detail.clone()),
        Outcome::Oversize { bytes, at_least } => f(
            FindingKind::Oversize,
            Severity::Failure,
            format!("{}, over --max-response-bytes", words::response_size(*bytes, *at_least)),
        ),
        Outcome::HttpError { status, detail } => {
            f(FindingKind::HttpError, Severity::Failure, words::http_error(*status, detail))
        }
        Outcome::ProtocolViolation { detail } => {
            let severity = if judged.minor { Severity::Warning } else { Severity::Failure };
            f(FindingKind::ProtocolViolation, severity, detail.clone())
        }
        // One judgement for an exception message, as for tools (issue 30 items 2 and 9): a
        // handler that crashed on its input, whatever the input was.
        Outcome::InternalError { message, .. } | Outcome::RpcError { message, .. }
            if reads_as_exception(message) =>
        {
            f(
                FindingKind::of(o),
                Severity::Failure,
                format!(
                    "answered with an exception ({}): the handler crashed on this input",
                    compact(message)
                ),
            )
        }
        Outcome::InternalError { message, .. }
            if intent != Intent::Listed && looks_like_validation(message) =>
        {
            f(
                FindingKind::InvalidParamsAsInternalError,
                Severity::Warning,
                format!(
                    "answered -32603 Internal error for input it refused as invalid ({}); invalid params are -32602",
                    compact(message)
                ),
            )
        }
        Outcome::InternalError { message, .. } => {
            let severity =
                if intent == Intent::Listed { Severity::Failure } else { Severity::Warning };
            f(
                FindingKind::InternalError,
                severity,
                format!(
                    "answered -32603 Internal error ({}); bad input is answered -32602, an unknown resource -32002",
                    compact(message)
                ),
            )
        }
        Outcome::Ok if intent == Intent::Invalid => f(
            FindingKind::AcceptsInvalid,
            Severity::Warning,
            "answered with a result although a required argument is missing".into(),
        ),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smaller_drops_each_key_and_halves_each_string() {
        let args: Map<String, Value> =
            serde_json::from_value(json!({"a": "abcd", "b": 1})).expect("map");
        let c = smaller(&args);
        assert_eq!(c.len(), 3);
        assert!(c.contains(&serde_json::from_value(json!({"b": 1})).expect("map")));
        assert!(c.contains(&serde_json::from_value(json!({"a": "ab", "b": 1})).expect("map")));
    }

    #[test]
    fn minus_32603_is_a_failure_only_on_what_the_server_listed() {
        let o = Outcome::InternalError { message: "boom".into(), upstream: false };
        let judged = |outcome| Judged { outcome, minor: false };
        let o = judged(o);
        assert_eq!(verdict(&o, Intent::Listed, "10 s").map(|v| v.1), Some(Severity::Failure));
        assert_eq!(verdict(&o, Intent::Odd, "10 s").map(|v| v.1), Some(Severity::Warning));
        assert_eq!(verdict(&judged(Outcome::Ok), Intent::Odd, "10 s"), None);
        let refused = Outcome::InvalidParams { message: "no".into() };
        assert_eq!(verdict(&judged(refused), Intent::Valid, "10 s"), None, "a refusal is graceful");
        let crash = Outcome::InternalError {
            message: "Cannot destructure property 'topic' of 'undefined' as it is undefined."
                .into(),
            upstream: false,
        };
        let crashed = verdict(&judged(crash), Intent::Odd, "10 s").expect("finding");
        assert_eq!((crashed.0, crashed.1), (FindingKind::InternalError, Severity::Failure));
        let lenient = verdict(&judged(Outcome::Ok), Intent::Invalid, "10 s").expect("finding");
        assert_eq!((lenient.0, lenient.1), (FindingKind::AcceptsInvalid, Severity::Warning));
    }
}
