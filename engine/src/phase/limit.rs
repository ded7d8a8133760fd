//! Whether the server process dies on its N-th call whatever the calls are: a call limit (a
//! leaked handle, a counter, a pool that runs out), not a bug of the input that happened to be
//! the N-th.
//!
//! The campaign marks the deaths that a fresh process did not repeat with the number of the
//! call on its process ([`Finding::death_calls`]). The most frequent of those numbers is put to
//! the proof: on fresh processes in turn, the same call (the dying case's input, which a fresh
//! process answers) is sent again and again. When every process answers the first N - 1 and
//! dies on exactly the N-th, the limit is proved and [`crate::group`] makes the deaths one
//! server-wide `dies-after-calls` finding. A server that dies at random after a warm-up dies on
//! one given call number of that many processes in a row too rarely to pass. Deaths scattered
//! over several call numbers are not put to the proof at all: a limit kills on one number.
//!
//! See: issue 12 (one finding for "dies on call N whatever the input") and issue 13 item 3.

use crate::config::RunConfig;
use crate::group;
use crate::judge::Outcome;
use crate::report::Finding;
use crate::server::{Instance, Keep};
use std::time::Instant;

use crate::group::CALL_LIMIT_PROCESSES as PROCESSES;

/// The highest call number put to the proof.
///
/// Why: the proof costs twice that many calls; a limit further out than this is left as the
/// flaky deaths it was seen as.
const MAX_CALL_LIMIT: u64 = 2_000;

/// Proves a call limit from the run's deaths, if they suggest one: the call number, and the
/// calls made to prove it.
pub(crate) async fn prove(cfg: &RunConfig, findings: &[Finding]) -> (Option<u64>, u64) {
    let Some((n, tool, arguments)) = candidate(findings) else { return (None, 0) };
    // At most the time a finding may take to shrink: the proof is part of judging these deaths.
    let deadline = Instant::now() + cfg.campaign.shrink.time;
    let mut calls = 0;
    for _ in 0..PROCESSES {
        let mut slot = Instance::new(&cfg.server, None);
        let mut died_on = None;
        for k in 1..=n {
            if Instant::now() >= deadline {
                break;
            }
            let Ok(called) = slot.call(tool, arguments, None, Keep::default()).await else {
                break;
            };
            calls += 1;
            if matches!(called.outcome, Outcome::Exited { .. }) {
                died_on = Some(k);
                break;
            }
        }
        slot.close().await;
        if died_on != Some(n) {
            return (None, calls);
        }
    }
    (Some(n), calls)
}

/// The call number most deaths fell on (the lowest of equals), with a call that a fresh
/// process answered: the input of a death on that number. None when fewer than half the
/// deaths fell on it: deaths scattered over call numbers are not a limit.
fn candidate(
    findings: &[Finding],
) -> Option<(u64, &str, &serde_json::Map<String, serde_json::Value>)> {
    let mut counts: std::collections::BTreeMap<u64, usize> = std::collections::BTreeMap::new();
    for f in findings {
        for &c in group::flaky_deaths(f) {
            *counts.entry(c).or_default() += 1;
        }
    }
    let most = counts.values().copied().max()?;
    let all: usize = counts.values().sum();
    if most * 2 < all {
        return None;
    }
    let n = counts.into_iter().find(|&(_, k)| k == most).map(|(n, _)| n)?;
    if !(2..=MAX_CALL_LIMIT).contains(&n) {
        return None;
    }
    let dying = findings.iter().find(|f| group::flaky_deaths(f).contains(&n))?;
    Some((n, dying.case_tool()?, dying.smallest_arguments()?))
}
