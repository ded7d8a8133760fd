//! Baseline files: accepted findings that do not fail a run.
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
//! An entry matches a finding with the same identity (absent keys match absent values);
//! `message` is for humans and never compared. The format, the parsing, stale detection and the
//! update are generic over the identity ([`Key`]): `run` uses the engine's
//! [`Identity`](mcp_fuzz_model::finding::Identity) (tool, kind, mutation, pointer), `clients`
//! its own (adapter, rule, tool, pointer). Each document applies a baseline in its own module
//! (`run::baseline`, `clients::policy`).

use crate::error::ReportError;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// The version of the file's shape.
pub const BASELINE_VERSION: u32 = 1;

/// What identifies a finding in a baseline file.
pub trait Key: Ord + Clone + Serialize + DeserializeOwned {
    /// The identity's keys, for error messages (`"tool", "kind", ...`).
    const FIELDS: &'static str;
}

impl Key for mcp_fuzz_model::finding::Identity {
    const FIELDS: &'static str = r#""tool", "kind", "mutation", "pointer", "cause""#;
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
pub struct Baseline<K> {
    /// Always [`BASELINE_VERSION`].
    pub baseline_version: u32,
    /// The accepted findings.
    pub findings: Vec<Entry<K>>,
}

impl<K: Key> Default for Baseline<K> {
    fn default() -> Self {
        Self { baseline_version: BASELINE_VERSION, findings: Vec::new() }
    }
}

impl<K: Key> Baseline<K> {
    /// Parses a baseline file's text; `origin` names it in errors.
    ///
    /// # Errors
    /// Malformed JSON, another shape, or another `baselineVersion`.
    pub fn parse(text: &str, origin: &str) -> Result<Self, ReportError> {
        let b: Self = serde_json::from_str(text).map_err(|e| {
            ReportError::Baseline(format!(
                "failed to parse baseline {origin}: {e}; expected {{\"baselineVersion\": 1, \"findings\": [{{{}}}...]}} as written by --update-baseline",
                K::FIELDS
            ))
        })?;
        if b.baseline_version != BASELINE_VERSION {
            return Err(ReportError::Baseline(format!(
                "baseline {origin} has baselineVersion {}, this mcp-fuzz reads version {BASELINE_VERSION}; regenerate it with --update-baseline",
                b.baseline_version
            )));
        }
        Ok(b)
    }

    /// The identities the baseline accepts.
    #[must_use]
    pub fn known(&self) -> BTreeSet<&K> {
        self.findings.iter().map(|e| &e.identity).collect()
    }

    /// Entries that match none of `present` although this run could have seen them.
    #[must_use]
    pub fn stale(&self, present: &BTreeSet<K>, checked: impl Fn(&K) -> bool) -> Vec<K> {
        self.findings
            .iter()
            .map(|e| e.identity.clone())
            .filter(|id| !present.contains(id) && checked(id))
            .collect()
    }

    /// The baseline after a run: the entries the run could not have seen (`checked` false), plus
    /// `accepted` (the run's findings worth accepting, with their messages); sorted, one per
    /// identity.
    #[must_use]
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
    ///
    /// # Panics
    /// Never: a baseline is plain data.
    #[must_use]
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut v = serde_json::to_vec_pretty(self).expect("a baseline serialises");
        v.push(b'\n');
        v
    }
}
