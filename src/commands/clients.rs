//! `mcp-fuzz clients`: read the tools (a capture, one schema or a live server), run every
//! adapter, send the canaries with `--call`, apply the policy and the baseline, render every
//! requested format and pick the exit code (1 when a finding fails `--fail-on`).

use crate::cli::{AdapterName, ClientsArgs, ClientsFailOn, Format};
use crate::errors::CliError;
use crate::output::{OutputPlan, write_atomically, write_stdout};
use crate::{config, exit_code, input, session};
use anyhow::Context as _;
use mcp_fuzz_clients::analysis::analyse;
use mcp_fuzz_clients::canary::Direction;
use mcp_fuzz_clients::{Adapter, RULES, Tool};
use mcp_fuzz_engine::classify::Outcome;
use mcp_fuzz_engine::config::MAX_PAGES;
use mcp_fuzz_engine::server::{Keep, ListError};
use mcp_fuzz_report::clients::model::{CallVerdict, CanaryOutcome, ClientsReport, FailOn, Input};
use mcp_fuzz_report::clients::policy::{decide, updated_baseline};
use mcp_fuzz_report::clients::render;
use serde_json::Value;
use std::fmt::Write as _;

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
    let known = args
        .baseline
        .as_deref()
        .map(|p| input::read_baseline(p, args.update_baseline))
        .transpose()?;
    let mut adapters: Vec<Adapter> = if args.adapters.is_empty() {
        Adapter::ALL.to_vec()
    } else {
        args.adapters.iter().map(|a| adapter(*a)).collect()
    };
    adapters.sort();
    adapters.dedup();
    let (input, tools, read_only) = load(args)?;
    if tools.is_empty() {
        return Err(CliError::NoTools { origin: input.origin }.into());
    }
    let mut report =
        ClientsReport::new(&input, &analyse(tools.clone(), &adapters, args.seed), args.seed);
    if args.call {
        call_canaries(args, &tools, &read_only, &mut report)?;
    }
    let fail_on = match args.fail_on {
        ClientsFailOn::Fail => FailOn::Fail,
        ClientsFailOn::Warn => FailOn::Warn,
    };
    let file = args.baseline.as_ref().map(|p| p.display().to_string());
    decide(&mut report, fail_on, known.as_ref().zip(file));
    plan.emit(|f| render(&report, f))?;
    if let (true, Some(b), Some(path)) = (args.update_baseline, &known, &args.baseline) {
        write_atomically(path, &updated_baseline(&report, b).to_bytes())?;
    }
    Ok(if report.failures > 0 { exit_code::FINDINGS } else { exit_code::SUCCESS })
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

/// The tools to analyse, where they came from, and each tool's `readOnlyHint` (live servers).
fn load(args: &ClientsArgs) -> anyhow::Result<(Input, Vec<Tool>, Vec<Option<bool>>)> {
    if let Some(path) = &args.schema {
        let (schema, origin) = input::read_schema(path)?;
        let name = path
            .file_stem()
            .and_then(|s| s.to_str())
            .filter(|s| *s != "-" && !s.is_empty())
            .unwrap_or("schema");
        let input = Input { origin, ..Input::default() };
        return Ok((input, vec![Tool::new(name, schema)], vec![None]));
    }
    if let Some(path) = &args.tools {
        let (capture, origin) = input::read_capture(path)?;
        let read_only = vec![None; capture.tools.len()];
        return Ok((Input { origin, ..Input::default() }, capture.tools, read_only));
    }
    let spec = config::server(&args.target)?;
    let listing = session::block_on(async {
        let mut server = session::start(&spec).await?;
        let listing = server.list_tools(MAX_PAGES).await;
        server.close().await;
        listing.map_err(|e| match e {
            ListError::Connect(c) => session::start_error(&c, &spec.target).into(),
            ListError::Listing(l) => CliError::ServerStart(l).into(),
        })
    })?;
    let origin = match &spec.target {
        mcp_fuzz_engine::client::Target::Stdio { command, .. } => {
            format!("`{}`", command.join(" "))
        }
        mcp_fuzz_engine::client::Target::Http { url, .. } => format!("`{url}`"),
    };
    let problems =
        listing.problems.iter().map(|p| serde_json::to_value(p).unwrap_or(Value::Null)).collect();
    let read_only = listing.tools.iter().map(Tool::read_only_hint).collect();
    Ok((Input { origin, problems, truncated: listing.truncated }, listing.tools, read_only))
}

/// `--call`: sends every distinct canary of the first kind (the rendering allows it, the
/// server's schema rejects it) to the server, with the same read-only gate and judgement as
/// `run`, and records the outcome on each canary. A canary the server fails on becomes a `fail`
/// finding.
fn call_canaries(
    args: &ClientsArgs,
    tools: &[Tool],
    read_only: &[Option<bool>],
    report: &mut ClientsReport,
) -> anyhow::Result<()> {
    let spec = config::server(&args.target)?;
    let mut failures = 0_u64;
    session::block_on(async {
        let mut server: Option<mcp_fuzz_engine::server::Instance<'_>> = None;
        let mut done: Vec<(usize, Value, CanaryOutcome)> = Vec::new();
        for (index, tool) in report.tools.iter_mut().enumerate() {
            let name = &tools[index].name;
            for canary in tool.adapters.iter_mut().flat_map(|a| a.canaries.iter_mut()) {
                let Some(part) = canary.canary.as_mut() else { continue };
                if part.direction != Direction::RenderedAllowsServerRejects {
                    continue;
                }
                let known = done.iter().find(|(i, v, _)| *i == index && *v == part.witness);
                let outcome = if let Some((_, _, o)) = known {
                    o.clone()
                } else {
                    let outcome = if read_only[index] != Some(true) && !args.include_destructive {
                        skipped("not annotated readOnlyHint: true (pass --include-destructive)")
                    } else if let Value::Object(arguments) = &part.witness {
                        if server.is_none() {
                            server = Some(session::start(&spec).await?);
                        }
                        let s = server.as_mut().expect("started");
                        let called = s
                            .call(name, arguments, None, Keep::default())
                            .await
                            .map_err(|e| session::start_error(&e, &spec.target))?;
                        CanaryOutcome::Called {
                            verdict: verdict(&called.outcome),
                            outcome: called.outcome,
                        }
                    } else {
                        skipped(
                            "the canary is not a JSON object, so it cannot be sent as arguments",
                        )
                    };
                    done.push((index, part.witness.clone(), outcome.clone()));
                    outcome
                };
                if matches!(outcome, CanaryOutcome::Called { verdict: CallVerdict::Failure, .. }) {
                    failures += 1;
                    canary.severity = mcp_fuzz_clients::Severity::Fail;
                }
                part.outcome = outcome;
            }
        }
        if let Some(mut s) = server {
            s.close().await;
        }
        Ok(())
    })?;
    report.canary_call_failures = Some(failures);
    Ok(())
}

fn skipped(reason: &str) -> CanaryOutcome {
    CanaryOutcome::Skipped { reason: reason.to_owned() }
}

fn verdict(outcome: &Outcome) -> CallVerdict {
    if outcome.is_failure() {
        CallVerdict::Failure
    } else if outcome.is_graceful() {
        CallVerdict::Graceful
    } else {
        CallVerdict::Accepted
    }
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
