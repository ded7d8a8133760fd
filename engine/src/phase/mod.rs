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
use crate::events::{self, Events, PhaseFinished, RunEventKind};
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
    /// Told each time the phase does one more piece of its work (a walk, a request, a check),
    /// with how many: the run's progress events.
    pub progress: &'r dyn Fn(u64),
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

    /// The phase's name in events.
    fn name(self) -> events::Later {
        match self {
            Self::Sequences => events::Later::Sequences,
            Self::Surfaces => events::Later::Surfaces,
            Self::Protocol => events::Later::Protocol,
        }
    }

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
        let told = std::cell::RefCell::new(&mut *events);
        let done = std::cell::Cell::new(0_u64);
        let progress = |n: u64| {
            done.set(done.get() + n);
            let kind = RunEventKind::PhaseProgressed { phase: phase.name(), done: done.get() };
            told.borrow_mut().tell(kind, |_| {});
        };
        let now = Sofar { findings: findings.as_slice(), progress: &progress, ..sofar };
        let ran = phase.run(&now).await;
        let Some(mut outcome) = ran else { continue };
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
