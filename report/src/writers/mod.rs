//! Generic report writers: JUnit XML, SARIF 2.1.0 and Markdown.
//!
//! Nothing here knows about runs, tools or findings: each module takes plain data (strings,
//! counts, levels) and returns the document as a `String` (or a `serde_json::Value` for SARIF).
//! Each document maps its own model onto these types.

pub mod junit;
pub mod markdown;
pub mod sarif;
