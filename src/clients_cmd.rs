//! `mcp-fuzz clients`: read the tools (a capture or a live server), run every adapter, render
//! the report and pick the exit code (1 when any non-ambiguous `fail` finding).

use crate::cli::{AdapterName, ClientsArgs, OutputFormat};
use crate::errors::CliError;
use crate::exit_code;
use crate::r#gen::{origin, read};
use crate::run_cmd::{connect_options, runtime, secs, start_error, target, write_atomically};
use crate::tools_list;
use anyhow::Context as _;
use mcp_fuzz_clients::diff::{self, Comparison};
use mcp_fuzz_clients::{Adapter, Finding, RULES, Rendering, Severity, Tool, canary, rule};
use mcp_fuzz_engine::classify::{Outcome, classify};
use mcp_fuzz_engine::client::{Connection, Target};
use serde_json::{Value, json};
use std::fmt::Write as _;
use std::io::Write as _;

/// The version of the JSON report; bump on any incompatible change.
const CLIENTS_VERSION: u64 = 1;

/// Why: `tools/list` pages read from a live server before giving up on a cursor loop.
const MAX_PAGES: usize = 100;

/// `mcp-fuzz clients`.
pub fn run(args: &ClientsArgs) -> anyhow::Result<u8> {
    if args.list_rules {
        write_stdout(&match args.format {
            OutputFormat::Human => rules_table(),
            OutputFormat::Json => {
                let rules =
                    serde_json::to_string_pretty(RULES).context("failed to serialise the rules")?;
                format!("{rules}\n")
            }
        })?;
        return Ok(exit_code::SUCCESS);
    }
    let adapters: Vec<Adapter> = if args.adapters.is_empty() {
        Adapter::ALL.to_vec()
    } else {
        let mut chosen: Vec<Adapter> = args.adapters.iter().map(|a| adapter(*a)).collect();
        chosen.sort();
        chosen.dedup();
        chosen
    };
    let input = load(args)?;
    if input.tools.is_empty() {
        return Err(CliError::NoTools { origin: input.origin }.into());
    }
    let mut report = analyse(&input, &adapters, args.seed);
    if args.call {
        call_canaries(args, &input, &mut report)?;
    }
    if let Some(path) = &args.output {
        let bytes = serde_json::to_vec_pretty(&report).context("failed to serialise the report")?;
        write_atomically(path, &bytes)?;
    }
    write_stdout(&match args.format {
        OutputFormat::Json => {
            format!(
                "{}\n",
                serde_json::to_string_pretty(&report).context("failed to serialise the report")?
            )
        }
        OutputFormat::Human => human(&report),
    })?;
    let failures = report["failures"].as_u64().unwrap_or(0);
    Ok(if failures > 0 { exit_code::FINDINGS } else { exit_code::SUCCESS })
}

fn adapter(name: AdapterName) -> Adapter {
    match name {
        AdapterName::OpenaiStrict => Adapter::OpenaiStrict,
        AdapterName::Anthropic => Adapter::Anthropic,
        AdapterName::AnthropicStrict => Adapter::AnthropicStrict,
        AdapterName::Gemini => Adapter::Gemini,
        AdapterName::Openapi => Adapter::Openapi,
        AdapterName::Mcp => Adapter::Mcp,
    }
}

fn write_stdout(text: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes()).context("failed to write to stdout")?;
    out.flush().context("failed to write to stdout")
}

/// The tools to analyse and where they came from.
struct Input {
    origin: String,
    tools: Vec<Tool>,
    /// `annotations.readOnlyHint` of each tool (live servers only).
    read_only: Vec<Option<bool>>,
    /// Listed items that are not usable tools (live servers only).
    problems: Vec<Value>,
    truncated: Option<String>,
}

fn load(args: &ClientsArgs) -> anyhow::Result<Input> {
    if let Some(path) = &args.tools {
        let origin = origin(path);
        let text = read(path, &origin)?;
        let tools = tools_list::parse(&text)
            .map_err(|error| CliError::Capture { origin: origin.clone(), error })?;
        let tools: Vec<Tool> = tools
            .into_iter()
            .map(|t| Tool {
                name: t.name,
                input_schema: t.input_schema.unwrap_or(Value::Null),
                output_schema: t.output_schema,
            })
            .collect();
        let read_only = vec![None; tools.len()];
        return Ok(Input { origin, tools, read_only, problems: Vec::new(), truncated: None });
    }
    let target = target(&args.target)?;
    let options = connect_options(&args.target)?;
    let timeout = secs(args.target.timeout, "--timeout")?;
    let listing = runtime()?.block_on(async {
        let conn =
            Connection::connect(&target, &options).await.map_err(|e| start_error(&e, &target))?;
        let listing = mcp_fuzz_engine::tools::list_all(&conn, MAX_PAGES, timeout).await;
        conn.close().await;
        listing.map_err(CliError::ServerStart)
    })?;
    let origin = match &target {
        Target::Stdio { command, .. } => format!("`{}`", command.join(" ")),
        Target::Http { url, .. } => format!("`{url}`"),
    };
    let problems =
        listing.problems.iter().map(|p| serde_json::to_value(p).unwrap_or(Value::Null)).collect();
    let read_only = listing.tools.iter().map(|t| t.read_only).collect();
    let tools = listing
        .tools
        .into_iter()
        .map(|t| Tool {
            name: t.name,
            input_schema: t.input_schema,
            output_schema: t.output_schema,
        })
        .collect();
    Ok(Input { origin, tools, read_only, problems, truncated: listing.truncated })
}

/// `--call`: sends every distinct canary of the first kind (the rendering allows it, the server's
/// schema rejects it) to the server, with the same read-only gate and classification as `run`,
/// and records the outcome on each canary. A failing outcome is a fail finding.
fn call_canaries(args: &ClientsArgs, input: &Input, report: &mut Value) -> anyhow::Result<()> {
    let target = target(&args.target)?;
    let options = connect_options(&args.target)?;
    let timeout = secs(args.target.timeout, "--timeout")?;
    let mut failures = 0_u64;
    let mut done: Vec<(usize, Value, Value)> = Vec::new();
    runtime()?.block_on(async {
        let mut conn: Option<Connection> = None;
        let tools = report["tools"].as_array_mut().expect("tools array");
        for (index, tool) in tools.iter_mut().enumerate() {
            let name = input.tools[index].name.clone();
            for adapter in tool["adapters"].as_array_mut().expect("adapters array") {
                for canary in adapter["canaries"].as_array_mut().expect("canaries array") {
                    if canary["direction"] != "rendered-allows-server-rejects" {
                        continue;
                    }
                    let value = canary["value"].clone();
                    if let Some((_, _, call)) = done.iter().find(|(i, v, _)| *i == index && *v == value) {
                        canary["call"] = call.clone();
                        continue;
                    }
                    let call = if input.read_only[index] != Some(true) && !args.include_destructive {
                        json!({"status": "skipped", "reason": "not annotated readOnlyHint: true (pass --include-destructive)"})
                    } else if let Value::Object(arguments) = &value {
                        if conn.is_none() {
                            conn = Some(Connection::connect(&target, &options).await.map_err(|e| start_error(&e, &target))?);
                        }
                        let c = conn.as_ref().expect("connected");
                        let reply = c.call_tool(&name, arguments, timeout).await;
                        let outcome = classify(reply, None, || c.stderr_tail());
                        let verdict = if outcome.is_failure() {
                            failures += 1;
                            "failure"
                        } else if outcome.is_graceful() {
                            "graceful"
                        } else {
                            "accepted"
                        };
                        if matches!(outcome, Outcome::Exited { .. } | Outcome::Timeout) {
                            // The next call needs a fresh server.
                            if let Some(old) = conn.take() {
                                old.close().await;
                            }
                        }
                        json!({"status": "called", "verdict": verdict, "outcome": outcome})
                    } else {
                        json!({"status": "skipped", "reason": "the canary is not a JSON object, so it cannot be sent as arguments"})
                    };
                    canary["call"] = call.clone();
                    done.push((index, value, call));
                }
            }
        }
        if let Some(c) = conn {
            c.close().await;
        }
        Ok::<_, CliError>(())
    })?;
    let total = report["failures"].as_u64().unwrap_or(0) + failures;
    report["failures"] = json!(total);
    report["canaryCallFailures"] = json!(failures);
    report["verdict"] = json!(if total > 0 { "fail" } else { "pass" });
    Ok(())
}

fn finding_json(finding: &Finding) -> Value {
    let mut value = serde_json::to_value(finding).expect("findings serialise");
    let rule = rule(finding.rule);
    if let Some(object) = value.as_object_mut() {
        object
            .insert("source".into(), serde_json::to_value(rule.source).expect("sources serialise"));
        object.insert("fix".into(), Value::String(rule.fix.to_owned()));
    }
    value
}

/// Runs every adapter on every tool and builds the versioned JSON report.
fn analyse(input: &Input, adapters: &[Adapter], seed: u64) -> Value {
    let mut failures = 0_u64;
    let mut summary: Vec<Value> = Vec::new();
    let mut per_tool: Vec<Vec<Value>> = vec![Vec::new(); input.tools.len()];
    let mut listing_findings = Vec::new();
    for &adapter in adapters {
        let (mut rejected, mut drifting, mut canaries) = (0, 0, 0);
        let mut counts = [0_u64; 4];
        for (index, tool) in input.tools.iter().enumerate() {
            let rendering = mcp_fuzz_clients::render(adapter, tool);
            let comparison = diff::compare(tool, &rendering);
            let directions = comparison.canary_directions();
            let found = match &rendering.input {
                Some(rendered) if !directions.is_empty() => {
                    canary::find_in(&tool.input_schema, rendered, seed, &directions)
                }
                _ => canary::Canaries::default(),
            };
            rejected += u64::from(rendering.rejected());
            drifting += u64::from(comparison.drifts());
            canaries += found.canaries.len() as u64;
            count(&mut counts, &rendering.findings);
            per_tool[index].push(adapter_json(&rendering, &comparison, &found));
        }
        let listing = mcp_fuzz_clients::listing_findings(adapter, &input.tools);
        count(&mut counts, &listing);
        listing_findings.extend(listing.iter().map(finding_json));
        failures += counts[0];
        summary.push(json!({
            "adapter": adapter, "tools": input.tools.len(), "rejected": rejected,
            "fail": counts[0], "warn": counts[1], "info": counts[2], "ambiguous": counts[3],
            "drifting": drifting, "canaries": canaries,
        }));
    }
    let tools: Vec<Value> = input
        .tools
        .iter()
        .zip(per_tool)
        .map(|(tool, adapters)| json!({"name": tool.name, "adapters": adapters}))
        .collect();
    json!({
        "clientsVersion": CLIENTS_VERSION,
        "toolVersion": env!("CARGO_PKG_VERSION"),
        "source": input.origin,
        "seed": seed,
        "adapters": adapters,
        "verdict": if failures > 0 { "fail" } else { "pass" },
        "failures": failures,
        "summary": summary,
        "listing": {"problems": input.problems, "truncated": input.truncated},
        "listingFindings": listing_findings,
        "tools": tools,
    })
}

/// Counts `[failures, warn, info, ambiguous]`; an ambiguous finding counts only as ambiguous.
fn count(counts: &mut [u64; 4], findings: &[Finding]) {
    for f in findings {
        let slot = match (f.ambiguous, f.severity) {
            (true, _) => 3,
            (false, Severity::Fail) => 0,
            (false, Severity::Warn) => 1,
            (false, Severity::Info) => 2,
        };
        counts[slot] += 1;
    }
}

fn adapter_json(rendering: &Rendering, comparison: &Comparison, found: &canary::Canaries) -> Value {
    json!({
        "adapter": rendering.adapter,
        "status": if rendering.rejected() { "rejected" } else { "accepted" },
        "findings": rendering.findings.iter().map(finding_json).collect::<Vec<_>>(),
        "rendered": {"inputSchema": rendering.input, "outputSchema": rendering.output},
        "drift": comparison.drifts,
        "comparisonStopped": comparison.stopped,
        "canaries": found.canaries,
        "canaryNotes": found.notes,
    })
}

/// The human summary: one table, then per tool the rejections, warnings and canaries.
fn human(report: &Value) -> String {
    let mut s = String::new();
    let tools = report["tools"].as_array().map_or(0, Vec::len);
    let _ = writeln!(
        s,
        "mcp-fuzz clients {}: {} ({tools} tool{})\n",
        report["toolVersion"].as_str().unwrap_or(""),
        report["source"].as_str().unwrap_or(""),
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
            row["adapter"].as_str().unwrap_or(""),
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
            let adapter = a["adapter"].as_str().unwrap_or("");
            for f in a["findings"].as_array().into_iter().flatten() {
                let severity = f["severity"].as_str().unwrap_or("");
                if severity == "info" || f["ambiguous"] == true {
                    continue;
                }
                let _ = writeln!(
                    lines,
                    "  [{severity}] {adapter}: {} at {}: {}\n         fix: {}",
                    f["rule"].as_str().unwrap_or(""),
                    f["pointer"].as_str().unwrap_or(""),
                    f["detail"].as_str().unwrap_or(""),
                    f["fix"].as_str().unwrap_or("")
                );
            }
            for c in a["canaries"].as_array().into_iter().flatten() {
                let which = if c["direction"] == "rendered-allows-server-rejects" {
                    "the model may send, the server refuses"
                } else {
                    "the server accepts, the model cannot send"
                };
                let _ = writeln!(
                    lines,
                    "  canary {adapter} ({which}): {}\n         {}",
                    c["value"],
                    c["detail"].as_str().unwrap_or("")
                );
                if let Some(call) = c.get("call") {
                    let said = match call["status"].as_str() {
                        Some("called") => format!(
                            "{}: {}",
                            call["verdict"].as_str().unwrap_or(""),
                            call["outcome"]["kind"].as_str().unwrap_or("")
                        ),
                        _ => format!("skipped: {}", call["reason"].as_str().unwrap_or("")),
                    };
                    let _ = writeln!(lines, "         sent to the server: {said}");
                }
            }
        }
        if !lines.is_empty() {
            let _ = writeln!(s, "\ntool `{}`\n{lines}", tool["name"].as_str().unwrap_or(""));
        }
    }
    let listing: Vec<&Value> = report["listingFindings"].as_array().into_iter().flatten().collect();
    for f in listing {
        let _ = writeln!(
            s,
            "{}: {}",
            f["rule"].as_str().unwrap_or(""),
            f["detail"].as_str().unwrap_or("")
        );
    }
    let _ = writeln!(
        s,
        "\nVerdict: {} ({} fail findings; ambiguous rules never fail)",
        report["verdict"].as_str().unwrap_or(""),
        report["failures"]
    );
    s
}

/// `--list-rules`: the catalogue as text.
fn rules_table() -> String {
    let mut s = String::new();
    for r in RULES {
        let _ = writeln!(
            s,
            "{}  [{}{}]\n  {}\n  source: {}\n          {}\n  fix: {}\n",
            r.id,
            r.severity.as_str(),
            if r.ambiguous { ", ambiguous" } else { "" },
            r.title,
            r.source.url,
            r.source.summary,
            r.fix
        );
    }
    s
}
