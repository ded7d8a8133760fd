//! Rendering the run report: the shape the binary reads and writes ([`model`]), the formats
//! (`human`, `json`, `junit`, `sarif`, `markdown`), the baseline and shard merging.

pub mod baseline;
pub mod human;
pub mod junit;
pub mod markdown;
pub mod merge;
pub mod model;
pub mod replay;
pub mod rules;
pub mod sarif;

use crate::cli::Format;
use model::Doc;

/// The document in `format`.
pub fn render(doc: &Doc, format: Format) -> String {
    match format {
        Format::Human => human::render(doc),
        Format::Json => json(doc),
        Format::Junit => junit::render(doc),
        Format::Sarif => pretty(&sarif::render(doc)),
        Format::Markdown => markdown::render(doc),
    }
}

/// The JSON report, pretty, with a final newline.
pub fn json(doc: &Doc) -> String {
    pretty(&serde_json::to_value(doc).expect("the report serialises"))
}

fn pretty(v: &serde_json::Value) -> String {
    let mut s = serde_json::to_string_pretty(v).expect("JSON values serialise");
    s.push('\n');
    s
}

/// The file a format is written to under `--output-dir` (none for `human`, which goes to stdout).
pub fn file_name(format: Format) -> Option<&'static str> {
    match format {
        Format::Human => None,
        Format::Json => Some("report.json"),
        Format::Junit => Some("report.junit.xml"),
        Format::Sarif => Some("report.sarif"),
        Format::Markdown => Some("report.md"),
    }
}
