//! One fuzzing run: connect, list, select the tools (read-only by default), call each with its
//! planned cases, restart the server when it dies or stops answering, classify, and score.

use crate::classify::Outcome;
use crate::client::{ConnectError, ConnectOptions, Connection, Exchange, ServerInfo, Target};
use crate::feed::Pool;
use crate::plan::{Case, CaseLabel, Mode, plan, tool_seed};
use crate::shrink::{ShrinkConfig, ShrinkStats, Subject, shrink};
use crate::tools::{ListingProblem, Tool, list_all};
use crate::worker::{Shared, Slot, Stop, failure_key, work};
use futures_util::future::join_all;
use mcp_fuzz_generators::Generator;
use serde::Serialize;
use serde_json::{Map, Value};
use std::cell::RefCell;
use std::time::{Duration, Instant};

/// The version of the JSON report's shape.
pub const REPORT_VERSION: u32 = 1;

/// Restarts allowed per tool before the run gives up on it.
///
/// Why: a server that dies on every call would otherwise be restarted once per case; five
/// restarts are enough to see that a crash is systematic.
pub const MAX_RESTARTS_PER_TOOL: u32 = 5;

/// Everything a run needs.
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// The server.
    pub target: Target,
    /// Start-up and response limits.
    pub connect: ConnectOptions,
    /// Per-call timeout.
    pub timeout: Duration,
    /// Run seed.
    pub seed: u64,
    /// Random valid and random invalid cases per tool (each).
    pub cases: usize,
    /// Call tools that are not annotated read-only.
    pub include_destructive: bool,
    /// Only tools matching one of these globs (empty: all).
    pub tools: Vec<String>,
    /// Never tools matching one of these globs.
    pub skip_tools: Vec<String>,
    /// `tools/list` page cap.
    pub max_pages: usize,
    /// Only this shard of the selectable tools (`--partition`); the others are skipped.
    pub partition: Option<crate::partition::Partition>,
    /// Shrinking, budgets, parallel jobs and output feeding.
    pub campaign: Campaign,
}

/// How a campaign searches: shrinking, budgets, parallel server instances, output feeding.
#[derive(Debug, Clone)]
pub struct Campaign {
    /// Shrinking of failing cases.
    pub shrink: ShrinkConfig,
    /// Server instances the cases are spread over (`--jobs`); the report is the same for any.
    pub jobs: usize,
    /// Wall time for the whole run (`--time-budget`); tools not reached are skipped.
    pub time_budget: Option<Duration>,
    /// Wall time per tool (`--tool-time-budget`).
    pub tool_time_budget: Option<Duration>,
    /// Stop after this many failure findings (`--max-failures`).
    pub max_failures: Option<usize>,
    /// Feed values from earlier results into later tools' inputs.
    pub feed: bool,
}

impl Default for Campaign {
    fn default() -> Self {
        Self {
            shrink: ShrinkConfig::default(),
            jobs: 1,
            time_budget: None,
            tool_time_budget: None,
            max_failures: None,
            feed: true,
        }
    }
}

/// A tool's status in the report.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolReport {
    /// The tool.
    pub name: String,
    /// `tested`, `skipped`, `unavailable`, `gave-up` or `schema-error`.
    pub status: &'static str,
    /// Why it was skipped or stopped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Cases executed, by mode.
    pub cases: CaseCounts,
    /// Invalid cases answered gracefully.
    pub graceful: u64,
    /// Invalid cases that count in the score.
    pub scored: u64,
    /// The tool's crash-resilience score, in percent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    /// Outcome kinds seen, with counts.
    pub outcomes: std::collections::BTreeMap<&'static str, u64>,
}

/// Cases executed, by mode.
#[derive(Debug, Clone, Default, Serialize)]
pub struct CaseCounts {
    /// Boundary cases.
    pub boundary: u64,
    /// Random valid cases.
    pub valid: u64,
    /// Invalid cases.
    pub invalid: u64,
}

/// Something to fix (or to look at).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Finding {
    /// The tool, when the finding is about one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// What kind of finding: an outcome kind (`exited`, `handler-exception`...) or
    /// `accepts-invalid`, `valid-call-failed`, `tool-unavailable`, `gave-up`, `malformed-tool`,
    /// `tools-list-truncated`, `junk-on-stdout`, `schema-error`.
    pub kind: String,
    /// `failure` (counts against the server), `warning` or `info`.
    pub severity: &'static str,
    /// How the case was made.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub case: Option<CaseLabel>,
    /// The exact arguments sent (the original failing case).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Map<String, Value>>,
    /// The smallest arguments found that still fail the same way.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub minimal_arguments: Option<Map<String, Value>>,
    /// Whether re-running the minimal arguments failed the same way only some of the time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flaky: Option<bool>,
    /// What shrinking did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shrink: Option<ShrinkStats>,
    /// The outcome, in full.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcome: Option<Outcome>,
    /// A one-line explanation.
    pub message: String,
    /// What a case file needs beyond the report (not serialised in it).
    #[serde(skip)]
    pub evidence: Option<Box<Evidence>>,
}

/// What was recorded when the minimal case was re-run, for case files.
#[derive(Debug, Clone, Default)]
pub struct Evidence {
    /// The exchange of the last re-run (a failing one when any failed).
    pub exchange: Option<Exchange>,
    /// The server's stderr tail after that call.
    pub stderr: Vec<String>,
    /// The outcome of that call.
    pub minimal_outcome: Option<Outcome>,
    /// The tool's outputSchema, needed to judge a replay.
    pub output_schema: Option<Value>,
    /// For random cases: the sampler draw that made the case.
    pub draw: Option<u64>,
}

/// The score of the run.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Score {
    /// Graceful invalid cases.
    pub graceful: u64,
    /// Invalid cases that count.
    pub scored: u64,
    /// Percentage, when any case counted.
    pub percent: Option<f64>,
    /// Letter grade.
    pub grade: Option<&'static str>,
}

/// The result of a run.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// Version of this shape.
    pub report_version: u32,
    /// mcp-fuzz version.
    pub tool_version: &'static str,
    /// The target, with secrets redacted.
    pub target: Value,
    /// What the server said about itself.
    pub server: ServerInfo,
    /// The run seed.
    pub seed: u64,
    /// Per-tool status.
    pub tools: Vec<ToolReport>,
    /// Every finding.
    pub findings: Vec<Finding>,
    /// The crash-resilience score.
    pub score: Score,
    /// Why the campaign stopped before calling every planned case, if it did
    /// (`--time-budget`, `--max-failures`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
    /// Server restarts.
    pub restarts: u64,
    /// Calls made.
    pub calls: u64,
    /// Wall time, in seconds.
    pub duration_secs: f64,
}

impl Report {
    /// Tools actually called.
    #[must_use]
    pub fn tested(&self) -> usize {
        self.tools
            .iter()
            .filter(|t| matches!(t.status, "tested" | "unavailable" | "gave-up"))
            .count()
    }

    /// Findings that count against the server.
    #[must_use]
    pub fn failures(&self) -> usize {
        self.findings.iter().filter(|f| f.severity == "failure").count()
    }
}

/// Progress of a run, for a progress bar.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    /// Cases done so far.
    pub done: u64,
    /// Cases planned so far (grows as tools are planned).
    pub planned: u64,
    /// Findings so far (updated after each tool).
    pub findings: u64,
    /// Server restarts so far.
    pub restarts: u64,
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

/// A `*`/`?` glob match, in time linear in `pattern.len() * name.len()` at worst: on a
/// mismatch only the last `*` is retried, one character further on (a pattern of many `*`s
/// against a long tool name must not backtrack exponentially).
#[must_use]
pub fn glob(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    let (mut pi, mut ni) = (0, 0);
    // The position after the last `*` seen, and the name position it currently covers up to.
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        match p.get(pi) {
            Some('*') => {
                star = Some((pi + 1, ni));
                pi += 1;
            }
            Some(&c) if c == '?' || c == n[ni] => {
                pi += 1;
                ni += 1;
            }
            _ => match star {
                Some((after, covered)) => {
                    pi = after;
                    ni = covered + 1;
                    star = Some((after, covered + 1));
                }
                None => return false,
            },
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

/// The letter grade of a score in percent.
#[must_use]
pub fn grade(p: f64) -> &'static str {
    match p {
        p if p >= 95.0 => "A",
        p if p >= 85.0 => "B",
        p if p >= 70.0 => "C",
        p if p >= 50.0 => "D",
        _ => "F",
    }
}

/// Why a tool is not called, if it is not.
fn skip_reason(tool: &Tool, cfg: &RunConfig) -> Option<String> {
    if cfg.skip_tools.iter().any(|g| glob(g, &tool.name)) {
        return Some("excluded by --skip-tool".into());
    }
    if !cfg.tools.is_empty() && !cfg.tools.iter().any(|g| glob(g, &tool.name)) {
        return Some("not selected by --tool".into());
    }
    if tool.read_only != Some(true) && !cfg.include_destructive {
        return Some(match tool.read_only {
            Some(false) => {
                "annotated readOnlyHint: false; pass --include-destructive to call it".into()
            }
            _ => "not annotated readOnlyHint: true; pass --include-destructive to call it".into(),
        });
    }
    None
}

/// Runs the campaign.
///
/// # Errors
/// [`RunError`] when the server cannot be started or listed at all; everything after that is
/// a finding in the report.
#[expect(clippy::too_many_lines, reason = "the run loop reads best top to bottom")]
pub async fn run(cfg: &RunConfig, mut progress: impl FnMut(Progress)) -> Result<Report, RunError> {
    let started = Instant::now();
    let campaign = &cfg.campaign;
    let run_deadline = campaign.time_budget.map(|b| started + b);
    let first = Connection::connect(&cfg.target, &cfg.connect).await?;
    let server = first.server.clone();
    let listing = list_all(&first, cfg.max_pages, cfg.timeout).await.map_err(RunError::Listing)?;
    let jobs = campaign.jobs.max(1);
    let mut slots: Vec<Slot<'_>> = std::iter::once(Slot::new(cfg, Some(first)))
        .chain((1..jobs).map(|_| Slot::new(cfg, None)))
        .collect();
    let mut findings: Vec<Finding> = Vec::new();
    for ListingProblem { index, name, reason } in &listing.problems {
        findings.push(general(
            name.clone(),
            "malformed-tool",
            "warning",
            format!("tools/list item {index} is not a usable tool and was skipped: {reason}"),
        ));
    }
    if let Some(t) = &listing.truncated {
        findings.push(general(None, "tools-list-truncated", "warning", t.clone()));
    }
    let mut tools_report = Vec::new();
    let mut prog = Progress { done: 0, planned: 0, findings: 0, restarts: 0 };
    let mut dealt: u64 = 0;
    let mut seen_names: Vec<&str> = Vec::new();
    let mut pool = Pool::default();
    let mut stopped: Option<String> = None;
    let mut failures_so_far = 0_usize;
    for tool in &listing.tools {
        if seen_names.contains(&tool.name.as_str()) {
            findings.push(general(
                Some(tool.name.clone()),
                "duplicate-tool",
                "warning",
                "tools/list lists this name more than once; only the first is called".into(),
            ));
            continue;
        }
        seen_names.push(&tool.name);
        let mut tr = ToolReport {
            name: tool.name.clone(),
            status: "tested",
            reason: None,
            cases: CaseCounts::default(),
            graceful: 0,
            scored: 0,
            score: None,
            outcomes: std::collections::BTreeMap::new(),
        };
        let outside = |dealt: &mut u64| {
            let p = cfg.partition?;
            *dealt += 1;
            (!p.contains(&tool.name, *dealt - 1)).then(|| p.skip_reason())
        };
        if let Some(reason) = skip_reason(tool, cfg).or_else(|| outside(&mut dealt)) {
            tr.status = "skipped";
            tr.reason = Some(reason);
            tools_report.push(tr);
            continue;
        }
        if stopped.is_none() && run_deadline.is_some_and(|d| Instant::now() >= d) {
            stopped = Some("the run's --time-budget ran out".into());
        }
        if let Some(why) = &stopped {
            tr.status = "skipped";
            tr.reason = Some(format!("not reached: {why}"));
            tools_report.push(tr);
            continue;
        }
        let generator = match Generator::compile(&tool.input_schema) {
            Ok(g) => g,
            Err(e) => {
                tr.status = "schema-error";
                tr.reason = Some(format!("inputSchema: {e}"));
                findings.push(schema_finding(&tool.name, &e.to_string()));
                tools_report.push(tr);
                continue;
            }
        };
        let seed = tool_seed(cfg.seed, &tool.name);
        let mut cases = match plan(&generator, seed, cfg.cases) {
            Ok(c) => c,
            Err(e) => {
                tr.status = "schema-error";
                tr.reason = Some(format!("inputSchema: {e}"));
                findings.push(schema_finding(&tool.name, &e.to_string()));
                tools_report.push(tr);
                continue;
            }
        };
        if campaign.feed && !pool.is_empty() {
            let fed = pool.cases(&tool.input_schema, &generator, &cases);
            cases.extend(fed);
        }
        let output = tool
            .output_schema
            .as_ref()
            .and_then(|s| jsonschema::options().should_validate_formats(false).build(s).ok());
        prog.planned += cases.len() as u64;
        progress(prog);
        let tool_deadline = [run_deadline, campaign.tool_time_budget.map(|b| Instant::now() + b)]
            .into_iter()
            .flatten()
            .min();
        let failures_left = campaign.max_failures.map(|m| m.saturating_sub(failures_so_far));

        // The cases, dealt round-robin over the server instances.
        let done_count = std::cell::Cell::new(0_u64);
        let base = prog;
        let mut tick = || {
            done_count.set(done_count.get() + 1);
            progress(Progress { done: base.done + done_count.get(), ..base });
        };
        let on_case: RefCell<&mut dyn FnMut()> = RefCell::new(&mut tick);
        let shared = Shared {
            tool: &tool.name,
            cases: &cases,
            output: output.as_ref(),
            feed: campaign.feed,
            stop: RefCell::new(Stop::new(failures_left, tool_deadline)),
            on_case: &on_case,
        };
        let outs = join_all(slots.iter_mut().enumerate().map(|(w, slot)| {
            let mine: Vec<usize> = (w..cases.len()).step_by(jobs).collect();
            work(slot, &shared, mine)
        }))
        .await;
        drop(shared);
        prog.done += done_count.get();
        prog.restarts = slots.iter().map(|s| s.restarts).sum();
        let mut done = Vec::new();
        let mut broken = None;
        for (d, e) in outs {
            done.extend(d);
            broken = broken.or(e);
        }
        done.sort_by_key(|d| d.index);

        // What a single job would have kept: the cases in order, up to the first stop, leaving
        // out the valid (or invalid) cases once they have killed or hung the server too often.
        let mut tool_findings: Vec<(Finding, Option<usize>)> = Vec::new();
        let mut results: Vec<(usize, Outcome)> = Vec::new();
        let mut keys = std::collections::BTreeSet::new();
        let mut halted = false;
        let mut incomplete = false;
        // Restarts and give-up, indexed by validity (0: invalid cases, 1: valid ones).
        let mut mode_restarts = [0_u32; 2];
        let mut gave_up = [false; 2];
        let mut left_out = [0_usize; 2];
        let mut done = done.into_iter().peekable();
        for (index, case) in cases.iter().enumerate() {
            let valid = usize::from(case.label.mode.is_valid());
            if gave_up[valid] {
                left_out[valid] += 1;
                continue;
            }
            let Some(d) = done.next_if(|d| d.index == index) else {
                incomplete = true;
                break;
            };
            *tr.outcomes.entry(d.outcome.kind()).or_default() += 1;
            match case.label.mode {
                Mode::Boundary => tr.cases.boundary += 1,
                Mode::Valid => tr.cases.valid += 1,
                Mode::Invalid => tr.cases.invalid += 1,
            }
            if let Some(r) = &d.result {
                pool.harvest(r);
            }
            if let Some(key) = failure_key(case, &d.outcome) {
                keys.insert(key);
            }
            results.push((d.index, d.outcome));
            mode_restarts[valid] += u32::from(d.restarted);
            if mode_restarts[valid] > MAX_RESTARTS_PER_TOOL {
                gave_up[valid] = true;
            }
            if failures_left.is_some_and(|left| keys.len() >= left) {
                stopped = Some(format!(
                    "--max-failures {} was reached",
                    campaign.max_failures.unwrap_or_default()
                ));
                halted = true;
                break;
            }
        }
        // One finding per tool (its identity is the tool and the kind), naming both kinds of
        // case when both gave up.
        let parts: Vec<String> = [(1, "valid"), (0, "invalid")]
            .into_iter()
            .filter(|(v, _)| gave_up[*v])
            .map(|(v, what)| {
                format!(
                    "the server died or hung {} times on {what} cases, so {} more {what} case(s) were not run",
                    mode_restarts[v], left_out[v]
                )
            })
            .collect();
        if !parts.is_empty() {
            tr.status = "gave-up";
            tr.reason = Some(parts.join("; "));
            tool_findings.push((
                general(Some(tool.name.clone()), "gave-up", "failure", parts.join("; ")),
                None,
            ));
        }
        if !halted && incomplete {
            if let Some(e) = broken {
                tr.status = "gave-up";
                tr.reason = Some(e);
            } else if tool_deadline.is_some_and(|d| Instant::now() >= d) {
                tr.reason = Some(format!(
                    "stopped by the time budget after {} of {} cases",
                    results.len(),
                    cases.len()
                ));
                if run_deadline.is_some_and(|d| Instant::now() >= d) {
                    stopped = Some("the run's --time-budget ran out".into());
                }
            }
        }
        tool_findings.extend(judge(tool, &cases, &results, &mut tr));

        // Shrink every failure found on a case, on the first server instance.
        for (f, origin) in &mut tool_findings {
            let Some(i) = *origin else { continue };
            if f.severity != "failure" {
                continue;
            }
            let Some(outcome) = f.outcome.clone() else { continue };
            let subject = Subject {
                tool: &tool.name,
                tool_seed: seed,
                generator: &generator,
                output: output.as_ref(),
                case: &cases[i],
                outcome: &outcome,
            };
            let shrunk = shrink(&mut slots[0], &campaign.shrink, &subject, run_deadline).await;
            f.minimal_arguments = Some(shrunk.minimal);
            f.flaky = shrunk.flaky;
            f.shrink = Some(shrunk.stats);
            f.evidence = Some(Box::new(Evidence {
                exchange: shrunk.exchange,
                stderr: shrunk.stderr,
                minimal_outcome: shrunk.outcome,
                output_schema: tool.output_schema.clone(),
                draw: cases[i].draw,
            }));
        }
        failures_so_far += tool_findings.iter().filter(|(f, _)| f.severity == "failure").count();
        findings.extend(tool_findings.into_iter().map(|(f, _)| f));
        tools_report.push(tr);
        prog.findings = findings.len() as u64;
        prog.restarts = slots.iter().map(|s| s.restarts).sum();
        progress(prog);
    }
    let (mut junk, mut last) = (0, None);
    for slot in &slots {
        if let Some(c) = slot.connection() {
            let (j, l) = c.junk();
            junk += j;
            last = last.or(l);
        }
    }
    if junk > 0 {
        findings.push(Finding {
            outcome: Some(Outcome::ProtocolViolation {
                detail: format!("{junk} non-JSON-RPC line(s) on stdout"),
            }),
            ..general(
                None,
                "junk-on-stdout",
                "failure",
                format!(
                    "the server wrote {junk} line(s) to stdout that are not JSON-RPC (last: {:?}); stdout is reserved for protocol messages, log to stderr",
                    last.unwrap_or_default()
                ),
            )
        });
    }
    let (mut restarts, mut calls) = (0, 0);
    for slot in &mut slots {
        restarts += slot.restarts;
        calls += slot.calls;
        slot.drop_connection().await;
    }
    let graceful: u64 =
        tools_report.iter().filter(|t| t.status != "unavailable").map(|t| t.graceful).sum();
    let scored: u64 =
        tools_report.iter().filter(|t| t.status != "unavailable").map(|t| t.scored).sum();
    #[expect(clippy::cast_precision_loss, reason = "case counts are small")]
    let percent = (scored > 0).then(|| ((graceful as f64 * 1000.0 / scored as f64).round()) / 10.0);
    Ok(Report {
        report_version: REPORT_VERSION,
        tool_version: env!("CARGO_PKG_VERSION"),
        target: cfg.target.redacted(),
        server,
        seed: cfg.seed,
        tools: tools_report,
        findings,
        score: Score { graceful, scored, percent, grade: percent.map(grade) },
        stopped,
        restarts,
        calls,
        duration_secs: (started.elapsed().as_secs_f64() * 1000.0).round() / 1000.0,
    })
}

/// Judges one tool's results (in case order): unavailable, or one finding per identity, each
/// with the index of its case; fills the tool's score.
fn judge(
    tool: &Tool,
    cases: &[Case],
    results: &[(usize, Outcome)],
    tr: &mut ToolReport,
) -> Vec<(Finding, Option<usize>)> {
    let mut tool_findings: Vec<(Finding, Option<usize>)> = Vec::new();
    // Input-independent failure: valid cases fail like the invalid ones, or name an
    // unreachable upstream.
    let valid_results: Vec<&Outcome> =
        results.iter().filter(|(i, _)| cases[*i].label.mode.is_valid()).map(|(_, o)| o).collect();
    // Only error answers can mean "unavailable": a crash, hang or bad result on every call is
    // a bug, however uniform.
    let error_answer = |o: &Outcome| {
        matches!(
            o,
            Outcome::ToolError { .. } | Outcome::InternalError { .. } | Outcome::RpcError { .. }
        )
    };
    let unavailable = !valid_results.is_empty()
        && valid_results.iter().all(|o| error_answer(o))
        && (valid_results.iter().all(|o| matches!(o, Outcome::ToolError { upstream: true, .. }))
            || same_message(results));
    if unavailable {
        tr.status = "unavailable";
        let msg = valid_results.first().and_then(|o| o.message()).unwrap_or("").to_owned();
        tr.reason = Some(format!("every call fails the same way, whatever the input: {msg}"));
        tool_findings.push((
            Finding {
                outcome: valid_results.first().map(|o| (*o).clone()),
                ..general(
                    Some(tool.name.clone()),
                    "tool-unavailable",
                    "warning",
                    format!(
                        "every call fails the same way, whatever the input (left out of the score): {}",
                        clip(&msg)
                    ),
                )
            },
            None,
        ));
        return tool_findings;
    }
    for (i, outcome) in results {
        let case = &cases[*i];
        let found = if case.label.mode == Mode::Invalid {
            if outcome.is_graceful() {
                tr.graceful += 1;
                tr.scored += 1;
                None
            } else if matches!(outcome, Outcome::Ok) {
                Some((
                    "accepts-invalid",
                    "warning",
                    format!("accepted invalid input ({}) without an error", case.label),
                ))
            } else {
                tr.scored += 1;
                Some((
                    outcome.kind(),
                    "failure",
                    format!("{} on invalid input ({})", describe(outcome), case.label),
                ))
            }
        } else if matches!(outcome, Outcome::OutputSchemaViolation { .. }) {
            Some((
                outcome.kind(),
                "failure",
                format!(
                    "the result breaks the tool's outputSchema: {}",
                    outcome.message().unwrap_or("")
                ),
            ))
        } else if outcome.is_failure() {
            let on = if case.label.fed.is_some() {
                format!("valid input ({})", case.label)
            } else {
                "valid input".to_owned()
            };
            Some((outcome.kind(), "failure", format!("{} on {on}", describe(outcome))))
        } else if matches!(outcome, Outcome::Ok) {
            None
        } else {
            Some((
                "valid-call-failed",
                "info",
                format!(
                    "valid call failed ({}) - may be a synthetic-input false positive",
                    describe(outcome)
                ),
            ))
        };
        if let Some((kind, severity, message)) = found {
            push_once(
                &mut tool_findings,
                (finding(tool, case, outcome, kind, severity, message), Some(*i)),
            );
        }
    }
    if tr.scored > 0 {
        #[expect(clippy::cast_precision_loss, reason = "case counts are small")]
        let p = tr.graceful as f64 * 100.0 / tr.scored as f64;
        tr.score = Some((p * 10.0).round() / 10.0);
    }
    tool_findings
}

/// All invalid and valid cases failed with the same message: the input does not matter.
fn same_message(results: &[(usize, Outcome)]) -> bool {
    let mut msgs = results.iter().map(|(_, o)| (o.kind(), o.message().unwrap_or("")));
    let Some(first) = msgs.next() else { return false };
    first.0 != "ok" && first.0 != "invalid-params" && results.len() >= 2 && msgs.all(|m| m == first)
}

fn describe(o: &Outcome) -> String {
    match o {
        Outcome::Exited { exit, .. } => format!("the server died ({exit})"),
        Outcome::Timeout => "no answer within the timeout".into(),
        Outcome::HandlerException { text } => {
            format!("an exception surfaced as a tool error: {}", first_line(text))
        }
        Outcome::InternalError { message } => {
            format!("JSON-RPC internal error -32603: {}", first_line(message))
        }
        Outcome::RpcError { code, message } => {
            format!("JSON-RPC error {code}: {}", first_line(message))
        }
        Outcome::ProtocolViolation { detail } => format!("protocol violation: {detail}"),
        Outcome::Oversize { bytes } => {
            format!("a {bytes}-byte response, over --max-response-bytes")
        }
        Outcome::OutputSchemaViolation { detail } => format!("output-schema violation: {detail}"),
        Outcome::ToolError { text, .. } => format!("tool error: {}", first_line(text)),
        Outcome::InvalidParams { message } => format!("invalid params: {}", first_line(message)),
        Outcome::Ok => "ok".into(),
    }
}

fn first_line(s: &str) -> String {
    clip(s.lines().next().unwrap_or(""))
}

fn clip(s: &str) -> String {
    if s.chars().count() > 160 {
        format!("{}…", s.chars().take(160).collect::<String>())
    } else {
        s.to_owned()
    }
}

fn finding(
    tool: &Tool,
    case: &Case,
    outcome: &Outcome,
    kind: &str,
    severity: &'static str,
    message: String,
) -> Finding {
    Finding {
        case: Some(case.label.clone()),
        arguments: Some(case.arguments.clone()),
        outcome: Some(outcome.clone()),
        ..general(Some(tool.name.clone()), kind, severity, message)
    }
}

/// Keeps one finding per (tool, kind, mutation, pointer): the first, simplest case.
fn push_once(list: &mut Vec<(Finding, Option<usize>)>, f: (Finding, Option<usize>)) {
    let key = |(x, _): &(Finding, Option<usize>)| {
        (
            x.tool.clone(),
            x.kind.clone(),
            x.case.as_ref().and_then(|c| c.mutation.clone()),
            x.case.as_ref().and_then(|c| c.pointer.clone()),
        )
    };
    if !list.iter().any(|g| key(g) == key(&f)) {
        list.push(f);
    }
}

/// A finding about a tool or the server as a whole, not about one case.
fn general(tool: Option<String>, kind: &str, severity: &'static str, message: String) -> Finding {
    Finding {
        tool,
        kind: kind.to_owned(),
        severity,
        case: None,
        arguments: None,
        minimal_arguments: None,
        flaky: None,
        shrink: None,
        outcome: None,
        message,
        evidence: None,
    }
}

fn schema_finding(tool: &str, msg: &str) -> Finding {
    general(
        Some(tool.to_owned()),
        "schema-error",
        "warning",
        format!("the tool's inputSchema cannot be fuzzed: {msg}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob("get_*", "get_user"));
        assert!(glob("*", "x"));
        assert!(glob("a?c", "abc"));
        assert!(!glob("get_*", "set_user"));
        assert!(glob("*_user", "get_user_user"));
        assert!(glob("a*b*c", "aXbYbZc"));
        assert!(!glob("a*b*c", "aXbYbZ"));
        assert!(glob("**", ""));
        assert!(!glob("?", ""));
        assert!(glob("é?", "éa"));
        // Many stars against a long name that does not match: linear, not exponential.
        let name = "a".repeat(5_000);
        assert!(!glob(&format!("{}b", "*a".repeat(40)), &name));
        assert!(glob(&format!("{}a", "*a".repeat(40)), &name));
    }

    #[test]
    fn grades() {
        assert_eq!(grade(100.0), "A");
        assert_eq!(grade(90.0), "B");
        assert_eq!(grade(10.0), "F");
    }
}
