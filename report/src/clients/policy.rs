//! The `clients` policy and baseline.
//!
//! - A finding fails when it is not ambiguous, not accepted by the baseline, and its severity
//!   reaches `--fail-on` ([`fails`]).
//! - Its identity is (adapter, rule, tool, pointer) ([`ClientsIdentity`]): what the baseline
//!   stores and what SARIF fingerprints.

pub use super::model::ClientsIdentity;
use super::model::{BaselineSummary, ClientFinding, ClientsReport, FailOn, Verdict};
use crate::baseline::Baseline;
use mcp_fuzz_clients::Severity;
use std::collections::BTreeSet;

/// Whether a severity reaches the policy, ignoring the baseline and ambiguity.
fn reaches(severity: Severity, fail_on: FailOn) -> bool {
    match severity {
        Severity::Fail => true,
        Severity::Warn => fail_on == FailOn::Warn,
        Severity::Info => false,
    }
}

/// Whether a finding fails the run under `fail_on`: not ambiguous, not baselined, severity
/// `fail` (or `warn` with `--fail-on warn`).
#[must_use]
pub fn fails(f: &ClientFinding, fail_on: FailOn) -> bool {
    !f.ambiguous && !f.baselined && reaches(f.severity, fail_on)
}

/// Applies the policy and the baseline: marks baselined findings, records the baseline summary
/// (known, new, stale) and sets `failOn`, `failures` and `verdict`.
pub fn decide(
    report: &mut ClientsReport,
    fail_on: FailOn,
    baseline: Option<(&Baseline<ClientsIdentity>, String)>,
) {
    if let Some((b, file)) = baseline {
        let known = b.known();
        let (mut n_known, mut n_new) = (0_u64, 0_u64);
        let mut present = BTreeSet::new();
        for f in report.findings_mut() {
            let id = f.identity();
            if known.contains(&id) {
                f.baselined = true;
                n_known += 1;
            } else if !f.ambiguous && f.severity != Severity::Info {
                n_new += 1;
            }
            present.insert(id);
        }
        let adapters = adapters_run(report);
        let stale = b.stale(&present, |id| adapters.contains(&id.adapter));
        report.baseline = Some(BaselineSummary { file, known: n_known, new: n_new, stale });
    }
    let failures = report.findings().filter(|f| fails(f, fail_on)).count() as u64;
    report.fail_on = fail_on;
    report.failures = failures;
    report.verdict = if failures > 0 { Verdict::Fail } else { Verdict::Pass };
}

/// The adapters whose findings this run can speak for: every modelled one, and the real clients
/// that were captured (the baseline entries of a client that did not run are neither stale nor
/// dropped).
fn adapters_run(report: &ClientsReport) -> BTreeSet<String> {
    let not_captured: BTreeSet<_> =
        report.real_clients.iter().filter(|r| !r.is_captured()).map(|r| r.adapter).collect();
    report
        .adapters
        .iter()
        .filter(|a| a.real().is_none_or(|c| !not_captured.contains(&c)))
        .map(|a| a.as_str().to_owned())
        .collect()
}

/// The baseline after this run: its non-ambiguous `fail` and `warn` findings, plus the entries
/// of adapters this run did not apply.
#[must_use]
pub fn updated_baseline(
    report: &ClientsReport,
    old: &Baseline<ClientsIdentity>,
) -> Baseline<ClientsIdentity> {
    let adapters = adapters_run(report);
    old.updated_with(
        |id| adapters.contains(&id.adapter),
        report
            .findings()
            .filter(|f| !f.ambiguous && reaches(f.severity, FailOn::Warn))
            .map(|f| (f.identity(), f.detail.clone())),
    )
}
