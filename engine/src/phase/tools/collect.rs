//! What a single job would have kept of a tool's cases, rebuilt in case order from what the
//! workers did in any order: the cases up to the first stop, leaving out the valid (or invalid)
//! cases once they have killed or hung the server too often.

use crate::config::MAX_RESTARTS_PER_TOOL;
use crate::finding::{FindingKind, Severity, StopReason, ToolStatus};
use crate::judge::Outcome;
use crate::phase::tools::worker::{Done, failure_key};
use crate::report::{Finding, History, ToolReport};
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
    /// Restarts, whether they gave up, and cases left out, by validity (0: invalid, 1: valid).
    restarts: [u32; 2],
    gave_up: [bool; 2],
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
            restarts: [0; 2],
            gave_up: [false; 2],
            left_out: [0; 2],
        };
        let mut keys = BTreeSet::new();
        let mut done = done.into_iter().peekable();
        for (index, case) in cases.iter().enumerate() {
            let valid = usize::from(case.label.mode.is_valid());
            if kept.gave_up[valid] {
                kept.left_out[valid] += 1;
                continue;
            }
            let Some(d) = done.next_if(|d| d.index == index) else {
                kept.incomplete = true;
                break;
            };
            count(tr, case, &d);
            if let Some(key) = failure_key(case, &d.outcome) {
                keys.insert(key);
            }
            kept.keep(index, d, valid);
            if failures_left.is_some_and(|left| keys.len() >= left) {
                kept.stop = Some(StopReason::MaxFailures(max_failures.unwrap_or_default()));
                break;
            }
        }
        kept
    }

    /// Keeps one done case.
    fn keep(&mut self, index: usize, d: Done, valid: usize) {
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
        self.restarts[valid] += u32::from(d.restarted);
        if self.restarts[valid] > MAX_RESTARTS_PER_TOOL {
            self.gave_up[valid] = true;
        }
    }

    /// One finding per tool (its identity is the tool and the kind) naming both kinds of case
    /// when both gave up, and the tool marked as given up. A warning: the crashes or hangs that
    /// made it give up are the failures, each reported by cause; this says what was not run.
    pub fn gave_up(&self, tool: &str, tr: &mut ToolReport) -> Option<Finding> {
        let parts: Vec<String> = [(1, "valid"), (0, "invalid")]
            .into_iter()
            .filter(|(v, _)| self.gave_up[*v])
            .map(|(v, what)| {
                format!(
                    "the server died or hung {} times on {what} cases, so {} more {what} case(s) were not run",
                    self.restarts[v], self.left_out[v]
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
