//! The one-screen human summary of a run: a per-tool table (tabled), then each finding with its
//! arguments, outcome and a one-line replay command, then the score.

use super::replay::replay_line;
use crate::text::clip;
use mcp_fuzz_model::finding::{Severity, ToolStatus};
use mcp_fuzz_model::outcome::Outcome;
use mcp_fuzz_model::report::{Finding, Report};
use mcp_fuzz_model::text::count;
use serde_json::Value;
use std::fmt::Write as _;
use tabled::builder::Builder;
use tabled::settings::Style;

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
    for f in shown {
        finding(&mut s, r, f);
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
    let _ = writeln!(s, "{calls}, {restarts}{spares}, {:.1}s", r.duration_secs);
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
            if t.status == ToolStatus::Tested {
                t.coverage_note().or_else(|| t.hinted_note()).unwrap_or_default()
            } else {
                t.reason.clone().unwrap_or_default()
            },
        ]);
    }
    let mut table = b.build();
    table.with(Style::rounded());
    format!("{table}\n")
}

fn finding(s: &mut String, r: &Report, f: &Finding) {
    let _ = writeln!(s, "\n  [{}] {}: {} - {}", f.severity, f.subject(), f.kind, f.message);
    if let Some(c) = f.case.as_ref().filter(|_| f.sequence.is_empty()) {
        let _ = writeln!(s, "      case: {}", super::case_text(c));
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
    if sequence.is_some() {
        if let Some(line) = super::sequence_replay(f) {
            let _ = writeln!(s, "      replay: {line}");
        }
    } else if let (Some(tool), Some(a)) = (f.case_tool(), minimal) {
        let line = super::too_long(a)
            .map_or_else(|| replay_line(&r.target, tool, a), super::replay_pointer);
        let _ = writeln!(s, "      replay: {line}");
    }
    if let (Some(request), true) = (&f.request, f.arguments.is_some()) {
        let _ = writeln!(s, "      request: {}", super::cut(&request.to_string()));
    }
    let _ = writeln!(s, "      fix: {}", f.fix());
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
                Value::String(s) => format!("{k}: {}", clip(s.lines().next().unwrap_or(""))),
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
