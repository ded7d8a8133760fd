//! The sequence phase of a run: random walks over the tools the gate allows, each from a fresh
//! server process, then every failure that needs its earlier steps minimized and reported with
//! its sequence.
//!
//! Walks are dealt whole to the server instances (`--jobs`), and each starts on a fresh process,
//! so a walk depends only on its seed and the server's answers to its own steps: the report is
//! the same for any number of jobs.

use super::exec::{self, Failure, SeqStep, StepRun};
use super::minimize::{Goal, Minimized, Runner, minimize};
use super::model::{self, Role};
use super::walk::{SeqTool, Walker};
use crate::config::RunConfig;
use crate::events::PhaseFinished;
use crate::finding::{FindingKind, Severity};
use crate::judge::describe;
use crate::phase::tools::plan::{CaseLabel, Mode, tool_seed};
use crate::phase::tools::walkable;
use crate::phase::{PhaseOutcome, Section, Sofar};
use crate::report::{Evidence, Finding, StateFamily, StateLink, StatefulSummary};
use crate::server::{Instance, patience};
use futures_util::future::join_all;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::time::Instant;

/// One walk as it ran.
struct Walked {
    steps: Vec<SeqStep>,
    runs: Vec<StepRun>,
    failed: Option<Failure>,
}

/// What the walks give the phase.
struct PhaseResult {
    /// Failures that need earlier calls, one per cause.
    pub findings: Vec<Finding>,
    /// The phase's section of the report.
    pub summary: StatefulSummary,
    /// `tools/call` requests the phase made.
    pub calls: u64,
    /// Server restarts (after a crash) the phase needed.
    pub restarts: u64,
}

/// Runs the phase over the tools the tools phase called to the end, if any: skipped when no
/// value returned by one tool could be taken by another.
pub(crate) async fn run(sofar: &Sofar<'_>) -> Option<PhaseOutcome> {
    let walkable: Vec<SeqTool> = sofar
        .listing
        .tools
        .iter()
        .filter(|t| sofar.tools.iter().any(|r| r.name == t.name && walkable(r)))
        .filter_map(SeqTool::new)
        .collect();
    if walkable.is_empty() {
        return None;
    }
    if let Some(why) = nothing_to_chain(&walkable, sofar.pool.names()) {
        return Some(PhaseOutcome {
            findings: Vec::new(),
            calls: 0,
            restarts: 0,
            section: Section::Stateful(skipped(&walkable, why)),
            finished: Some(PhaseFinished::SequencesSkipped),
        });
    }
    let walked =
        walk_all(sofar.cfg, &walkable, sofar.findings, sofar.deadline, sofar.progress).await;
    Some(PhaseOutcome {
        findings: walked.findings,
        calls: walked.calls,
        restarts: walked.restarts,
        finished: Some(PhaseFinished::Sequences { walks: walked.summary.sequences }),
        section: Section::Stateful(walked.summary),
    })
}

/// Walks over `tools`; `existing` are the run's findings so far (a failure that one call on a
/// fresh process shows again, and that the run already reported, is not reported twice).
async fn walk_all(
    cfg: &RunConfig,
    tools: &[SeqTool],
    existing: &[Finding],
    deadline: Option<Instant>,
    tick: &dyn Fn(u64),
) -> PhaseResult {
    let settings = &cfg.campaign.stateful;
    let patience = patience(cfg.server.timeout);
    let output = |name: &str| tools.iter().find(|t| t.name == name).and_then(|t| t.output.as_ref());
    let jobs = cfg.campaign.jobs.max(1);
    let out_of_time = || deadline.is_some_and(|d| Instant::now() >= d);

    // The walks, dealt round-robin, each instance walking its share in order, until the walks
    // stop finding anything new ([`Stale`]).
    let mut slots: Vec<Instance<'_>> =
        (0..jobs).map(|_| Instance::new(&cfg.server, None)).collect();
    let stale = RefCell::new(Stale::new(settings.sequences));
    let per_slot = join_all(slots.iter_mut().enumerate().map(|(j, slot)| {
        let stale = &stale;
        async move {
            let mut walked = Vec::new();
            for k in (j..settings.sequences).step_by(jobs) {
                if out_of_time() || stale.borrow().stops_before(k) {
                    break;
                }
                let seed = tool_seed(cfg.seed, &format!("sequence/{k}"));
                let w = walk(slot, tools, seed, settings.length, &output, patience).await;
                stale.borrow_mut().walked(k, w.links(), w.failed.is_some());
                tick(1);
                walked.push((k, w));
            }
            walked
        }
    }))
    .await;
    let last = stale.borrow().last();
    let mut walks: Vec<(usize, Walked)> =
        per_slot.into_iter().flatten().filter(|(k, _)| last.is_none_or(|l| *k <= l)).collect();
    walks.sort_by_key(|(k, _)| *k);

    let mut summary = summarize(tools, &walks);
    // One failure per kind, tool and cause: the first walk's.
    let mut seen: Vec<(FindingKind, String, String)> = Vec::new();
    let mut findings = Vec::new();
    let valid = |name: &str, v: &serde_json::Value| {
        tools.iter().find(|t| t.name == name).is_some_and(|t| t.generator.is_valid(v))
    };
    for (_, w) in walks {
        let Some(failure) = w.failed.clone() else { continue };
        let last = w.steps.last().map(|s| s.tool.clone()).unwrap_or_default();
        let key = (failure.kind.clone(), last, failure.outcome.cause());
        if seen.contains(&key) || out_of_time() {
            continue;
        }
        seen.push(key);
        let target = Goal::of(&failure);
        let mut runner = Runner { slot: &mut slots[0], output: &output, valid: &valid, patience };
        // The failing call alone, with the values it was sent: a bug of one call, which the
        // single-call phases report (when they did, nothing more to say).
        let mut alone = w.steps.last().cloned().expect("a failing walk has a step");
        alone.bindings.clear();
        alone.check = None;
        let steps = if runner.fails_once(std::slice::from_ref(&alone), &target).await {
            let cause = failure.outcome.cause();
            let known = existing.iter().any(|f| {
                f.tool.as_deref() == Some(alone.tool.as_str()) && f.cause.as_deref() == Some(&cause)
            });
            if known && failure.kind == FindingKind::of(&failure.outcome) {
                continue;
            }
            vec![alone]
        } else {
            w.steps.clone()
        };
        let m = minimize(&mut runner, steps, &target, &cfg.campaign.shrink).await;
        let schema =
            tools.iter().find(|t| t.name == w.steps.last().map_or("", |s| s.tool.as_str()));
        let schema = schema.and_then(|t| t.output_schema.clone());
        findings.push(finding(&w, &failure, m, schema));
    }
    summary.findings = findings.len() as u64;
    let (mut calls, mut restarts) = (0, 0);
    for slot in &mut slots {
        calls += slot.calls;
        restarts += slot.restarts;
        slot.close().await;
    }
    PhaseResult { findings, summary, calls, restarts }
}

impl Walked {
    /// The links the walk used: each value a step took from an earlier step's result, as
    /// (producer, consumer, where the consumer took it).
    fn links(&self) -> Vec<Link> {
        let mut links = Vec::new();
        for s in &self.steps {
            for b in &s.bindings {
                let producer = self.steps.get(b.step).map_or("", |p| p.tool.as_str());
                links.push((producer.to_owned(), s.tool.clone(), b.pointer.clone()));
            }
        }
        links
    }
}

/// A value one tool returned that another took: (producer, consumer, the consumer's pointer).
type Link = (String, String, String);

/// Consecutive walks that found nothing new after which the phase stops.
///
/// Why: a walk that fails nothing and chains no value in a way no earlier walk did only repeats
/// what the phase already saw; five in a row show that more walks will not reach new state
/// (n8n-mcp's phase took 16 s for 20 walks that chained nothing, sequential-thinking's 5 s for
/// 20 walks chaining the one tool to itself as the first walk did).
const STALE_WALKS: usize = 5;

/// Where the walks stop finding anything new, decided in walk order whatever the number of
/// jobs: after the first [`STALE_WALKS`] consecutive walks (by index) none of which failed or
/// used a link that no earlier walk used. Whether a walk is new is known once every earlier walk
/// has ended, and never changes after, so the point is fixed once found, a walk past it is never
/// needed, and the phase keeps exactly the walks a one-job run would have.
struct Stale {
    /// For each walk (by index), once it ended: its links and whether it failed.
    ended: Vec<Option<(Vec<Link>, bool)>>,
}

impl Stale {
    fn new(walks: usize) -> Self {
        Self { ended: vec![None; walks] }
    }

    /// Walk `k` ended, with the links it used and whether it failed.
    fn walked(&mut self, k: usize, links: Vec<Link>, failed: bool) {
        self.ended[k] = Some((links, failed));
    }

    /// The last walk a one-job run would make, if the walks stop early.
    fn last(&self) -> Option<usize> {
        let mut seen: Vec<&Link> = Vec::new();
        let mut run = 0;
        for (k, ended) in self.ended.iter().enumerate() {
            // Whether a walk is new needs every earlier walk: stop at the first still running.
            let (links, failed) = ended.as_ref()?;
            let new = *failed || links.iter().any(|l| !seen.contains(&l));
            seen.extend(links);
            run = if new { 0 } else { run + 1 };
            if run == STALE_WALKS {
                return Some(k);
            }
        }
        None
    }

    /// Whether walk `k` comes after the point where the walks stop.
    fn stops_before(&self, k: usize) -> bool {
        self.last().is_some_and(|l| k > l)
    }
}

/// One walk from a fresh process of `slot`, until its length, a failure, or a step left
/// unanswered.
async fn walk<'v>(
    slot: &mut Instance<'_>,
    tools: &[SeqTool],
    seed: u64,
    length: usize,
    output: &impl Fn(&str) -> Option<&'v jsonschema::Validator>,
    patience: std::time::Duration,
) -> Walked {
    slot.renew().await;
    let mut walker = Walker::new(tools, seed, length);
    let mut w = Walked { steps: Vec::new(), runs: Vec::new(), failed: None };
    while let Some(mut step) = walker.next(&w.steps, &w.runs) {
        let Ok(Some(run)) = exec::call(slot, &step, &w.runs, output(&step.tool), patience).await
        else {
            break;
        };
        step.outcome = Some(run.outcome.kind().to_string());
        step.arguments.clone_from(&run.arguments);
        w.failed = exec::judge(&step, &run.outcome);
        w.steps.push(step);
        w.runs.push(run);
        if w.failed.is_some() {
            break;
        }
    }
    w
}

/// The finding of a failing walk, minimized.
fn finding(
    w: &Walked,
    failure: &Failure,
    m: Minimized,
    output_schema: Option<serde_json::Value>,
) -> Finding {
    let last = w.steps.last().expect("a failing walk has a step");
    let cause = failure.outcome.cause();
    let minimal = (m.steps != w.steps).then(|| m.steps.clone());
    let alone_call = m.steps.len() == 1 && m.steps[0].bindings.is_empty();
    let shown = minimal.as_deref().unwrap_or(&w.steps);
    let message = if alone_call {
        format!("{} on valid input, a call of the sequence phase", describe(&failure.outcome, None))
    } else {
        message(failure, shown, m.reproduced, m.reruns)
    };
    let flaky = m.reproduced < m.reruns;
    Finding {
        case: Some(CaseLabel::of(Mode::Valid)),
        arguments: w.runs.last().map(|r| r.arguments.clone()),
        minimal_arguments: shown.last().map(|s| s.arguments.clone()),
        // The answer of the sequence shown (the minimal one's last re-run).
        outcome: Some(m.failure.as_ref().map_or(&failure.outcome, |f| &f.outcome).clone()),
        flaky: Some(flaky),
        shrink: Some(m.stats()),
        cause: Some(cause),
        evidence: Some(Box::new(Evidence {
            minimal_outcome: m.failure.as_ref().map(|f| f.outcome.clone()),
            output_schema,
            ..Evidence::default()
        })),
        // A failure of the one call alone is a single-call finding, found by a walk.
        sequence: if alone_call { Vec::new() } else { w.steps.clone() },
        minimal_sequence: if alone_call { None } else { minimal },
        ..Finding::general(
            Some(last.tool.clone()),
            failure.kind.clone(),
            if m.reproduced == 0 { Severity::Warning } else { Severity::Failure },
            message,
        )
    }
}

/// What a failing sequence shows, in words.
fn message(failure: &Failure, steps: &[SeqStep], reproduced: u32, reruns: u32) -> String {
    let last = steps.last().map_or("", |s| s.tool.as_str());
    let source = |s: &SeqStep| {
        s.bindings
            .first()
            .and_then(|b| steps.get(b.step))
            .map_or("an earlier call", |p| p.tool.as_str())
    };
    let what = describe(&failure.outcome, None);
    let head = match failure.kind {
        FindingKind::UseAfterDelete => {
            let deleter = steps
                .iter()
                .rev()
                .skip(1)
                .find(|s| model::name(&s.tool).role == Some(Role::Deletes));
            format!(
                "`{last}` on a handle that `{}` had just closed or deleted: {what}",
                deleter.map_or("an earlier call", |s| s.tool.as_str())
            )
        }
        FindingKind::UnknownHandle => format!(
            "`{last}` on a well-formed handle that nobody issued (one that `{}` returned, altered): {what}",
            steps.last().map_or("an earlier call", source)
        ),
        FindingKind::CreatedNotFound => format!(
            "`{last}` did not find what `{}` had just created: {what}",
            steps.last().map_or("an earlier call", source)
        ),
        _ if steps.len() > 1 || steps.iter().any(|s| !s.bindings.is_empty()) => format!(
            "{what} on call {} of a sequence; a fresh process answers that call alone",
            steps.len()
        ),
        _ => what,
    };
    let steady = if reproduced == 0 {
        format!("; it did not fail again in {reruns} re-runs of the sequence from a fresh process")
    } else if reproduced < reruns {
        format!("; it failed again on {reproduced} of {reruns} re-runs from a fresh process")
    } else {
        String::new()
    };
    format!("{head}{steady}")
}

/// The phase's section of the report: the families named, the links seen working.
/// Why walking would only repeat the single-call phases, if it would: no value that the
/// single-call phases harvested from a result (`harvested`: the property names it was under)
/// fits an input property of a walked tool, so no step could take what an earlier one
/// returned, and every state check needs that (a handle created, then read, deleted or
/// altered). Each walk costs a fresh process, which for a Python or Node server is most of a
/// second.
#[must_use]
pub fn nothing_to_chain<'a>(
    tools: &[SeqTool],
    harvested: impl IntoIterator<Item = &'a str>,
) -> Option<String> {
    let mut inputs = Vec::new();
    for t in tools {
        property_names(&t.schema, 0, &mut inputs);
    }
    let harvested: Vec<&str> = harvested.into_iter().collect();
    let chains = harvested.iter().any(|o| inputs.iter().any(|i| model::fits(i, o)));
    (!chains).then(|| {
        if harvested.is_empty() {
            "no result held a value (JSON data) that a later call could take".into()
        } else {
            format!(
                "no input property takes a value the results held ({})",
                harvested.iter().take(6).copied().collect::<Vec<_>>().join(", ")
            )
        }
    })
}

/// The property names of an input schema, at any depth (up to 6 levels).
fn property_names<'s>(schema: &'s serde_json::Value, depth: usize, out: &mut Vec<&'s str>) {
    if depth > 6 {
        return;
    }
    match schema {
        serde_json::Value::Object(m) => {
            if let Some(props) = m.get("properties").and_then(serde_json::Value::as_object) {
                out.extend(props.keys().map(String::as_str));
            }
            for v in m.values() {
                property_names(v, depth + 1, out);
            }
        }
        serde_json::Value::Array(items) => {
            for v in items {
                property_names(v, depth + 1, out);
            }
        }
        _ => {}
    }
}

/// The summary of a phase that did not walk, and why.
#[must_use]
pub fn skipped(tools: &[SeqTool], why: String) -> StatefulSummary {
    StatefulSummary {
        tools: tools.iter().map(|t| t.name.clone()).collect(),
        skipped: Some(why),
        ..StatefulSummary::default()
    }
}

/// The families of `tools` named from their names, with two tools or more.
fn families(tools: &[SeqTool]) -> Vec<StateFamily> {
    let mut families: BTreeMap<String, StateFamily> = BTreeMap::new();
    for t in tools {
        let (Some(role), false) = (t.named.role, t.named.noun.is_empty()) else { continue };
        let f = families.entry(t.named.noun.clone()).or_insert_with(|| StateFamily {
            noun: t.named.noun.clone(),
            ..StateFamily::default()
        });
        match role {
            Role::Creates => f.creates.push(t.name.clone()),
            Role::Lists => f.lists.push(t.name.clone()),
            Role::Reads => f.reads.push(t.name.clone()),
            Role::Updates => f.updates.push(t.name.clone()),
            Role::Deletes => f.deletes.push(t.name.clone()),
        }
    }
    families.into_values().filter(|f| f.tools() >= 2).collect()
}

fn summarize(tools: &[SeqTool], walks: &[(usize, Walked)]) -> StatefulSummary {
    let families = families(tools);
    let mut links: BTreeMap<(String, String, String), u64> = BTreeMap::new();
    let mut steps = 0;
    for (_, w) in walks {
        steps += w.steps.len() as u64;
        for (s, r) in w.steps.iter().zip(&w.runs) {
            if r.outcome != crate::judge::Outcome::Ok {
                continue;
            }
            for b in s.bindings.iter().filter(|b| !b.altered) {
                let Some(from) = w.steps.get(b.step) else { continue };
                let via = b.from.rsplit('/').next().unwrap_or_default().to_owned();
                *links.entry((from.tool.clone(), s.tool.clone(), via)).or_default() += 1;
            }
        }
    }
    StatefulSummary {
        sequences: walks.len() as u64,
        steps,
        tools: tools.iter().map(|t| t.name.clone()).collect(),
        families,
        links: links
            .into_iter()
            .map(|((from, to, via), calls)| StateLink { from, to, via, calls })
            .collect(),
        findings: 0,
        skipped: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_walks_stop_after_five_in_a_row_that_found_nothing_new_whatever_the_order_they_end_in() {
        let link = |c: &str| vec![("list".to_owned(), c.to_owned(), "/id".to_owned())];
        let mut stale = Stale::new(20);
        // Walks end out of order, as two jobs finish them; walk 0 finds the one link.
        for k in [1, 3, 2, 5, 4] {
            stale.walked(k, link("get"), false);
        }
        assert_eq!(stale.last(), None, "walk 0 has not ended");
        stale.walked(0, link("get"), false);
        assert_eq!(stale.last(), Some(5), "walks 1 to 5 repeat walk 0's link");
        assert!(stale.stops_before(6) && !stale.stops_before(5));
        let mut new = Stale::new(8);
        for k in 0..8 {
            let links = if k % 4 == 0 { link(&format!("t{k}")) } else { Vec::new() };
            new.walked(k, links, k == 7);
        }
        assert_eq!(new.last(), None, "a new link or a failure within every five walks");
    }
}
