//! `mcp-fuzz diff OLD NEW`: directional compatibility of two tool surfaces, and its renderings
//! (human, JSON, Markdown, JUnit XML, SARIF 2.1.0).

use crate::cli::{DiffArgs, DiffFormat, FailOn, OpenContentMode};
use crate::errors::CliError;
use crate::exit_code;
use crate::formats::{junit, markdown as md, sarif};
use crate::r#gen::{origin, read};
use crate::run_cmd::write_atomically;
use crate::tools_list::{Capture, parse_capture};
use anyhow::Context as _;
use mcp_fuzz_compat::diff::{Diff, Entry, OpenContent, Options, Verdict, diff, to_json};
use mcp_fuzz_compat::rules::{Level, RULES};
use serde_json::json;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;
use std::time::Duration;

/// `mcp-fuzz diff`.
pub fn run(args: &DiffArgs) -> anyhow::Result<u8> {
    if args.list_rules {
        let mut text = String::new();
        for rule in RULES.iter() {
            let _ =
                writeln!(text, "{:<48} {:<9} {}", rule.id, rule.level.as_str(), rule.explanation);
        }
        std::io::stdout().lock().write_all(text.as_bytes()).context("failed to write the rules")?;
        return Ok(exit_code::SUCCESS);
    }
    let (Some(old_path), Some(new_path)) = (&args.old, &args.new) else {
        return Err(CliError::Usage("diff needs two files: mcp-fuzz diff OLD NEW".into()).into());
    };
    let old = load(old_path)?;
    let new = load(new_path)?;
    let time_budget = Duration::try_from_secs_f64(args.time_budget).map_err(|_| {
        CliError::Usage(format!(
            "--time-budget must be a positive number of seconds, got {}",
            args.time_budget
        ))
    })?;
    if args.max_candidates == 0 {
        return Err(CliError::Usage("--max-candidates must be at least 1".into()).into());
    }
    let options = Options {
        max_candidates: args.max_candidates,
        time_budget,
        seed: args.seed,
        open_content: match args.open_content {
            OpenContentMode::Review => OpenContent::Review,
            OpenContentMode::Strict => OpenContent::Strict,
        },
    };
    let fail_on: Vec<Verdict> = args
        .fail_on
        .iter()
        .map(|f| match f {
            FailOn::Breaking => Verdict::Breaking,
            FailOn::Unknown => Verdict::Unknown,
            FailOn::Review => Verdict::Review,
        })
        .collect();
    let result = diff(&old, &new, &options);
    let names = (display(old_path), display(new_path));
    let json = to_json(&result, (&old, &names.0), (&new, &names.1), &options, &fail_on);
    let rendered = match args.format {
        DiffFormat::Human => human(&result, &names, &fail_on),
        DiffFormat::Json => {
            let mut text =
                serde_json::to_string_pretty(&json).context("failed to serialise the report")?;
            text.push('\n');
            text
        }
        DiffFormat::Markdown => markdown(&result, &names, &fail_on),
        DiffFormat::Junit => junit(&result, &fail_on),
        DiffFormat::Sarif => sarif(&result, &fail_on),
    };
    if let Some(path) = &args.output {
        write_atomically(path, rendered.as_bytes())?;
    }
    std::io::stdout()
        .lock()
        .write_all(rendered.as_bytes())
        .context("failed to write the report")?;
    Ok(if result.passes(&fail_on) { exit_code::SUCCESS } else { exit_code::FINDINGS })
}

fn load(path: &Path) -> anyhow::Result<Capture> {
    let origin = origin(path);
    let text = read(path, &origin)?;
    parse_capture(&text).map_err(|error| {
        CliError::Usage(format!(
            "failed to read a snapshot or capture from {origin}: {error}; diff expects files \
             written by `mcp-fuzz snapshot`, or tools/list answers ({{\"tools\": [...]}}, a \
             JSON-RPC response, an array of tools)"
        ))
        .into()
    })
}

fn display(path: &Path) -> String {
    path.display().to_string()
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
                default_level: match rule.map(|r| r.level) {
                    Some(Level::Breaking) => sarif::Level::Error,
                    Some(Level::Review) => sarif::Level::Warning,
                    _ => sarif::Level::Note,
                },
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
            sarif::Finding {
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
    let mut text =
        serde_json::to_string_pretty(&log.to_json()).expect("a JSON value always serializes");
    text.push('\n');
    text
}

/// The SARIF rule of an entry: its first change id.
fn rule_of(e: &Entry) -> String {
    e.changes
        .first()
        .map_or_else(|| format!("{}-keyword-changed", e.direction.as_str()), |c| c.id.clone())
}
