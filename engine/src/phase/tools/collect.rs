//! What a single job would have kept of a tool's cases, rebuilt in case order from what the
//! workers did in any order: the cases up to the first stop, leaving out the valid (or invalid)
//! cases once they have killed or hung the server too often, and not sending the cases of a
//! class that keeps killing it the same way ([`Order`], which the workers follow too).

use crate::finding::{FindingKind, Severity, StopReason, ToolStatus};
use crate::judge::Outcome;
use crate::phase::tools::class::{Decision, Known, Order, all_traits};
use crate::phase::tools::worker::{Done, failure_key};
use crate::report::{Finding, History, NotSent, ToolReport};
use crate::transport::LateWatch;
use mcp_fuzz_model::case::{Case, Mode};
use std::collections::{BTreeMap, BTreeSet};

/// A tool's results in case order, with what its ending needs to know about them.
pub(super) struct Kept {
    /// Each kept case's index and outcome, in case order.
    pub results: Vec<(usize, Outcome)>,
    /// The watches on calls past their timeout, and the case of each.
    pub late: Vec<LateWatch>,
    pub late_case: Vec<usize>,
    /// The call number on its process of each case that killed the server.
    pub death_call: BTreeMap<usize, u64>,
    /// The calls its process had been sent, for each case that may be a failure.
    pub histories: BTreeMap<usize, History>,
    /// Why the campaign must stop after this tool (`--max-failures`), if it must.
    pub stop: Option<StopReason>,
    /// Cases were left out after a case that never ended (a worker's server broke, or time ran
    /// out).
    pub incomplete: bool,
    /// The decisions so far, and the cases left out by validity (0: invalid, 1: valid).
    order: Order,
    left_out: [usize; 2],
}

impl Kept {
    /// Rebuilds what one job would have kept from `done` (sorted by case index), counting the
    /// kept cases on `tr`; `failures_left` and `max_failures` are `--max-failures`' budget.
    pub fn collect(
        cases: &[Case],
        done: Vec<Done>,
        failures_left: Option<usize>,
        max_failures: Option<usize>,
        tr: &mut ToolReport,
    ) -> Self {
        let mut kept = Self {
            results: Vec::new(),
            late: Vec::new(),
            late_case: Vec::new(),
            death_call: BTreeMap::new(),
            histories: BTreeMap::new(),
            stop: None,
            incomplete: false,
            order: Order::default(),
            left_out: [0; 2],
        };
        let traits = all_traits(cases);
        let mut not_sent: Vec<NotSent> = Vec::new();
        let mut keys = BTreeSet::new();
        let mut done = done.into_iter().peekable();
        for (index, case) in cases.iter().enumerate() {
            let valid = usize::from(case.label.mode.is_valid());
            match kept.order.decide(case, &traits[index]) {
                Decision::Send => {}
                other => {
                    // A worker that could not know yet may have sent it: its result is dropped.
                    done.next_if(|d| d.index == index);
                    match other {
                        Decision::NotSent(k) => not_sent_one(&mut not_sent, k),
                        _ => kept.left_out[valid] += 1,
                    }
                    continue;
                }
            }
            let Some(d) = done.next_if(|d| d.index == index) else {
                kept.incomplete = true;
                break;
            };
            count(tr, case, &d);
            if let Some(key) = failure_key(case, &d.outcome) {
                keys.insert(key);
            }
            kept.order.ran(case, &traits[index], d.restarted, &d.outcome);
            kept.keep(index, d);
            if failures_left.is_some_and(|left| keys.len() >= left) {
                kept.stop = Some(StopReason::MaxFailures(max_failures.unwrap_or_default()));
                break;
            }
        }
        tr.not_sent = not_sent;
        kept
    }

    /// Keeps one done case.
    fn keep(&mut self, index: usize, d: Done) {
        if let Some(w) = d.late {
            self.late.push(w);
            self.late_case.push(index);
        }
        if matches!(d.outcome, Outcome::Exited { .. }) {
            self.death_call.insert(index, d.call_no);
        }
        if let Some(h) = d.history {
            self.histories.insert(index, h);
        }
        self.results.push((d.index, d.outcome));
    }

    /// One finding per tool (its identity is the tool and the kind) naming both kinds of case
    /// when both gave up, and the tool marked as given up. A warning: the crashes or hangs that
    /// made it give up are the failures, each reported by cause; this says what was not run.
    pub fn gave_up(&self, tool: &str, tr: &mut ToolReport) -> Option<Finding> {
        let parts: Vec<String> = [(1, "valid"), (0, "invalid")]
            .into_iter()
            .filter(|(v, _)| self.order.gave_up[*v])
            .map(|(v, what)| {
                format!(
                    "the server died or hung {} times on {what} cases, so {} more {what} case(s) were not run",
                    self.order.restarts[v], self.left_out[v]
                )
            })
            .collect();
        if parts.is_empty() {
            return None;
        }
        tr.status = ToolStatus::GaveUp;
        tr.reason = Some(parts.join("; "));
        let message = parts.join("; ");
        Some(Finding::general(
            Some(tool.to_owned()),
            FindingKind::GaveUp,
            Severity::Warning,
            message,
        ))
    }
}

/// Counts a case not sent under its known death: one entry per death, whose class is the
/// latest (each death of the cause that came after the class formed can only widen it).
fn not_sent_one(all: &mut Vec<NotSent>, k: Known) {
    let class = k.class_text();
    match all.iter_mut().find(|n| n.cause == k.cause) {
        Some(n) => {
            n.cases += 1;
            n.class = class;
        }
        None => all.push(NotSent { cases: 1, cause: k.cause, class }),
    }
}

/// Counts a kept case on the tool's line: its outcome kind, its mode, a valid success.
fn count(tr: &mut ToolReport, case: &Case, d: &Done) {
    tr.count(d.outcome.kind());
    let succeeded = tr.valid_succeeded.get_or_insert(0);
    *succeeded += u64::from(case.label.mode.is_valid() && d.outcome == Outcome::Ok);
    match case.label.mode {
        Mode::Boundary => tr.cases.boundary += 1,
        Mode::Valid => tr.cases.valid += 1,
        Mode::Invalid => tr.cases.invalid += 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_fuzz_model::case::CaseLabel;
    use mcp_fuzz_model::outcome::ExitInfo;
    use serde_json::json;

    fn case(factor: f64) -> Case {
        let Some(arguments) = json!({"factor": factor}).as_object().cloned() else { panic!() };
        Case { label: CaseLabel::of(Mode::Valid), arguments, draw: None }
    }

    fn done(index: usize, factor: f64) -> Done {
        let dies = factor < 0.0;
        let outcome = if dies {
            Outcome::Exited { exit: ExitInfo { code: Some(7), signal: None }, stderr: Vec::new() }
        } else {
            Outcome::Ok
        };
        Done {
            index,
            outcome,
            restarted: dies,
            result: None,
            late: None,
            call_no: 1,
            history: None,
        }
    }

    #[test]
    fn cases_of_a_known_death_are_not_kept_and_are_counted_apart() {
        let factors = [1.0, -1.0, -2.5, 0.0, -3.0, -4.0, 5.0, -6.0];
        let cases: Vec<Case> = factors.iter().map(|&f| case(f)).collect();
        // A worker that sent case 5 before it knew (it is dropped); case 7 it did not send.
        let sent: Vec<Done> =
            factors.iter().enumerate().filter(|(i, _)| *i != 7).map(|(i, &f)| done(i, f)).collect();
        let mut tr = ToolReport::new("scale");
        let kept = Kept::collect(&cases, sent, None, None, &mut tr);
        let indexes: Vec<usize> = kept.results.iter().map(|(i, _)| *i).collect();
        assert_eq!(indexes, [0, 1, 2, 3, 4, 6]);
        assert!(!kept.incomplete, "a case not sent is not missing");
        assert_eq!(tr.not_sent.len(), 1, "{:?}", tr.not_sent);
        let n = tr.not_sent[0].clone();
        assert_eq!((n.cases, n.class.as_str()), (2, "negative number at `/factor`"));
        assert!(n.cause.starts_with("exited"), "{}", n.cause);
        assert!(kept.gave_up("scale", &mut tr).is_none(), "three deaths are within the budget");
        assert_eq!(
            tr.not_sent_note().as_deref(),
            Some(
                format!(
                    "2 cases not sent: same cause as {} (negative number at `/factor`)",
                    n.cause
                )
                .as_str()
            )
        );
    }
}
