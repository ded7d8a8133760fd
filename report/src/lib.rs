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

pub use mcp_fuzz_model::format::Format;

/// Pretty JSON with a final newline.
fn pretty(v: &serde_json::Value) -> String {
    let mut s = serde_json::to_string_pretty(v).expect("JSON values serialise");
    s.push('\n');
    s
}
