//! The end of one tool's part of a campaign: the calls still in the background are judged, what
//! a single job would have kept is rebuilt in case order ([`Kept`]), the judge makes the
//! findings, the timeouts are settled, and every failure found on a case is shrunk. What each
//! step learns about a finding is a fact ([`Fact`]); the finding's words follow from its facts.

use super::collect::Kept;
use super::start::{Started, ToolRun};
use super::timeouts::{self, LATE_GRACE, all_answered, hang_first, hung_by};
use crate::config::RunConfig;
use crate::finding::{FindingKind, Severity, StopReason, ToolStatus};
use crate::judge::{Found, Outcome, judge, learn, merge_same_cause};
use crate::phase::tools::shrink::{Shrunk, Subject, shrink};
use crate::phase::tools::worker::finish_waiting;
use crate::report::{Evidence, Finding, ToolReport};
use crate::server::Instance;
use mcp_fuzz_model::facts::{Fact, Reruns};
use std::time::Instant;

impl Started<'_> {
    /// Finishes the tool: judges the calls still in the background, rebuilds in case order what
    /// a single job would have kept, judges, and shrinks every failure found on a case, on
    /// `slot`.
    pub async fn finish(
        mut self,
        cfg: &RunConfig,
        slot: &mut Instance<'_>,
        run_deadline: Option<Instant>,
    ) -> ToolRun {
        let campaign = &cfg.campaign;
        let mut tr = ToolReport::new(&self.tool.name);
        let waiting = std::mem::take(&mut self.waiting);
        let (late_done, e) = finish_waiting(
            slot,
            &self.tool.name,
            &self.cases,
            self.output.as_ref(),
            campaign.feed,
            waiting,
        )
        .await;
        let late_cases = late_done.len() as u64;
        let mut done = std::mem::take(&mut self.done);
        done.extend(late_done);
        let broken = self.broken.take().or(e);
        done.sort_by_key(|d| d.index);
        let kept =
            Kept::collect(&self.cases, done, self.failures_left, campaign.max_failures, &mut tr);
        let gave_up = kept.gave_up(&self.tool.name, &mut tr);
        let stop = kept.stop.or_else(|| self.incomplete(&kept, broken, &mut tr));
        let mut found: Vec<Found> = gave_up.iter().map(|f| (f.clone(), None)).collect();
        found.extend(judge(self.tool, &self.cases, &kept.results, &mut tr));
        // The note on what was not run comes after the failures that caused it.
        if tr.status == ToolStatus::GaveUp && gave_up.is_some() {
            found.rotate_left(1);
        }
        // A call past its timeout is a hang only if it stays unanswered; a finding whose calls
        // were all answered late is a slow warning, which is not shrunk. A short grace first
        // (most late answers come soon); what is still unanswered is shrunk, and judged again
        // after.
        let grace = (cfg.server.timeout / 2).min(LATE_GRACE);
        timeouts::settle(&mut found, &kept.late, Instant::now() + grace, false, cfg).await;
        hang_first(&mut found, &kept.late, &kept.late_case, &self.cases);
        let poisoned_after = self.shrink_failures(&mut found, &kept, cfg, slot, run_deadline).await;
        timeouts::settle(&mut found, &kept.late, hung_by(&kept.late, cfg), true, cfg).await;
        if let Some(after) = poisoned_after {
            note_poisoned_state(&mut found, after);
        }
        merge_same_cause(&mut found);
        timeouts::give_up(&kept.late).await;
        let mut findings: Vec<Finding> = found.into_iter().map(|(f, _)| f).collect();
        tr.waited = late_cases > 0 || self.out_of_time.0;
        if campaign.expected_slow {
            for f in &mut findings {
                learn(f, Fact::ExpectedSlow);
            }
        }
        ToolRun { report: tr, findings, stop, late_cases }
    }

    /// Why the tool's cases stopped before the end, when they did and no stop rule says so:
    /// its server broke, or time ran out (the run's too: the campaign stops).
    fn incomplete(
        &self,
        kept: &Kept,
        broken: Option<String>,
        tr: &mut ToolReport,
    ) -> Option<StopReason> {
        if !kept.incomplete {
            return None;
        }
        if let Some(e) = broken {
            tr.status = ToolStatus::GaveUp;
            tr.reason = Some(e);
        } else if self.out_of_time.0 {
            tr.reason = Some(format!(
                "stopped by the time budget after {} of {} cases",
                kept.results.len(),
                self.cases.len()
            ));
            if self.out_of_time.1 {
                return Some(StopReason::TimeBudget);
            }
        }
        None
    }

    /// Shrinks every failure found on a case, on `slot`, and records what shrinking learned.
    /// Returns the first case whose failure showed again only on a fresh process (it left its
    /// process poisoned).
    async fn shrink_failures(
        &self,
        found: &mut [Found],
        kept: &Kept,
        cfg: &RunConfig,
        slot: &mut Instance<'_>,
        run_deadline: Option<Instant>,
    ) -> Option<usize> {
        let mut poisoned_after: Option<usize> = None;
        for (f, origin) in found.iter_mut() {
            let Some(i) = *origin else { continue };
            if f.severity != Severity::Failure {
                continue;
            }
            let Some(outcome) = f.outcome.clone() else { continue };
            let subject = Subject {
                tool: &self.tool.name,
                tool_seed: self.seed,
                generator: &self.generator,
                output: self.output.as_ref(),
                case: &self.cases[i],
                outcome: &outcome,
            };
            let shrinking = shrink(slot, &cfg.campaign.shrink, &subject, run_deadline);
            // A timeout whose calls all get their answers late is slow, not worth shrinking:
            // stop as soon as the last late answer comes.
            let shrunk = if f.kind == FindingKind::Timeout {
                tokio::select! {
                    s = shrinking => s,
                    () = all_answered(&kept.late) => continue,
                }
            } else {
                shrinking.await
            };
            if shrunk.poisons {
                poisoned_after = Some(poisoned_after.map_or(i, |p| p.min(i)));
            }
            self.learn_shrunk(f, i, shrunk, kept, cfg);
        }
        poisoned_after
    }

    /// Records on `f` (found on case `i`) what shrinking it learned: the minimal case and its
    /// evidence, and the facts (slow by input, or a failure that needs earlier calls).
    fn learn_shrunk(
        &self,
        f: &mut Finding,
        i: usize,
        shrunk: Shrunk,
        kept: &Kept,
        cfg: &RunConfig,
    ) {
        if let Some(scaling) = shrunk.scaling {
            let max_call_time = cfg.server.connect.max_call_time;
            learn(f, Fact::SlowByInput { scaling, max_call_time });
        }
        if shrunk.needs_history {
            // Deaths a fresh process does not repeat: which call of its process each was
            // (deaths on the same call number of every process are one server-wide finding,
            // `crate::group`).
            f.death_calls = kept
                .results
                .iter()
                .filter(|(_, o)| matches!(o, Outcome::Exited { .. }))
                .filter(|(_, o)| f.cause.as_deref() == Some(o.cause().as_str()))
                .filter_map(|(j, _)| kept.death_call.get(j).copied())
                .collect();
            let reruns = Reruns { reproduced: shrunk.stats.reproduced, of: shrunk.stats.reruns };
            learn(f, Fact::NeedsHistory(reruns));
        }
        if shrunk.fresh_instead {
            // A fresh process failed another way, never the first way: that failure is the
            // bug, and what the long-lived process answered is a note.
            if let Some(fresh) = shrunk.outcome.clone() {
                let first = f.outcome.as_ref().and_then(Outcome::message).unwrap_or("");
                let first = first.lines().next().unwrap_or("").to_owned();
                f.cause = Some(fresh.without_echoes(&shrunk.minimal).cause());
                f.outcome = Some(fresh);
                f.arguments = Some(shrunk.minimal.clone());
                learn(f, Fact::LongLived(first));
            }
        }
        f.minimal_arguments = Some(shrunk.minimal);
        f.flaky = shrunk.flaky;
        f.shrink = Some(shrunk.stats);
        f.evidence = Some(Box::new(Evidence {
            exchange: shrunk.exchange,
            stderr: shrunk.stderr,
            minimal_outcome: shrunk.outcome,
            output_schema: self.tool.output_schema.clone(),
            draw: self.cases[i].draw,
            history: if shrunk.needs_history { kept.histories.get(&i).cloned() } else { None },
        }));
    }
}

/// A failure that showed again only on a fresh process left its process in another state: the
/// failed valid calls after it on that process are that state's answers, not findings of their
/// own. They become a fact of the failure's ("later calls on that process answered ...").
fn note_poisoned_state(found: &mut Vec<Found>, after: usize) {
    let later = |f: &Finding, o: &Option<usize>| {
        f.kind == FindingKind::ValidCallFailed && o.is_some_and(|i| i > after)
    };
    let answers: Vec<String> = found
        .iter()
        .filter(|(f, o)| later(f, o))
        .filter_map(|(f, _)| f.outcome.as_ref().and_then(|o| o.message()).map(str::to_owned))
        .collect();
    if answers.is_empty() {
        return;
    }
    found.retain(|(f, o)| !later(f, o));
    if let Some((f, _)) = found.iter_mut().find(|(_, o)| *o == Some(after)) {
        let first = answers[0].lines().next().unwrap_or("").to_owned();
        learn(f, Fact::Poisoned(first));
    }
}
