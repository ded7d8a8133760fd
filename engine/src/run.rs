//! One fuzzing run: connect, list, select the tools (read-only by default), run each through its
//! cases ([`crate::campaign`]), and score. Reads top to bottom: the listing's own findings, then
//! each tool in listing order, then the server-wide findings and the totals.

use crate::config::{MAX_PAGES, RunConfig};
use crate::finding::{FindingKind, Severity, SkipReason};
use crate::judge::Outcome;
use crate::phase::sequence::{self, walk::SeqTool};
use crate::phase::tools::feed::Pool;
use crate::phase::tools::select::Selector;
use crate::phase::tools::start::{Begun, Context, Started, ToolEvent, ToolRun, start_tool};
use crate::report::{Finding, REPORT_VERSION, Report, Score, ToolReport};
use crate::server::{Instance, ListError};
use crate::transport::ConnectError;
use crate::transport::listing::ListingProblem;
use futures_util::StreamExt;
use mcp_fuzz_model::outcome::OutcomeKind;
use std::borrow::Cow;
use std::time::Instant;

/// Progress of a run, for a progress bar or progress lines.
#[derive(Debug, Clone, Default)]
pub struct Progress {
    /// Cases done so far.
    pub done: u64,
    /// Cases planned so far (grows as tools are planned).
    pub planned: u64,
    /// Findings so far (updated after each tool).
    pub findings: u64,
    /// Server restarts so far.
    pub restarts: u64,
    /// Tools run to the end so far.
    pub tools_done: u64,
    /// The tool that just finished, in the update sent when it does (else `None`).
    pub finished_tool: Option<String>,
}

/// Why a run could not happen at all.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunError {
    /// The server could not be started or initialised.
    #[error(transparent)]
    Connect(#[from] ConnectError),
    /// `tools/list` failed outright.
    #[error("{0}")]
    Listing(String),
}

/// Runs the campaign.
///
/// # Errors
/// [`RunError`] when the server cannot be started or listed at all; everything after that is
/// a finding in the report.
pub async fn run(cfg: &RunConfig, mut progress: impl FnMut(Progress)) -> Result<Report, RunError> {
    let started = Instant::now();
    let run_deadline = cfg.campaign.time_budget.map(|b| started + b);
    let mut first = Instance::start(&cfg.server).await?;
    let server = first.connection().map(|c| c.server.clone()).unwrap_or_default();
    let capabilities =
        first.connection().map(|c| c.capabilities.clone()).unwrap_or(serde_json::Value::Null);
    let listing = first.list_tools(MAX_PAGES).await.map_err(|e| match e {
        ListError::Connect(c) => RunError::Connect(c),
        ListError::Listing(l) => RunError::Listing(l),
    })?;
    let mut slots: Vec<Instance<'_>> = std::iter::once(first)
        .chain((1..cfg.campaign.jobs.max(1)).map(|_| Instance::new(&cfg.server, None)))
        .collect();

    let mut findings = listing_findings(&listing.problems, listing.truncated.as_deref());
    // Each tool's line and findings, in listing order (`None` while its finishing waits).
    let mut runs: Vec<Option<ToolRun>> = Vec::new();
    let mut deferred: Vec<(usize, Box<Started<'_>>, Cow<'_, RunConfig>)> = Vec::new();
    let mut prog = Progress { findings: findings.len() as u64, ..Progress::default() };
    let mut selector = Selector::new(cfg);
    let mut seen: Vec<&str> = Vec::new();
    let mut pool = Pool::default();
    let mut stopped = None;
    let mut failures = 0_usize;
    let over = |report| Some(ToolRun { report, findings: Vec::new(), stop: None, late_cases: 0 });
    for tool in &listing.tools {
        if seen.contains(&tool.name.as_str()) {
            findings.push(Finding::general(
                Some(tool.name.clone()),
                FindingKind::DuplicateTool,
                Severity::Warning,
                "tools/list lists this name more than once; only the first is called".into(),
            ));
            continue;
        }
        seen.push(&tool.name);
        if let Some(reason) = selector.skip(&tool.name, tool.read_only_hint()) {
            runs.push(over(skipped(&tool.name, reason)));
            continue;
        }
        if stopped.is_none() && run_deadline.is_some_and(|d| Instant::now() >= d) {
            stopped = Some(crate::finding::StopReason::TimeBudget);
        }
        if let Some(why) = stopped {
            runs.push(over(skipped(&tool.name, SkipReason::NotReached(why))));
            continue;
        }
        let mut on_event = |e: ToolEvent| {
            match e {
                ToolEvent::Planned(n) => prog.planned += n,
                ToolEvent::CaseFinished => prog.done += 1,
            }
            progress(prog.clone());
        };
        // The tool's own timeout and cases (per-tool overrides in the config file).
        let tool_cfg = cfg.for_tool(&tool.name);
        for slot in &mut slots {
            slot.set_timeout(tool_cfg.server.timeout);
        }
        let ctx = Context {
            cfg: &tool_cfg,
            slots: &mut slots,
            pool: &mut pool,
            run_deadline,
            failures_so_far: failures,
            on_event: &mut on_event,
        };
        let ran = match start_tool(ctx, tool).await {
            Begun::Over(ran) => ran,
            // What is left is waiting for hangs: that waits until the end of the run, where
            // the tools' waits overlap (a stop on failures needs each tool judged in turn).
            Begun::Started(started)
                if cfg.campaign.max_failures.is_none() && started.only_waits() =>
            {
                runs.push(None);
                deferred.push((runs.len() - 1, started, tool_cfg));
                continue;
            }
            Begun::Started(started) => started.finish(&tool_cfg, &mut slots[0], run_deadline).await,
        };
        failures += ran.findings.iter().filter(|f| f.severity == Severity::Failure).count();
        stopped = stopped.or(ran.stop);
        prog.restarts = slots.iter().map(|s| s.restarts).sum();
        tool_done(&mut prog, &mut progress, &ran);
        runs.push(Some(ran));
    }
    // The tools left waiting finish together, each on a server instance of its own (their
    // shrinking and re-runs call the server), in listing order as they end.
    let mut finishing = futures_util::stream::iter(deferred.into_iter().map(|(at, started, c)| {
        let mut slot = Instance::new(&cfg.server, None);
        slot.set_timeout(c.server.timeout);
        async move {
            let ran = started.finish(&c, &mut slot, run_deadline).await;
            (at, ran, slot)
        }
    }))
    .buffered(MAX_FINISHING);
    while let Some((at, ran, slot)) = finishing.next().await {
        prog.restarts += slot.restarts;
        tool_done(&mut prog, &mut progress, &ran);
        stopped = stopped.or(ran.stop);
        runs[at] = Some(ran);
        slots.push(slot);
    }
    drop(finishing);
    let mut tools = Vec::new();
    for ran in runs.into_iter().flatten() {
        findings.extend(ran.findings);
        tools.push(ran.report);
    }
    // The sequence phase, over the tools the single-call phases called to the end.
    let mut stateful = None;
    let (mut phase_calls, mut phase_restarts) = (0, 0);
    if cfg.campaign.stateful.enabled && stopped.is_none() {
        let walkable: Vec<SeqTool> = listing
            .tools
            .iter()
            .filter(|t| tools.iter().any(|r| r.name == t.name && walkable(r)))
            .filter_map(SeqTool::new)
            .collect();
        if let Some(why) = sequence::phase::nothing_to_chain(&walkable, pool.names()) {
            if !walkable.is_empty() {
                prog.finished_tool = Some("sequence phase (skipped: nothing to chain)".into());
                progress(prog.clone());
                stateful = Some(sequence::phase::skipped(&walkable, why));
            }
        } else if !walkable.is_empty() {
            let phase = sequence::phase::run(cfg, &walkable, &findings, run_deadline).await;
            findings.extend(phase.findings);
            (phase_calls, phase_restarts) = (phase.calls, phase.restarts);
            prog.restarts += phase_restarts;
            prog.findings = findings.len() as u64;
            prog.finished_tool =
                Some(format!("sequence phase ({} walks)", phase.summary.sequences));
            progress(prog.clone());
            stateful = Some(phase.summary);
        }
    }
    // Beyond tools: prompts, resources, templates and completions, then the protocol checks.
    let (mut surfaces, mut protocol) = (None, None);
    let beyond = cfg.campaign.beyond;
    if stopped.is_none() && (beyond.prompts || beyond.resources) {
        let phase = crate::phase::surfaces::run(cfg, &capabilities, run_deadline).await;
        findings.extend(phase.findings);
        phase_restarts += phase.restarts;
        if let Some(s) = &phase.summary {
            prog.findings = findings.len() as u64;
            prog.finished_tool = Some(format!("prompts and resources ({} requests)", s.requests));
            progress(prog.clone());
        }
        surfaces = phase.summary;
    }
    if stopped.is_none() && beyond.protocol {
        // A tool that answered in time (a slow one would make its checks wait).
        let tool = tools
            .iter()
            .find(|r| walkable(r))
            .or_else(|| tools.iter().find(|r| r.status.was_called()))
            .map(|r| r.name.as_str());
        let phase = crate::phase::protocol::run(cfg, tool).await;
        findings.extend(phase.findings);
        let p = &phase.summary;
        prog.findings = findings.len() as u64;
        prog.finished_tool = Some(format!(
            "protocol checks ({} passed, {} failed, {} skipped)",
            p.passed, p.failed, p.skipped
        ));
        progress(prog.clone());
        protocol = Some(phase.summary);
    }
    findings.extend(stray_finding(&slots));
    // One bug, one finding: a cause seen on several tools, and deaths on a call limit.
    let (limit, mut proof_calls) = crate::phase::limit::prove(cfg, &findings).await;
    // Failures that need earlier calls: replayed with the calls their process had been sent.
    let replayable = |f: &Finding| {
        f.kind == FindingKind::Flaky && f.evidence.as_ref().is_some_and(|e| e.history.is_some())
    };
    if cfg.campaign.stateful.enabled && findings.iter().any(replayable) {
        let called: Vec<SeqTool> = listing
            .tools
            .iter()
            .filter(|t| tools.iter().any(|r| r.name == t.name && r.status.was_called()))
            .filter_map(SeqTool::new)
            .collect();
        let (calls, restarts) =
            sequence::history::settle(cfg, &called, &mut findings, limit, run_deadline).await;
        proof_calls += calls;
        phase_restarts += restarts;
    }
    let findings = crate::group::by_cause(findings, limit);
    let (mut restarts, mut calls) = (phase_restarts, proof_calls + phase_calls);
    for slot in &mut slots {
        restarts += slot.restarts;
        calls += slot.calls;
        slot.close().await;
    }
    Ok(Report {
        report_version: REPORT_VERSION,
        tool_version: env!("CARGO_PKG_VERSION").to_owned(),
        target: cfg.server.target.redacted(),
        server,
        seed: cfg.seed,
        partition: cfg.selection.partition.map(|p| p.to_string()),
        score: Score::of(&tools),
        tools,
        findings,
        restarts,
        calls,
        duration_secs: (started.elapsed().as_secs_f64() * 1000.0).round() / 1000.0,
        baseline: None,
        stopped: stopped.map(|s| s.to_string()),
        merged_from: None,
        stateful,
        surfaces,
        protocol,
        extra: serde_json::Map::new(),
    })
}

/// Tools finishing at once at the end of the run, each with a server process of its own.
///
/// Why: each waits mostly for hung calls, so more at once cost little time; eight bound the
/// processes a server with many hanging tools gets started at once.
const MAX_FINISHING: usize = 8;

/// Tells the progress that a tool is done.
fn tool_done(prog: &mut Progress, progress: &mut impl FnMut(Progress), ran: &ToolRun) {
    prog.findings += ran.findings.len() as u64;
    prog.done += ran.late_cases;
    prog.tools_done += 1;
    prog.finished_tool = Some(ran.report.name.clone());
    progress(prog.clone());
    prog.finished_tool = None;
}

/// Whether the sequence phase may call a tool: the single-call phases called it to the end, and
/// none of its calls hung or outlasted its patience (a walk would wait on it).
fn walkable(r: &ToolReport) -> bool {
    r.status == crate::finding::ToolStatus::Tested
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

/// The listing's own findings: items that are not usable tools, and a truncated listing.
fn listing_findings(problems: &[ListingProblem], truncated: Option<&str>) -> Vec<Finding> {
    let mut findings: Vec<Finding> = problems
        .iter()
        .map(|ListingProblem { index, name, reason }| {
            Finding::general(
                name.clone(),
                FindingKind::MalformedTool,
                Severity::Warning,
                format!("tools/list item {index} is not a usable tool and was skipped: {reason}"),
            )
        })
        .collect();
    if let Some(t) = truncated {
        findings.push(Finding::general(
            None,
            FindingKind::ToolsListTruncated,
            Severity::Warning,
            t.to_owned(),
        ));
    }
    findings
}

/// One server-wide finding for the breaches of the stdio framing or of JSON-RPC that belong to
/// no call (a banner at start-up, log lines between calls, replies to notifications).
fn stray_finding(slots: &[Instance<'_>]) -> Option<Finding> {
    let (mut count, mut first) = (0, Vec::new());
    for slot in slots {
        let (n, some) = slot.stray_violations();
        count += n;
        first.extend(some.into_iter().filter(|d| !first.contains(d)).collect::<Vec<_>>());
    }
    let head = first.first()?.clone();
    Some(Finding {
        outcome: Some(Outcome::ProtocolViolation { detail: first.join("\n") }),
        ..Finding::general(
            None,
            FindingKind::ProtocolViolation,
            Severity::Failure,
            format!(
                "{count} breach(es) of the wire protocol outside any call, first: {head}; stdout carries only MCP messages, one per line, and notifications get no answer"
            ),
        )
    })
}
