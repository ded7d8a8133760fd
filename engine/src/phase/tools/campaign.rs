//! One tool's part of a campaign: plan its cases, deal them to the server instances, rebuild in
//! case order what a single job would have kept (up to the first stop, leaving out a kind of case
//! that kept killing or hanging the server), judge, and shrink every failure found on a case.

use crate::config::{MAX_RESTARTS_PER_TOOL, RunConfig};
use crate::finding::{FindingKind, Severity, StopReason, ToolStatus};
use crate::judge::Outcome;
use crate::judge::{judge, schema_finding};
use crate::phase::tools::feed::Pool;
use crate::phase::tools::plan::{Case, Mode, hinted, plan, tool_seed};
use crate::phase::tools::shrink::{Subject, shrink};
use crate::phase::tools::worker::{Done, Shared, Stop, failure_key, finish_waiting, work};
use crate::report::{Evidence, Finding, ToolReport};
use crate::server::{Instance, Waiting, output_validator, patience};
use crate::transport::listing::Tool;
use crate::transport::{Late, LateWatch};
use futures_util::future::join_all;
use mcp_fuzz_generators::Generator;
use mcp_fuzz_generators::hint::HintPlan;
use std::cell::RefCell;
use std::time::Instant;

/// What a tool's run needs from the campaign around it.
pub(crate) struct Context<'a, 's> {
    /// The run's configuration.
    pub cfg: &'a RunConfig,
    /// The server instances (the first one shrinks).
    pub slots: &'a mut [Instance<'s>],
    /// Values harvested from earlier results.
    pub pool: &'a mut Pool,
    /// When the whole run must stop.
    pub run_deadline: Option<Instant>,
    /// Failure findings before this tool (for `--max-failures`).
    pub failures_so_far: usize,
    /// Told what happens, for progress.
    pub on_event: &'a mut dyn FnMut(ToolEvent),
}

/// What a tool's run reports as it goes.
#[derive(Debug, Clone, Copy)]
pub(crate) enum ToolEvent {
    /// The tool's cases are planned: this many.
    Planned(u64),
    /// One more case was called.
    CaseFinished,
}

/// What a tool's run gives back.
pub(crate) struct ToolRun {
    /// The tool's line in the report.
    pub report: ToolReport,
    /// Its findings.
    pub findings: Vec<Finding>,
    /// Why the campaign must stop after this tool, if it must.
    pub stop: Option<StopReason>,
    /// Cases whose calls ended in the background, after the tool's cases were all sent.
    pub late_cases: u64,
}

/// How a tool's run begins.
#[expect(clippy::large_enum_variant, reason = "one per call or tool, moved once and taken apart")]
pub(crate) enum Begun<'t> {
    /// It is over (its schema cannot be fuzzed).
    Over(ToolRun),
    /// Its cases have all been sent: judging and shrinking are left ([`Started::finish`]).
    Started(Box<Started<'t>>),
}

/// A tool whose cases have all been sent (some may still run in the background).
pub(crate) struct Started<'t> {
    tool: &'t Tool,
    generator: Generator,
    cases: Vec<Case>,
    output: Option<jsonschema::Validator>,
    seed: u64,
    done: Vec<Done>,
    waiting: Vec<(usize, Waiting)>,
    broken: Option<String>,
    failures_left: Option<usize>,
    /// The tool's time budget (and the run's) ran out while its cases were sent.
    out_of_time: (bool, bool),
}

/// Sends one tool's cases (already selected): plan them, deal them to the server instances,
/// and harvest the results for output feeding.
pub(crate) async fn start_tool<'t>(ctx: Context<'_, '_>, tool: &'t Tool) -> Begun<'t> {
    let cfg = ctx.cfg;
    let campaign = &cfg.campaign;
    let (generator, mut cases) = match compile_and_plan(tool, cfg) {
        Ok(planned) => planned,
        Err(e) => {
            let mut tr = ToolReport::new(&tool.name);
            tr.status = ToolStatus::SchemaError;
            tr.reason = Some(format!("inputSchema: {e}"));
            return Begun::Over(ToolRun {
                report: tr,
                findings: vec![schema_finding(&tool.name, &e)],
                stop: None,
                late_cases: 0,
            });
        }
    };
    let seed = tool_seed(cfg.seed, &tool.name);
    if campaign.feed && !ctx.pool.is_empty() {
        let fed = ctx.pool.cases(tool.input(), &generator, &cases);
        cases.extend(fed);
    }
    let output = output_validator(tool.output_schema.as_ref());
    (ctx.on_event)(ToolEvent::Planned(cases.len() as u64));
    let tool_deadline = [ctx.run_deadline, campaign.tool_time_budget.map(|b| Instant::now() + b)]
        .into_iter()
        .flatten()
        .min();
    let failures_left = campaign.max_failures.map(|m| m.saturating_sub(ctx.failures_so_far));

    // The cases, dealt round-robin over the server instances.
    let jobs = ctx.slots.len();
    let on_event = ctx.on_event;
    let mut tick = || on_event(ToolEvent::CaseFinished);
    let tick_cell: RefCell<&mut dyn FnMut()> = RefCell::new(&mut tick);
    let shared = Shared {
        tool: &tool.name,
        cases: &cases,
        output: output.as_ref(),
        feed: campaign.feed,
        patience: patience(cfg.server.timeout),
        stop: RefCell::new(Stop::new(failures_left, tool_deadline)),
        on_case: &tick_cell,
    };
    let outs = join_all(ctx.slots.iter_mut().enumerate().map(|(w, slot)| {
        let mine: Vec<usize> = (w..cases.len()).step_by(jobs).collect();
        work(slot, &shared, mine)
    }))
    .await;
    drop(shared);
    let mut done = Vec::new();
    let mut waiting = Vec::new();
    let mut broken = None;
    for (d, w, e) in outs {
        done.extend(d);
        waiting.extend(w);
        broken = broken.or(e);
    }
    done.sort_by_key(|d| d.index);
    for r in done.iter().filter_map(|d| d.result.as_ref()) {
        ctx.pool.harvest(r);
    }
    let now = Instant::now();
    let out_of_time =
        (tool_deadline.is_some_and(|d| now >= d), ctx.run_deadline.is_some_and(|d| now >= d));
    Begun::Started(Box::new(Started {
        tool,
        generator,
        cases,
        output,
        seed,
        done,
        waiting,
        broken,
        failures_left,
        out_of_time,
    }))
}

impl Started<'_> {
    /// Whether finishing can wait for the end of the run, on a server instance of its own:
    /// what is left is waiting for calls past their patience or timeout, and no other
    /// failure (which shrinks best where it was seen) came.
    pub fn only_waits(&self) -> bool {
        let timing = |o: &Outcome| matches!(o, Outcome::Timeout | Outcome::UpstreamTimeout { .. });
        let waits = !self.waiting.is_empty() || self.done.iter().any(|d| timing(&d.outcome));
        waits
            && self.done.iter().all(|d| {
                timing(&d.outcome) || !d.outcome.fails(self.cases[d.index].label.mode.is_valid())
            })
    }

    /// Finishes the tool: judges the calls still in the background, rebuilds in case order what
    /// a single job would have kept, judges, and shrinks every failure found on a case, on
    /// `slot`.
    pub async fn finish(
        self,
        cfg: &RunConfig,
        slot: &mut Instance<'_>,
        run_deadline: Option<Instant>,
    ) -> ToolRun {
        let Started {
            tool,
            generator,
            cases,
            output,
            seed,
            mut done,
            waiting,
            mut broken,
            failures_left,
            out_of_time,
        } = self;
        let campaign = &cfg.campaign;
        let mut tr = ToolReport::new(&tool.name);
        let (late_done, e) =
            finish_waiting(slot, &tool.name, &cases, output.as_ref(), campaign.feed, waiting).await;
        let late_cases = late_done.len() as u64;
        done.extend(late_done);
        broken = broken.or(e);
        done.sort_by_key(|d| d.index);
        // What a single job would have kept: the cases in order, up to the first stop, leaving out
        // the valid (or invalid) cases once they have killed or hung the server too often.
        let mut tool_findings: Vec<(Finding, Option<usize>)> = Vec::new();
        let mut results = Vec::new();
        let mut keys = std::collections::BTreeSet::new();
        let mut stop = None;
        let mut incomplete = false;
        let mut late = Vec::new();
        // The case of each watch in `late`.
        let mut late_case = Vec::new();
        // The call number on its process of each case that killed the server.
        let mut death_call = std::collections::BTreeMap::new();
        // The calls its process had been sent, for each case that may be a failure.
        let mut histories = std::collections::BTreeMap::new();
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
            *tr.outcomes.entry(d.outcome.kind().to_owned()).or_default() += 1;
            let succeeded = tr.valid_succeeded.get_or_insert(0);
            *succeeded += u64::from(valid == 1 && d.outcome == Outcome::Ok);
            match case.label.mode {
                Mode::Boundary => tr.cases.boundary += 1,
                Mode::Valid => tr.cases.valid += 1,
                Mode::Invalid => tr.cases.invalid += 1,
            }
            if let Some(w) = d.late {
                late.push(w);
                late_case.push(index);
            }
            if let Some(key) = failure_key(case, &d.outcome) {
                keys.insert(key);
            }
            if matches!(d.outcome, Outcome::Exited { .. }) {
                death_call.insert(index, d.call_no);
            }
            if let Some(h) = d.history {
                histories.insert(index, h);
            }
            results.push((d.index, d.outcome));
            mode_restarts[valid] += u32::from(d.restarted);
            if mode_restarts[valid] > MAX_RESTARTS_PER_TOOL {
                gave_up[valid] = true;
            }
            if failures_left.is_some_and(|left| keys.len() >= left) {
                stop = Some(StopReason::MaxFailures(campaign.max_failures.unwrap_or_default()));
                break;
            }
        }
        // One finding per tool (its identity is the tool and the kind), naming both kinds of case
        // when both gave up. A warning: the crashes or hangs that made it give up are the
        // failures, each reported by cause; this says what was not run.
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
            tr.status = ToolStatus::GaveUp;
            tr.reason = Some(parts.join("; "));
            tool_findings.push((
                Finding::general(
                    Some(tool.name.clone()),
                    FindingKind::GaveUp,
                    Severity::Warning,
                    parts.join("; "),
                ),
                None,
            ));
        }
        if stop.is_none() && incomplete {
            if let Some(e) = broken {
                tr.status = ToolStatus::GaveUp;
                tr.reason = Some(e);
            } else if out_of_time.0 {
                tr.reason = Some(format!(
                    "stopped by the time budget after {} of {} cases",
                    results.len(),
                    cases.len()
                ));
                if out_of_time.1 {
                    stop = Some(StopReason::TimeBudget);
                }
            }
        }
        tool_findings.extend(judge(tool, &cases, &results, &mut tr));
        // The note on what was not run comes after the failures that caused it.
        if tr.status == ToolStatus::GaveUp && !parts.is_empty() {
            tool_findings.rotate_left(1);
        }

        // A call past its timeout is a hang only if it stays unanswered; a finding whose calls were
        // all answered late is a slow warning, which is not shrunk. A short grace first (most late
        // answers come soon); what is still unanswered is shrunk, and judged again after.
        let grace = (cfg.server.timeout / 2).min(LATE_GRACE);
        settle_timeouts(&mut tool_findings, &late, Instant::now() + grace, false, cfg).await;
        hang_first(&mut tool_findings, &late, &late_case, &cases);

        // Shrink every failure found on a case, on the first server instance.
        let mut poisoned_after: Option<usize> = None;
        for (f, origin) in &mut tool_findings {
            let Some(i) = *origin else { continue };
            if f.severity != Severity::Failure {
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
            let shrinking = shrink(slot, &campaign.shrink, &subject, run_deadline);
            // A timeout whose calls all get their answers late is slow, not worth shrinking: stop
            // as soon as the last late answer comes.
            let shrunk = if f.kind == FindingKind::Timeout {
                tokio::select! {
                    s = shrinking => s,
                    () = all_answered(&late) => continue,
                }
            } else {
                shrinking.await
            };
            if shrunk.poisons {
                poisoned_after = Some(poisoned_after.map_or(i, |p| p.min(i)));
            }
            if let Some(scaling) = &shrunk.scaling {
                let text = scaling.describe(cfg.server.connect.max_call_time);
                // Whether or not the watch already called it a hang: the scaling says why.
                f.kind = FindingKind::Slow;
                f.severity = Severity::Warning;
                f.message = text;
            }
            if shrunk.needs_history {
                // Deaths a fresh process does not repeat: which call of its process each was
                // (deaths on the same call number of every process are one server-wide finding,
                // `crate::group`).
                f.death_calls = results
                    .iter()
                    .filter(|(_, o)| matches!(o, Outcome::Exited { .. }))
                    .filter(|(_, o)| f.cause.as_deref() == Some(o.cause().as_str()))
                    .filter_map(|(j, _)| death_call.get(j).copied())
                    .collect();
                let (n, of) = (shrunk.stats.reproduced, shrunk.stats.reruns);
                f.message = if n == 0 {
                    format!(
                        "{}; it did not fail again in {of} re-runs, one of them on a fresh server \
                         process",
                        f.message
                    )
                } else {
                    format!(
                        "{}; it failed again on {n} of {of} re-runs, never on a fresh server \
                         process: only after earlier calls",
                        f.message
                    )
                };
                f.kind = FindingKind::Flaky;
                f.severity = Severity::Warning;
            }
            f.minimal_arguments = Some(shrunk.minimal);
            f.flaky = shrunk.flaky;
            f.shrink = Some(shrunk.stats);
            f.evidence = Some(Box::new(Evidence {
                exchange: shrunk.exchange,
                stderr: shrunk.stderr,
                minimal_outcome: shrunk.outcome,
                output_schema: tool.output_schema.clone(),
                draw: cases[i].draw,
                history: if shrunk.needs_history { histories.get(&i).cloned() } else { None },
            }));
        }
        // A call is called hung once watched for `--max-call-time` (twice its timeout unless
        // set; shrinking usually took longer).
        let t = cfg.server.timeout;
        let watched = cfg.server.connect.max_call_time.max(t + std::time::Duration::from_secs(1));
        let by = late.iter().map(|w| w.sent() + watched).max().unwrap_or_else(Instant::now);
        settle_timeouts(&mut tool_findings, &late, by, true, cfg).await;
        if let Some(after) = poisoned_after {
            note_poisoned_state(&mut tool_findings, after);
        }
        // Calls still unanswered are not watched past the tool: the server is told to stop them.
        for w in &late {
            w.give_up();
        }
        join_all(late.iter().map(|w| w.settle(w.limit()))).await;
        let mut findings: Vec<Finding> = tool_findings.into_iter().map(|(f, _)| f).collect();
        tr.waited = late_cases > 0 || out_of_time.0;
        if campaign.expected_slow {
            expected_slow(&mut findings);
        }
        ToolRun { report: tr, findings, stop, late_cases }
    }
}

/// A tool whose slowness the config file expects (`expected-slow = true`): its `slow` findings
/// are infos.
fn expected_slow(findings: &mut [Finding]) {
    for f in findings.iter_mut().filter(|f| f.kind == FindingKind::Slow) {
        f.severity = Severity::Info;
        f.message.push_str(" (expected: expected-slow in mcp-fuzz.toml)");
    }
}

/// A timeout finding stands for all the tool's timeouts; its case is the first of them, which may
/// since have been answered (late). The case shrunk and shown is then the first one still
/// unanswered, the one that may be a hang.
fn hang_first(
    findings: &mut [(Finding, Option<usize>)],
    late: &[LateWatch],
    late_case: &[usize],
    cases: &[Case],
) {
    let unanswered =
        late.iter().zip(late_case).find(|(w, _)| !matches!(w.now(), Late::Answered(_)));
    let Some((_, &j)) = unanswered else { return };
    for (f, origin) in findings.iter_mut() {
        let Some(i) = *origin else { continue };
        let answered = late_case
            .iter()
            .position(|&c| c == i)
            .is_some_and(|k| matches!(late[k].now(), Late::Answered(_)));
        if f.kind != FindingKind::Timeout || i == j || !answered {
            continue;
        }
        if let Some(label) = f.other_cases.iter_mut().find(|l| **l == cases[j].label) {
            *label = cases[i].label.clone();
        }
        f.case = Some(cases[j].label.clone());
        f.arguments = Some(cases[j].arguments.clone());
        *origin = Some(j);
    }
}

/// Resolves once every watched call has been answered; never, if one is not.
async fn all_answered(late: &[LateWatch]) {
    for w in late {
        if !matches!(w.settle(w.limit()).await, Late::Answered(_)) {
            std::future::pending::<()>().await;
        }
    }
}

/// A failure that showed again only on a fresh process left its process in another state: the
/// failed valid calls after it on that process are that state's answers, not findings of their
/// own. They are folded into the failure's message ("later calls on that process answered ...").
fn note_poisoned_state(findings: &mut Vec<(Finding, Option<usize>)>, after: usize) {
    let later = |f: &Finding, o: &Option<usize>| {
        f.kind == FindingKind::ValidCallFailed && o.is_some_and(|i| i > after)
    };
    let answers: Vec<String> = findings
        .iter()
        .filter(|(f, o)| later(f, o))
        .filter_map(|(f, _)| f.outcome.as_ref().and_then(|o| o.message()).map(str::to_owned))
        .collect();
    if answers.is_empty() {
        return;
    }
    findings.retain(|(f, o)| !later(f, o));
    if let Some((f, _)) = findings.iter_mut().find(|(_, o)| *o == Some(after)) {
        let first = answers[0].lines().next().unwrap_or("");
        f.message = format!(
            "{}; later calls on that process answered `{first}` (the state this failure left; \
             it shows again on a fresh process)",
            f.message
        );
    }
}

/// How long a tool's end waits for late answers before shrinking its timeouts.
const LATE_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// Settles the tool's `timeout` findings with what the watches on its unanswered calls know by
/// `by`; unless `last`, a finding with a call still unanswered stays a `timeout` for now.
async fn settle_timeouts(
    findings: &mut [(Finding, Option<usize>)],
    late: &[LateWatch],
    by: Instant,
    last: bool,
    cfg: &RunConfig,
) {
    if !findings.iter().any(|(f, _)| f.kind == FindingKind::Timeout) {
        return;
    }
    let lates: Vec<Late> = join_all(late.iter().map(|w| async {
        match w.settle(by).await {
            Late::Waiting => Late::Unanswered(w.watched()),
            l => l,
        }
    }))
    .await;
    let waiting = late.iter().any(|w| w.now() == Late::Waiting);
    for (f, _) in findings.iter_mut().filter(|(f, _)| f.kind == FindingKind::Timeout) {
        if last || !waiting {
            settle(f, &lates, cfg.server.timeout);
        }
    }
}

/// The tool's generator and its planned cases, or why its `inputSchema` cannot be fuzzed.
fn compile_and_plan(tool: &Tool, cfg: &RunConfig) -> Result<(Generator, Vec<Case>), String> {
    let generator = Generator::compile(tool.input()).map_err(|e| e.to_string())?;
    let seed = tool_seed(cfg.seed, &tool.name);
    let mut cases = plan(&generator, seed, cfg.cases).map_err(|e| e.to_string())?;
    // Hints were checked when the config file was read; a schema they cannot apply to has none.
    if let Ok(hints) = HintPlan::new(tool.input(), &cfg.hints_for(&tool.name)) {
        let more = hinted(&generator, &hints, seed, &cases, cfg.cases);
        cases.extend(more);
    }
    Ok((generator, cases))
}

/// Makes a `timeout` finding a `hang` (some call of its tool that got no answer in time was not
/// answered later either, while watched: at most one more `--timeout`, never past
/// `--max-call-time` from its start) or a `slow` warning (every one was answered, late).
fn settle(f: &mut Finding, lates: &[Late], timeout: std::time::Duration) {
    let secs = |pick: fn(&Late) -> Option<std::time::Duration>| {
        lates.iter().filter_map(pick).map(|d| d.as_secs_f64()).reduce(f64::max)
    };
    let watched = secs(|l| match l {
        Late::Unanswered(d) => Some(*d),
        _ => None,
    });
    let answered = secs(|l| match l {
        Late::Answered(d) => Some(*d),
        _ => None,
    });
    let timeout = timeout.as_secs_f64();
    let (kind, text) = match (watched, answered) {
        (None, Some(longest)) => {
            f.severity = Severity::Warning;
            (
                FindingKind::Slow,
                format!(
                    "answered only after {longest:.1} s (--timeout {timeout} s): slow, not hung"
                ),
            )
        }
        (Some(w), _) => {
            (FindingKind::Hang, format!("no answer within {w:.0} s (--timeout {timeout} s)"))
        }
        (None, None) => (FindingKind::Hang, format!("no answer within --timeout {timeout} s")),
    };
    f.kind = kind;
    f.message = f.message.replacen("no answer within the timeout", &text, 1);
}
