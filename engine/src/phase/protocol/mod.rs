//! The protocol conformance phase: well-formed but wrong requests, each with the answer the MCP
//! specification (2025-11-25) or JSON-RPC 2.0 requires, sent over a raw stdio session on server
//! processes of their own (requests before `initialize` each get a fresh process). The checks
//! are a static table ([`checks`]); each has a stable id, its specification URL and a one-line
//! rationale; the results are the report's `protocol` section with its own score, never part of
//! the crash-resilience score.
//!
//! A failed check is a `protocol-nonconformance` finding: a failure when the server crashed or
//! went silent on a request it had to answer after the handshake, a warning otherwise (a wrong
//! error code, an echoed unsupported version). -32603 where -32602 is required is the
//! `invalid-params-as-internal-error` warning of its own, since every TypeScript-SDK server
//! does it. Checks that failed the same way (the same kind, severity and cause) are one finding:
//! their failures are recorded as typed observations and worded once, after grouping.
//!
//! See: issue 15; <https://modelcontextprotocol.io/specification/2025-11-25>.

mod checks;
mod http;
mod observed;

use crate::config::RunConfig;
use crate::events::PhaseFinished;
use crate::finding::{FindingKind, Severity};
use crate::judge::words::compact;
use crate::phase::tools::walkable;
use crate::phase::{PhaseOutcome, Section, Sofar};
use crate::report::{CheckStatus, Finding, ProtocolCheck, ProtocolSummary};
use crate::transport::raw::{Heard, Junk, RawSession};
use crate::transport::{Target, excerpt};
use checks::{CHECKS, Check, How, Silence};
use serde_json::{Value, json};
use std::time::Duration;

/// What the phase found.
struct Protocol {
    /// The report's `protocol` section.
    pub summary: ProtocolSummary,
    /// A finding per cause of failed checks.
    pub findings: Vec<Finding>,
}

/// The protocol version the probing session asks for.
const VERSION: &str = "2025-11-25";

/// Silences after which the remaining checks are skipped.
///
/// Why: each silence costs a timeout; two show a server that stopped answering.
const MAX_SILENCES: usize = 2;

/// Why the checks that call a tool are skipped when none may be called.
const NO_TOOL: &str = "no tool the gate allows calling (a tool not annotated readOnlyHint: true is called only with --include-destructive)";

/// Why the checks after [`MAX_SILENCES`] silences are skipped.
fn stopped() -> String {
    format!("{MAX_SILENCES} earlier checks got no answer; the server stopped answering")
}

/// What a check saw when it failed: in words, and, for an error response, its code (checks
/// failing with one code fail the same way).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Observed {
    /// What was seen, in words.
    pub text: String,
    /// An error response's code, as written.
    pub code: Option<String>,
}

impl Observed {
    /// A response: its error code and message, or its result (capped).
    fn of(m: &Value) -> Self {
        let code = m
            .get("error")
            .map(|e| e.get("code").map_or_else(|| "without a code".into(), ToString::to_string));
        Self { text: message(m), code }
    }

    /// Something other than a response, in words.
    fn said(text: String) -> Self {
        Self { text, code: None }
    }
}

/// How a check judges what it heard: pass, or a failure with its severity and kind.
pub(super) enum Judged {
    Pass(String),
    Fail { observed: Observed, severity: Severity, kind: FindingKind },
}

/// A `protocol-nonconformance` failure of `severity`.
fn fail(observed: Observed, severity: Severity) -> Judged {
    Judged::Fail { observed, severity, kind: FindingKind::ProtocolNonconformance }
}

/// A failed check, before it is worded: which, what was sent, what was seen.
struct Failed {
    check: &'static Check,
    request: Option<Value>,
    observed: Observed,
    severity: Severity,
    kind: FindingKind,
}

/// Runs every check on processes of its own. The checks that call a tool call one the tools
/// phase called, preferring one that answered in time (a slow one would make its checks wait).
pub(crate) async fn run(sofar: &Sofar<'_>) -> PhaseOutcome {
    let tools = sofar.tools;
    let tool = tools
        .iter()
        .find(|r| walkable(r))
        .or_else(|| tools.iter().find(|r| r.status.was_called()))
        .map(|r| r.name.as_str());
    let mut checked = check_all(sofar.cfg, tool, sofar.progress).await;
    add_observed(&mut checked, sofar.cfg);
    PhaseOutcome {
        findings: checked.findings,
        calls: 0,
        restarts: 0,
        finished: Some(PhaseFinished::protocol(&checked.summary)),
        section: Section::Protocol(checked.summary),
    }
}

/// Adds the checks of what the whole run heard (its connections' record) to `checked`.
fn add_observed(checked: &mut Protocol, cfg: &RunConfig) {
    let record = cfg.server.connect.heard.snapshot();
    let cx = checks::Context { record: &record, features: cfg.server.connect.client };
    let mut tally = Tally::default();
    observed::judge_all(&mut tally, &cx);
    let summary = std::mem::replace(&mut checked.summary, ProtocolSummary::of(Vec::new(), None));
    let checks = summary.checks.into_iter().chain(tally.results).collect();
    checked.summary = ProtocolSummary::of(checks, summary.reason).skipping(summary.skipped_lines);
    checked.findings.extend(grouped(tally.failed));
}

/// Runs every check. `tool` is a tool the gate allows calling (for the `arguments` checks).
async fn check_all(cfg: &RunConfig, tool: Option<&str>, progress: &dyn Fn(u64)) -> Protocol {
    if matches!(cfg.server.target, Target::Http { .. }) {
        return http::check_all(cfg, tool, progress).await;
    }
    let mut phase = Runner {
        cfg,
        session: None,
        blank: None,
        ahead: Vec::new(),
        tally: Tally::default(),
        silences: 0,
        junk: Junk::default(),
    };
    phase.start_ahead();
    if let Err(why) = phase.fresh().await {
        let summary = ProtocolSummary::of(Vec::new(), Some(why)).skipping(phase.junk.lines);
        return Protocol { summary, findings: Vec::new() };
    }
    for check in CHECKS {
        phase.check(check, tool).await;
        progress(1);
    }
    let ahead = std::mem::take(&mut phase.ahead);
    for s in [phase.session.take(), phase.blank.take()].into_iter().flatten().chain(ahead) {
        phase.retire(s).await;
    }
    let summary = ProtocolSummary::of(phase.tally.results, None).skipping(phase.junk.lines);
    Protocol { summary, findings: grouped(phase.tally.failed) }
}

/// One finding per cause: checks that failed the same way (same kind and severity, and the same
/// error code, or the same observation) are one finding naming them all, with each check's own
/// finding as a member. rmcp answers -32601 to every `tools/call` whose params do not parse:
/// one bug, four checks.
fn grouped(failed: Vec<Failed>) -> Vec<Finding> {
    let mut groups: Vec<(Cause, Vec<Failed>)> = Vec::new();
    for f in failed {
        let cause = Cause::of(&f);
        match groups.iter_mut().find(|(c, _)| *c == cause) {
            Some((_, g)) => g.push(f),
            None => groups.push((cause, vec![f])),
        }
    }
    groups.into_iter().map(|(_, g)| group_finding(g)).collect()
}

/// What failed checks share when they fail the same way: the kind, the severity, and the error
/// code (or, for anything but an error response, what was seen where).
#[derive(PartialEq, Eq)]
struct Cause {
    kind: FindingKind,
    severity: Severity,
    what: String,
}

impl Cause {
    fn of(f: &Failed) -> Self {
        let what = match &f.observed.code {
            Some(code) => code.clone(),
            None => format!("{} ({})", f.observed.text, f.check.spec.url()),
        };
        Self { kind: f.kind.clone(), severity: f.severity, what }
    }
}

/// The finding of checks that failed the same way: the first one's, naming the others.
fn group_finding(members: Vec<Failed>) -> Finding {
    let mut findings: Vec<Finding> = members.iter().map(finding).collect();
    if findings.len() == 1 {
        return findings.remove(0);
    }
    let first = &members[0];
    let ids: Vec<&str> = members.iter().map(|m| m.check.id).collect();
    let mut f = Finding::general(
        None,
        first.kind.clone(),
        first.severity,
        format!(
            "{} checks failed the same way ({}); first, {}",
            ids.len(),
            ids.join(", "),
            said(first)
        ),
    );
    f.check = Some(first.check.id.to_owned());
    f.request = first.request.clone();
    f.occurrences = findings.len() as u64;
    f.members = findings;
    f
}

/// The finding of one failed check.
fn finding(failed: &Failed) -> Finding {
    let message = format!("{}: {}", failed.check.id, said(failed));
    let mut f = Finding::general(None, failed.kind.clone(), failed.severity, message);
    f.check = Some(failed.check.id.to_owned());
    f.request = failed.request.clone();
    f
}

/// What a failed check says: `title; expected ..., got ... (spec)`.
fn said(failed: &Failed) -> String {
    let c = failed.check;
    format!("{}; expected {}, got {} ({})", c.title, c.expected, failed.observed.text, c.spec.url())
}

/// The checks' lines and the failed ones, as they are recorded.
#[derive(Default)]
struct Tally {
    results: Vec<ProtocolCheck>,
    failed: Vec<Failed>,
}

impl Tally {
    fn record(&mut self, c: &'static Check, request: Option<Value>, judged: Judged) {
        let (status, observed) = match judged {
            Judged::Pass(o) => (CheckStatus::Pass, o),
            Judged::Fail { observed, severity, kind } => {
                let text = observed.text.clone();
                self.failed.push(Failed { check: c, request, observed, severity, kind });
                (CheckStatus::Fail, text)
            }
        };
        self.push(c, status, observed);
    }

    fn skip(&mut self, c: &Check, why: String) {
        self.push(c, CheckStatus::Skip, why);
    }

    /// The check's line of the report.
    fn push(&mut self, c: &Check, status: CheckStatus, observed: String) {
        self.results.push(ProtocolCheck {
            id: c.id.to_owned(),
            title: c.title.to_owned(),
            spec_url: c.spec.url(),
            rationale: c.rationale.to_owned(),
            expected: c.expected.to_owned(),
            status,
            observed,
        });
    }
}

struct Runner<'c> {
    cfg: &'c RunConfig,
    /// The initialised probing session.
    session: Option<RawSession>,
    /// A process nobody has initialised, kept for the next check that needs one.
    blank: Option<RawSession>,
    /// Processes started ahead of need, for a server that starts slowly: the checks that need
    /// a process nobody has initialised take them, ready.
    ahead: Vec<RawSession>,
    tally: Tally,
    silences: usize,
    /// Lines that are not JSON the sessions skipped.
    junk: Junk,
}

impl Runner<'_> {
    fn timeout(&self) -> Duration {
        self.cfg.server.timeout
    }

    /// Ends a session, keeping the count of the lines that are not JSON it skipped.
    async fn retire(&mut self, s: RawSession) {
        self.junk.add(s.junk());
        s.close().await;
    }

    /// A fresh process, initialised; why not, when it cannot be had.
    async fn fresh(&mut self) -> Result<(), String> {
        if let Some(s) = self.session.take() {
            self.retire(s).await;
        }
        let mut s = RawSession::start(&self.cfg.server.target, &self.cfg.server.connect)
            .map_err(|e| format!("the protocol phase could not start the server: {e}"))?;
        match s.initialize(VERSION, self.cfg.server.connect.startup_timeout).await {
            Heard::Message(m) if m.get("result").is_some() => {
                self.session = Some(s);
                Ok(())
            }
            other => {
                self.retire(s).await;
                Err(format!("the raw handshake failed: {}", heard(&other)))
            }
        }
    }

    /// A process that has not been sent anything: one started ahead, while it lives, or a new
    /// one.
    fn blank(&mut self) -> Result<RawSession, String> {
        while let Some(s) = self.ahead.pop() {
            if s.exited().is_none() {
                return Ok(s);
            }
        }
        RawSession::start(&self.cfg.server.target, &self.cfg.server.connect)
            .map_err(|e| format!("the server could not be started: {e}"))
    }

    /// For a server that starts slowly (the server's warm spares pay), starts the processes
    /// the checks on uninitialised processes need, so that their start overlaps the other
    /// checks.
    fn start_ahead(&mut self) {
        let spares = &self.cfg.server.spares;
        if !spares.pay(&self.cfg.server.target) {
            return;
        }
        let uninitialised =
            CHECKS.iter().filter(|c| matches!(c.how, How::Initialize { .. })).count()
                + usize::from(CHECKS.iter().any(|c| matches!(c.how, How::BeforeInitialize { .. })));
        for _ in 0..uninitialised {
            match RawSession::start(&self.cfg.server.target, &self.cfg.server.connect) {
                Ok(s) => {
                    spares.count_started();
                    self.ahead.push(s);
                }
                Err(_) => return,
            }
        }
    }

    /// Runs one check of the table.
    async fn check(&mut self, c: &'static Check, tool: Option<&str>) {
        match &c.how {
            How::Request { id, method, params, judge, silence } => {
                let Some(params) = params.with_tool(tool) else {
                    return self.tally.skip(c, NO_TOOL.into());
                };
                self.request_check(c, id(), method, params, *judge, *silence).await;
            }
            How::Notification { after_request, method, params } => {
                self.notification_check(c, *after_request, method, params()).await;
            }
            How::Initialize { version } => self.initialize_check(c, version).await,
            How::BeforeInitialize { id, method, judge } => {
                self.before_initialize_check(c, *id, method, *judge).await;
            }
            How::Http(_) => self.tally.skip(c, "a check of the HTTP transport".into()),
            How::Observed(_) => self.tally.skip(c, "judged from the whole run".into()),
        }
    }

    /// The initialised session, started again first when the last check ended it; why not,
    /// when the checks must stop.
    async fn session(&mut self) -> Result<&mut RawSession, String> {
        if self.silences >= MAX_SILENCES {
            return Err(stopped());
        }
        if self.session.as_ref().is_none_or(|s| s.exited().is_some()) {
            self.fresh().await?;
        }
        Ok(self.session.as_mut().expect("a session"))
    }

    /// Ends the session when what it heard shows it is gone or stuck.
    async fn after(&mut self, h: &Heard) {
        if matches!(h, Heard::Silent) {
            self.silences += 1;
        }
        if matches!(h, Heard::Exited(_) | Heard::Closed | Heard::Silent)
            && let Some(s) = self.session.take()
        {
            self.retire(s).await;
        }
    }

    /// Runs a request check: send, judge the answer, record.
    async fn request_check(
        &mut self,
        c: &'static Check,
        id: Value,
        method: &str,
        params: Option<Value>,
        judge: fn(&Value) -> Judged,
        silence: Silence,
    ) {
        let request = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let timeout = self.timeout();
        let s = match self.session().await {
            Ok(s) => s,
            Err(why) => return self.tally.skip(c, why),
        };
        let mut others = Vec::new();
        let h = s.request(&id, method, params, timeout, &mut others).await;
        self.after(&h).await;
        let judged = match h {
            Heard::Message(m) => judge(&m),
            Heard::Silent if !others.is_empty() => {
                let observed = format!(
                    "no answer with the request's id; heard instead: {}",
                    excerpt(&others[0])
                );
                fail(Observed::said(observed), Severity::Failure)
            }
            Heard::Silent if silence != Silence::Fails => {
                let observed =
                    "no answer within the timeout (the tool may have run with these arguments)"
                        .to_owned();
                if silence == Silence::Passes {
                    Judged::Pass(observed)
                } else {
                    fail(Observed::said(observed), Severity::Warning)
                }
            }
            other => fail(Observed::said(heard(&other)), Severity::Failure),
        };
        self.tally.record(c, Some(request), judged);
    }

    /// Sends a notification (after a request with id `first`, when given) and then a `ping`;
    /// any message before the ping's answer that is not the first request's answer answers the
    /// notification.
    async fn notification_check(
        &mut self,
        c: &'static Check,
        first: Option<u64>,
        method: &str,
        params: Value,
    ) {
        let first = first.map(|id| json!(id));
        let timeout = self.timeout();
        let s = match self.session().await {
            Ok(s) => s,
            Err(why) => return self.tally.skip(c, why),
        };
        if let Some(id) = &first {
            s.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"})).await;
        }
        s.notify(method, Some(params.clone())).await;
        let mut others = Vec::new();
        let ping = s.request(&json!(199), "ping", None, timeout, &mut others).await;
        let answers: Vec<&Value> = others
            .iter()
            .filter(|m| m.get("method").is_none() && m.get("id") != first.as_ref())
            .collect();
        let request = Some(json!({"jsonrpc": "2.0", "method": method, "params": params}));
        let judged = match (&ping, answers.first()) {
            (_, Some(a)) => fail(
                Observed::said(format!("an answer to the notification: {}", excerpt(a))),
                Severity::Failure,
            ),
            (Heard::Message(_), None) => Judged::Pass("no answer to the notification".into()),
            (other, None) => fail(
                Observed::said(format!("the ping after it: {}", heard(other))),
                Severity::Failure,
            ),
        };
        if matches!(ping, Heard::Silent) {
            self.silences += 1;
        }
        if !matches!(ping, Heard::Message(_))
            && let Some(s) = self.session.take()
        {
            self.retire(s).await;
        }
        self.tally.record(c, request, judged);
    }

    /// `initialize` with an unsupported version, on a process of its own.
    async fn initialize_check(&mut self, c: &'static Check, version: &str) {
        let startup = self.cfg.server.connect.startup_timeout;
        let mut s = match self.blank() {
            Ok(s) => s,
            Err(why) => return self.tally.skip(c, why),
        };
        let h = s.initialize(version, startup).await;
        let judged = match &h {
            Heard::Message(m) => match m.pointer("/result/protocolVersion").and_then(Value::as_str)
            {
                Some(v) if v == version => fail(
                    Observed::said(format!("the unsupported version {version} echoed back")),
                    Severity::Warning,
                ),
                Some(v) => Judged::Pass(format!("protocolVersion {v}")),
                None => fail(Observed::of(m), Severity::Warning),
            },
            other => fail(Observed::said(heard(other)), Severity::Warning),
        };
        self.retire(s).await;
        let request = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": version}});
        self.tally.record(c, Some(request), judged);
    }

    /// A request before `initialize`, on the process the previous such check used while it
    /// lives (a fresh one otherwise).
    async fn before_initialize_check(
        &mut self,
        c: &'static Check,
        id: u64,
        method: &str,
        judge: fn(&Value) -> Judged,
    ) {
        if let Some(s) = self.blank.take_if(|s| s.exited().is_some()) {
            self.retire(s).await;
        }
        let mut s = match self.blank.take() {
            Some(s) => s,
            None => match self.blank() {
                Ok(s) => s,
                Err(why) => return self.tally.skip(c, why),
            },
        };
        let timeout = self.timeout();
        let mut others = Vec::new();
        let h = s.request(&json!(id), method, None, timeout, &mut others).await;
        let judged = match &h {
            Heard::Message(m) => judge(m),
            other => fail(Observed::said(heard(other)), Severity::Warning),
        };
        self.blank = Some(s);
        self.tally.record(c, Some(json!({"jsonrpc": "2.0", "id": id, "method": method})), judged);
    }
}

/// A response in words: its error code and message, or its result (capped).
fn message(m: &Value) -> String {
    if let Some(e) = m.get("error") {
        let code = e.get("code").map_or_else(|| "without a code".into(), ToString::to_string);
        let text = e.get("message").and_then(Value::as_str).unwrap_or_default();
        return format!("error {code}: {}", compact(text));
    }
    match m.get("result") {
        Some(r) => format!("result {}", excerpt(r)),
        None => format!("a message with neither result nor error: {}", excerpt(m)),
    }
}

/// What was heard instead of a message.
fn heard(h: &Heard) -> String {
    match h {
        Heard::Message(m) => message(m),
        Heard::Oversize(n) => format!("a {n}-byte line, over --max-response-bytes"),
        Heard::Exited(info) => format!("the server process ended ({info})"),
        Heard::Closed => "stdout closed".into(),
        Heard::Silent => "no answer within the timeout".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failed(id: &'static str, cause: &str) -> Failed {
        let check = CHECKS.iter().find(|c| c.id == id).expect("a check");
        Failed {
            check,
            request: None,
            observed: Observed { text: format!("error {cause}: x"), code: Some(cause.into()) },
            severity: Severity::Warning,
            kind: FindingKind::ProtocolNonconformance,
        }
    }

    #[test]
    fn checks_that_fail_the_same_way_are_one_finding() {
        let findings = grouped(vec![
            failed("tools-call-no-name", "-32601"),
            failed("unknown-method", "-32600"),
            failed("tools-call-arguments-array", "-32601"),
        ]);
        assert_eq!(findings.len(), 2);
        let f = &findings[0];
        assert_eq!(f.members.len(), 2);
        assert_eq!(f.check.as_deref(), Some("tools-call-no-name"));
        assert!(
            f.message.starts_with(
                "2 checks failed the same way (tools-call-no-name, tools-call-arguments-array); \
                 first, `tools/call` without `name`; expected error -32602 Invalid params, got \
                 error -32601: x ("
            ),
            "{}",
            f.message
        );
        assert!(findings[1].members.is_empty());
        assert!(findings[1].message.starts_with("unknown-method: a request with a method"));
    }

    #[test]
    fn an_error_is_observed_by_its_code() {
        let m =
            json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "no\n  such"}});
        let seen = Observed { text: "error -32601: no such".into(), code: Some("-32601".into()) };
        assert_eq!(Observed::of(&m), seen);
        let r = json!({"jsonrpc": "2.0", "id": 1, "result": {}});
        assert_eq!(Observed::of(&r), Observed { text: "result {}".into(), code: None });
    }
}
