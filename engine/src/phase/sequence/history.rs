//! Failures of the single-call phases that need earlier calls: a failure that a fresh process
//! does not repeat (a `flaky` finding) is replayed with the calls its process had been sent
//! before it, from a fresh process. When that fails the same way every time, the calls are cut
//! down to the ones it needs (delta debugging) and the finding becomes the failure it is, with
//! its minimal sequence; otherwise it stays `flaky`.
//!
//! Deaths on a proved call limit are left to `dies-after-calls` ([`crate::group`]), and a death
//! that needs every call of its history is left `flaky` too: that is a count, not a sequence.

use super::exec::SeqStep;
use super::minimize::{Goal, Runner, minimize};
use super::walk::SeqTool;
use crate::config::RunConfig;
use crate::finding::FindingKind;
use crate::group::CALL_LIMIT_PROCESSES;
use crate::judge::Outcome;
use crate::judge::learn;
use crate::phase::tools::shrink::Signature;
use crate::report::{Finding, ToolReport};
use crate::server::{Instance, patience};
use crate::transport::listing::Listing;
use mcp_fuzz_model::facts::{Fact, NeedsCalls};
use std::time::Instant;

/// Flaky findings replayed from their history per run.
///
/// Why: each replay and its minimizing may take the shrink time; a server with many
/// state-dependent failures usually has a few causes, and the rest stay flaky warnings.
const MAX_REPLAYED: usize = 8;

/// Replays the histories of `findings`' flaky failures (those not on the call `limit`) and
/// turns the ones that fail the same way every time into failures with their sequence.
/// Returns the calls and restarts it made.
pub(crate) async fn settle(
    cfg: &RunConfig,
    listing: &Listing,
    reports: &[ToolReport],
    findings: &mut [Finding],
    limit: Option<u64>,
    deadline: Option<Instant>,
) -> (u64, u64) {
    // The tools the tools phase called.
    let tools: Vec<SeqTool> = listing
        .tools
        .iter()
        .filter(|t| reports.iter().any(|r| r.name == t.name && r.status.was_called()))
        .filter_map(SeqTool::new)
        .collect();
    let tools = tools.as_slice();
    let mut slot = Instance::new(&cfg.server, None);
    let output = |name: &str| tools.iter().find(|t| t.name == name).and_then(|t| t.output.as_ref());
    let valid = |name: &str, v: &serde_json::Value| {
        tools.iter().find(|t| t.name == name).is_some_and(|t| t.generator.is_valid(v))
    };
    let patience = patience(cfg.server.timeout);
    let mut replayed = 0;
    for f in findings.iter_mut() {
        if replayed >= MAX_REPLAYED || deadline.is_some_and(|d| Instant::now() >= d) {
            break;
        }
        if f.kind != FindingKind::Flaky {
            continue;
        }
        let on_limit = limit.is_some_and(|n| f.death_calls.iter().any(|c| (n..=n + 1).contains(c)));
        let history = f.evidence.as_ref().and_then(|e| e.history.clone());
        let (Some(outcome), Some(history), false) = (f.outcome.clone(), history, on_limit) else {
            continue;
        };
        replayed += 1;
        let steps: Vec<SeqStep> = history
            .iter()
            .map(|(tool, arguments)| SeqStep {
                tool: tool.clone(),
                arguments: arguments.clone(),
                bindings: Vec::new(),
                check: None,
                outcome: None,
            })
            .collect();
        let target = Goal { kind: FindingKind::of(&outcome), signature: Signature::of(&outcome) };
        let mut runner = Runner { slot: &mut slot, output: &output, valid: &valid, patience };
        // Once as it was, before any minimizing: most flaky failures do not come back.
        if !runner.fails_once(&steps, &target).await {
            continue;
        }
        let mut m = minimize(&mut runner, steps.clone(), &target, &cfg.campaign.shrink).await;
        if matches!(outcome, Outcome::Exited { .. }) {
            // A race that kills one call in three repeats three times by chance one time in 27
            // (fx-flaky): a death must show on as many replays as a call limit needs processes.
            while m.reproduced == m.reruns && (m.reruns as usize) < CALL_LIMIT_PROCESSES {
                m.reruns += 1;
                m.reproduced += u32::from(runner.fails_once(&m.steps, &target).await);
            }
        }
        let a_count = matches!(outcome, Outcome::Exited { .. }) && m.steps.len() == steps.len();
        if m.reproduced < m.reruns || a_count {
            continue;
        }
        // A server that refuses every call after some failed on an unreachable upstream (a
        // circuit breaker: shadcn-ui 2.0.0's "Service temporarily unavailable due to previous
        // failures" after `getaddrinfo ENOTFOUND`) has no bug in these calls.
        // See: issue 30 item 7.
        if m.after_upstream {
            learn(f, Fact::AfterUpstream);
            continue;
        }
        f.flaky = Some(false);
        learn(f, Fact::NeedsCalls(NeedsCalls { steps: m.steps.len(), before: steps.len() - 1 }));
        f.minimal_arguments = m.steps.last().map(|s| s.arguments.clone());
        f.shrink = Some(m.stats());
        f.death_calls.clear();
        f.minimal_sequence = (m.steps != steps).then_some(m.steps);
        f.sequence = steps;
    }
    let calls = slot.calls;
    let restarts = slot.restarts;
    slot.close().await;
    (calls, restarts)
}
