//! The run document: the engine's [`Report`] in every format, a baseline applied to it, shard
//! merging and the replay line of a finding.

pub mod baseline;
mod human;
mod junit;
mod markdown;
pub mod merge;
pub mod replay;
mod sarif;

use crate::Format;
use mcp_fuzz_engine::plan::{CaseLabel, Mode};
use mcp_fuzz_engine::report::Report;

pub use human::outcome_line;
pub use markdown::MAX_BUG_REPORTS;

/// The document in `format`.
#[must_use]
pub fn render(report: &Report, format: Format) -> String {
    match format {
        Format::Human => human::render(report),
        Format::Json => json(report),
        Format::Junit => junit::render(report),
        Format::Sarif => crate::pretty(&sarif::render(report)),
        Format::Markdown => markdown::render(report),
    }
}

/// The JSON report, pretty, with a final newline.
///
/// # Panics
/// Never: a report is plain data.
#[must_use]
pub fn json(report: &Report) -> String {
    crate::pretty(&serde_json::to_value(report).expect("the report serialises"))
}

/// How a case was made, in words: the mutation and where, else the mode.
fn case_text(c: &CaseLabel) -> String {
    match (&c.mutation, &c.pointer) {
        (Some(m), Some(p)) => format!("{m} at `{}`", if p.is_empty() { "/" } else { p }),
        _ => match c.mode {
            Mode::Boundary => "boundary",
            Mode::Valid => "valid",
            Mode::Invalid => "invalid",
        }
        .to_owned(),
    }
}

/// The other cases that failed with a finding's cause, as one line: `4 more: boundary x2;
/// wrong-type at `/id`; ...`; `None` when the finding has only its own case.
fn other_cases_text(f: &mcp_fuzz_engine::report::Finding) -> Option<String> {
    let more = f.occurrences.checked_sub(1).filter(|n| *n > 0)?;
    if !f.members.is_empty() {
        // One cause on several tools: how many cases on each.
        let per_tool: Vec<String> = f
            .members
            .iter()
            .map(|m| format!("`{}` {}", m.tool.as_deref().unwrap_or("server"), m.occurrences))
            .collect();
        return Some(format!("{} cases in all: {}", f.occurrences, per_tool.join(", ")));
    }
    let mut labels: Vec<(String, usize)> = Vec::new();
    for text in f.other_cases.iter().map(case_text) {
        match labels.iter_mut().find(|(t, _)| *t == text) {
            Some((_, n)) => *n += 1,
            None => labels.push((text, 1)),
        }
    }
    let mut parts: Vec<String> =
        labels.into_iter().map(|(t, n)| if n > 1 { format!("{t} x{n}") } else { t }).collect();
    if (f.other_cases.len() as u64) < more {
        parts.push("...".to_owned());
    }
    Some(format!("{more} more case(s): {}", parts.join("; ")))
}

/// Characters of a value shown in the human and Markdown reports; the JSON report and the case
/// files keep every value whole.
const MAX_VALUE_CHARS: usize = 300;

/// A value's text for a person: cut after [`MAX_VALUE_CHARS`] characters, with its size.
fn cut(text: &str) -> String {
    match text.char_indices().nth(MAX_VALUE_CHARS) {
        None => text.to_owned(),
        Some((at, _)) => format!(
            "{}… ({} bytes in all; the JSON report and case files keep it whole)",
            &text[..at],
            text.len()
        ),
    }
}

/// Whether arguments are too long to show whole: the replay line then points at case files.
fn too_long(arguments: &serde_json::Map<String, serde_json::Value>) -> Option<usize> {
    let n = serde_json::Value::Object(arguments.clone()).to_string().len();
    (n > MAX_VALUE_CHARS).then_some(n)
}

/// What to run instead of a replay line too long to print.
fn replay_pointer(bytes: usize) -> String {
    format!(
        "the arguments are {bytes} bytes: `mcp-fuzz run --artifacts DIR` writes a case file for \
         `mcp-fuzz replay DIR/<case>.json`"
    )
}

#[cfg(test)]
mod cut_tests {
    use super::*;

    #[test]
    fn long_values_are_cut_with_their_size_and_short_ones_kept() {
        assert_eq!(cut("{\"a\":1}"), "{\"a\":1}");
        let long = format!("\"{}\"", "é".repeat(400));
        let shown = cut(&long);
        assert!(shown.starts_with(&long[..301]), "{shown}");
        assert!(
            shown.ends_with("(802 bytes in all; the JSON report and case files keep it whole)")
        );
        assert_eq!(shown.chars().filter(|c| *c == 'é').count(), 299);
    }
}
