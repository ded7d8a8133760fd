//! One call to make ([`Case`]) and how it was made: its [`Mode`] (boundary, valid or invalid)
//! and its [`CaseLabel`] (the mutation and pointer of an invalid case, the fed or hinted places
//! of a valid one).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Whether a case's arguments are meant to be accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// Deterministic boundary value (valid).
    Boundary,
    /// Random valid value.
    Valid,
    /// Labelled invalid value.
    Invalid,
}

impl Mode {
    /// Whether the arguments validate against the tool's input schema.
    #[must_use]
    pub fn is_valid(self) -> bool {
        !matches!(self, Self::Invalid)
    }
}

/// How a case was made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CaseLabel {
    /// Valid or invalid.
    pub mode: Mode,
    /// For invalid cases: the mutation kind.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mutation: Option<String>,
    /// For invalid cases: where in the arguments.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pointer: Option<String>,
    /// For invalid cases: the keyword violated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keyword: Option<String>,
    /// For valid cases built from an earlier tool's result: the property that was fed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fed: Option<String>,
    /// For valid cases made with value hints: the pointers of the hinted places.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hinted: Vec<String>,
    /// For invalid cases: the mutation was applied to the arguments of a valid call that worked
    /// (so the other arguments name real things), not to the simplest value.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub on_worked: bool,
}

impl CaseLabel {
    /// The label of a case of `mode` with nothing else to say.
    #[must_use]
    pub fn of(mode: Mode) -> Self {
        Self {
            mode,
            mutation: None,
            pointer: None,
            keyword: None,
            fed: None,
            hinted: Vec::new(),
            on_worked: false,
        }
    }

    /// The label of an invalid case: its mutation, pointer and keyword.
    #[must_use]
    pub fn invalid(label: mcp_fuzz_generators::Label) -> Self {
        Self {
            mutation: Some(label.mutation.as_str().to_owned()),
            pointer: Some(label.pointer),
            keyword: Some(label.keyword.to_owned()),
            ..Self::of(Mode::Invalid)
        }
    }
}

impl std::fmt::Display for CaseLabel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (&self.mutation, &self.pointer) {
            (Some(m), Some(p)) => {
                write!(f, "{m} at `{}`", if p.is_empty() { "/" } else { p })?;
                if self.on_worked {
                    f.write_str(" on a call that worked")?;
                }
                Ok(())
            }
            _ if self.fed.is_some() => {
                write!(f, "valid, `{}` from an earlier result", self.fed.as_deref().unwrap_or(""))
            }
            _ if !self.hinted.is_empty() => {
                write!(f, "valid, hinted `{}`", self.hinted.join("`, `"))
            }
            _ => f.write_str(match self.mode {
                Mode::Boundary => "boundary",
                Mode::Valid => "valid",
                Mode::Invalid => "invalid",
            }),
        }
    }
}

/// One call to make.
#[derive(Debug, Clone)]
pub struct Case {
    /// How it was made.
    pub label: CaseLabel,
    /// The `arguments` object.
    pub arguments: Map<String, Value>,
    /// For random cases: the index of the sampler draw that made it, so that its value tree can
    /// be regenerated from the tool seed to shrink it (see `Sampler::skip`).
    pub draw: Option<u64>,
}
