//! The `mcp-fuzz clients` report (the JSON document of `docs/clients.schema.json`) in every
//! format, its policy (`--fail-on`) and its baseline (`--baseline`).
//!
//! Every finding of the report, wherever it sits (a tool's adapter result, its canaries, the
//! listing), has the same core fields: `adapter`, `rule`, `severity`, `ambiguous`, `tool`,
//! `pointer`, `detail`, `source`, `fix` (canaries add `witness` and `outcome`). The formats, the
//! policy and the baseline read only those, through [`findings`].
//!
//! - A finding fails when it is not ambiguous, not accepted by the baseline, and its severity is
//!   at least `--fail-on` ([`fails`]).
//! - Its identity is (adapter, rule, tool, pointer) ([`ClientsIdentity`]): what the baseline
//!   stores and what SARIF fingerprints.

use crate::cli::{ClientsFailOn, Format};
use crate::formats::{junit, markdown as md, sarif};
use crate::report::baseline::{Baseline, Key};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use std::collections::BTreeSet;
use std::fmt::Write as _;

/// The SARIF fingerprint key.
pub const IDENTITY_KEY: &str = "mcpFuzzClients/v1";

/// A finding's stable identity.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ClientsIdentity {
    /// The adapter.
    pub adapter: String,
    /// The rule id.
    pub rule: String,
    /// The tool (absent for findings about the whole listing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// JSON pointer into the tool definition.
    pub pointer: String,
}

impl Key for ClientsIdentity {
    const FIELDS: &'static str = r#""adapter", "rule", "tool", "pointer""#;
}

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v[key].as_str().unwrap_or("")
}

/// The identity of a finding of the report.
pub fn identity(f: &Value) -> ClientsIdentity {
    ClientsIdentity {
        adapter: str_of(f, "adapter").to_owned(),
        rule: str_of(f, "rule").to_owned(),
        tool: f["tool"].as_str().map(str::to_owned),
        pointer: str_of(f, "pointer").to_owned(),
    }
}

/// Every finding of the report: per tool and adapter its rule findings then its canaries, then
/// the listing's findings.
pub fn findings(report: &Value) -> Vec<&Value> {
    let mut out = Vec::new();
    for tool in report["tools"].as_array().into_iter().flatten() {
        for a in tool["adapters"].as_array().into_iter().flatten() {
            out.extend(a["findings"].as_array().into_iter().flatten());
            out.extend(a["canaries"].as_array().into_iter().flatten());
        }
    }
    out.extend(report["listingFindings"].as_array().into_iter().flatten());
    out
}

/// Calls `f` on every finding of the report, in the order of [`findings`].
pub fn for_each_finding(report: &mut Value, mut f: impl FnMut(&mut Value)) {
    if let Some(tools) = report["tools"].as_array_mut() {
        for tool in tools {
            for a in tool["adapters"].as_array_mut().into_iter().flatten() {
                for key in ["findings", "canaries"] {
                    a[key].as_array_mut().into_iter().flatten().for_each(&mut f);
                }
            }
        }
    }
    report["listingFindings"].as_array_mut().into_iter().flatten().for_each(&mut f);
}

fn fail_on_name(fail_on: ClientsFailOn) -> &'static str {
    match fail_on {
        ClientsFailOn::Fail => "fail",
        ClientsFailOn::Warn => "warn",
    }
}

/// Whether a finding's severity reaches the policy, ignoring the baseline and ambiguity.
fn reaches(f: &Value, fail_on: &str) -> bool {
    match str_of(f, "severity") {
        "fail" => true,
        "warn" => fail_on == "warn",
        _ => false,
    }
}

/// Whether a finding fails the run under the report's `failOn`: not ambiguous, not baselined,
/// severity `fail` (or `warn` with `--fail-on warn`).
pub fn fails(f: &Value, fail_on: &str) -> bool {
    f["ambiguous"] != true && f["baselined"] != true && reaches(f, fail_on)
}

/// Applies the policy and the baseline to the report: marks baselined findings, records the
/// baseline summary (known, new, stale) and sets `failOn`, `failures` and `verdict`.
pub fn decide(
    report: &mut Value,
    fail_on: ClientsFailOn,
    baseline: Option<(&Baseline<ClientsIdentity>, String)>,
) {
    let fail_on = fail_on_name(fail_on);
    if let Some((b, file)) = baseline {
        let known = b.known();
        let (mut n_known, mut n_new) = (0_u64, 0_u64);
        let mut present = BTreeSet::new();
        for_each_finding(report, |f| {
            let id = identity(f);
            if known.contains(&id) {
                f["baselined"] = json!(true);
                n_known += 1;
            } else if f["ambiguous"] != true && str_of(f, "severity") != "info" {
                n_new += 1;
            }
            present.insert(id);
        });
        let adapters = adapters_run(report);
        let stale = b.stale(&present, |id| adapters.contains(&id.adapter));
        report["baseline"] = json!({"file": file, "known": n_known, "new": n_new, "stale": stale});
    }
    let failures = findings(report).into_iter().filter(|f| fails(f, fail_on)).count();
    report["failOn"] = json!(fail_on);
    report["failures"] = json!(failures);
    report["verdict"] = json!(if failures > 0 { "fail" } else { "pass" });
}

fn adapters_run(report: &Value) -> BTreeSet<String> {
    report["adapters"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect()
}

/// The baseline after this run: its non-ambiguous `fail` and `warn` findings, plus the entries of
/// adapters this run did not apply.
pub fn updated_baseline(
    report: &Value,
    old: &Baseline<ClientsIdentity>,
) -> Baseline<ClientsIdentity> {
    let adapters = adapters_run(report);
    old.updated_with(
        |id| adapters.contains(&id.adapter),
        findings(report)
            .into_iter()
            .filter(|f| f["ambiguous"] != true && reaches(f, "warn"))
            .map(|f| (identity(f), str_of(f, "detail").to_owned())),
    )
}

/// The report in `format`.
pub fn render(report: &Value, format: Format) -> String {
    match format {
        Format::Human => human(report),
        Format::Json => pretty(report),
        Format::Markdown => markdown(report),
        Format::Junit => junit(report),
        Format::Sarif => pretty(&sarif(report)),
    }
}

fn pretty(v: &Value) -> String {
    let mut s = serde_json::to_string_pretty(v).expect("JSON values serialise");
    s.push('\n');
    s
}

fn is_canary(f: &Value) -> bool {
    f.get("witness").is_some()
}

/// What the server did with a canary, in one line.
fn outcome_line(f: &Value) -> String {
    let o = &f["outcome"];
    match str_of(o, "status") {
        "called" => format!("{}: {}", str_of(o, "verdict"), str_of(&o["outcome"], "kind")),
        _ => format!("not sent: {}", str_of(o, "reason")),
    }
}

fn which_way(f: &Value) -> &'static str {
    if f["direction"] == "rendered-allows-server-rejects" {
        "the model may send, the server refuses"
    } else {
        "the server accepts, the model cannot send"
    }
}

/// The policy sentence shared by the human and Markdown summaries.
fn policy_line(report: &Value) -> String {
    let mut s = format!(
        "{} finding{} fail --fail-on {}; ambiguous findings never fail",
        report["failures"],
        if report["failures"] == 1 { "" } else { "s" },
        str_of(report, "failOn")
    );
    if let Some(b) = report.get("baseline") {
        let stale = b["stale"].as_array().map_or(0, Vec::len);
        let _ = write!(
            s,
            "; baseline {}: {} known, {} new, {stale} stale",
            str_of(b, "file"),
            b["known"],
            b["new"]
        );
    }
    s
}

fn stale_lines(report: &Value) -> Vec<String> {
    report["baseline"]["stale"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|id| {
            format!(
                "{} {} at {} of {}",
                str_of(id, "adapter"),
                str_of(id, "rule"),
                str_of(id, "pointer"),
                id["tool"].as_str().map_or_else(|| "the listing".to_owned(), |t| format!("`{t}`"))
            )
        })
        .collect()
}

/// The human summary: one table, then per tool the findings that matter and the canaries.
fn human(report: &Value) -> String {
    let mut s = String::new();
    let tools = report["tools"].as_array().map_or(0, Vec::len);
    let _ = writeln!(
        s,
        "mcp-fuzz clients {}: {} ({tools} tool{})\n",
        str_of(report, "toolVersion"),
        str_of(report, "source"),
        if tools == 1 { "" } else { "s" }
    );
    let _ = writeln!(
        s,
        "{:<17} {:>9} {:>5} {:>5} {:>5} {:>9} {:>9} {:>8}",
        "ADAPTER", "REJECTED", "FAIL", "WARN", "INFO", "AMBIGUOUS", "DRIFTING", "CANARIES"
    );
    for row in report["summary"].as_array().into_iter().flatten() {
        let _ = writeln!(
            s,
            "{:<17} {:>9} {:>5} {:>5} {:>5} {:>9} {:>9} {:>8}",
            str_of(row, "adapter"),
            format!("{}/{}", row["rejected"], row["tools"]),
            row["fail"].to_string(),
            row["warn"].to_string(),
            row["info"].to_string(),
            row["ambiguous"].to_string(),
            row["drifting"].to_string(),
            row["canaries"].to_string(),
        );
    }
    for tool in report["tools"].as_array().into_iter().flatten() {
        let mut lines = String::new();
        for a in tool["adapters"].as_array().into_iter().flatten() {
            let adapter = str_of(a, "adapter");
            for f in a["findings"].as_array().into_iter().flatten() {
                let severity = str_of(f, "severity");
                if severity == "info" || f["ambiguous"] == true {
                    continue;
                }
                let _ = writeln!(
                    lines,
                    "  [{severity}{}] {adapter}: {} at {}: {}\n         fix: {}",
                    if f["baselined"] == true { ", baselined" } else { "" },
                    str_of(f, "rule"),
                    str_of(f, "pointer"),
                    str_of(f, "detail"),
                    str_of(f, "fix")
                );
            }
            for c in a["canaries"].as_array().into_iter().flatten() {
                let _ = writeln!(
                    lines,
                    "  canary {adapter} ({}): {}\n         {}",
                    which_way(c),
                    c["witness"],
                    str_of(c, "detail")
                );
                let reason = str_of(&c["outcome"], "reason");
                if reason != NOT_CALLED && reason != NOT_SENDABLE {
                    let _ = writeln!(lines, "         sent to the server: {}", outcome_line(c));
                }
            }
        }
        if !lines.is_empty() {
            let _ = writeln!(s, "\ntool `{}`\n{lines}", str_of(tool, "name"));
        }
    }
    for f in report["listingFindings"].as_array().into_iter().flatten() {
        let _ = writeln!(s, "{}: {}", str_of(f, "rule"), str_of(f, "detail"));
    }
    let stale = stale_lines(report);
    if !stale.is_empty() {
        let _ = writeln!(
            s,
            "\nstale baseline entries (no longer found; --update-baseline drops them):"
        );
        for line in stale {
            let _ = writeln!(s, "  {line}");
        }
    }
    let _ = writeln!(s, "\nVerdict: {} ({})", str_of(report, "verdict"), policy_line(report));
    s
}

/// The reason of a canary's outcome when `--call` was not given.
pub const NOT_CALLED: &str = "pass --call to send it to the server";

/// The reason of a canary's outcome when the client cannot send it (it is never sent).
pub const NOT_SENDABLE: &str =
    "the client cannot send it; only canaries the rendering allows are sent";

fn severity_label(f: &Value) -> String {
    let mut s = str_of(f, "severity").to_owned();
    if f["ambiguous"] == true {
        s.push_str(" (ambiguous)");
    }
    if f["baselined"] == true {
        s.push_str(" (baselined)");
    }
    s
}

fn tool_cell(f: &Value) -> String {
    f["tool"].as_str().map_or_else(|| "(listing)".to_owned(), md::code_span)
}

/// Markdown: the summary table, then per adapter a table of findings and a table of canaries
/// with the witness and the server's outcome.
fn markdown(report: &Value) -> String {
    let mut out = format!(
        "## mcp-fuzz clients: {}\n\n**Verdict: {}**: {}\n\n",
        md::code_span(str_of(report, "source").trim_matches('`')),
        str_of(report, "verdict"),
        md::text(&policy_line(report))
    );
    let rows: Vec<Vec<String>> = report["summary"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|row| {
            let mut cells = vec![md::code_span(str_of(row, "adapter"))];
            cells.push(format!("{}/{}", row["rejected"], row["tools"]));
            for key in ["fail", "warn", "info", "ambiguous", "drifting", "canaries"] {
                cells.push(row[key].to_string());
            }
            cells
        })
        .collect();
    out.push_str(&md::table(
        &["Adapter", "Rejected", "Fail", "Warn", "Info", "Ambiguous", "Drifting", "Canaries"],
        &rows,
    ));
    let all = findings(report);
    for adapter in report["adapters"].as_array().into_iter().flatten() {
        let name = adapter.as_str().unwrap_or("");
        let _ = write!(out, "\n### {}\n\n", md::code_span(name));
        let mine = all.iter().filter(|f| f["adapter"] == name);
        let (canaries, rules): (Vec<&&Value>, Vec<&&Value>) = mine.partition(|f| is_canary(f));
        if rules.is_empty() {
            out.push_str("No findings.\n");
        } else {
            let rows: Vec<Vec<String>> = rules
                .iter()
                .map(|f| {
                    vec![
                        tool_cell(f),
                        md::code_span(str_of(f, "rule")),
                        severity_label(f),
                        md::code_span(str_of(f, "pointer")),
                        md::text(str_of(f, "detail")),
                        md::text(str_of(f, "fix")),
                    ]
                })
                .collect();
            out.push_str(&md::table(
                &["Tool", "Rule", "Severity", "Pointer", "Detail", "Fix"],
                &rows,
            ));
        }
        if !canaries.is_empty() {
            out.push_str("\nCanaries:\n\n");
            let rows: Vec<Vec<String>> = canaries
                .iter()
                .map(|c| {
                    vec![
                        tool_cell(c),
                        md::text(which_way(c)),
                        md::code_span(&c["witness"].to_string()),
                        md::text(str_of(c, "detail")),
                        md::text(&outcome_line(c)),
                    ]
                })
                .collect();
            out.push_str(&md::table(
                &["Tool", "Direction", "Witness", "Rejected because", "Server outcome"],
                &rows,
            ));
        }
    }
    let stale = stale_lines(report);
    if !stale.is_empty() {
        out.push_str("\n### Stale baseline entries\n\n");
        for line in stale {
            let _ = writeln!(out, "- {}", md::text(&line));
        }
    }
    out
}

/// One line per finding, for JUnit bodies.
fn finding_line(f: &Value) -> String {
    let mut s = format!(
        "[{}] {} at {}: {}",
        severity_label(f),
        str_of(f, "rule"),
        str_of(f, "pointer"),
        str_of(f, "detail")
    );
    if is_canary(f) {
        let _ = write!(s, "; witness {}; {}", f["witness"], outcome_line(f));
    } else {
        let _ = write!(s, "; fix: {}", str_of(f, "fix"));
    }
    s
}

/// JUnit XML: one suite per adapter, one case per tool (plus `tools/list` when the listing has
/// findings). A case fails exactly when one of its findings fails the policy, so the XML agrees
/// with the exit code; its other findings are kept in `<system-out>`.
fn junit(report: &Value) -> String {
    let fail_on = str_of(report, "failOn");
    let all = findings(report);
    let mut root = junit::TestSuites::new("mcp-fuzz clients");
    for adapter in report["adapters"].as_array().into_iter().flatten() {
        let name = adapter.as_str().unwrap_or("");
        let mut suite = junit::TestSuite::new(name);
        suite.properties.push(("failOn".into(), fail_on.to_owned()));
        let mut cases: Vec<Option<&str>> = report["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|t| Some(str_of(t, "name")))
            .collect();
        if all.iter().any(|f| f["adapter"] == name && f["tool"].is_null()) {
            cases.push(None);
        }
        for tool in cases {
            let mine: Vec<&&Value> =
                all.iter().filter(|f| f["adapter"] == name && f["tool"].as_str() == tool).collect();
            let case = junit::TestCase::new(name, tool.unwrap_or("tools/list"));
            let failing: Vec<&&Value> =
                mine.iter().copied().filter(|f| fails(f, fail_on)).collect();
            let body = mine.iter().map(|f| finding_line(f)).collect::<Vec<_>>().join("\n");
            let case = if let Some(first) = failing.first() {
                let rules: Vec<&str> = failing.iter().map(|f| str_of(f, "rule")).collect();
                case.failed(
                    str_of(first, "rule"),
                    format!(
                        "{} finding{} fail --fail-on {fail_on}: {}",
                        failing.len(),
                        if failing.len() == 1 { "" } else { "s" },
                        rules.join(", ")
                    ),
                    body,
                )
            } else if body.is_empty() {
                case
            } else {
                case.with_output(body)
            };
            suite.cases.push(case);
        }
        root.suites.push(suite);
    }
    root.to_xml()
}

fn location(f: &Value) -> sarif::LogicalLocation {
    let tool = f["tool"].as_str().unwrap_or("tools/list");
    sarif::LogicalLocation {
        name: tool.to_owned(),
        fully_qualified_name: format!("{}/{tool}", str_of(f, "adapter")),
        kind: "function".into(),
    }
}

fn fingerprint(id: &ClientsIdentity) -> String {
    sarif::fingerprint(&[&id.adapter, &id.rule, id.tool.as_deref().unwrap_or(""), &id.pointer])
}

fn level(severity: &str) -> sarif::Level {
    match severity {
        "fail" => sarif::Level::Error,
        "warn" => sarif::Level::Warning,
        _ => sarif::Level::Note,
    }
}

/// SARIF 2.1.0: the clients rule ids as rules, every finding a result on the tool (logical
/// location `adapter/tool`), fingerprinted by its identity. A result's level is `error` when it
/// fails the policy, else its severity's (`warning`, `note`). With a baseline, results carry
/// `baselineState` and stale entries appear as `absent` results of level `none`.
fn sarif(report: &Value) -> Value {
    let fail_on = str_of(report, "failOn");
    let all = findings(report);
    let stale: Vec<ClientsIdentity> =
        serde_json::from_value(report["baseline"]["stale"].clone()).unwrap_or_default();
    let used: BTreeSet<&str> = all
        .iter()
        .map(|f| str_of(f, "rule"))
        .chain(stale.iter().map(|id| id.rule.as_str()))
        .filter(|id| mcp_fuzz_clients::RULES.iter().any(|r| r.id == *id))
        .collect();
    let rules = mcp_fuzz_clients::RULES
        .iter()
        .filter(|r| used.contains(r.id))
        .map(|r| sarif::Rule {
            id: r.id.into(),
            name: r.id.rsplit('/').next().unwrap_or(r.id).into(),
            short_description: r.title.into(),
            full_description: format!("{} Source: {} {}", r.title, r.source.url, r.source.summary),
            help: r.fix.into(),
            default_level: if r.ambiguous {
                sarif::Level::Note
            } else {
                level(r.severity.as_str())
            },
        })
        .collect();
    let with_baseline = report.get("baseline").is_some();
    let mut results: Vec<sarif::Finding> = all
        .iter()
        .filter(|f| used.contains(str_of(f, "rule")))
        .map(|f| {
            let mut properties = Map::new();
            for key in ["adapter", "severity", "ambiguous", "pointer", "fix", "source"] {
                properties.insert(key.into(), f[key].clone());
            }
            if is_canary(f) {
                for key in ["direction", "witness", "outcome"] {
                    properties.insert(key.into(), f[key].clone());
                }
            }
            let lvl = if fails(f, fail_on) {
                sarif::Level::Error
            } else if f["ambiguous"] == true || f["baselined"] == true {
                sarif::Level::Note
            } else {
                level(str_of(f, "severity"))
            };
            let tool = f["tool"].as_str().unwrap_or("tools/list");
            sarif::Finding {
                rule_id: str_of(f, "rule").into(),
                level: Some(lvl),
                message: format!("{} ({}): {}", tool, str_of(f, "adapter"), str_of(f, "detail")),
                locations: vec![location(f)],
                partial_fingerprints: vec![(IDENTITY_KEY.into(), fingerprint(&identity(f)))],
                baseline_state: with_baseline.then_some(if f["baselined"] == true {
                    sarif::BaselineState::Unchanged
                } else {
                    sarif::BaselineState::New
                }),
                properties,
            }
        })
        .collect();
    for id in stale.iter().filter(|id| used.contains(id.rule.as_str())) {
        let f = serde_json::to_value(id).expect("identities serialise");
        results.push(sarif::Finding {
            rule_id: id.rule.clone(),
            level: Some(sarif::Level::None),
            message: "A baselined finding that no longer occurs; --update-baseline drops it."
                .into(),
            locations: vec![location(&f)],
            partial_fingerprints: vec![(IDENTITY_KEY.into(), fingerprint(id))],
            baseline_state: Some(sarif::BaselineState::Absent),
            properties: Map::new(),
        });
    }
    let mut properties = Map::new();
    for key in ["source", "seed", "adapters", "failOn", "verdict", "failures"] {
        properties.insert(key.into(), report[key].clone());
    }
    sarif::Log {
        tool_name: "mcp-fuzz".into(),
        tool_version: str_of(report, "toolVersion").into(),
        information_uri: None,
        rules,
        results,
        execution_successful: true,
        properties,
    }
    .to_json()
}
