//! The workers that call a tool's cases on the server instances.
//!
//! With `--jobs N` a tool's cases are dealt round-robin to N [`Instance`]s, whose workers run
//! concurrently on the run's task (no thread, no `Send` needed). Each worker takes its cases in
//! index order, so the report can be rebuilt in case order whatever the interleaving.
//!
//! Early stops stay deterministic: a worker stops before case `i` only when `i` is certainly past
//! the point where a one-job run would have stopped (the restart limit or `--max-failures`);
//! that point can only move earlier as results come in, so every case up to the final point is
//! run by some worker, and the run keeps exactly the results a single job would have kept.

use crate::config::MAX_RESTARTS_PER_TOOL;
use crate::judge::Outcome;
use crate::phase::tools::class::{Decision, Order, Trait};
use crate::phase::tools::plan::Case;
use crate::server::{Attempt, Called, History, Instance, Keep, Waiting, patience};
use crate::transport::LateWatch;
use futures_util::future::join_all;
use serde_json::Value;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

/// Calls whose outcomes all name an unreachable upstream before a tool is called no more.
///
/// Why: every further call of such a tool is the same failed network request; six calls (valid
/// and invalid ones are interleaved from the start of the plan) show it does not depend on the
/// input, well within the "at most 12 calls" an unavailable tool may cost.
pub(crate) const UPSTREAM_CALLS: usize = 6;

/// A worker's calls running in the background at once before it gives each new case its full
/// patience again.
///
/// Why: a server that answers slowly on a whole class of input would otherwise get every case
/// of that class at once; 64 in flight overlap the waits of a `--cases 200` run without flooding
/// it.
const MAX_IN_FLIGHT: usize = 64;

/// The patience of a case once the server has shown that it serves other calls while one runs
/// (a call went to the background): long enough for an ordinary answer.
///
/// Why: with the full patience (a quarter of `--timeout`, up to 1 s), each slow case held the
/// next one back that long: 101 slow cases of one tool cost 25 s at `--timeout 1` (issue 29
/// item 4). The verdicts do not change: a call in the background is judged when it ends.
const SHORT_PATIENCE: Duration = Duration::from_millis(50);

/// What makes a case's outcome a failure finding, for `--max-failures`: its cause (one
/// finding per cause and tool).
pub(crate) type FailureKey = String;

/// The cause of a case's outcome, if the outcome is a failure.
pub(crate) fn failure_key(case: &Case, outcome: &Outcome) -> Option<FailureKey> {
    outcome
        .fails(case.label.mode.is_valid())
        .then(|| outcome.without_echoes(&case.arguments).cause())
}

/// What the workers of one tool share: where to stop.
pub(crate) struct Stop {
    /// Cases that restarted the server, with whether the case was a valid one: those a single
    /// job certainly sent too (decided after every case before them had ended).
    ///
    /// Valid and invalid cases have separate restart budgets: a tool that dies on every valid
    /// input still gets its invalid cases run, so its score means something.
    restarts: Vec<(usize, bool)>,
    /// What a single job decided for the cases before [`Stop::next`], all ended or not sent.
    order: Order,
    /// The first case not yet ended or not sent.
    next: usize,
    /// The cases after it that ended (with whether they restarted the server, and how), or
    /// were not sent (`None`).
    pending: BTreeMap<usize, Option<(bool, Outcome)>>,
    /// An invalid case before [`Stop::next`] was not sent under a known death.
    masked: bool,
    /// Cases that failed, with their identity.
    failures: Vec<(usize, FailureKey)>,
    /// Failure findings still allowed before `--max-failures` stops the run.
    failures_left: Option<usize>,
    /// The first case whose server could not be (re)started.
    broken: Option<usize>,
    /// Cases and whether their outcome names an unreachable upstream.
    upstream: Vec<(usize, bool)>,
    deadline: Option<Instant>,
}

impl Stop {
    pub fn new(failures_left: Option<usize>, deadline: Option<Instant>) -> Self {
        Self {
            restarts: Vec::new(),
            order: Order::default(),
            next: 0,
            pending: BTreeMap::new(),
            masked: false,
            failures: Vec::new(),
            failures_left,
            broken: None,
            upstream: Vec::new(),
            deadline,
        }
    }

    /// A case index past which a one-job run certainly stopped, if one is known yet.
    fn bound(&self) -> Option<usize> {
        let by_failures = self.failures_left.and_then(|left| {
            let mut f = self.failures.clone();
            f.sort_by_key(|(i, _)| *i);
            let mut seen = BTreeSet::new();
            f.into_iter().find_map(|(i, k)| {
                seen.insert(k);
                (seen.len() >= left).then_some(i)
            })
        });
        [by_failures, self.broken, self.unavailable_bound()].into_iter().flatten().min()
    }

    /// The case at which a one-job run saw the tool's first [`UPSTREAM_CALLS`] outcomes (in case
    /// order) all name an unreachable upstream: the tool is unavailable and is called no more.
    fn unavailable_bound(&self) -> Option<usize> {
        let mut u = self.upstream.clone();
        u.sort_unstable();
        let first = u.get(..UPSTREAM_CALLS)?;
        // Only a prefix without gaps tells what a one-job run saw first.
        let contiguous = first.iter().enumerate().all(|(k, (i, _))| k == *i);
        (contiguous && first.iter().all(|(_, up)| *up)).then(|| first[UPSTREAM_CALLS - 1].0)
    }

    /// A case index past which a one-job run stopped sending cases of this validity, because
    /// they kept killing or hanging the server.
    fn restart_bound(&self, valid: bool) -> Option<usize> {
        let limit = usize::try_from(MAX_RESTARTS_PER_TOOL).expect("small");
        let mut r: Vec<usize> =
            self.restarts.iter().filter(|(_, v)| *v == valid).map(|(i, _)| *i).collect();
        (r.len() > limit).then(|| {
            r.sort_unstable();
            r[limit]
        })
    }

    /// No case from `index` on runs.
    pub(crate) fn halts_before(&self, index: usize) -> bool {
        self.deadline.is_some_and(|d| Instant::now() >= d)
            || self.bound().is_some_and(|b| index > b)
    }

    /// This case is not sent: as a single job decides it ([`Order`]) when every case before it
    /// has ended, else when its kind (valid or invalid) certainly used up its restarts.
    fn skips(&self, index: usize, case: &Case, traits: &BTreeSet<Trait>) -> bool {
        if self.next == index {
            return self.order.decide(case, traits) != Decision::Send;
        }
        self.restart_bound(case.label.mode.is_valid()).is_some_and(|b| index > b)
    }

    /// Notes that case `index` ended (`Some`: whether it restarted the server, and its
    /// outcome) or was not sent, and follows a single job's decisions as far as every case has.
    fn settle(&mut self, index: usize, ended: Option<(bool, Outcome)>, shared: &Shared<'_, '_>) {
        self.pending.insert(index, ended);
        while let Some(ended) = self.pending.remove(&self.next) {
            let (case, traits) = (&shared.cases[self.next], &shared.traits[self.next]);
            match (ended, self.order.decide(case, traits)) {
                (Some((restarted, outcome)), Decision::Send) => {
                    self.order.ran(case, traits, restarted, &outcome);
                }
                (_, Decision::NotSent(_)) if !case.label.mode.is_valid() => self.masked = true,
                // A case sent before a single job would have left it out is not one of its
                // cases.
                _ => {}
            }
            self.next += 1;
        }
    }

    /// Whether a single job left out an invalid case because its class keeps killing the
    /// server (as far as every case has ended): its mutation was built on a value that dies
    /// (the simplest `limit`, 0, divides by zero), so what it tests is masked, and the
    /// mutations are worth applying to a call that worked.
    pub(crate) fn masked(&self) -> bool {
        self.masked
    }
}

/// One case done by a worker.
pub(crate) struct Done {
    pub index: usize,
    pub outcome: Outcome,
    pub restarted: bool,
    pub result: Option<Value>,
    pub late: Option<LateWatch>,
    /// Its number among the calls on its server process.
    pub call_no: u64,
    /// For an answer that may be a failure: the calls its process had been sent.
    pub history: Option<History>,
}

/// What one tool's workers share.
pub(crate) struct Shared<'a, 'p> {
    pub tool: &'a str,
    pub cases: &'a [Case],
    pub output: Option<&'a jsonschema::Validator>,
    pub feed: bool,
    /// The traits of each case, for the class rule.
    pub traits: &'a [BTreeSet<Trait>],
    /// How long a call runs before it may go on in the background.
    pub patience: Duration,
    pub stop: RefCell<Stop>,
    /// Called after every case, for progress.
    pub on_case: &'a RefCell<&'p mut dyn FnMut()>,
}

/// Runs `mine` (case indexes, increasing) on `slot`. Returns what was done, the calls still
/// running in the background (a call that outlasts its [`patience`] while the server serves
/// others: [`finish_waiting`] judges them), and the start-up error if the server could not be
/// (re)started.
pub(crate) async fn work(
    slot: &mut Instance<'_>,
    shared: &Shared<'_, '_>,
    mine: Vec<usize>,
) -> (Vec<Done>, Vec<(usize, Waiting)>, Option<String>) {
    let mut done = Vec::new();
    let mut restarts: u32 = 0;
    let mut waiting = Vec::new();
    let keep = case_keep(shared.feed);
    for i in mine {
        let case = &shared.cases[i];
        if shared.stop.borrow().halts_before(i) {
            break;
        }
        if shared.stop.borrow().skips(i, case, &shared.traits[i]) {
            shared.stop.borrow_mut().settle(i, None, shared);
            continue;
        }
        // Sent with every case before it ended: a single job sends it too.
        let certain = shared.stop.borrow().next == i;
        // Once a call went to the background, the server serves calls concurrently: the next
        // slow ones need not hold the worker back as long (up to MAX_IN_FLIGHT at once).
        let running = waiting.iter().filter(|(_, w): &&(usize, Waiting)| !w.is_finished()).count();
        let patience = if !waiting.is_empty() && running < MAX_IN_FLIGHT {
            shared.patience.min(SHORT_PATIENCE)
        } else {
            shared.patience
        };
        let attempt =
            slot.call_patiently(shared.tool, &case.arguments, shared.output, keep, patience);
        match attempt.await {
            Err(e) => return (done, waiting, Some(broken(shared, i, &e))),
            Ok(Attempt::Waiting(w)) => waiting.push((i, w)),
            Ok(Attempt::Done(c)) => {
                if c.restarted {
                    restarts += 1;
                    // Back off a little more after each restart of the same tool.
                    tokio::time::sleep(Duration::from_millis(20 * u64::from(restarts))).await;
                }
                done.push(record(shared, i, c, certain));
            }
        }
    }
    (done, waiting, None)
}

/// What a case's call keeps: the result when output feeding is on, and the watch on a call
/// past its timeout.
fn case_keep(feed: bool) -> Keep {
    Keep { exchange: false, result: feed, late: true }
}

/// Judges the calls [`work`] left in the background, once they end. Those cut off by the
/// server's death (another case may have killed it) are sent again, together, on `slot`; one
/// cut off again is waited for alone. Returns them done, and the start-up error if the server
/// could not be (re)started.
pub(crate) async fn finish_waiting(
    slot: &mut Instance<'_>,
    tool: &str,
    cases: &[Case],
    output: Option<&jsonschema::Validator>,
    feed: bool,
    waiting: Vec<(usize, Waiting)>,
) -> (Vec<Done>, Option<String>) {
    let keep = case_keep(feed);
    let mut done = Vec::new();
    let mut cut_off = Vec::new();
    for (i, c) in ended(waiting, output, keep).await {
        match c {
            Some(c) => done.push(finished(i, c)),
            None => cut_off.push(i),
        }
    }
    let mut again = Vec::new();
    let patience = patience(slot.timeout());
    for i in cut_off {
        match slot.call_patiently(tool, &cases[i].arguments, output, keep, patience).await {
            Ok(Attempt::Done(c)) => done.push(finished(i, c)),
            Ok(Attempt::Waiting(w)) => again.push((i, w)),
            Err(e) => return (done, Some(restart_failed(&e))),
        }
    }
    for (i, c) in ended(again, output, keep).await {
        let c = match c {
            Some(c) => c,
            None => match slot.call(tool, &cases[i].arguments, output, keep).await {
                Ok(c) => c,
                Err(e) => return (done, Some(restart_failed(&e))),
            },
        };
        done.push(finished(i, c));
    }
    (done, None)
}

/// The report's reason when the server could not be (re)started.
fn restart_failed(e: &impl std::fmt::Display) -> String {
    format!("the server could not be restarted: {e}")
}

/// Waits for every background call to end: each with its case, judged (`None`: cut off).
async fn ended(
    waiting: Vec<(usize, Waiting)>,
    output: Option<&jsonschema::Validator>,
    keep: Keep,
) -> Vec<(usize, Option<Called>)> {
    join_all(waiting.into_iter().map(|(i, w)| async move { (i, w.finish(output, keep).await) }))
        .await
}

fn finished(index: usize, c: Called) -> Done {
    Done {
        index,
        outcome: c.outcome,
        restarted: c.restarted,
        result: c.result,
        late: c.late,
        call_no: c.call_no,
        history: c.history,
    }
}

/// Notes that the server could not be (re)started for case `i`; the error for the report.
fn broken(shared: &Shared<'_, '_>, i: usize, e: &impl std::fmt::Display) -> String {
    let mut stop = shared.stop.borrow_mut();
    stop.broken = Some(stop.broken.map_or(i, |b| b.min(i)));
    restart_failed(&e)
}

/// Notes case `i`'s outcome for the stop rules and the progress.
fn record(shared: &Shared<'_, '_>, i: usize, c: Called, certain: bool) -> Done {
    let case = &shared.cases[i];
    {
        let mut stop = shared.stop.borrow_mut();
        stop.upstream.push((i, c.outcome.names_upstream()));
        if let Some(key) = failure_key(case, &c.outcome) {
            stop.failures.push((i, key));
        }
        if c.restarted && certain {
            stop.restarts.push((i, case.label.mode.is_valid()));
        }
        stop.settle(i, Some((c.restarted, c.outcome.clone())), shared);
    }
    (shared.on_case.borrow_mut())();
    finished(i, c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_fuzz_model::case::{CaseLabel, Mode};

    fn key(kind: &'static str) -> FailureKey {
        kind.to_owned()
    }

    fn case(mode: Mode) -> Case {
        Case { label: CaseLabel::of(mode), arguments: serde_json::Map::new(), draw: None }
    }

    #[test]
    fn the_stop_point_is_where_one_job_would_have_stopped() {
        let mut stop = Stop::new(None, None);
        // Restarts on valid cases, seen out of order, as two workers report them.
        stop.restarts = vec![(9, true), (1, true), (5, true), (3, true), (7, true)];
        assert_eq!(stop.restart_bound(true), None, "five restarts are allowed");
        stop.restarts.push((11, true));
        assert_eq!(stop.restart_bound(true), Some(11), "the sixth restart in case order");
        stop.restarts.push((0, true));
        assert_eq!(stop.restart_bound(true), Some(9), "an earlier restart moves the point earlier");
        // Case 0 has not ended: the decisions fall back on the restart budget.
        let (valid, invalid) = (case(Mode::Valid), case(Mode::Invalid));
        let none = BTreeSet::new();
        assert!(stop.skips(10, &valid, &none));
        assert!(!stop.skips(9, &valid, &none), "cases up to the point still run");
        assert!(!stop.skips(10, &invalid, &none), "invalid cases have a budget of their own");
        assert!(!stop.halts_before(10), "restarts leave out cases, they do not stop the tool");
        assert_eq!(stop.restart_bound(false), None);

        let mut stop = Stop::new(Some(2), None);
        stop.failures = vec![(4, key("exited")), (2, key("exited")), (6, key("timeout"))];
        assert_eq!(stop.bound(), Some(6), "the second distinct failure in case order");
        stop.failures.push((3, key("internal-error")));
        assert_eq!(stop.bound(), Some(3));
        stop.broken = Some(1);
        assert_eq!(stop.bound(), Some(1), "a server that cannot restart stops everything after");
    }
}
