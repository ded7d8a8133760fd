//! The run report as Markdown for a PR comment or a CI job summary: the score, a per-tool table,
//! then every finding as a ready-to-paste bug report (what was called, what came back, what was
//! expected, the minimal arguments, how to reproduce).

use super::human::outcome_line;
use super::replay::replay_line;
use crate::writers::markdown::{code_block, code_span, details, table, text};
use mcp_fuzz_model::finding::Severity;
use mcp_fuzz_model::report::{Finding, Report};
use mcp_fuzz_model::text::count;
use serde_json::Value;
use std::fmt::Write as _;

/// Findings written out as full bug reports; the rest get a table row each, so a large run stays
/// within a PR comment's size limit (65,536 characters on GitHub).
pub const MAX_BUG_REPORTS: usize = 20;

/// The document, ending in a newline.
#[must_use]
pub fn render(r: &Report) -> String {
    let mut s = String::new();
    let server = format!(
        "{} {}",
        r.server.name.as_deref().unwrap_or("(unnamed server)"),
        r.server.version.as_deref().unwrap_or("")
    );
    let _ = writeln!(s, "## mcp-fuzz report: {}\n", text(server.trim()));
    overview(&mut s, r);
    tools_section(&mut s, r);
    findings_section(&mut s, r);
    info_section(&mut s, r);
    baselined_section(&mut s, r);
    stale_section(&mut s, r);
    s
}

/// The run at a glance, one bullet each: the score, coverage, failures, the other phases, the
/// run's parameters and the baseline.
fn overview(s: &mut String, r: &Report) {
    let score = r.score.percent.map_or("n/a (no invalid case was scored)".to_owned(), |p| {
        format!(
            "**{p:.1}% ({})**: {} of {} invalid cases handled gracefully",
            r.score.grade.map_or("?", |g| g.as_str()),
            r.score.graceful,
            r.score.scored
        )
    });
    let _ = writeln!(s, "- Crash-resilience score: {score}");
    if let Some(blind) = r.coverage_summary() {
        let _ = writeln!(s, "- Coverage: {}", text(&blind));
    }
    let _ = writeln!(s, "- Failures: **{}**", r.failures());
    if let Some(seq) = super::stateful_text(r) {
        let _ = writeln!(s, "- Sequences: {}", text(&seq));
    }
    if let Some(beyond) = super::surfaces_text(r) {
        let _ = writeln!(s, "- Beyond tools: {}", text(&beyond));
    }
    if let Some(p) = super::protocol_text(r) {
        let _ = writeln!(s, "- Protocol: {}", text(&p));
    }
    let _ = writeln!(
        s,
        "- Seed {}, {}, {}, {:.1}s, mcp-fuzz {}{}",
        r.seed,
        count(r.calls, "call"),
        count(r.restarts, "restart"),
        r.duration_secs,
        text(&r.tool_version),
        r.partition.as_deref().map_or(String::new(), |p| format!(", partition {}", code_span(p)))
    );
    if let Some(b) = &r.baseline {
        let _ = writeln!(
            s,
            "- Baseline {}: {} known, {} new, {} stale",
            code_span(&b.file),
            b.known,
            b.new,
            b.stale.len()
        );
    }
}

/// One row per tool: its status, cases, graceful answers, score and a note.
fn tools_section(s: &mut String, r: &Report) {
    s.push_str("\n### Tools\n\n");
    let rows: Vec<Vec<String>> = r
        .tools
        .iter()
        .map(|t| {
            let called = t.status.was_called();
            vec![
                code_span(&t.name),
                text(t.status.as_str()),
                if called { t.total_cases().to_string() } else { "-".into() },
                if called { format!("{}/{}", t.graceful, t.cases.invalid) } else { "-".into() },
                t.score.map_or("-".into(), |p| format!("{p:.1}%")),
                text(&t.note()),
            ]
        })
        .collect();
    s.push_str(&table(&["Tool", "Status", "Cases", "Graceful/invalid", "Score", "Note"], &rows));
}

/// The new findings above info: the first [`MAX_BUG_REPORTS`] as bug reports, the rest in brief.
fn findings_section(s: &mut String, r: &Report) {
    let main: Vec<&Finding> =
        r.findings.iter().filter(|f| f.severity != Severity::Info && !f.baselined).collect();
    let _ = writeln!(s, "\n### Findings ({})\n", main.len());
    if main.is_empty() {
        s.push_str("No new findings.\n");
    }
    for (i, f) in main.iter().take(MAX_BUG_REPORTS).enumerate() {
        bug_report(s, r, i + 1, f);
    }
    if main.len() > MAX_BUG_REPORTS {
        let rows: Vec<Vec<String>> =
            main[MAX_BUG_REPORTS..].iter().map(|f| summary_row(f)).collect();
        let _ = writeln!(
            s,
            "{} more findings, in brief (the JSON report has them in full):\n",
            rows.len()
        );
        s.push_str(&table(&["Tool", "Kind", "Message"], &rows));
    }
}

/// The new info findings, folded away (they may be false positives).
fn info_section(s: &mut String, r: &Report) {
    let infos: Vec<&Finding> =
        r.findings.iter().filter(|f| f.severity == Severity::Info && !f.baselined).collect();
    if !infos.is_empty() {
        let rows: Vec<Vec<String>> = infos.iter().map(|f| summary_row(f)).collect();
        let body = table(&["Tool", "Kind", "Message"], &rows);
        s.push('\n');
        s.push_str(&details(
            &format!("{} info findings (may be false positives)", infos.len()),
            &body,
        ));
    }
}

/// The findings the baseline knows, folded away.
fn baselined_section(s: &mut String, r: &Report) {
    let known: Vec<&Finding> = r.findings.iter().filter(|f| f.baselined).collect();
    if !known.is_empty() {
        let rows: Vec<Vec<String>> = known
            .iter()
            .map(|f| vec![subject(f), text(f.kind.as_str()), text(&f.message)])
            .collect();
        s.push('\n');
        s.push_str(&details(
            &format!("{} baselined findings (known, not failing the run)", known.len()),
            &table(&["Tool", "Kind", "Message"], &rows),
        ));
    }
}

/// The baseline entries that no longer occur.
fn stale_section(s: &mut String, r: &Report) {
    if let Some(b) = r.baseline.as_ref().filter(|b| !b.stale.is_empty()) {
        let rows: Vec<Vec<String>> = b
            .stale
            .iter()
            .map(|id| {
                vec![
                    id.tool.as_deref().map_or_else(|| SERVER_WIDE.to_owned(), code_span),
                    text(id.kind.as_str()),
                    id.mutation.as_deref().map_or(String::new(), text),
                    id.pointer.as_deref().map_or(String::new(), code_span),
                ]
            })
            .collect();
        let _ = writeln!(s, "\n### Stale baseline entries ({})\n", b.stale.len());
        s.push_str("These baselined findings no longer occur; `--update-baseline` drops them.\n\n");
        s.push_str(&table(&["Tool", "Kind", "Mutation", "Pointer"], &rows));
    }
}

fn summary_row(f: &Finding) -> Vec<String> {
    vec![subject(f), text(f.kind.as_str()), text(&f.message)]
}

/// How a finding not of one tool, surface or check is headed.
const SERVER_WIDE: &str = "Server-wide";

/// What a finding is about, as Markdown: a tool, a surface item or a protocol check as code,
/// [`SERVER_WIDE`] for the server (never a `server` that reads like a tool's name).
fn subject(f: &Finding) -> String {
    match (&f.tool, &f.surface, &f.check) {
        (None, None, None) => SERVER_WIDE.to_owned(),
        _ => code_span(&f.subject()),
    }
}

fn bug_report(s: &mut String, r: &Report, n: usize, f: &Finding) {
    let named = f.subject();
    let called = f.surface.as_ref().map_or(f.case_tool().unwrap_or(&named), |x| x.name.as_str());
    let _ = writeln!(
        s,
        "#### {n}. {}: {} ({})\n",
        subject(f),
        text(f.kind.as_str()),
        text(f.severity.as_str())
    );
    let _ = writeln!(s, "{}\n", text(&f.message));
    if let Some(c) = f.case.as_ref().filter(|_| f.sequence.is_empty()) {
        let keyword =
            c.keyword.as_deref().map_or(String::new(), |k| format!(", keyword {}", code_span(k)));
        let _ = writeln!(s, "**Case:** {}{keyword}\n", text(&c.to_string()));
    }
    if let Some(more) = super::other_cases_text(f) {
        let _ = writeln!(s, "**Same cause:** {}\n", text(&more));
    }
    let sequence = super::sequence_text(f);
    if let Some((head, lines)) = &sequence {
        let _ = writeln!(s, "**Minimal sequence** ({}):\n", text(head));
        for (i, (call, note)) in lines.iter().enumerate() {
            let _ = writeln!(s, "{}. {} {}", i + 1, code_span(call), text(note));
        }
        s.push('\n');
    } else if let Some(a) = &f.arguments {
        let method = f
            .request
            .as_ref()
            .and_then(|q| q.get("method"))
            .and_then(Value::as_str)
            .filter(|_| f.surface.is_some())
            .unwrap_or("tools/call");
        let _ = writeln!(
            s,
            "**What was called:** {} {} with arguments\n",
            code_span(method),
            code_span(called)
        );
        s.push_str(&code_block("json", &super::cut(&pretty(&Value::Object(a.clone())))));
        s.push('\n');
    }
    if let Some(o) = &f.outcome {
        let _ = writeln!(s, "**What came back:** {}\n", text(&outcome_line(o)));
        s.push_str(&code_block("json", &pretty(&serde_json::to_value(o).unwrap_or(Value::Null))));
        s.push('\n');
    }
    let _ = writeln!(s, "**What was expected:** {}\n", text(f.kind.rule().expected));
    if sequence.is_some() {
        if let Some(name) = mcp_fuzz_model::case_file::file_name_of(f) {
            s.push_str(
                "**Reproduce** (with the case files of `mcp-fuzz run --artifacts cases`):\n\n",
            );
            s.push_str(&code_block("sh", &format!("mcp-fuzz replay cases/{name}")));
            s.push('\n');
        }
    } else if let Some(m) = f.smallest_arguments() {
        if f.minimal_arguments.is_some() && Some(m) != f.arguments.as_ref() {
            s.push_str("**Minimal arguments** (shrunk):\n\n");
            s.push_str(&code_block("json", &super::cut(&pretty(&Value::Object(m.clone())))));
            s.push('\n');
        } else {
            let why = if f.shrink.as_ref().is_some_and(|st| st.steps > 0) {
                "nothing smaller failed the same way"
            } else {
                "not shrunk"
            };
            let _ = writeln!(s, "**Minimal arguments:** the arguments above ({why})\n");
        }
        if let Some(flaky) = f.flaky {
            let _ = writeln!(
                s,
                "**Deterministic:** {}\n",
                if flaky {
                    "no, it did not fail on every re-run (flaky)"
                } else {
                    "yes, it failed on every re-run"
                }
            );
        }
        if let Some(t) = f.case_tool() {
            s.push_str("**Reproduce:**\n\n");
            match super::too_long(m) {
                None => s.push_str(&code_block("sh", &replay_line(&r.target, t, m))),
                Some(n) => s.push_str(&format!("{}\n", text(&super::replay_pointer(n, f)))),
            }
            s.push('\n');
        }
    }
    if let Some(replay) = super::surface_replay(r, f).filter(|_| f.surface.is_some()) {
        s.push_str("**Reproduce:**\n\n");
        match replay {
            Ok(line) => s.push_str(&code_block("sh", &line)),
            Err(pointer) => s.push_str(&format!("{}\n", text(&pointer))),
        }
        s.push('\n');
    }
    let _ = writeln!(s, "**Fix:** {}\n", text(f.fix()));
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_else(|_| v.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc(findings: usize, tool: &str) -> Report {
        let f: Vec<Value> = (0..findings)
            .map(|i| {
                json!({"tool": tool, "kind": "exited", "severity": "failure",
                    "case": {"mode": "invalid", "mutation": "wrong-type", "pointer": format!("/p{i}")},
                    "arguments": {"x": "```\n| <b>"}, "outcome": {"kind": "exited", "exit": {"code": 3, "signal": null}, "stderr": []},
                    "message": format!("died {i} | *loud*")})
            })
            .collect();
        serde_json::from_value(json!({
            "reportVersion": 1, "toolVersion": "0.1.0",
            "target": {"transport": "stdio", "command": ["srv"], "env": [], "inheritEnv": false, "cwd": null},
            "server": {"name": "s", "version": "1", "protocolVersion": "2025-06-18"}, "seed": 0,
            "tools": [{"name": tool, "status": "tested", "cases": {"boundary": 0, "valid": 0, "invalid": 1},
                       "graceful": 0, "scored": 1, "score": 0.0, "outcomes": {}}],
            "findings": f,
            "score": {"graceful": 0, "scored": 1, "percent": 0.0, "grade": "F"},
            "restarts": 0, "calls": 1, "durationSecs": 0.1
        }))
        .expect("doc")
    }

    #[test]
    fn hostile_names_and_values_stay_inert() {
        let md = render(&doc(1, "a|b`<script>"));
        // In the table the pipe is escaped (GFM un-escapes it inside the code span).
        assert!(md.contains("| ``a\\|b`<script>`` | tested |"), "{md}");
        // In a heading the name is a code span: inert, no HTML.
        assert!(md.contains("#### 1. ``a|b`<script>``: exited (failure)"), "{md}");
        // The argument with a fence inside sits in a longer fence.
        assert!(md.contains("````json\n{\n  \"x\": \"```\\n| <b>\"\n}\n````"), "{md}");
        assert!(md.contains("died 0 \\| \\*loud\\*"), "{md}");
    }

    #[test]
    fn many_findings_are_summarised_after_the_first_reports() {
        let md = render(&doc(MAX_BUG_REPORTS + 5, "t"));
        assert_eq!(md.matches("**What was expected:**").count(), MAX_BUG_REPORTS);
        assert!(md.contains("5 more findings, in brief"), "{md}");
        assert!(md.contains(&format!("died {} ", MAX_BUG_REPORTS + 4)));
    }
}
