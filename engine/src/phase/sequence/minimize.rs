//! Minimal failing sequences: steps are dropped by delta debugging, keeping the data flow (a
//! step that returned a value a kept step uses stays), then each step's arguments are shrunk
//! with the single-call shrinker's edits; every candidate runs from a fresh server process and
//! must fail the same way at its last step. The result is re-run from fresh processes to tell a
//! steady failure from a flaky one.
//!
//! See: Zeller and Hildebrandt, "Simplifying and Isolating Failure-Inducing Input" (ddmin).

use super::exec::{self, Failure, SeqStep};
use crate::config::ShrinkConfig;
use crate::finding::FindingKind;
use crate::judge::Outcome;
use crate::phase::tools::shrink::{ShrinkStats, Signature, candidates, smaller};
use crate::server::Instance;
use serde_json::Value;
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

/// How a sequence must fail to count as the same failure.
pub struct Goal {
    /// The finding kind.
    pub kind: FindingKind,
    /// The outcome's signature.
    pub signature: Signature,
}

impl Goal {
    /// The target of a failure.
    #[must_use]
    pub fn of(f: &Failure) -> Self {
        Self { kind: f.kind.clone(), signature: Signature::of(&f.outcome) }
    }
}

/// What minimizing did.
#[derive(Debug, Default)]
pub struct Minimized {
    /// The smallest sequence that failed the same way (the original when nothing smaller did).
    pub steps: Vec<SeqStep>,
    /// Its last run's failure.
    pub failure: Option<Failure>,
    /// Candidate sequences run.
    pub tried: u32,
    /// Candidates that still failed the same way.
    pub accepted: u32,
    /// Why the search stopped early: `"steps"` or `"time"`.
    pub exhausted: Option<&'static str>,
    /// Re-runs of the result from a fresh process, and how many failed the same way.
    pub reruns: u32,
    /// See `reruns`.
    pub reproduced: u32,
    /// In a failing re-run, every step before the last either worked or failed on an
    /// unreachable upstream, and at least one did the latter: the failure is what the server
    /// does after upstream failures (a circuit breaker), not a bug of the calls' input.
    pub after_upstream: bool,
}

impl Minimized {
    /// What the search did, as the report records it (the re-runs are all from fresh
    /// processes).
    #[must_use]
    pub fn stats(&self) -> ShrinkStats {
        ShrinkStats {
            steps: self.tried,
            accepted: self.accepted,
            exhausted: self.exhausted.map(str::to_owned),
            reruns: self.reruns,
            reproduced: self.reproduced,
            fresh_reruns: self.reruns,
            fresh_reproduced: self.reproduced,
        }
    }
}

/// Re-runs of a minimal sequence.
const RERUNS: u32 = 3;

/// What a candidate run needs.
pub struct Runner<'a, 's, 'v> {
    /// Where candidates run (a fresh process each).
    pub slot: &'a mut Instance<'s>,
    /// A tool's outputSchema validator.
    pub output: &'a dyn Fn(&str) -> Option<&'v jsonschema::Validator>,
    /// A tool's generator oracle: whether arguments are valid for it.
    pub valid: &'a dyn Fn(&str, &Value) -> bool,
    /// How long a step may go unanswered.
    pub patience: Duration,
}

impl Runner<'_, '_, '_> {
    /// Whether `steps` fail like `target` at their last step, from a fresh process.
    async fn fails(&mut self, steps: &[SeqStep], target: &Goal) -> Option<Failure> {
        self.fails_sending(steps, target).await.map(|(f, _)| f)
    }

    /// Whether `steps` fail like `target` at their last step once, from a fresh process.
    pub async fn fails_once(&mut self, steps: &[SeqStep], target: &Goal) -> bool {
        self.fails(steps, target).await.is_some()
    }

    /// [`Runner::fails`], with the arguments each step was sent.
    async fn fails_sending(
        &mut self,
        steps: &[SeqStep],
        target: &Goal,
    ) -> Option<(Failure, Vec<exec::StepRun>)> {
        let ran = exec::replay(self.slot, steps, self.output, self.patience).await;
        match ran.failed {
            Some((i, f))
                if i + 1 == steps.len()
                    && f.kind == target.kind
                    && target.signature.matches(&f.outcome) =>
            {
                Some((f, ran.runs))
            }
            _ => None,
        }
    }
}

/// Minimizes `steps` (which failed like `target` at the last step) within `cfg`'s budgets.
pub async fn minimize(
    runner: &mut Runner<'_, '_, '_>,
    steps: Vec<SeqStep>,
    target: &Goal,
    cfg: &ShrinkConfig,
) -> Minimized {
    let deadline = Instant::now() + cfg.time;
    let mut m = Minimized { steps, ..Minimized::default() };
    if cfg.enabled {
        drop_steps(runner, &mut m, target, cfg, deadline).await;
        shrink_arguments(runner, &mut m, target, cfg, deadline).await;
    }
    for _ in 0..RERUNS {
        m.reruns += 1;
        if let Some((f, runs)) = runner.fails_sending(&m.steps, target).await {
            m.reproduced += 1;
            m.failure = Some(f);
            let before = &runs[..runs.len().saturating_sub(1)];
            m.after_upstream = before.iter().any(|r| r.outcome.names_upstream())
                && before
                    .iter()
                    .all(|r| r.outcome.names_upstream() || matches!(r.outcome, Outcome::Ok));
            // Show the steps as a failing run sent and ended them (bound values included).
            for (step, run) in m.steps.iter_mut().zip(runs) {
                step.arguments = run.arguments;
                step.outcome = Some(run.outcome.kind().to_string());
            }
        }
    }
    m
}

/// Whether the budget allows another candidate; notes why not.
fn spent(m: &mut Minimized, cfg: &ShrinkConfig, deadline: Instant) -> bool {
    if m.tried >= cfg.max_steps {
        m.exhausted = Some("steps");
    } else if Instant::now() >= deadline {
        m.exhausted = Some("time");
    }
    m.exhausted.is_some()
}

/// Delta debugging over every step but the last: try keeping only one chunk, then dropping one
/// chunk, at finer and finer chunks.
async fn drop_steps(
    runner: &mut Runner<'_, '_, '_>,
    m: &mut Minimized,
    target: &Goal,
    cfg: &ShrinkConfig,
    deadline: Instant,
) {
    let mut n = 2;
    loop {
        let body = m.steps.len().saturating_sub(1);
        if body == 0 {
            return;
        }
        let n_now = n.min(body);
        let size = body.div_ceil(n_now);
        let chunks: Vec<BTreeSet<usize>> =
            (0..body).step_by(size).map(|a| (a..(a + size).min(body)).collect()).collect();
        let all: BTreeSet<usize> = (0..body).collect();
        // Keep one chunk only (drop the rest), then drop one chunk.
        let tries = chunks
            .iter()
            .map(|c| all.difference(c).copied().collect::<BTreeSet<usize>>())
            .filter(|rest| !rest.is_empty() && rest.len() < body)
            .chain(chunks.iter().cloned());
        let mut reduced = false;
        for remove in tries.collect::<Vec<_>>() {
            let Some(candidate) = without(&m.steps, &remove) else { continue };
            if spent(m, cfg, deadline) {
                return;
            }
            m.tried += 1;
            if runner.fails(&candidate, target).await.is_some() {
                m.accepted += 1;
                m.steps = candidate;
                reduced = true;
                break;
            }
        }
        if reduced {
            n = (n_now - 1).max(2);
        } else if n_now >= body {
            return;
        } else {
            n = (n_now * 2).min(body);
        }
    }
}

/// `steps` without the steps in `remove` and every step that takes a value from one of them
/// (transitively), bindings renumbered; `None` when the last step would go.
#[must_use]
pub fn without(steps: &[SeqStep], remove: &BTreeSet<usize>) -> Option<Vec<SeqStep>> {
    let mut gone = remove.clone();
    for (k, s) in steps.iter().enumerate() {
        if s.bindings.iter().any(|b| gone.contains(&b.step)) {
            gone.insert(k);
        }
    }
    if gone.contains(&(steps.len().checked_sub(1)?)) {
        return None;
    }
    let mut new_index = Vec::with_capacity(steps.len());
    let mut next = 0;
    for k in 0..steps.len() {
        new_index.push(next);
        if !gone.contains(&k) {
            next += 1;
        }
    }
    Some(
        steps
            .iter()
            .enumerate()
            .filter(|(k, _)| !gone.contains(k))
            .map(|(_, s)| {
                let mut s = s.clone();
                for b in &mut s.bindings {
                    b.step = new_index[b.step];
                }
                s
            })
            .collect(),
    )
}

/// Each step's arguments, last step first, made simpler one edit at a time while the sequence
/// still fails the same way; bound places stay.
async fn shrink_arguments(
    runner: &mut Runner<'_, '_, '_>,
    m: &mut Minimized,
    target: &Goal,
    cfg: &ShrinkConfig,
    deadline: Instant,
) {
    for i in (0..m.steps.len()).rev() {
        'step: loop {
            let current = Value::Object(m.steps[i].arguments.clone());
            let edits: Vec<Value> = candidates(&current).collect();
            for edit in edits {
                let Value::Object(args) = &edit else { continue };
                let step = &m.steps[i];
                // A bound place is set from an earlier result on every run: leave it as it is.
                let keeps_bindings = step.bindings.iter().all(|b| {
                    edit.pointer(&b.pointer).is_some_and(|v| current.pointer(&b.pointer) == Some(v))
                });
                if !smaller(&edit, &current)
                    || !keeps_bindings
                    || !(runner.valid)(&step.tool, &edit)
                {
                    continue;
                }
                if spent(m, cfg, deadline) {
                    return;
                }
                let mut candidate = m.steps.clone();
                candidate[i].arguments = args.clone();
                m.tried += 1;
                if runner.fails(&candidate, target).await.is_some() {
                    m.accepted += 1;
                    m.steps = candidate;
                    continue 'step;
                }
            }
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::phase::sequence::exec::Binding;
    use serde_json::Map;

    fn step(tool: &str, from: &[usize]) -> SeqStep {
        SeqStep {
            tool: tool.into(),
            arguments: Map::new(),
            bindings: from
                .iter()
                .map(|&s| Binding {
                    pointer: "/id".into(),
                    step: s,
                    from: "/id".into(),
                    altered: false,
                })
                .collect(),
            check: None,
            outcome: None,
        }
    }

    #[test]
    fn dropping_a_producer_drops_its_users_and_renumbers_the_rest() {
        // 0 create, 1 noise, 2 read(0), 3 delete(0), 4 read(0)
        let steps = vec![
            step("create", &[]),
            step("noise", &[]),
            step("read", &[0]),
            step("delete", &[0]),
            step("read", &[0]),
        ];
        let kept = without(&steps, &BTreeSet::from([1, 2])).expect("the last step stays");
        let tools: Vec<&str> = kept.iter().map(|s| s.tool.as_str()).collect();
        assert_eq!(tools, ["create", "delete", "read"]);
        assert_eq!(kept[2].bindings[0].step, 0);
        assert!(without(&steps, &BTreeSet::from([0])).is_none(), "the failing step uses step 0");
        let chained = vec![step("a", &[]), step("b", &[0]), step("c", &[1]), step("d", &[])];
        let kept = without(&chained, &BTreeSet::from([0])).expect("d stays");
        assert_eq!(kept.len(), 1, "b and c go with a");
    }
}
