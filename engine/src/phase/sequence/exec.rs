//! Running a sequence: each step's arguments, with the values it takes from earlier steps'
//! results bound again on every run (an id a create returns differs from run to run), sent on
//! one server process, and judged: the single-call checks at every step, and the state checks
//! the step was made for.

use super::model;
use crate::finding::FindingKind;
use crate::judge::Outcome;
use crate::server::{Attempt, Instance, Keep};
pub use crate::steps::{Binding, SeqStep, StepCheck};
use crate::transport::ConnectError;
use serde_json::{Map, Value};
use std::time::Duration;

/// A step as it ran.
#[derive(Debug, Clone)]
pub struct StepRun {
    /// The arguments sent.
    pub arguments: Map<String, Value>,
    /// How the answer was judged.
    pub outcome: Outcome,
    /// The result's data, for later steps to take values from ([`model::data`]).
    pub data: Option<Value>,
}

/// A step whose answer breaks a check.
#[derive(Debug, Clone)]
pub struct Failure {
    /// The finding kind: the outcome's, or the state check's.
    pub kind: FindingKind,
    /// The answer.
    pub outcome: Outcome,
}

/// How one run of a sequence went.
#[derive(Debug, Default)]
pub struct Ran {
    /// The steps that ran, in order.
    pub runs: Vec<StepRun>,
    /// The first failing step, and how it failed.
    pub failed: Option<(usize, Failure)>,
    /// A step got no answer within its patience (or the server could not be restarted): the
    /// sequence was given up, not judged further.
    pub given_up: bool,
}

/// The arguments of `step`, with each binding's value taken from the results of `runs` (the
/// recorded value when that result no longer holds one).
#[must_use]
pub fn resolve(step: &SeqStep, runs: &[StepRun]) -> Map<String, Value> {
    let mut args = step.arguments.clone();
    for b in &step.bindings {
        let fresh = runs
            .get(b.step)
            .and_then(|r| r.data.as_ref())
            .and_then(|d| model::at(d, &b.from))
            .cloned();
        let Some(mut value) = fresh else { continue };
        if b.altered {
            // Never a handle the server did issue in this run: that would test it, not an
            // unknown one.
            let taken = |v: &Value| {
                runs.iter().any(|r| {
                    r.data.as_ref().is_some_and(|d| model::holds(d, v))
                        || r.arguments.values().any(|a| model::holds(a, v))
                })
            };
            match model::altered_unlike(&value, taken) {
                Some(v) => value = v,
                None => continue,
            }
        }
        model::set(&mut args, &b.pointer, value);
    }
    args
}

/// What the server's answer to a step breaks, if anything.
#[must_use]
pub fn judge(step: &SeqStep, outcome: &Outcome) -> Option<Failure> {
    if matches!(outcome, Outcome::Timeout | Outcome::UpstreamTimeout { .. } | Outcome::Slow { .. })
    {
        // Hangs are the single-call phase's: a walk gives up on them.
        return None;
    }
    if outcome.is_failure() {
        let kind = match step.check {
            Some(StepCheck::AfterDelete) => FindingKind::UseAfterDelete,
            Some(StepCheck::UnknownHandle) => FindingKind::UnknownHandle,
            _ => FindingKind::of(outcome),
        };
        return Some(Failure { kind, outcome: outcome.clone() });
    }
    let not_found = match outcome {
        Outcome::ToolError { text, .. } => model::says_not_found(text),
        Outcome::InvalidParams { message } | Outcome::RpcError { message, .. } => {
            model::says_not_found(message)
        }
        _ => false,
    };
    (step.check == Some(StepCheck::AfterCreate) && not_found)
        .then(|| Failure { kind: FindingKind::CreatedNotFound, outcome: outcome.clone() })
}

/// Calls one step on `slot` (after `runs`), waiting at most `patience` for an answer while the
/// server answers `ping`. `None` when it is still unanswered then: the caller gives up.
///
/// # Errors
/// When the server cannot be (re)started.
pub async fn call(
    slot: &mut Instance<'_>,
    step: &SeqStep,
    runs: &[StepRun],
    output: Option<&jsonschema::Validator>,
    patience: Duration,
) -> Result<Option<StepRun>, ConnectError> {
    let arguments = resolve(step, runs);
    let keep = Keep { exchange: false, result: true, late: false };
    match slot.call_patiently(&step.tool, &arguments, output, keep, patience).await? {
        Attempt::Done(c) => {
            let data = c.result.as_ref().and_then(model::data);
            Ok(Some(StepRun { arguments, outcome: c.outcome, data }))
        }
        Attempt::Waiting(w) => {
            w.abandon();
            Ok(None)
        }
    }
}

/// Runs `steps` on a fresh process of `slot`, judging each; stops at the first failure.
/// `output` gives a tool's outputSchema validator.
pub async fn replay<'v>(
    slot: &mut Instance<'_>,
    steps: &[SeqStep],
    output: impl Fn(&str) -> Option<&'v jsonschema::Validator>,
    patience: Duration,
) -> Ran {
    slot.renew().await;
    let mut ran = Ran::default();
    for (i, step) in steps.iter().enumerate() {
        match call(slot, step, &ran.runs, output(&step.tool), patience).await {
            Ok(Some(run)) => {
                let failed = judge(step, &run.outcome);
                ran.runs.push(run);
                if let Some(f) = failed {
                    ran.failed = Some((i, f));
                    break;
                }
            }
            Ok(None) | Err(_) => {
                ran.given_up = true;
                break;
            }
        }
    }
    ran
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn step(check: Option<StepCheck>) -> SeqStep {
        SeqStep {
            tool: "get_x".into(),
            arguments: Map::new(),
            bindings: Vec::new(),
            check,
            outcome: None,
        }
    }

    #[test]
    fn bindings_take_fresh_values_and_alter_them() {
        let mut s = step(None);
        s.arguments.insert("id".into(), json!("x-1"));
        s.arguments.insert("other".into(), json!(["y-1"]));
        s.bindings = vec![
            Binding { pointer: "/id".into(), step: 0, from: "/id".into(), altered: false },
            Binding { pointer: "/other/0".into(), step: 0, from: "/id".into(), altered: true },
        ];
        let runs = [StepRun {
            arguments: Map::new(),
            outcome: Outcome::Ok,
            data: Some(json!({"id": "x-7"})),
        }];
        let args = resolve(&s, &runs);
        assert_eq!(Value::Object(args), json!({"id": "x-7", "other": ["x-2"]}));
        // Without the result, the recorded values stay.
        assert_eq!(resolve(&s, &[]), s.arguments);
    }

    #[test]
    fn checks_judge_by_what_the_step_was_for() {
        let crash = Outcome::Exited {
            exit: crate::transport::ExitInfo { code: Some(101), signal: None },
            stderr: Vec::new(),
        };
        let not_found =
            Outcome::ToolError { text: "note note-1 not found".into(), upstream: false };
        assert_eq!(
            judge(&step(Some(StepCheck::AfterDelete)), &crash).map(|f| f.kind),
            Some(FindingKind::UseAfterDelete)
        );
        assert_eq!(
            judge(&step(Some(StepCheck::UnknownHandle)), &crash).map(|f| f.kind),
            Some(FindingKind::UnknownHandle)
        );
        assert_eq!(judge(&step(None), &crash).map(|f| f.kind), Some(FindingKind::Exited));
        assert_eq!(
            judge(&step(Some(StepCheck::AfterCreate)), &not_found).map(|f| f.kind),
            Some(FindingKind::CreatedNotFound)
        );
        assert!(
            judge(&step(Some(StepCheck::AfterDelete)), &not_found).is_none(),
            "the right answer"
        );
        assert!(judge(&step(None), &Outcome::Timeout).is_none(), "hangs are not judged here");
    }
}
