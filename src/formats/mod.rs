//! Generic report writers: JUnit XML, SARIF 2.1.0 and Markdown.
//!
//! Nothing here knows about runs, tools or findings: each module takes plain data (strings,
//! counts, levels) and returns the document as a `String` (or a `serde_json::Value` for SARIF).
//! `mcp-fuzz run` and `mcp-fuzz diff` map their own reports onto these types; see
//! `src/report/` for the run's mapping.

#![allow(
    dead_code,
    reason = "generic writers shared by several commands; not every helper is used by each"
)]

pub mod junit;
pub mod markdown;
pub mod sarif;
