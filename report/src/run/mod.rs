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
use mcp_fuzz_model::report::{MAX_OTHER_CASES, Report};

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

/// The other cases that failed with a finding's cause, as one line: `4 more: boundary x2;
/// wrong-type at `/id`; ...`; `None` when the finding has only its own case.
fn other_cases_text(f: &mcp_fuzz_model::report::Finding) -> Option<String> {
    let more = f.occurrences.checked_sub(1).filter(|n| *n > 0)?;
    if f.check.is_some() {
        // Protocol checks failed the same way: the message names them.
        return None;
    }
    if !f.members.is_empty() {
        // One cause on several tools: how many cases on each (a tool may have several members,
        // from several phases).
        let mut counts: Vec<(&str, u64)> = Vec::new();
        for m in &f.members {
            let tool = m.tool.as_deref().unwrap_or("server");
            match counts.iter_mut().find(|(t, _)| *t == tool) {
                Some((_, n)) => *n += m.occurrences,
                None => counts.push((tool, m.occurrences)),
            }
        }
        let per_tool: Vec<String> = counts.iter().map(|(t, n)| format!("`{t}` {n}")).collect();
        return Some(format!("{} cases in all: {}", f.occurrences, per_tool.join(", ")));
    }
    if f.other_cases.is_empty() && f.surface.is_some() {
        return Some(format!("{more} more request(s) of this item failed the same way"));
    }
    let mut labels: Vec<(String, usize)> = Vec::new();
    for text in f.other_cases.iter().take(MAX_OTHER_CASES).map(ToString::to_string) {
        match labels.iter_mut().find(|(t, _)| *t == text) {
            Some((_, n)) => *n += 1,
            None => labels.push((text, 1)),
        }
    }
    let mut parts: Vec<String> =
        labels.into_iter().map(|(t, n)| if n > 1 { format!("{t} x{n}") } else { t }).collect();
    if (f.other_cases.len().min(MAX_OTHER_CASES) as u64) < more {
        parts.push("...".to_owned());
    }
    Some(format!("{more} more case(s): {}", parts.join("; ")))
}

/// A finding's smallest sequence, for a person: a heading (how many calls, shrunk from how
/// many) and per call its tool and arguments, then where its bound values came from and how it
/// ended. `None` for a failure of one call.
fn sequence_text(f: &mcp_fuzz_model::report::Finding) -> Option<(String, Vec<(String, String)>)> {
    let steps = f.smallest_sequence();
    if steps.is_empty() {
        return None;
    }
    let head = match &f.minimal_sequence {
        Some(m) => {
            format!("{} call(s) from a fresh process, shrunk from {}", m.len(), f.sequence.len())
        }
        None => format!("{} call(s) from a fresh process", steps.len()),
    };
    let lines = steps
        .iter()
        .map(|s| {
            let call = format!(
                "{} {}",
                s.tool,
                cut(&serde_json::Value::Object(s.arguments.clone()).to_string())
            );
            let mut notes: Vec<String> = s
                .bindings
                .iter()
                .map(|b| {
                    let name = b.pointer.rsplit('/').find(|p| p.parse::<usize>().is_err());
                    format!(
                        "`{}` {} call {}",
                        name.unwrap_or(&b.pointer),
                        if b.altered { "altered from what returned" } else { "as returned by" },
                        b.step + 1
                    )
                })
                .collect();
            notes.dedup();
            let mut note =
                if notes.is_empty() { String::new() } else { format!("({})", notes.join("; ")) };
            if let Some(o) = &s.outcome {
                note = format!("{note} → {o}").trim_start().to_owned();
            }
            (call, note)
        })
        .collect();
    Some((head, lines))
}

/// One line on the phase beyond tools: what was listed and called, and what was not and why.
fn surfaces_text(r: &Report) -> Option<String> {
    let s = r.surfaces.as_ref()?;
    let count =
        |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let mut parts = Vec::new();
    if !s.prompts.is_empty() {
        parts.push(count(s.prompts.len(), "prompt", "prompts"));
    }
    let listed = s.resources.iter().filter(|i| i.name != "unknown URIs").count();
    if listed > 0 {
        parts.push(count(listed, "resource read", "resources read"));
    }
    if !s.templates.is_empty() {
        parts.push(count(s.templates.len(), "template", "templates"));
    }
    if !s.completions.is_empty() {
        parts.push(count(s.completions.len(), "argument completed", "arguments completed"));
    }
    let mut line = if parts.is_empty() {
        "the server declares prompts or resources but lists none".to_owned()
    } else {
        format!("{}, {} requests", parts.join(", "), s.requests)
    };
    for (what, why) in &s.skipped {
        line.push_str(&format!("; {what} not called: {why}"));
    }
    Some(line)
}

/// One line on the protocol conformance phase: its score and the checks that failed.
fn protocol_text(r: &Report) -> Option<String> {
    let p = r.protocol.as_ref()?;
    if let Some(why) = &p.reason {
        return Some(format!("not run: {why}"));
    }
    if p.passed + p.failed + p.skipped == 0 {
        return Some("not run: no check was reached".into());
    }
    let mut line = format!(
        "{} of {} checks passed{}",
        p.passed,
        p.passed + p.failed,
        p.score.map_or(String::new(), |s| format!(" ({s:.1}%, its own score)"))
    );
    let failed: Vec<&str> = p
        .checks
        .iter()
        .filter(|c| c.status == mcp_fuzz_model::report::CheckStatus::Fail)
        .map(|c| c.id.as_str())
        .collect();
    if !failed.is_empty() {
        line.push_str(&format!("; failed: {}", failed.join(", ")));
    }
    if p.skipped > 0 {
        line.push_str(&format!("; {} skipped", p.skipped));
    }
    if p.skipped_lines > 0 {
        let lines = mcp_fuzz_model::text::count(p.skipped_lines, "line");
        line.push_str(&format!("; {lines} on stdout that are not JSON passed over"));
    }
    Some(line)
}

/// One line on the sequence phase: what it ran and which data flows it found working.
fn stateful_text(r: &Report) -> Option<String> {
    let st = r.stateful.as_ref()?;
    if let Some(why) = &st.skipped {
        return Some(format!("skipped, {why}: each walk would only repeat single calls"));
    }
    let mut line = format!(
        "{} walks, {} steps over {} tool{}",
        st.sequences,
        st.steps,
        st.tools.len(),
        if st.tools.len() == 1 { "" } else { "s" }
    );
    if !st.families.is_empty() {
        let names: Vec<String> =
            st.families.iter().map(|f| format!("{} ({} tools)", f.noun, f.tools())).collect();
        line.push_str(&format!("; families: {}", names.join(", ")));
    }
    if st.links.is_empty() {
        line.push_str("; no value returned by one tool was taken by another");
    } else {
        let mut links: Vec<_> = st.links.iter().collect();
        links.sort_by(|a, b| b.calls.cmp(&a.calls).then_with(|| a.from.cmp(&b.from)));
        let shown: Vec<String> = links
            .iter()
            .take(3)
            .map(|l| format!("{} → {} via {} ({} calls)", l.from, l.to, l.via, l.calls))
            .collect();
        let more = links.len().saturating_sub(3);
        line.push_str(&format!("; links: {}", shown.join(", ")));
        if more > 0 {
            line.push_str(&format!(" and {more} more"));
        }
    }
    Some(line)
}

/// The replay of a sequence: its case file, which `run --artifacts DIR` writes.
fn sequence_replay(f: &mcp_fuzz_model::report::Finding) -> Option<String> {
    let name = mcp_fuzz_model::case_file::file_name_of(f)?;
    Some(format!(
        "mcp-fuzz replay DIR/{name} (the case file `mcp-fuzz run --artifacts DIR` writes)"
    ))
}

/// The one line that reproduces a finding: a sequence's case file; a tool call's `mcp-fuzz call
/// --tool` line (or where to find arguments too long to print); a request beside tools as
/// `mcp-fuzz call --prompt/--resource/--complete`. `None` when nothing can replay it alone.
fn replay_text(r: &Report, f: &mcp_fuzz_model::report::Finding) -> Option<String> {
    if !f.sequence.is_empty() {
        return sequence_replay(f);
    }
    if f.surface.is_some() {
        return surface_replay(r, f).map(|line| line.unwrap_or_else(|pointer| pointer));
    }
    let (tool, a) = (f.case_tool()?, f.smallest_arguments()?);
    Some(
        too_long(a)
            .map_or_else(|| replay::replay_line(&r.target, tool, a), |n| replay_pointer(n, f)),
    )
}

/// The replay of a finding about a prompt, resource or completion: `Ok` with its `mcp-fuzz call`
/// line, or `Err` with where to find a request too long to print.
fn surface_replay(
    r: &Report,
    f: &mcp_fuzz_model::report::Finding,
) -> Option<Result<String, String>> {
    let request = f.request.as_ref()?;
    let bytes = request.to_string().len();
    if bytes > MAX_VALUE_CHARS {
        Some(Err(replay_pointer(bytes, f)))
    } else {
        replay::request_line(&r.target, request).map(Ok)
    }
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

/// What to run instead of a replay line too long to print: the finding's case file when
/// `--artifacts` writes one (a failure), else the JSON report, which keeps the input whole.
fn replay_pointer(bytes: usize, f: &mcp_fuzz_model::report::Finding) -> String {
    match mcp_fuzz_model::case_file::file_name_of(f) {
        Some(name) => format!(
            "the input is {bytes} bytes: `mcp-fuzz run --artifacts DIR` writes DIR/{name} for \
             `mcp-fuzz replay`"
        ),
        None => format!(
            "the input is {bytes} bytes: `--json` keeps it whole (the finding's `{}`)",
            if f.surface.is_some() { "request" } else { "minimalArguments" }
        ),
    }
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

#[cfg(test)]
mod other_cases_tests {
    use super::*;
    use mcp_fuzz_model::case::{CaseLabel, Mode};
    use mcp_fuzz_model::finding::{FindingKind, Severity};
    use mcp_fuzz_model::report::Finding;

    fn member(tool: &str, occurrences: u64) -> Finding {
        Finding {
            occurrences,
            ..Finding::general(
                Some(tool.into()),
                FindingKind::InternalError,
                Severity::Failure,
                "m".into(),
            )
        }
    }

    #[test]
    fn a_cause_on_several_tools_counts_each_tool_once() {
        let f = Finding {
            occurrences: 60,
            tools: vec!["a".into(), "b".into()],
            members: vec![member("a", 45), member("b", 12), member("b", 1), member("a", 2)],
            ..Finding::general(None, FindingKind::InternalError, Severity::Failure, "m".into())
        };
        assert_eq!(other_cases_text(&f).as_deref(), Some("60 cases in all: `a` 47, `b` 13"));
    }

    #[test]
    fn long_lists_of_cases_name_the_first_ten() {
        let label = |p: &str| CaseLabel {
            mutation: Some("wrong-type".into()),
            pointer: Some(p.into()),
            ..CaseLabel::of(Mode::Invalid)
        };
        let f = Finding {
            occurrences: 15,
            other_cases: (1..15).map(|i| label(&format!("/p{i}"))).collect(),
            ..Finding::general(
                Some("t".into()),
                FindingKind::AcceptsInvalid,
                Severity::Warning,
                "m".into(),
            )
        };
        let text = other_cases_text(&f).unwrap_or_default();
        assert!(text.starts_with("14 more case(s): wrong-type at `/p1`;"), "{text}");
        assert!(text.contains("`/p10`; ...") && !text.contains("/p11"), "{text}");
    }
}
