//! Case files: one failure finding, with everything needed to report and replay it.
//!
//! The shape ([`CaseFile`], versioned by [`CASE_VERSION`], described by `docs/case.schema.json`)
//! is the model's; this module adds the replay, which needs a live server.

use crate::finding::FindingKind;
use crate::judge::Outcome;
use crate::phase::surfaces::{Request, request_once};
use crate::server::{Instance, Keep, ServerSpec, output_validator};
use crate::transport::ConnectError;

pub use mcp_fuzz_model::case_file::*;

/// What a replay saw.
#[derive(Debug, Clone)]
pub struct Replayed {
    /// The answer to the failing call (the last step run, for a sequence).
    pub outcome: Outcome,
    /// The finding kind a failure of that answer is, if it is one (a sequence's state checks
    /// included).
    pub failure: Option<FindingKind>,
    /// Calls made.
    pub calls: usize,
}

/// Calls the tool once with the minimal arguments on a fresh server (or runs the minimal
/// sequence from a fresh server, or sends the minimal request beside tools) and judges the reply as the run did (with the tools'
/// outputSchemas, and a sequence's state checks).
///
/// # Errors
/// When the server cannot be started or initialised.
pub async fn replay(case: &CaseFile, server: &ServerSpec) -> Result<Replayed, ConnectError> {
    let mut instance = Instance::start(server).await?;
    let beside = case.request.as_ref().and_then(Request::recorded);
    let replayed = if let Some(request) = beside {
        // A prompt, resource or completion: its minimal request, judged as the phase judges it.
        request_once(&mut instance, request).await.map(|a| Replayed {
            failure: a.fails.then(|| FindingKind::of(&a.outcome)),
            outcome: a.outcome,
            calls: 1,
        })
    } else if case.sequence.is_empty() {
        let output = output_validator(case.output_schema.as_ref());
        let called = instance
            .call(&case.tool, &case.minimal_arguments, output.as_ref(), Keep::default())
            .await;
        called.map(|c| {
            let valid = case.case.as_ref().is_some_and(|l| l.mode.is_valid());
            // A tool whose every call fails the same way with no input to blame: its answer is
            // an ordinary error; failing the same way is the failure.
            let failure = if case.kind == FindingKind::ValidCallFailed {
                case.signature
                    .matches_call(&c.outcome, &case.minimal_arguments)
                    .then(|| case.kind.clone())
            } else {
                c.outcome.fails(valid).then(|| FindingKind::of(&c.outcome))
            };
            Replayed { outcome: c.outcome, failure, calls: 1 }
        })
    } else {
        // The failing tool's outputSchema judges its answer, as in the run.
        let own = output_validator(case.output_schema.as_ref());
        let output = |name: &str| own.as_ref().filter(|_| name == case.tool);
        // A step unanswered for the whole timeout is given up, as the run does.
        let ran = crate::phase::sequence::exec::replay(
            &mut instance,
            &case.sequence,
            output,
            server.timeout,
        )
        .await;
        let calls = ran.runs.len();
        Ok(match (ran.failed, ran.given_up, ran.runs.into_iter().last()) {
            (Some((_, f)), _, _) => Replayed { outcome: f.outcome, failure: Some(f.kind), calls },
            (None, false, Some(last)) => Replayed { outcome: last.outcome, failure: None, calls },
            (None, _, _) => Replayed { outcome: Outcome::Timeout, failure: None, calls },
        })
    };
    instance.close().await;
    replayed
}
