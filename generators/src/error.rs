//! Typed errors of the generator: every one names the JSON pointer it is about.

use std::fmt;

/// Why a schema cannot be compiled, or cannot be honoured by a kind of generation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{kind} at {}", display_pointer(.pointer))]
pub struct SchemaError {
    /// What went wrong.
    pub kind: SchemaErrorKind,
    /// JSON pointer (RFC 6901) of the schema location the error is about; `""` is the root.
    pub pointer: String,
}

fn display_pointer(pointer: &str) -> String {
    if pointer.is_empty() {
        "the schema root".to_owned()
    } else {
        format!("schema pointer `{pointer}`")
    }
}

impl SchemaError {
    pub(crate) fn new(kind: SchemaErrorKind, pointer: impl Into<String>) -> Self {
        Self { kind, pointer: pointer.into() }
    }

    /// Stable kebab-case name of the error kind, for machine-readable output.
    #[must_use]
    pub fn code(&self) -> &'static str {
        self.kind.code()
    }
}

/// The kinds of [`SchemaError`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SchemaErrorKind {
    /// The schema is not a valid JSON Schema (a keyword has the wrong shape, a `$ref` does not resolve...).
    Malformed(String),
    /// The schema refers to a resource outside the document (`http://...`, `file:...`); nothing is fetched.
    RemoteRef(String),
    /// The schema nests deeper than the compiler accepts.
    TooDeep {
        /// The nesting limit that was exceeded.
        limit: usize,
    },
    /// The schema is larger than the compiler accepts.
    TooLarge(String),
    /// No value satisfies the schema (e.g. `minimum` > `maximum`, `false`, contradictory `allOf`).
    Unsatisfiable(String),
    /// The schema uses a construct the generator cannot generate for (e.g. a regex backreference).
    Unsupported(String),
    /// No invalid value exists: the schema accepts every JSON value.
    AcceptsEverything,
}

impl SchemaErrorKind {
    /// Stable kebab-case name of the kind.
    #[must_use]
    pub fn code(&self) -> &'static str {
        match self {
            Self::Malformed(_) => "malformed-schema",
            Self::RemoteRef(_) => "remote-ref",
            Self::TooDeep { .. } => "too-deep",
            Self::TooLarge(_) => "too-large",
            Self::Unsatisfiable(_) => "unsatisfiable",
            Self::Unsupported(_) => "unsupported",
            Self::AcceptsEverything => "accepts-everything",
        }
    }
}

impl fmt::Display for SchemaErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Malformed(m) => write!(f, "malformed schema: {m}"),
            Self::RemoteRef(r) => write!(
                f,
                "remote $ref `{r}` is not fetched: inline the referenced schema under $defs"
            ),
            Self::TooDeep { limit } => write!(f, "schema nests deeper than {limit} levels"),
            Self::TooLarge(m) => write!(f, "schema too large: {m}"),
            Self::Unsatisfiable(m) => write!(f, "unsatisfiable schema: {m}"),
            Self::Unsupported(m) => write!(f, "cannot generate values: {m}"),
            Self::AcceptsEverything => {
                write!(f, "no invalid value exists: the schema accepts every JSON value")
            }
        }
    }
}
