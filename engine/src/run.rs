//! One fuzzing run, top to bottom: connect, list, run the tools phase over the listing, then
//! the phases after it, then the run's last step over every finding (a call limit proved,
//! failures that need earlier calls replayed, one finding per cause) and the report.

use crate::config::{MAX_PAGES, RunConfig};
use crate::events::{Events, RunEvent};
use crate::finding::{FindingKind, Severity};
use crate::phase::{self, PhaseOutcome, Section, Sofar};
use crate::report::{Finding, REPORT_VERSION, Report, Score};
use crate::server::{Instance, ListError};
use crate::transport::ConnectError;
use crate::transport::listing::ListingProblem;
use std::time::Instant;

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

/// Runs the campaign, telling `on_event` what happens as it goes.
///
/// # Errors
/// [`RunError`] when the server cannot be started or listed at all; everything after that is
/// a finding in the report.
pub async fn run(cfg: &RunConfig, mut on_event: impl FnMut(&RunEvent)) -> Result<Report, RunError> {
    let started = Instant::now();
    let deadline = cfg.campaign.time_budget.map(|b| started + b);
    let mut first = Instance::start(&cfg.server).await?;
    let server = first.connection().map(|c| c.server.clone()).unwrap_or_default();
    let capabilities =
        first.connection().map(|c| c.capabilities.clone()).unwrap_or(serde_json::Value::Null);
    let listing = first.list_tools(MAX_PAGES).await.map_err(|e| match e {
        ListError::Connect(c) => RunError::Connect(c),
        ListError::Listing(l) => RunError::Listing(l),
    })?;
    let mut events = Events::new(&mut on_event);
    let mut findings = listing_findings(&listing.problems, listing.truncated.as_deref());
    let listed = findings.len() as u64;
    events.count(|t| t.findings = listed);
    let tools = phase::tools::run(cfg, &listing, first, deadline, 0, &mut events).await;
    findings.extend(tools.findings);
    let (mut calls, mut restarts) = (tools.calls, tools.restarts);
    let mut report = Report {
        report_version: REPORT_VERSION,
        tool_version: env!("CARGO_PKG_VERSION").to_owned(),
        target: cfg.server.target.redacted(),
        server,
        seed: cfg.seed,
        partition: cfg.selection.partition.map(|p| p.to_string()),
        score: Score::of(&tools.reports),
        tools: Vec::new(),
        findings: Vec::new(),
        restarts: 0,
        calls: 0,
        spares: 0,
        recycled: 0,
        duration_secs: 0.0,
        baseline: None,
        stopped: tools.stop.map(|s| s.to_string()),
        merged_from: None,
        stateful: None,
        surfaces: None,
        protocol: None,
        extra: serde_json::Map::new(),
    };
    if tools.stop.is_none() {
        let sofar = Sofar {
            cfg,
            listing: &listing,
            tools: &tools.reports,
            findings: &[],
            pool: &tools.pool,
            capabilities: &capabilities,
            deadline,
            progress: &|_| {},
        };
        for outcome in phase::run_later(sofar, &mut findings, &mut events).await {
            let PhaseOutcome { calls: c, restarts: r, section, .. } = outcome;
            (calls, restarts) = (calls + c, restarts + r);
            match section {
                Section::Stateful(s) => report.stateful = Some(s),
                Section::Surfaces(s) => report.surfaces = s,
                Section::Protocol(s) => report.protocol = Some(s),
            }
        }
    }
    findings.extend(tools.stray);
    // One bug, one finding: a cause seen on several tools, and deaths on a call limit.
    let (limit, proof_calls) = phase::limit::prove(cfg, &findings).await;
    calls += proof_calls;
    // Failures that need earlier calls: replayed with the calls their process had been sent.
    if cfg.campaign.stateful.enabled && findings.iter().any(replayable) {
        let (c, r) = phase::sequence::history::settle(
            cfg,
            &listing,
            &tools.reports,
            &mut findings,
            limit,
            deadline,
        )
        .await;
        (calls, restarts) = (calls + c, restarts + r);
    }
    report.findings = crate::group::by_cause(findings, limit);
    report.tools = tools.reports;
    report.calls = calls;
    report.restarts = restarts;
    report.spares = cfg.server.spares.started();
    report.recycled = cfg.server.call_limit.recycled();
    report.duration_secs = (started.elapsed().as_secs_f64() * 1000.0).round() / 1000.0;
    Ok(report)
}

/// A failure that needs earlier calls, with the calls its process had been sent.
fn replayable(f: &Finding) -> bool {
    f.kind == FindingKind::Flaky && f.evidence.as_ref().is_some_and(|e| e.history.is_some())
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
