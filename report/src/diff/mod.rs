//! The `diff` document in every format: human, JSON (`diffVersion` 1, `docs/diff.schema.json`),
//! Markdown, JUnit XML and SARIF 2.1.0, over compat's typed [`Diff`].
//!
//! Every format shows the same entries: those that are not compatible or carry a change above
//! info level (JSON, JUnit: all of them); a verdict fails when it is in the `--fail-on` list.

use crate::writers::{junit, markdown as md, sarif};
use mcp_fuzz_compat::capture::Capture;
use mcp_fuzz_compat::diff::{DIFF_VERSION, Diff, Entry, OpenContent, Options, Verdict};
use mcp_fuzz_compat::rules::Level;
use serde_json::{Map, Value, json};
use std::fmt::Write as _;

/// What a diff document is about: the result, the two sides with the names to show, the
/// options it ran with and the policy.
pub struct DiffDoc<'a> {
    /// Every entry with its verdict, changes and witness.
    pub diff: &'a Diff,
    /// The old side and its file name.
    pub old: (&'a Capture, &'a str),
    /// The new side and its file name.
    pub new: (&'a Capture, &'a str),
    /// The search options.
    pub options: &'a Options,
    /// The verdicts that fail the diff.
    pub fail_on: &'a [Verdict],
}

/// The document in `format`, ending in a newline.
#[must_use]
pub fn render(doc: &DiffDoc<'_>, format: crate::Format) -> String {
    let names = (doc.old.1.to_owned(), doc.new.1.to_owned());
    match format {
        crate::Format::Human => human(doc.diff, &names, doc.fail_on),
        crate::Format::Json => crate::pretty(&json_document(doc)),
        crate::Format::Markdown => markdown(doc.diff, &names, doc.fail_on),
        crate::Format::Junit => junit(doc.diff, doc.fail_on),
        crate::Format::Sarif => sarif(doc.diff, doc.fail_on),
    }
}

/// The JSON document (`docs/diff.schema.json`).
#[must_use]
pub fn json_document(doc: &DiffDoc<'_>) -> Value {
    let DiffDoc { diff, old: (old, old_file), new: (new, new_file), options, fail_on } = *doc;
    let side = |c: &Capture, file: &str| json!({"file": file, "server": {"name": c.server_name, "version": c.server_version, "protocolVersion": c.protocol_version}, "tools": c.tools.len()});
    let entries: Vec<Value> = diff
        .entries
        .iter()
        .map(|e| {
            let mut v = json!({
                "tool": e.tool,
                "direction": e.direction.as_str(),
                "verdict": e.verdict.as_str(),
                "counted": e.counted.as_str(),
                "changes": e.changes.iter().map(|c| json!({"id": c.id, "level": c.level.as_str(), "pointer": c.pointer, "detail": c.detail})).collect::<Vec<_>>(),
                "reason": e.reason,
                "candidates": e.candidates,
                "openContent": e.witness.as_ref().is_some_and(|w| w.open_content),
            });
            if let Some(w) = &e.witness {
                v["witness"] = w.value.clone();
                v["pointer"] = json!(w.pointer);
                v["keyword"] = json!(w.keyword);
            }
            v
        })
        .collect();
    let counts: Map<String, Value> =
        diff.counts().iter().map(|(v, n)| (v.as_str().to_owned(), json!(n))).collect();
    json!({
        "diffVersion": DIFF_VERSION,
        "old": side(old, old_file),
        "new": side(new, new_file),
        "settings": {
            "maxCandidates": options.max_candidates,
            "timeBudgetSecs": options.time_budget.as_secs_f64(),
            "seed": options.seed,
            "openContent": match options.open_content { OpenContent::Review => "review", OpenContent::Strict => "strict" },
            "failOn": fail_on.iter().map(|v| v.as_str()).collect::<Vec<_>>(),
        },
        "summary": counts,
        "budgetExhausted": diff.budget_exhausted,
        "passed": diff.passes(fail_on),
        "entries": entries,
    })
}

fn label(e: &Entry) -> String {
    if e.counted == e.verdict {
        e.verdict.as_str().to_owned()
    } else {
        format!("{} (open content, counted as {})", e.verdict.as_str(), e.counted.as_str())
    }
}

fn evidence(e: &Entry) -> String {
    match &e.witness {
        Some(w) => format!(
            "witness {} rejected at `{}` by `{}`{}",
            w.value,
            if w.pointer.is_empty() { "/" } else { &w.pointer },
            w.keyword,
            if w.open_content { " (open content)" } else { "" }
        ),
        None => e.reason.clone(),
    }
}

/// Whether an entry is worth a line: not compatible, or with a change above info level.
fn shown(e: &Entry) -> bool {
    e.verdict != Verdict::Compatible || e.changes.iter().any(|c| c.level > Level::Info)
}

fn counts_line(result: &Diff) -> String {
    result
        .counts()
        .iter()
        .map(|(v, n)| format!("{n} {}", v.as_str()))
        .collect::<Vec<_>>()
        .join(", ")
}

fn policy_line(result: &Diff, fail_on: &[Verdict]) -> String {
    let list = fail_on.iter().map(|v| v.as_str()).collect::<Vec<_>>().join(",");
    if result.passes(fail_on) {
        format!("policy --fail-on {list}: passed")
    } else {
        format!("policy --fail-on {list}: FAILED")
    }
}

fn human(result: &Diff, (old, new): &(String, String), fail_on: &[Verdict]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "mcp-fuzz diff {old} -> {new}");
    let mut lines = 0;
    for e in result.entries.iter().filter(|e| shown(e)) {
        lines += 1;
        let _ = writeln!(
            out,
            "\n{:<10} {} ({})",
            label(e).to_uppercase(),
            e.tool,
            e.direction.as_str()
        );
        let _ = writeln!(out, "  {}", evidence(e));
        for c in &e.changes {
            let at =
                if c.pointer.is_empty() { String::new() } else { format!(" at {}", c.pointer) };
            let _ = writeln!(out, "  - {} [{}]{at}: {}", c.id, c.level.as_str(), c.detail);
        }
    }
    if lines == 0 {
        let _ = writeln!(out, "\nno incompatible change found");
    }
    let tools = result
        .entries
        .iter()
        .map(|e| e.tool.as_str())
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    let _ =
        writeln!(out, "\n{tools} tools, {} entries: {}", result.entries.len(), counts_line(result));
    if result.budget_exhausted {
        let _ = writeln!(
            out,
            "the time budget ran out: raise --time-budget to decide the unknown entries"
        );
    }
    let _ = writeln!(out, "{}", policy_line(result, fail_on));
    out
}

fn markdown(result: &Diff, (old, new): &(String, String), fail_on: &[Verdict]) -> String {
    let mut out = format!(
        "## mcp-fuzz diff {} → {}\n\n{}; {}\n\n",
        md::code_span(old),
        md::code_span(new),
        md::text(&counts_line(result)),
        md::text(&policy_line(result, fail_on))
    );
    let rows: Vec<Vec<String>> = result
        .entries
        .iter()
        .filter(|e| shown(e))
        .map(|e| {
            let changes =
                e.changes.iter().map(|c| md::code_span(&c.id)).collect::<Vec<_>>().join(", ");
            vec![
                md::code_span(&e.tool),
                e.direction.as_str().to_owned(),
                label(e),
                changes,
                md::text(&evidence(e)),
            ]
        })
        .collect();
    out.push_str(&md::table(&["Tool", "Direction", "Verdict", "Changes", "Evidence"], &rows));
    out
}

fn junit(result: &Diff, fail_on: &[Verdict]) -> String {
    let mut suite = junit::TestSuite::new("mcp-fuzz diff");
    for e in &result.entries {
        let case =
            junit::TestCase::new(e.tool.clone(), format!("{} ({})", e.tool, e.direction.as_str()));
        let case = if fail_on.contains(&e.counted) {
            let ids = e.changes.iter().map(|c| c.id.as_str()).collect::<Vec<_>>().join(",");
            case.failed(label(e), ids, evidence(e))
        } else {
            case.with_output(format!("{}: {}", label(e), e.reason))
        };
        suite.cases.push(case);
    }
    junit::TestSuites::new("mcp-fuzz diff").with_suite(suite).to_xml()
}

fn sarif(result: &Diff, fail_on: &[Verdict]) -> String {
    let used: std::collections::BTreeSet<String> =
        result.entries.iter().filter(|e| e.verdict != Verdict::Compatible).map(rule_of).collect();
    let rules = used
        .iter()
        .map(|id| {
            let rule = mcp_fuzz_compat::rules::rule(id);
            let explanation = rule.map_or_else(|| "a schema change".to_owned(), |r| r.explanation.clone());
            sarif::Rule {
                id: id.clone(),
                name: id.clone(),
                short_description: explanation.clone(),
                full_description: explanation,
                help: "Run `mcp-fuzz diff OLD NEW` for the witness and the proof notes; `mcp-fuzz diff --list-rules` lists every change id.".to_owned(),
                default_level: rule
                    .map_or(crate::severity::Level::Note, |r| r.level.into())
                    .sarif(),
            }
        })
        .collect();
    let results = result
        .entries
        .iter()
        .filter(|e| e.verdict != Verdict::Compatible)
        .map(|e| {
            let mut properties = serde_json::Map::new();
            properties.insert("verdict".into(), json!(e.verdict.as_str()));
            properties.insert("counted".into(), json!(e.counted.as_str()));
            properties.insert("direction".into(), json!(e.direction.as_str()));
            if let Some(w) = &e.witness {
                properties.insert("witness".into(), w.value.clone());
                properties.insert("pointer".into(), json!(w.pointer));
                properties.insert("keyword".into(), json!(w.keyword));
                properties.insert("openContent".into(), json!(w.open_content));
            }
            sarif::SarifResult {
                rule_id: rule_of(e),
                level: Some(if fail_on.contains(&e.counted) {
                    sarif::Level::Error
                } else {
                    sarif::Level::Warning
                }),
                message: format!(
                    "{} ({}): {}: {}",
                    e.tool,
                    e.direction.as_str(),
                    label(e),
                    evidence(e)
                ),
                locations: vec![sarif::LogicalLocation {
                    name: e.tool.clone(),
                    fully_qualified_name: format!("{}/{}", e.tool, e.direction.as_str()),
                    kind: "function".to_owned(),
                }],
                partial_fingerprints: vec![(
                    "mcpFuzzDiff/v1".to_owned(),
                    sarif::fingerprint(&[&e.tool, e.direction.as_str(), &rule_of(e)]),
                )],
                baseline_state: None,
                properties,
            }
        })
        .collect();
    let log = sarif::Log {
        tool_name: "mcp-fuzz".to_owned(),
        tool_version: env!("CARGO_PKG_VERSION").to_owned(),
        information_uri: None,
        rules,
        results,
        execution_successful: true,
        properties: serde_json::Map::new(),
    };
    crate::pretty(&log.to_json())
}

/// The SARIF rule of an entry: its first change id.
fn rule_of(e: &Entry) -> String {
    e.changes
        .first()
        .map_or_else(|| format!("{}-keyword-changed", e.direction.as_str()), |c| c.id.clone())
}
