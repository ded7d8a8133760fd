//! `--baseline FILE`: accepted findings that do not fail the run.
//!
//! The file is JSON, sorted, one entry per finding identity, so it diffs well in review:
//!
//! ```json
//! {
//!   "baselineVersion": 1,
//!   "findings": [
//!     {"tool": "search", "kind": "handler-exception", "mutation": "wrong-type", "pointer": "/limit",
//!      "message": "an exception surfaced as a tool error: ... (informational)"},
//!     {"kind": "junk-on-stdout", "message": "..."}
//!   ]
//! }
//! ```
//!
//! An entry matches a finding with the same `tool`, `kind`, `mutation` and `pointer` (absent
//! keys match absent values); `message` is for humans and never compared. Matched findings are
//! marked `baselined` and do not fail the run; entries whose tool was called but that matched
//! nothing are reported as stale. `--update-baseline` rewrites the file (atomically, only after
//! a completed run) with the run's failures and warnings, keeping the entries of tools this run
//! did not call (another shard's, or skipped ones).

use super::model::{BaselineSummary, Doc, Identity};
use crate::errors::CliError;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// The version of the file's shape.
pub const BASELINE_VERSION: u32 = 1;

/// One accepted finding.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// What identifies it.
    #[serde(flatten)]
    pub identity: Identity,
    /// What it said when it was accepted (not compared).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
}

/// A baseline file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Baseline {
    /// Always [`BASELINE_VERSION`].
    pub baseline_version: u32,
    /// The accepted findings.
    pub findings: Vec<Entry>,
}

impl Baseline {
    /// Reads a baseline. A missing file is an empty baseline when `may_be_missing` (the first
    /// `--update-baseline`).
    ///
    /// # Errors
    /// An unreadable or malformed file, or another `baselineVersion`: a usage error.
    pub fn load(path: &Path, may_be_missing: bool) -> Result<Self, CliError> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if may_be_missing && e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Self { baseline_version: BASELINE_VERSION, findings: Vec::new() });
            }
            Err(error) => {
                return Err(CliError::Read {
                    origin: format!("baseline {}", path.display()),
                    error,
                });
            }
        };
        let b: Self = serde_json::from_str(&text).map_err(|e| {
            CliError::Usage(format!(
                "failed to parse baseline {}: {e}; expected {{\"baselineVersion\": 1, \"findings\": [{{\"tool\", \"kind\", \"mutation\", \"pointer\"}}...]}} as written by --update-baseline",
                path.display()
            ))
        })?;
        if b.baseline_version != BASELINE_VERSION {
            return Err(CliError::Usage(format!(
                "baseline {} has baselineVersion {}, this mcp-fuzz reads version {BASELINE_VERSION}; regenerate it with --update-baseline",
                path.display(),
                b.baseline_version
            )));
        }
        Ok(b)
    }

    /// Marks the report's known findings and records what the baseline did.
    pub fn apply(&self, doc: &mut Doc, file: &str) {
        let known: std::collections::BTreeSet<&Identity> =
            self.findings.iter().map(|e| &e.identity).collect();
        let (mut n_known, mut n_new) = (0, 0);
        for f in &mut doc.findings {
            f.baselined = known.contains(&f.identity());
            if f.baselined {
                n_known += 1;
            } else {
                n_new += 1;
            }
        }
        let present: std::collections::BTreeSet<Identity> =
            doc.findings.iter().map(super::model::FindingDoc::identity).collect();
        let stale: Vec<Identity> = self
            .findings
            .iter()
            .map(|e| e.identity.clone())
            .filter(|id| !present.contains(id) && was_checked(doc, id))
            .collect();
        doc.baseline =
            Some(BaselineSummary { file: file.to_owned(), known: n_known, new: n_new, stale });
    }

    /// The baseline after this run: its failures and warnings, plus the old entries of tools it
    /// did not call.
    pub fn updated(&self, doc: &Doc) -> Self {
        let mut entries: BTreeMap<Identity, String> = BTreeMap::new();
        for e in self.findings.iter().filter(|e| !was_checked(doc, &e.identity)) {
            entries.insert(e.identity.clone(), e.message.clone());
        }
        for f in doc.findings.iter().filter(|f| f.severity == "failure" || f.severity == "warning")
        {
            entries.entry(f.identity()).or_insert_with(|| f.message.clone());
        }
        Self {
            baseline_version: BASELINE_VERSION,
            findings: entries
                .into_iter()
                .map(|(identity, message)| Entry { identity, message })
                .collect(),
        }
    }

    /// The file's bytes: pretty JSON and a final newline.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut v = serde_json::to_vec_pretty(self).expect("a baseline serialises");
        v.push(b'\n');
        v
    }
}

/// Whether this run could have seen the finding: server-wide findings always; a tool's if the
/// tool was called, or if the server no longer lists it as a usable tool.
fn was_checked(doc: &Doc, id: &Identity) -> bool {
    match &id.tool {
        None => true,
        Some(name) => doc.tools.iter().find(|t| &t.name == name).is_none_or(|t| t.was_called()),
    }
}
