//! A baseline applied to a run report: known findings are marked `baselined` (they do not fail
//! the run), the summary counts known, new and stale entries, and `--update-baseline` writes the
//! run's failures and warnings back, keeping the entries of tools this run did not call (another
//! shard's, or skipped ones).

use crate::baseline::Baseline;
use mcp_fuzz_model::finding::{Identity, Severity};
use mcp_fuzz_model::report::{BaselineSummary, Report};
use std::collections::BTreeSet;

/// Marks the report's known findings and records what the baseline did; `file` names the
/// baseline in the summary.
pub fn apply(baseline: &Baseline<Identity>, report: &mut Report, file: &str) {
    let known = baseline.known();
    let (mut n_known, mut n_new) = (0, 0);
    for f in &mut report.findings {
        f.baselined = known.contains(&f.identity());
        if f.baselined {
            n_known += 1;
        } else {
            n_new += 1;
        }
    }
    let present: BTreeSet<Identity> = report.findings.iter().map(|f| f.identity()).collect();
    let stale = baseline.stale(&present, |id| was_checked(report, id));
    report.baseline =
        Some(BaselineSummary { file: file.to_owned(), known: n_known, new: n_new, stale });
}

/// The baseline after this run: its failures and warnings, plus the old entries of tools it did
/// not call.
#[must_use]
pub fn updated(baseline: &Baseline<Identity>, report: &Report) -> Baseline<Identity> {
    baseline.updated_with(
        |id| was_checked(report, id),
        report
            .findings
            .iter()
            .filter(|f| f.severity >= Severity::Warning)
            .map(|f| (f.identity(), f.message.clone())),
    )
}

/// Whether this run could have seen the finding: server-wide findings always; a tool's if the
/// tool was called, or if the server no longer lists it as a usable tool.
fn was_checked(report: &Report, id: &Identity) -> bool {
    match &id.tool {
        None => true,
        Some(name) => {
            report.tools.iter().find(|t| &t.name == name).is_none_or(|t| t.status.was_called())
        }
    }
}
