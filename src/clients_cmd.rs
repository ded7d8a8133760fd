//! `mcp-fuzz clients`: read the tools (a capture, one schema or a live server), run every
//! adapter, apply the policy and the baseline, render the report in every requested format and
//! pick the exit code (1 when a finding fails `--fail-on`; see [`crate::clients_report`]).

use crate::cli::{AdapterName, ClientsArgs, Format};
use crate::clients_report::{self, ClientsIdentity, NOT_CALLED, NOT_SENDABLE};
use crate::errors::CliError;
use crate::exit_code;
use crate::r#gen::{origin, read, read_schema};
use crate::report::baseline::Baseline;
use crate::run_cmd::{
    OutputPlan, connect_options, runtime, secs, start_error, target, write_atomically,
};
use crate::tools_list;
use anyhow::Context as _;
use mcp_fuzz_clients::diff::{self, Comparison};
use mcp_fuzz_clients::{
    Adapter, Finding, RULES, Rendering, Severity, Tool, canary, canary_rule, rule,
};
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
        let json = args.output.json || args.output.format.contains(&Format::Json);
        write_stdout(&if json {
            let rules =
                serde_json::to_string_pretty(RULES).context("failed to serialise the rules")?;
            format!("{rules}\n")
        } else {
            rules_table()
        })?;
        return Ok(exit_code::SUCCESS);
    }
    let plan = OutputPlan::resolve(&args.output)?;
    // Read the baseline first: a bad file is a usage error before any server is started.
    let baseline = args
        .baseline
        .as_deref()
        .map(|p| Baseline::<ClientsIdentity>::load(p, args.update_baseline))
        .transpose()?;
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
    let file = args.baseline.as_ref().map(|p| p.display().to_string());
    clients_report::decide(&mut report, args.fail_on, baseline.as_ref().zip(file));
    plan.emit(|f| clients_report::render(&report, f))?;
    if let (true, Some(b), Some(path)) = (args.update_baseline, &baseline, &args.baseline) {
        write_atomically(path, &clients_report::updated_baseline(&report, b).to_bytes())?;
    }
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
    if let Some(path) = &args.schema {
        let (schema, origin) = read_schema(path)?;
        let name = path
            .file_stem()
            .and_then(|s| s.to_str())
            .filter(|s| *s != "-" && !s.is_empty())
            .unwrap_or("schema")
            .to_owned();
        let tools = vec![Tool::new(&name, schema)];
        return Ok(Input {
            origin,
            tools,
            read_only: vec![None],
            problems: Vec::new(),
            truncated: None,
        });
    }
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
/// and records the outcome on each canary. A canary the server fails on becomes a `fail`
/// finding.
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
                    let value = canary["witness"].clone();
                    let outcome = if let Some((_, _, o)) = done.iter().find(|(i, v, _)| *i == index && *v == value) {
                        o.clone()
                    } else {
                        let outcome = if input.read_only[index] != Some(true) && !args.include_destructive {
                            json!({"status": "skipped", "reason": "not annotated readOnlyHint: true (pass --include-destructive)"})
                        } else if let Value::Object(arguments) = &value {
                            if conn.is_none() {
                                conn = Some(Connection::connect(&target, &options).await.map_err(|e| start_error(&e, &target))?);
                            }
                            let c = conn.as_ref().expect("connected");
                            let reply = c.call_tool(&name, arguments, timeout).await;
                            let outcome = classify(reply, None, || c.stderr_tail());
                            let verdict = if outcome.is_failure() {
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
                        done.push((index, value, outcome.clone()));
                        outcome
                    };
                    if outcome["verdict"] == "failure" {
                        failures += 1;
                        canary["severity"] = json!("fail");
                    }
                    canary["outcome"] = outcome;
                }
            }
        }
        if let Some(c) = conn {
            c.close().await;
        }
        Ok::<_, CliError>(())
    })?;
    report["canaryCallFailures"] = json!(failures);
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
            per_tool[index].push(adapter_json(&tool.name, &rendering, &comparison, &found));
        }
        let listing = mcp_fuzz_clients::listing_findings(adapter, &input.tools);
        count(&mut counts, &listing);
        listing_findings.extend(listing.iter().map(finding_json));
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

fn adapter_json(
    tool: &str,
    rendering: &Rendering,
    comparison: &Comparison,
    found: &canary::Canaries,
) -> Value {
    let canaries: Vec<Value> =
        found.canaries.iter().map(|c| canary_json(tool, rendering.adapter, c)).collect();
    json!({
        "adapter": rendering.adapter,
        "status": if rendering.rejected() { "rejected" } else { "accepted" },
        "findings": rendering.findings.iter().map(finding_json).collect::<Vec<_>>(),
        "rendered": {"inputSchema": rendering.input, "outputSchema": rendering.output},
        "drift": comparison.drifts,
        "comparisonStopped": comparison.stopped,
        "canaries": canaries,
        "canaryNotes": found.notes,
    })
}

/// A canary as a finding of its adapter's canary rule, with the witness and (until `--call`
/// sends it) an outcome saying it was not sent.
fn canary_json(tool: &str, adapter: Adapter, c: &canary::Canary) -> Value {
    let rule = canary_rule(adapter, c.direction);
    let reason = match c.direction {
        canary::Direction::RenderedAllowsServerRejects => NOT_CALLED,
        canary::Direction::ServerAllowsRenderedRejects => NOT_SENDABLE,
    };
    json!({
        "adapter": adapter,
        "rule": rule.id,
        "severity": rule.severity,
        "ambiguous": rule.ambiguous,
        "tool": tool,
        "pointer": format!("/inputSchema{}", c.pointer),
        "detail": c.detail,
        "source": rule.source,
        "fix": rule.fix,
        "direction": c.direction,
        "witness": c.value,
        "openContent": c.open_content,
        "outcome": {"status": "skipped", "reason": reason},
    })
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
