//! # mcp-fuzz-report
//!
//! Every document mcp-fuzz writes, in every format, over typed models: the run report (the
//! model's [`Report`](mcp_fuzz_model::report::Report) the engine fills, [`run`]), the compatibility diff
//! (compat's [`Diff`](mcp_fuzz_compat::diff::Diff), [`diff`]) and the clients report
//! ([`clients::model::ClientsReport`], [`clients`]). Each document has a `render(doc, format)`;
//! the generic JUnit XML, SARIF 2.1.0 and Markdown writers they share are in [`writers`], the
//! generic baseline file in [`baseline`].
//!
//! The crate is pure: no I/O, no terminal, no async runtime; renderers return strings. The
//! binary reads and writes the files.
//!
//! ```
//! use mcp_fuzz_report::writers::markdown::code_span;
//! assert_eq!(code_span("a`b"), "``a`b``");
//! ```
#![deny(missing_docs)]

pub mod baseline;
pub mod clients;
pub mod diff;
mod error;
pub mod run;
pub mod severity;
mod text;
pub mod writers;

pub use error::ReportError;

/// A document format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// For people: a table and the findings; stdout only.
    Human,
    /// The versioned JSON document.
    Json,
    /// JUnit XML.
    Junit,
    /// SARIF 2.1.0.
    Sarif,
    /// Markdown, for a pull-request comment or a CI job summary.
    Markdown,
}

impl Format {
    /// Every format, in `--output-dir` order.
    pub const ALL: [Format; 5] =
        [Format::Human, Format::Json, Format::Junit, Format::Sarif, Format::Markdown];

    /// The format's name on the command line.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Human => "human",
            Self::Json => "json",
            Self::Junit => "junit",
            Self::Sarif => "sarif",
            Self::Markdown => "markdown",
        }
    }

    /// The file a format is written to under `--output-dir` (none for `human`).
    #[must_use]
    pub fn file_name(self) -> Option<&'static str> {
        match self {
            Self::Human => None,
            Self::Json => Some("report.json"),
            Self::Junit => Some("report.junit.xml"),
            Self::Sarif => Some("report.sarif"),
            Self::Markdown => Some("report.md"),
        }
    }
}

/// Pretty JSON with a final newline.
fn pretty(v: &serde_json::Value) -> String {
    let mut s = serde_json::to_string_pretty(v).expect("JSON values serialise");
    s.push('\n');
    s
}
