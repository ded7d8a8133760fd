//! `mcp-fuzz diff OLD NEW`: directional compatibility of two tool surfaces, and its renderings
//! (human, JSON, Markdown, JUnit XML, SARIF 2.1.0).

use crate::cli::{DiffArgs, DiffFormat, FailOn, OpenContentMode};
use crate::errors::CliError;
use crate::exit_code;
use crate::r#gen::{origin, read};
use crate::run_cmd::write_atomically;
use crate::tools_list::{Capture, parse_capture};
use anyhow::Context as _;
use mcp_fuzz_compat::diff::{Diff, Entry, OpenContent, Options, Verdict, diff, to_json};
use mcp_fuzz_compat::rules::RULES;
use serde_json::{Value, json};
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;
use std::time::Duration;

/// `mcp-fuzz diff`.
pub fn run(args: &DiffArgs) -> anyhow::Result<u8> {
    if args.list_rules {
        let mut text = String::new();
        for rule in RULES.iter() {
            let _ = writeln!(text, "{:<48} {:<9} {}", rule.id, rule.level.as_str(), rule.explanation);
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
        CliError::Usage(format!("--time-budget must be a positive number of seconds, got {}", args.time_budget))
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
            let mut text = serde_json::to_string_pretty(&json).context("failed to serialise the report")?;
            text.push('\n');
            text
        }
        DiffFormat::Markdown => markdown(&result, &names, &fail_on),
        DiffFormat::Junit => junit(&result, &fail_on),
        DiffFormat::Sarif => sarif(&result, &names.1, &fail_on),
    };
    if let Some(path) = &args.output {
        write_atomically(path, rendered.as_bytes())?;
    }
    std::io::stdout().lock().write_all(rendered.as_bytes()).context("failed to write the report")?;
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

fn counts_line(result: &Diff) -> String {
    result.counts().iter().map(|(v, n)| format!("{n} {}", v.as_str())).collect::<Vec<_>>().join(", ")
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
    let mut shown = 0;
    for e in result.entries.iter().filter(|e| e.verdict != Verdict::Compatible || e.changes.iter().any(|c| c.level.as_str() != "info")) {
        shown += 1;
        let _ = writeln!(out, "\n{:<10} {} ({})", label(e).to_uppercase(), e.tool, e.direction.as_str());
        let _ = writeln!(out, "  {}", evidence(e));
        for c in &e.changes {
            let at = if c.pointer.is_empty() { String::new() } else { format!(" at {}", c.pointer) };
            let _ = writeln!(out, "  - {} [{}]{at}: {}", c.id, c.level.as_str(), c.detail);
        }
    }
    if shown == 0 {
        let _ = writeln!(out, "\nno incompatible change found");
    }
    let tools = result.entries.iter().map(|e| e.tool.as_str()).collect::<std::collections::BTreeSet<_>>().len();
    let _ = writeln!(out, "\n{tools} tools, {} entries: {}", result.entries.len(), counts_line(result));
    if result.budget_exhausted {
        let _ = writeln!(out, "the time budget ran out: raise --time-budget to decide the unknown entries");
    }
    let _ = writeln!(out, "{}", policy_line(result, fail_on));
    out
}

fn md_escape(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

fn markdown(result: &Diff, (old, new): &(String, String), fail_on: &[Verdict]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "## mcp-fuzz diff `{}` → `{}`\n", md_escape(old), md_escape(new));
    let _ = writeln!(out, "{}; {}\n", counts_line(result), policy_line(result, fail_on));
    let _ = writeln!(out, "| Tool | Direction | Verdict | Changes | Evidence |");
    let _ = writeln!(out, "|---|---|---|---|---|");
    for e in result.entries.iter().filter(|e| e.verdict != Verdict::Compatible || !e.changes.is_empty()) {
        let changes = e.changes.iter().map(|c| format!("`{}`", c.id)).collect::<Vec<_>>().join(", ");
        let _ = writeln!(
            out,
            "| `{}` | {} | {} | {} | {} |",
            md_escape(&e.tool),
            e.direction.as_str(),
            label(e),
            changes,
            md_escape(&evidence(e))
        );
    }
    out
}

fn xml(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c if (c as u32) < 0x20 && !matches!(c, '\n' | '\t' | '\r') => {}
            c => out.push(c),
        }
    }
    out
}

fn junit(result: &Diff, fail_on: &[Verdict]) -> String {
    let failures = result.entries.iter().filter(|e| fail_on.contains(&e.counted)).count();
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"mcp-fuzz diff\" tests=\"{}\" failures=\"{failures}\">\n  <testsuite name=\"mcp-fuzz diff\" tests=\"{}\" failures=\"{failures}\">",
        result.entries.len(),
        result.entries.len()
    );
    for e in &result.entries {
        let name = xml(&format!("{} ({})", e.tool, e.direction.as_str()));
        let _ = write!(out, "    <testcase classname=\"{}\" name=\"{name}\"", xml(&e.tool));
        if fail_on.contains(&e.counted) {
            let ids = e.changes.iter().map(|c| c.id.as_str()).collect::<Vec<_>>().join(",");
            let _ = writeln!(
                out,
                ">\n      <failure type=\"{}\" message=\"{}\">{}</failure>\n    </testcase>",
                label(e),
                xml(&ids),
                xml(&evidence(e))
            );
        } else {
            let _ = writeln!(out, ">\n      <system-out>{}</system-out>\n    </testcase>", xml(&format!("{}: {}", label(e), e.reason)));
        }
    }
    out.push_str("  </testsuite>\n</testsuites>\n");
    out
}

fn sarif(result: &Diff, new_file: &str, fail_on: &[Verdict]) -> String {
    let used: std::collections::BTreeSet<&str> =
        result.entries.iter().flat_map(|e| e.changes.iter().map(|c| c.id.as_str())).collect();
    let rules: Vec<Value> = RULES
        .iter()
        .filter(|r| used.contains(r.id.as_str()))
        .map(|r| json!({"id": r.id, "shortDescription": {"text": r.explanation}, "properties": {"level": r.level.as_str()}}))
        .collect();
    let results: Vec<Value> = result
        .entries
        .iter()
        .filter(|e| e.verdict != Verdict::Compatible)
        .map(|e| {
            let level = if fail_on.contains(&e.counted) { "error" } else { "warning" };
            let rule = e.changes.first().map_or_else(|| format!("{}-changed", e.direction.as_str()), |c| c.id.clone());
            let mut r = json!({
                "ruleId": rule,
                "level": level,
                "message": {"text": format!("{} ({}): {}: {}", e.tool, e.direction.as_str(), label(e), evidence(e))},
                "locations": [{
                    "physicalLocation": {"artifactLocation": {"uri": new_file}},
                    "logicalLocations": [{"name": e.tool, "kind": "function"}]
                }],
                "properties": {"verdict": e.verdict.as_str(), "counted": e.counted.as_str(), "direction": e.direction.as_str()}
            });
            if let Some(w) = &e.witness {
                r["properties"]["witness"] = w.value.clone();
                r["properties"]["pointer"] = json!(w.pointer);
                r["properties"]["keyword"] = json!(w.keyword);
            }
            r
        })
        .collect();
    let doc = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "mcp-fuzz", "version": env!("CARGO_PKG_VERSION"), "informationUri": "https://example.invalid/mcp-fuzz", "rules": rules}},
            "results": results
        }]
    });
    let mut text = serde_json::to_string_pretty(&doc).expect("a JSON value always serializes");
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xml_escapes_markup_and_drops_control_characters() {
        assert_eq!(xml("a<b>&\"'\u{1}"), "a&lt;b&gt;&amp;&quot;&apos;");
    }

}
