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
//!
//! The file format, loading, stale detection and the update are generic over the identity
//! ([`Key`]): `run` uses [`Identity`] (tool, kind, mutation, pointer), `clients` its own
//! (adapter, rule, tool, pointer).

use super::model::{BaselineSummary, Doc, Identity};
use crate::errors::CliError;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The version of the file's shape.
pub const BASELINE_VERSION: u32 = 1;

/// What identifies a finding in a baseline file.
pub trait Key: Ord + Clone + Serialize + DeserializeOwned {
    /// The identity's keys, for error messages (`"tool", "kind", ...`).
    const FIELDS: &'static str;
}

impl Key for Identity {
    const FIELDS: &'static str = r#""tool", "kind", "mutation", "pointer""#;
}

/// One accepted finding.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(bound = "K: Key")]
pub struct Entry<K> {
    /// What identifies it.
    #[serde(flatten)]
    pub identity: K,
    /// What it said when it was accepted (not compared).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
}

/// A baseline file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, bound = "K: Key")]
pub struct Baseline<K = Identity> {
    /// Always [`BASELINE_VERSION`].
    pub baseline_version: u32,
    /// The accepted findings.
    pub findings: Vec<Entry<K>>,
}

impl<K: Key> Baseline<K> {
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
                "failed to parse baseline {}: {e}; expected {{\"baselineVersion\": 1, \"findings\": [{{{}}}...]}} as written by --update-baseline",
                path.display(),
                K::FIELDS
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

    /// The identities the baseline accepts.
    pub fn known(&self) -> BTreeSet<&K> {
        self.findings.iter().map(|e| &e.identity).collect()
    }

    /// Entries that match none of `present` although this run could have seen them.
    pub fn stale(&self, present: &BTreeSet<K>, checked: impl Fn(&K) -> bool) -> Vec<K> {
        self.findings
            .iter()
            .map(|e| e.identity.clone())
            .filter(|id| !present.contains(id) && checked(id))
            .collect()
    }

    /// The baseline after a run: the entries the run could not have seen (`checked` false), plus
    /// `accepted` (the run's failures and warnings, with their messages); sorted, one per identity.
    pub fn updated_with(
        &self,
        checked: impl Fn(&K) -> bool,
        accepted: impl IntoIterator<Item = (K, String)>,
    ) -> Self {
        let mut entries: BTreeMap<K, String> = BTreeMap::new();
        for e in self.findings.iter().filter(|e| !checked(&e.identity)) {
            entries.insert(e.identity.clone(), e.message.clone());
        }
        for (identity, message) in accepted {
            entries.entry(identity).or_insert(message);
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

impl Baseline<Identity> {
    /// Marks the report's known findings and records what the baseline did.
    pub fn apply(&self, doc: &mut Doc, file: &str) {
        let known = self.known();
        let (mut n_known, mut n_new) = (0, 0);
        for f in &mut doc.findings {
            f.baselined = known.contains(&f.identity());
            if f.baselined {
                n_known += 1;
            } else {
                n_new += 1;
            }
        }
        let present: BTreeSet<Identity> =
            doc.findings.iter().map(super::model::FindingDoc::identity).collect();
        let stale = self.stale(&present, |id| was_checked(doc, id));
        doc.baseline =
            Some(BaselineSummary { file: file.to_owned(), known: n_known, new: n_new, stale });
    }

    /// The baseline after this run: its failures and warnings, plus the old entries of tools it
    /// did not call.
    pub fn updated(&self, doc: &Doc) -> Self {
        self.updated_with(
            |id| was_checked(doc, id),
            doc.findings
                .iter()
                .filter(|f| f.severity == "failure" || f.severity == "warning")
                .map(|f| (f.identity(), f.message.clone())),
        )
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
