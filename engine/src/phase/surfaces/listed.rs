//! What one step of the surfaces phase hands the next: the prompts and resources listed, the
//! values completion returned (they feed the prompts' and templates' arguments), and how a value
//! is named in a message. The steps (`prompts`, `resources`, `complete`) share these and not one
//! another.

use crate::report::SurfaceKind;
use mcp_fuzz_generators::uri_template::UriTemplate;
use std::collections::BTreeMap;

/// A listed prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Prompt {
    pub name: String,
    /// Its arguments: name, and whether required.
    pub args: Vec<(String, bool)>,
}

/// What the server listed.
#[derive(Debug, Default)]
pub(crate) struct Listed {
    /// Resource URIs.
    pub resources: Vec<String>,
    /// Templates that parse as RFC 6570 (the others are warnings).
    pub templates: Vec<(String, UriTemplate)>,
}

impl Listed {
    /// Nothing listed.
    pub fn is_empty(&self) -> bool {
        self.resources.is_empty() && self.templates.is_empty()
    }
}

/// Values the server completed, by surface, item and argument.
#[derive(Debug, Default)]
pub(crate) struct Completed {
    pub(super) values: BTreeMap<(SurfaceKind, String, String), Vec<String>>,
}

impl Completed {
    /// The first value completed for `arg` of `name`, if any.
    pub fn first(&self, kind: SurfaceKind, name: &str, arg: &str) -> Option<String> {
        self.values.get(&(kind, name.to_owned(), arg.to_owned()))?.first().cloned()
    }
}

/// A value in a case label: quoted, long ones by their length.
pub(crate) fn label(v: &str) -> String {
    let n = v.chars().count();
    if n > 40 { format!("a {n}-character string") } else { format!("{v:?}") }
}
