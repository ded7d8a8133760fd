//! The tools phase: each selected tool ([`select`]) gets its cases planned ([`plan`], [`feed`]),
//! sent to the server instances ([`worker`], from [`start`]), and is finished ([`finish`]): its
//! results rebuilt in case order ([`collect`]), judged, its timeouts settled ([`timeouts`]) and
//! every failure shrunk ([`shrink`]). [`run`] takes the tools in listing order.

pub mod annotations;
pub(crate) mod class;
pub(crate) mod collect;
pub mod feed;
pub(crate) mod finish;
pub mod plan;
pub(crate) mod readers;
pub mod select;
pub mod shrink;
pub(crate) mod start;
pub(crate) mod timeouts;
pub(crate) mod worker;
pub(crate) mod writes;

use crate::config::RunConfig;
use crate::events::{Events, RunEventKind};
use crate::finding::{FindingKind, Severity, SkipReason, StopReason, ToolStatus};
use crate::judge::Outcome;
use crate::report::{Finding, ToolReport};
use crate::server::{Instance, Strays};
use crate::transport::listing::Listing;
use crate::transport::{Target, side_by_side};
use feed::Pool;
use futures_util::StreamExt;
use mcp_fuzz_model::outcome::OutcomeKind;
use select::Selector;
use start::{Begun, Context, Started, ToolEvent, ToolRun, start_tool};
use std::borrow::Cow;
use std::time::Instant;

/// Tools finishing at once at the end of the phase, each with a server process of its own.
///
/// Why: each waits mostly for hung calls, so more at once cost little time; eight bound the
/// processes a server with many hanging tools gets started at once.
const MAX_FINISHING: usize = 8;

/// What the tools phase gives the run.
pub(crate) struct ToolsOutcome {
    /// Each tool's line, in listing order.
    pub reports: Vec<ToolReport>,
    /// Their findings, in listing order.
    pub findings: Vec<Finding>,
    /// Why the campaign stopped, if it did.
    pub stop: Option<StopReason>,
    /// The values harvested from results (for the sequence phase).
    pub pool: Pool,
    /// `tools/call` requests made.
    pub calls: u64,
    /// Server restarts.
    pub restarts: u64,
    /// The breaches of the wire protocol outside any call on its server processes, one
    /// server-wide finding per breach (the run places them after every phase's findings).
    pub stray: Vec<Finding>,
}

/// Runs every listed tool in listing order on `first` and the other `--jobs` instances; the
/// tools left waiting only for hung calls finish together at the end. `failures` counts the
/// failure findings before the phase (for `--max-failures`).
pub(crate) async fn run<'s>(
    cfg: &'s RunConfig,
    listing: &Listing,
    first: Instance<'s>,
    deadline: Option<Instant>,
    mut failures: usize,
    events: &mut Events<'_>,
) -> ToolsOutcome {
    // A launched HTTP server on a fixed port serves one process at a time.
    let jobs = match &cfg.server.target {
        Target::Http { url, launch, .. } if !side_by_side(url, launch.as_ref()) => 1,
        _ => cfg.campaign.jobs.max(1),
    };
    let mut slots: Vec<Instance<'s>> = std::iter::once(first)
        .chain((1..jobs).map(|_| Instance::new(&cfg.server, None)))
        .map(Instance::recycling)
        .collect();
    let readers = annotations::readers(cfg, listing, &mut slots[0]).await;
    let mut findings = Vec::new();
    // Each tool's line and findings, in listing order (`None` while its finishing waits).
    let mut runs: Vec<Option<ToolRun>> = Vec::new();
    let mut deferred: Vec<Deferred<'_, '_>> = Vec::new();
    let mut selector = Selector::new(cfg);
    let mut seen: Vec<&str> = Vec::new();
    let mut pool = Pool::default();
    let mut stopped = None;
    let over = |report| Some(ToolRun { report, findings: Vec::new(), stop: None, late_cases: 0 });
    for tool in &listing.tools {
        if seen.contains(&tool.name.as_str()) {
            findings.push(duplicate(&tool.name));
            continue;
        }
        seen.push(&tool.name);
        findings.extend(annotations::misnamed(tool));
        if let Some(reason) = selector.skip(&tool.name, tool.read_only_hint()) {
            runs.push(over(skipped(&tool.name, reason)));
            continue;
        }
        if stopped.is_none() && deadline.is_some_and(|d| Instant::now() >= d) {
            stopped = Some(StopReason::TimeBudget);
        }
        if let Some(why) = stopped {
            runs.push(over(skipped(&tool.name, SkipReason::NotReached(why))));
            continue;
        }
        let mut on_event = progress(events);
        // The tool's own timeout and cases (per-tool overrides in the config file).
        let tool_cfg = cfg.for_tool(&tool.name);
        for slot in &mut slots {
            slot.set_timeout(tool_cfg.server.timeout);
        }
        let before = annotations::Before::take(&tool_cfg, tool, &readers, &mut slots[0]).await;
        let ctx = Context {
            cfg: &tool_cfg,
            slots: &mut slots,
            pool: &mut pool,
            run_deadline: deadline,
            failures_so_far: failures,
            on_event: &mut on_event,
        };
        let ran = match start_tool(ctx, tool).await {
            Begun::Over(ran) => ran,
            Begun::Started(started) => {
                let effects = annotations::judged(before, &started, &mut slots[0], &readers).await;
                // What is left is waiting for hangs: that waits until the end of the phase,
                // where the tools' waits overlap (a stop on failures needs each tool judged in
                // turn).
                if cfg.campaign.max_failures.is_none() && started.only_waits() {
                    runs.push(None);
                    deferred.push((runs.len() - 1, started, tool_cfg, effects));
                    continue;
                }
                let mut ran = started.finish(&tool_cfg, &mut slots[0], deadline).await;
                with_effects(&mut ran, effects);
                ran
            }
        };
        drop(on_event);
        failures += ran.findings.iter().filter(|f| f.severity == Severity::Failure).count();
        stopped = stopped.or(ran.stop);
        let restarts = slots.iter().map(|s| s.restarts).sum();
        events.count(|t| t.restarts = restarts);
        tool_done(events, &ran);
        runs.push(Some(ran));
    }
    // The tools left waiting finish together, each on a server instance of its own (their
    // shrinking and re-runs call the server), in listing order as they end.
    let mut finishing =
        futures_util::stream::iter(deferred.into_iter().map(|(at, started, c, e)| {
            let mut slot = Instance::new(&cfg.server, None).recycling();
            slot.set_timeout(c.server.timeout);
            async move {
                let mut ran = started.finish(&c, &mut slot, deadline).await;
                with_effects(&mut ran, e);
                (at, ran, slot)
            }
        }))
        .buffered(MAX_FINISHING);
    while let Some((at, ran, slot)) = finishing.next().await {
        events.count(|t| t.restarts += slot.restarts);
        tool_done(events, &ran);
        stopped = stopped.or(ran.stop);
        runs[at] = Some(ran);
        slots.push(slot);
    }
    drop(finishing);
    let mut reports = Vec::new();
    for ran in runs.into_iter().flatten() {
        findings.extend(ran.findings);
        reports.push(ran.report);
    }
    let (mut calls, mut restarts) = (0, 0);
    for slot in &mut slots {
        slot.close().await;
        calls += slot.calls;
        restarts += slot.restarts;
    }
    let stray = stray_findings(&slots);
    ToolsOutcome { reports, findings, stop: stopped, pool, calls, restarts, stray }
}

use annotations::Effects;

/// A tool whose finishing waits for the end of the phase: its place among the lines, its
/// cases, its settings and what its calls did to the sandbox.
type Deferred<'t, 'c> = (usize, Box<Started<'t>>, Cow<'c, RunConfig>, Option<Effects>);

/// A tool's line and findings with what its calls did to the sandbox.
fn with_effects(ran: &mut ToolRun, effects: Option<Effects>) {
    if let Some((check, findings)) = effects {
        ran.report.annotations = Some(check);
        ran.findings.extend(findings);
    }
}

/// Tells the events of a tool's cases as they are planned and finished.
fn progress<'e>(events: &'e mut Events<'_>) -> impl FnMut(ToolEvent) + 'e {
    |e: ToolEvent| match e {
        ToolEvent::Planned(n) => events.tell(RunEventKind::CasesPlanned, |t| t.cases_planned += n),
        ToolEvent::CaseFinished => events.tell(RunEventKind::CaseFinished, |t| t.cases_done += 1),
    }
}

/// Tells the events that a tool is done.
fn tool_done(events: &mut Events<'_>, ran: &ToolRun) {
    let (found, late) = (ran.findings.len() as u64, ran.late_cases);
    let tool = ran.report.name.clone();
    events.tell(RunEventKind::ToolFinished { tool }, |t| {
        t.findings += found;
        t.cases_done += late;
        t.tools_done += 1;
    });
}

/// Whether a later phase may call a tool: the tools phase called it to the end, and none of
/// its calls hung or outlasted its patience (a walk would wait on it).
pub(crate) fn walkable(r: &ToolReport) -> bool {
    r.status == ToolStatus::Tested
        && !r.waited
        && [OutcomeKind::Timeout, OutcomeKind::Slow, OutcomeKind::UpstreamTimeout]
            .into_iter()
            .all(|k| !r.saw(k))
}

/// A tool that is not called, and why.
fn skipped(name: &str, reason: SkipReason) -> ToolReport {
    let mut tr = ToolReport::new(name);
    tr.skip(reason);
    tr
}

/// The finding of a name the listing holds twice.
fn duplicate(name: &str) -> Finding {
    Finding::general(
        Some(name.to_owned()),
        FindingKind::DuplicateTool,
        Severity::Warning,
        "tools/list lists this name more than once; only the first is called".into(),
    )
}

/// One server-wide finding per breach of the stdio framing or of JSON-RPC that belongs to no
/// call (a banner at start-up, log lines between calls, replies to notifications), each with its
/// own first example.
fn stray_findings(slots: &[Instance<'_>]) -> Vec<Finding> {
    let mut all = Strays::default();
    for slot in slots {
        all.extend(slot.stray_violations().iter().cloned());
    }
    all.iter()
        .map(|(first, count)| Finding {
            outcome: Some(Outcome::ProtocolViolation { detail: first.clone() }),
            ..Finding::general(
                None,
                FindingKind::ProtocolViolation,
                Severity::Failure,
                format!(
                    "{} of the wire protocol outside any call: {first}; stdout carries only MCP messages, one per line, and notifications get no answer",
                    mcp_fuzz_model::text::count(*count, "breach")
                ),
            )
        })
        .collect()
}
