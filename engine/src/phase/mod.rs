//! The phases of a run, each in a room of its own, behind one contract. [`tools`] runs first:
//! every selected tool through its cases (plan, call, judge, shrink). Then the phases after it
//! ([`Later`]), each given what the run knows so far ([`Sofar`]) and giving back a
//! [`PhaseOutcome`]: [`sequence`] (walks over the tools that reach state), [`surfaces`] (prompts,
//! resources, templates, completions), [`protocol`] (the conformance checks on a raw session).
//! [`limit`] is the proof of a call limit behind deaths that a fresh process did not repeat,
//! run by the run's last step.
//!
//! To add a phase: a module here with a `run` that gives a [`PhaseOutcome`], a variant of
//! [`Later`] (in the order it runs), its section of the report in [`Section`], and its event in
//! `crate::events::PhaseFinished`.

pub(crate) mod limit;
pub mod protocol;
pub mod sequence;
pub mod surfaces;
pub mod tools;

use crate::config::RunConfig;
use crate::events::{Events, PhaseFinished, RunEventKind};
use crate::report::{Finding, ProtocolSummary, StatefulSummary, SurfacesSummary, ToolReport};
use crate::transport::listing::Listing;
use serde_json::Value;
use std::time::Instant;
use tools::feed::Pool;

/// What a run knows when a phase after the tools starts.
#[derive(Clone, Copy)]
pub(crate) struct Sofar<'r> {
    /// The run's configuration.
    pub cfg: &'r RunConfig,
    /// The listing.
    pub listing: &'r Listing,
    /// The tools phase's report lines.
    pub tools: &'r [ToolReport],
    /// The findings so far.
    pub findings: &'r [Finding],
    /// The values the tools phase harvested from results.
    pub pool: &'r Pool,
    /// The capabilities the server declared.
    pub capabilities: &'r Value,
    /// When the whole run must stop.
    pub deadline: Option<Instant>,
}

/// What a phase gives back to the run.
pub(crate) struct PhaseOutcome {
    /// Its findings.
    pub findings: Vec<Finding>,
    /// `tools/call` requests it made (counted in the report's `calls`).
    pub calls: u64,
    /// Server restarts it needed.
    pub restarts: u64,
    /// Its section of the report.
    pub section: Section,
    /// What its progress event says, if it tells one.
    pub finished: Option<PhaseFinished>,
}

/// A phase's section of the report.
pub(crate) enum Section {
    /// `stateful`.
    Stateful(StatefulSummary),
    /// `surfaces` (`None`: the server offers none of them).
    Surfaces(Option<SurfacesSummary>),
    /// `protocol`.
    Protocol(ProtocolSummary),
}

/// The phases after the tools, in the order they run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Later {
    /// The sequence phase.
    Sequences,
    /// Prompts, resources, templates and completions.
    Surfaces,
    /// The protocol checks.
    Protocol,
}

impl Later {
    /// Every phase after the tools, in order.
    pub const ALL: [Self; 3] = [Self::Sequences, Self::Surfaces, Self::Protocol];

    /// Runs the phase if the run asks for it (`None`: it did not run).
    pub async fn run(self, sofar: &Sofar<'_>) -> Option<PhaseOutcome> {
        let beyond = sofar.cfg.campaign.beyond;
        match self {
            Self::Sequences if sofar.cfg.campaign.stateful.enabled => {
                sequence::walks::run(sofar).await
            }
            Self::Surfaces if beyond.prompts || beyond.resources => {
                Some(surfaces::run(sofar).await)
            }
            Self::Protocol if beyond.protocol => Some(protocol::run(sofar).await),
            _ => None,
        }
    }
}

/// Runs the phases after the tools, in order, adding each one's findings to `findings` before
/// the next starts; their outcomes, in order.
pub(crate) async fn run_later(
    sofar: Sofar<'_>,
    findings: &mut Vec<Finding>,
    events: &mut Events<'_>,
) -> Vec<PhaseOutcome> {
    let mut outcomes = Vec::new();
    for phase in Later::ALL {
        let now = Sofar { findings: findings.as_slice(), ..sofar };
        let Some(mut outcome) = phase.run(&now).await else { continue };
        findings.append(&mut outcome.findings);
        let found = findings.len() as u64;
        let restarts = outcome.restarts;
        if let Some(finished) = outcome.finished.clone() {
            events.tell(RunEventKind::PhaseFinished(finished), |t| {
                t.findings = found;
                t.restarts += restarts;
            });
        } else {
            events.count(|t| t.restarts += restarts);
        }
        outcomes.push(outcome);
    }
    outcomes
}
