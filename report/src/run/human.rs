//! The one-screen human summary of a run: a per-tool table (tabled), then each finding with its
//! arguments, outcome and a one-line replay command, then the score.

use crate::text::{clip, first_line};
use mcp_fuzz_model::finding::Severity;
use mcp_fuzz_model::outcome::Outcome;
use mcp_fuzz_model::report::{Finding, Report};
use mcp_fuzz_model::text::count;
use serde_json::Value;
use std::fmt::Write as _;
use tabled::builder::Builder;
use tabled::settings::object::Columns;
use tabled::settings::{Style, Width};

/// The summary, ending in a newline.
#[must_use]
pub fn render(r: &Report) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "mcp-fuzz {}: {} {} (protocol {}), seed {}{}\n",
        r.tool_version,
        r.server.name.as_deref().unwrap_or("(unnamed server)"),
        r.server.version.as_deref().unwrap_or(""),
        r.server.protocol_version.as_deref().unwrap_or("?"),
        r.seed,
        r.partition.as_deref().map_or(String::new(), |p| format!(", partition {p}")),
    );
    s.push_str(&tool_table(r));
    let shown: Vec<&Finding> =
        r.findings.iter().filter(|f| f.severity != Severity::Info && !f.baselined).collect();
    let infos = r.findings.iter().filter(|f| f.severity == Severity::Info && !f.baselined).count();
    let known = r.findings.iter().filter(|f| f.baselined).count();
    let mut hidden = Vec::new();
    if infos > 0 {
        hidden.push(format!("{infos} info not shown"));
    }
    if known > 0 {
        hidden.push(format!("{known} baselined not shown"));
    }
    let _ = writeln!(
        s,
        "\nFindings: {} ({}{})",
        shown.len(),
        count(r.failures() as u64, "failure"),
        if hidden.is_empty() { String::new() } else { format!(", {}", hidden.join(", ")) }
    );
    for group in alike(&shown) {
        match group.as_slice() {
            [f] => finding(&mut s, r, f),
            [first, ..] => alike_findings(&mut s, &group, first),
            [] => {}
        }
    }
    if let Some(b) = &r.baseline {
        let _ = writeln!(
            s,
            "\nBaseline {}: {} known, {} new, {} stale",
            b.file,
            b.known,
            b.new,
            b.stale.len()
        );
        for id in &b.stale {
            let _ = writeln!(
                s,
                "  stale: {} {}{} (no longer occurs; --update-baseline drops it)",
                id.tool.as_deref().unwrap_or("server"),
                id.kind,
                match (&id.mutation, &id.pointer) {
                    (Some(m), Some(p)) =>
                        format!(" ({m} at `{}`)", if p.is_empty() { "/" } else { p }),
                    _ => String::new(),
                }
            );
        }
    }
    let score = r.score.percent.map_or("n/a (no invalid case was scored)".to_owned(), |p| {
        format!(
            "{p:.1}% ({}): {} of {} invalid cases handled gracefully",
            r.score.grade.map_or("?", |g| g.as_str()),
            r.score.graceful,
            r.score.scored
        )
    });
    let _ = writeln!(s, "\nCrash-resilience score: {score}");
    if let Some(blind) = r.coverage_summary() {
        let _ = writeln!(s, "Coverage: {blind}");
    }
    if let Some(seq) = super::stateful_text(r) {
        let _ = writeln!(s, "Sequences: {seq}");
    }
    if let Some(beyond) = super::surfaces_text(r) {
        let _ = writeln!(s, "Beyond tools: {beyond}");
    }
    if let Some(p) = super::protocol_text(r) {
        let _ = writeln!(s, "Protocol: {p}");
    }
    let spares =
        if r.spares > 0 { format!(", {}", count(r.spares, "warm spare")) } else { String::new() };
    let (calls, restarts) = (count(r.calls, "call"), count(r.restarts, "restart"));
    let recycled = if r.recycled > 0 {
        format!(", {} replaced before a call limit", count(r.recycled, "process"))
    } else {
        String::new()
    };
    let _ = writeln!(s, "{calls}, {restarts}{spares}{recycled}, {:.1}s", r.duration_secs);
    if let Some(why) = &r.stopped {
        let _ = writeln!(s, "Stopped early: {why}; the cases not run were not judged.");
    }
    s
}

/// The per-tool table.
#[must_use]
pub fn tool_table(r: &Report) -> String {
    let mut b = Builder::default();
    b.push_record(["TOOL", "STATUS", "CASES", "INVALID", "GRACEFUL", "SCORE", "FINDINGS", "NOTE"]);
    for t in &r.tools {
        let called = t.status.was_called();
        let count = |n: u64| if called { n.to_string() } else { "-".into() };
        let findings = r
            .findings
            .iter()
            .filter(|f| f.concerns(&t.name) && f.severity != Severity::Info)
            .count();
        b.push_record([
            t.name.clone(),
            t.status.to_string(),
            count(t.total_cases()),
            count(t.cases.invalid),
            count(t.graceful),
            t.score.map_or("-".into(), |p| format!("{p:.1}%")),
            findings.to_string(),
            t.note(),
        ]);
    }
    let mut table = b.build();
    table.with(Style::rounded());
    // A long note (a tool's error text) wraps instead of making the table as wide as itself.
    // See: issue 30 item 10 (a 700-column table).
    table.modify(Columns::last(), Width::wrap(NOTE_WIDTH).keep_words(true));
    format!("{table}\n")
}

/// Characters of the NOTE column per line: with the other columns (and a tool name of 20
/// characters), a table of at most about 140 columns whatever the notes hold.
const NOTE_WIDTH: usize = 60;

fn finding(s: &mut String, r: &Report, f: &Finding) {
    let _ = writeln!(s, "\n  [{}] {}: {} - {}", f.severity, f.subject(), f.kind, f.message);
    if let Some(c) = f.case.as_ref().filter(|_| f.sequence.is_empty()) {
        let _ = writeln!(s, "      case: {}", c);
    }
    if let Some(more) = super::other_cases_text(f) {
        let _ = writeln!(s, "      same cause: {more}");
    }
    let sequence = super::sequence_text(f);
    if let Some((head, lines)) = &sequence {
        let _ = writeln!(s, "      sequence: {head}");
        for (i, (call, note)) in lines.iter().enumerate() {
            let _ = writeln!(s, "        {}. {call} {note}", i + 1);
        }
    } else if let (Some(request), None) = (&f.request, &f.arguments) {
        let _ = writeln!(s, "      request: {}", super::cut(&request.to_string()));
    } else if let Some(a) = &f.arguments {
        let _ =
            writeln!(s, "      arguments: {}", super::cut(&Value::Object(a.clone()).to_string()));
    }
    let minimal = f.smallest_arguments();
    if let Some(m) = minimal.filter(|m| Some(*m) != f.arguments.as_ref() && sequence.is_none()) {
        let _ =
            writeln!(s, "      minimal:   {}", super::cut(&Value::Object(m.clone()).to_string()));
    }
    if let Some(o) = &f.outcome {
        let _ = writeln!(s, "      outcome: {}", outcome_line(o));
        if let Outcome::Exited { stderr, .. } = o {
            for line in &stderr[stderr.len().saturating_sub(3)..] {
                let _ = writeln!(s, "      stderr: {line}");
            }
        }
    }
    if let Some(flaky) = f.flaky {
        let _ = writeln!(
            s,
            "      {}",
            if flaky {
                "flaky: it did not fail on every re-run"
            } else {
                "deterministic: it failed on every re-run"
            }
        );
    }
    if let Some(line) = super::replay_text(r, f) {
        let _ = writeln!(s, "      replay: {line}");
    }
    if let (Some(request), true) = (&f.request, f.arguments.is_some()) {
        let _ = writeln!(s, "      request: {}", super::cut(&request.to_string()));
    }
    let _ = writeln!(s, "      fix: {}", f.fix());
}

/// The findings in report order, with a tool-level finding (no case, no request, no sequence)
/// gathered with the later ones of the same kind, severity, fix and message but for its
/// numbers: 45 identical "no valid call succeeded" warnings are one entry naming their tools.
///
/// See: issue 30 item 10.
fn alike<'a>(shown: &[&'a Finding]) -> Vec<Vec<&'a Finding>> {
    let bare = |f: &Finding| {
        f.tool.is_some()
            && f.case.is_none()
            && f.arguments.is_none()
            && f.request.is_none()
            && f.sequence.is_empty()
            && f.outcome.is_none()
    };
    let mut groups: Vec<Vec<&Finding>> = Vec::new();
    for &f in shown {
        let same = |g: &Vec<&Finding>| {
            let h = g[0];
            bare(h)
                && bare(f)
                && h.kind == f.kind
                && h.severity == f.severity
                && h.fix() == f.fix()
                && shape(&h.message) == shape(&f.message)
        };
        match groups.iter_mut().find(|g| same(g)) {
            Some(g) => g.push(f),
            None => groups.push(vec![f]),
        }
    }
    groups
}

/// A message with its numbers as `#`: two tools' "0 of 20 valid calls succeeded" and "0 of 32
/// ..." say the same; two malformed tools' different defects do not.
fn shape(message: &str) -> String {
    message.chars().map(|c| if c.is_ascii_digit() { '#' } else { c }).collect()
}

/// One entry for findings alike ([`alike`]): the kind and the tools, the first's message, the fix.
fn alike_findings(s: &mut String, group: &[&Finding], first: &Finding) {
    let tools: Vec<&str> = group.iter().filter_map(|f| f.tool.as_deref()).collect();
    let _ = writeln!(
        s,
        "\n  [{}] {} on {} tools: {}",
        first.severity,
        first.kind,
        tools.len(),
        tools.join(", ")
    );
    let _ = writeln!(s, "      first: {}: {}", first.subject(), first.message);
    let _ = writeln!(s, "      fix: {}", first.fix());
}

/// The outcome on one line: its kind and each detail, clipped (`exited (exit status 3)`).
#[must_use]
pub fn outcome_line(o: &Outcome) -> String {
    let value = serde_json::to_value(o).unwrap_or(Value::Null);
    let detail = match &value {
        Value::Object(m) => m
            .iter()
            .filter(|(k, _)| *k != "kind" && *k != "stderr")
            .map(|(k, v)| match v {
                Value::String(s) => format!("{k}: {}", first_line(s)),
                Value::Object(e) if k == "exit" => match (e.get("code"), e.get("signal")) {
                    (Some(c), _) if !c.is_null() => format!("exit status {c}"),
                    (_, Some(sig)) if !sig.is_null() => format!("killed by signal {sig}"),
                    _ => "exit status unknown".into(),
                },
                other => format!("{k}: {}", clip(&other.to_string())),
            })
            .collect::<Vec<_>>()
            .join(", "),
        _ => String::new(),
    };
    if detail.is_empty() { o.kind().to_string() } else { format!("{} ({detail})", o.kind()) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_outcome_line_quotes_the_first_meaningful_line_of_a_pretty_printed_text() {
        // n8n-mcp 2.87.0 answers `{\n  "error": "Workflow patterns not generated yet..."\n}`.
        let o = Outcome::UnflaggedError { text: "{\n  \"error\": \"not generated\"\n}".into() };
        assert_eq!(outcome_line(&o), "unflagged-error (text: \"error\": \"not generated\")");
    }

    #[test]
    fn alike_tool_warnings_are_one_entry_naming_their_tools() {
        let warning = |tool: &str, n: u32| {
            json!({"tool": tool, "kind": "no-valid-call-succeeded", "severity": "warning",
                   "message": format!("0 of {n} valid calls succeeded")})
        };
        let exited = json!({"tool": "c", "kind": "exited", "severity": "failure",
            "case": {"mode": "valid"}, "arguments": {},
            "outcome": {"kind": "exited", "exit": {"code": 3, "signal": null}, "stderr": []},
            "message": "died"});
        let malformed = |tool: &str, what: &str| json!({"tool": tool, "kind": "malformed-tool", "severity": "warning", "message": what});
        let r: Report = serde_json::from_value(json!({
            "reportVersion": 1, "toolVersion": "0.1.0",
            "target": {"transport": "stdio", "command": ["srv"], "env": [], "inheritEnv": false, "cwd": null},
            "server": {"name": "s", "version": "1", "protocolVersion": "2025-06-18"}, "seed": 0,
            "tools": [],
            "findings": [warning("a", 20), exited, warning("b", 32),
                         malformed("m", "inputSchema must be an object"),
                         malformed("n", "readOnlyHint must be a boolean")],
            "score": {"graceful": 0, "scored": 0},
            "restarts": 1, "calls": 1, "durationSecs": 0.1
        }))
        .expect("a report");
        let text = render(&r);
        assert!(text.contains("[warning] no-valid-call-succeeded on 2 tools: a, b\n"), "{text}");
        assert!(text.contains("first: a: 0 of 20 valid calls succeeded"), "{text}");
        assert_eq!(text.matches("fix: Add value hints").count(), 1, "{text}");
        assert!(text.contains("[failure] c: exited - died"), "a failure stays its own: {text}");
        assert!(
            text.contains("[warning] n: malformed-tool - readOnlyHint"),
            "different defects: {text}"
        );
        assert!(text.contains("Findings: 5 (1 failure)"), "{text}");
        assert!(text.contains("1 call, 1 restart,"), "{text}");
    }
    #[test]
    fn a_long_note_wraps_and_the_table_stays_narrow() {
        let reason =
            format!("every call fails the same way, whatever the input: {}", "word ".repeat(120));
        let r: Report = serde_json::from_value(json!({
            "reportVersion": 1, "toolVersion": "0.1.0",
            "target": {"transport": "stdio", "command": ["srv"], "env": [], "inheritEnv": false, "cwd": null},
            "server": {"name": "s", "version": "1", "protocolVersion": "2025-06-18"}, "seed": 0,
            "tools": [{"name": "t", "status": "unavailable", "reason": reason,
                       "cases": {"boundary": 0, "valid": 1, "invalid": 0},
                       "graceful": 0, "scored": 0, "outcomes": {}}],
            "findings": [],
            "score": {"graceful": 0, "scored": 0},
            "restarts": 0, "calls": 1, "durationSecs": 0.1
        }))
        .expect("a report");
        let table = tool_table(&r);
        let widest = table.lines().map(|l| l.chars().count()).max().unwrap_or(0);
        assert!(widest <= 140, "{widest} columns:\n{table}");
        assert_eq!(table.matches("word").count(), 120, "nothing of the note is lost:\n{table}");
    }
}
