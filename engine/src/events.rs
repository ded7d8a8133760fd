//! What a run tells as it goes, typed (as cargo-nextest's reporter events): the phases emit
//! [`RunEvent`]s through [`Events`], the binary renders progress from them. The engine never
//! prints.

use crate::report::ProtocolSummary;

/// One thing that happened in a run, with the totals so far.
#[derive(Debug, Clone)]
pub struct RunEvent {
    /// What happened.
    pub kind: RunEventKind,
    /// The totals right after it.
    pub totals: Totals,
}

/// What happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunEventKind {
    /// A tool's cases were planned (counted in `cases_planned`).
    CasesPlanned,
    /// One more case was called (counted in `cases_done`).
    CaseFinished,
    /// A tool was run to its end.
    ToolFinished {
        /// The tool.
        tool: String,
    },
    /// A phase after the tools did one more piece of its work (a walk, a request, a check).
    PhaseProgressed {
        /// The phase.
        phase: Later,
        /// Its pieces of work done so far.
        done: u64,
    },
    /// A phase after the tools ended.
    PhaseFinished(PhaseFinished),
}

/// A phase after the tools, by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Later {
    /// The sequence phase (its work: walks).
    Sequences,
    /// Prompts, resources, templates and completions (its work: requests).
    Surfaces,
    /// The protocol checks (its work: checks).
    Protocol,
}

/// A phase after the tools that ended, with what it did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PhaseFinished {
    /// The sequence phase walked.
    Sequences {
        /// Walks run.
        walks: u64,
    },
    /// The sequence phase did not walk: no result held a value another tool could take.
    SequencesSkipped,
    /// Prompts, resources, templates and completions were called.
    Surfaces {
        /// Requests sent.
        requests: u64,
    },
    /// The protocol checks ran.
    Protocol {
        /// Checks passed.
        passed: u64,
        /// Checks failed.
        failed: u64,
        /// Checks skipped.
        skipped: u64,
    },
}

impl PhaseFinished {
    /// The protocol phase's counts.
    #[must_use]
    pub fn protocol(summary: &ProtocolSummary) -> Self {
        Self::Protocol { passed: summary.passed, failed: summary.failed, skipped: summary.skipped }
    }
}

/// A run's totals so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Totals {
    /// Cases called so far.
    pub cases_done: u64,
    /// Cases planned so far (grows as tools are planned).
    pub cases_planned: u64,
    /// Findings so far (updated after each tool and phase).
    pub findings: u64,
    /// Server restarts so far.
    pub restarts: u64,
    /// Tools run to their end so far.
    pub tools_done: u64,
}

/// Where a run's events go: the totals, kept up to date, and the listener they are told to.
pub struct Events<'l> {
    totals: Totals,
    listener: &'l mut dyn FnMut(&RunEvent),
}

impl<'l> Events<'l> {
    /// Events told to `listener`.
    pub fn new(listener: &'l mut dyn FnMut(&RunEvent)) -> Self {
        Self { totals: Totals::default(), listener }
    }

    /// The totals so far.
    #[must_use]
    pub fn totals(&self) -> Totals {
        self.totals
    }

    /// Changes the totals without telling anyone (the next event carries them).
    pub fn count(&mut self, change: impl FnOnce(&mut Totals)) {
        change(&mut self.totals);
    }

    /// Tells the listener what happened, after changing the totals.
    pub fn tell(&mut self, kind: RunEventKind, change: impl FnOnce(&mut Totals)) {
        change(&mut self.totals);
        (self.listener)(&RunEvent { kind, totals: self.totals });
    }
}
