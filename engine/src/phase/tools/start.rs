//! The start of one tool's part of a campaign: plan its cases, deal them to the server
//! instances, and harvest their results for output feeding. What is left to do (judge, shrink,
//! settle the timeouts) is [`Started::finish`], in `finish.rs`.

use crate::config::RunConfig;
use crate::finding::{StopReason, ToolStatus};
use crate::judge::Outcome;
use crate::judge::schema_finding;
use crate::phase::tools::class::all_traits;
use crate::phase::tools::feed::Pool;
use crate::phase::tools::plan::{Case, hinted, on_worked, plan, tool_seed};
use crate::phase::tools::worker::{Done, Shared, Stop, work};
use crate::report::{Finding, ToolReport};
use crate::server::{Instance, Waiting, output_validator, patience};
use crate::transport::listing::Tool;
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
    pub(super) tool: &'t Tool,
    pub(super) generator: Generator,
    pub(super) cases: Vec<Case>,
    pub(super) output: Option<jsonschema::Validator>,
    pub(super) seed: u64,
    pub(super) done: Vec<Done>,
    pub(super) waiting: Vec<(usize, Waiting)>,
    pub(super) broken: Option<String>,
    pub(super) failures_left: Option<usize>,
    /// The tool's time budget (and the run's) ran out while its cases were sent.
    pub(super) out_of_time: (bool, bool),
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

    // The cases, dealt round-robin over the server instances; then, once a valid call worked,
    // the mutations applied to it (a second wave, after every planned case).
    let jobs = ctx.slots.len();
    let on_event = ctx.on_event;
    let mut stop = Stop::new(failures_left, tool_deadline);
    let (mut done, mut waiting, mut broken) = (Vec::new(), Vec::new(), None);
    let mut from = 0;
    loop {
        let mut tick = || on_event(ToolEvent::CaseFinished);
        let tick_cell: RefCell<&mut dyn FnMut()> = RefCell::new(&mut tick);
        let traits = all_traits(&cases);
        let shared = Shared {
            tool: &tool.name,
            cases: &cases,
            output: output.as_ref(),
            feed: campaign.feed,
            traits: &traits,
            patience: patience(cfg.server.timeout),
            stop: RefCell::new(stop),
            on_case: &tick_cell,
        };
        let outs = join_all(ctx.slots.iter_mut().enumerate().map(|(w, slot)| {
            let mine: Vec<usize> = (from + w..cases.len()).step_by(jobs).collect();
            work(slot, &shared, mine)
        }))
        .await;
        stop = shared.stop.into_inner();
        for (d, w, e) in outs {
            done.extend(d);
            waiting.extend(w);
            broken = broken.or(e);
        }
        done.sort_by_key(|d: &Done| d.index);
        if from > 0 || broken.is_some() || stop.halts_before(cases.len()) {
            break;
        }
        let Some(base) = worked_base(&cases, &done, stop.masked()) else { break };
        let more = on_worked(&generator, base, &cases);
        if more.is_empty() {
            break;
        }
        on_event(ToolEvent::Planned(more.len() as u64));
        from = cases.len();
        cases.extend(more);
    }
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
}

/// The valid call that worked whose arguments the mutations are applied to, if one pays: the
/// first that worked with values from an earlier result or a hint, else the first that worked
/// when at most a quarter of the valid calls did (a check the generated values rarely pass,
/// such as a name that must exist) or when a known death `masked` planned mutations (they were
/// built on a value that kills the server). When most valid calls work, the planned mutations
/// already get past the tool's checks, and a second wave would only cost calls.
fn worked_base<'c>(cases: &'c [Case], done: &[Done], masked: bool) -> Option<&'c Case> {
    let valid: Vec<(&Case, bool)> = done
        .iter()
        .map(|d| (&cases[d.index], matches!(d.outcome, Outcome::Ok)))
        .filter(|(c, _)| c.label.mode.is_valid())
        .collect();
    let worked = || valid.iter().filter(|(_, ok)| *ok).map(|(c, _)| *c);
    worked().find(|c| c.label.fed.is_some() || !c.label.hinted.is_empty()).or_else(|| {
        let rare = worked().count() * 4 <= valid.len();
        worked().next().filter(|_| rare || masked)
    })
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
