//! `mcp-fuzz clients`: read the tools (a capture, one schema or a live server), capture the real
//! clients asked for (all at once, each against the server or a stand-in serving the listing),
//! run every modelled adapter on every tool any handshake listed, send the canaries with
//! `--call`, apply the policy and the baseline, render every requested format and pick the exit
//! code (1 when a finding fails `--fail-on`, else 6 when a real client was not captured).

use crate::cli::{AdapterName, ClientsArgs, ClientsFailOn};
use crate::errors::CliError;
use crate::output::{OutputPlan, write_atomically, write_stdout};
use crate::{config, exit_code, input, session};
use anyhow::Context as _;
use mcp_fuzz_clients::analysis::analyse;
use mcp_fuzz_clients::real::{
    self, Call, Capture, CaptureOptions, RealClient, ServerSpec as ClientServer, StandIns,
};
use mcp_fuzz_clients::real_analysis::analyse_capture;
use mcp_fuzz_clients::{Adapter, Tool, catalogue};
use mcp_fuzz_engine::config::MAX_PAGES;
use mcp_fuzz_engine::judge;
use mcp_fuzz_engine::server::{Keep, ListError};
use mcp_fuzz_report::Format;
use mcp_fuzz_report::clients::canaries::{Plan, Route, direct_outcome, skipped, through_outcome};
use mcp_fuzz_report::clients::model::{ClientsReport, FailOn, Input, RealClientRun, Served};
use mcp_fuzz_report::clients::policy::{decide, updated_baseline};
use mcp_fuzz_report::clients::{render, rules_text};
use serde_json::Value;
use std::time::Duration;

/// Why: bisection re-runs a client once per probe (mcpo takes about 2 s); 24 runs name about
/// four culprits among 40 tools and bound a lost listing to about a minute.
const MAX_PROBES: usize = 24;

/// `mcp-fuzz clients`.
pub fn run(args: &ClientsArgs) -> anyhow::Result<u8> {
    if args.list_rules {
        let json = args.output.json || args.output.format.contains(&Format::Json);
        write_stdout(&if json {
            let rules: Vec<_> = catalogue().collect();
            let rules =
                serde_json::to_string_pretty(&rules).context("failed to serialise the rules")?;
            format!("{rules}\n")
        } else {
            rules_text()
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
    let (adapters, clients) = adapters(&args.adapters);
    let client_timeout = config::duration(&args.client_timeout, "--client-timeout")?;
    let (input, mut tools, mut read_only) = load(args)?;
    if tools.is_empty() {
        return Err(CliError::NoTools { origin: input.origin }.into());
    }
    let real = if clients.is_empty() {
        None
    } else {
        Some(capture_clients(args, &clients, &tools, client_timeout)?)
    };
    let captures = real.as_ref().map_or(&[][..], |r| &r.captures[..]);
    // Every tool any handshake listed: mcp-fuzz's first, then the ones only clients were shown.
    let own = tools.len();
    for listed in captures.iter().flat_map(|c| c.server_tools.iter().flatten()) {
        if let Ok(tool) = Tool::parse_listed(listed)
            && !tools.iter().any(|t| t.name == tool.name)
        {
            read_only.push(tool.read_only_hint());
            tools.push(tool);
        }
    }
    let mut report =
        ClientsReport::new(&input, &analyse(tools.clone(), &adapters, args.seed), args.seed);
    for entry in report.tools.iter_mut().skip(own) {
        entry.listed_to_mcp_fuzz = false;
    }
    for capture in captures {
        let judged = analyse_capture(&tools, capture, args.seed);
        let served = real.as_ref().map_or(Served::Server, |r| r.served);
        report.add_real(RealClientRun::of(capture, served), &judged);
    }
    if args.call {
        call_canaries(args, &read_only, &mut report, real.as_ref())?;
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
    Ok(if report.failures > 0 {
        exit_code::FINDINGS
    } else if report.real_clients.iter().any(|r| !r.is_captured()) {
        exit_code::CLIENT_UNAVAILABLE
    } else {
        exit_code::SUCCESS
    })
}

/// The modelled adapters and the real clients named, each sorted and once; no name means the
/// six default modelled adapters.
fn adapters(names: &[AdapterName]) -> (Vec<Adapter>, Vec<RealClient>) {
    if names.is_empty() {
        return (Adapter::ALL.to_vec(), Vec::new());
    }
    let (mut modelled, mut clients) = (Vec::new(), Vec::new());
    for name in names {
        match name {
            AdapterName::OpenaiStrict => modelled.push(Adapter::OpenaiStrict),
            AdapterName::Anthropic => modelled.push(Adapter::Anthropic),
            AdapterName::AnthropicStrict => modelled.push(Adapter::AnthropicStrict),
            AdapterName::AnthropicStrictApi => modelled.push(Adapter::AnthropicStrictApi),
            AdapterName::Gemini => modelled.push(Adapter::Gemini),
            AdapterName::Openapi => modelled.push(Adapter::Openapi),
            AdapterName::Mcp => modelled.push(Adapter::Mcp),
            AdapterName::Inspector => clients.push(RealClient::Inspector),
            AdapterName::Mcpo => clients.push(RealClient::Mcpo),
            AdapterName::CodexCli => clients.push(RealClient::CodexCli),
            AdapterName::ClaudeCode => clients.push(RealClient::ClaudeCode),
            AdapterName::GeminiCli => clients.push(RealClient::GeminiCli),
            AdapterName::Real => clients.extend(RealClient::ALL),
        }
    }
    modelled.sort();
    modelled.dedup();
    clients.sort();
    clients.dedup();
    (modelled, clients)
}

/// What the real clients need after their captures: how the server was given to them.
struct RealRun {
    captures: Vec<Capture>,
    served: Served,
    spec: ClientServer,
    options: CaptureOptions,
}

/// Captures every real client in `clients` at once, each in its own throwaway directory: against
/// the server command when there is one (each client speaks its own handshake to it), else
/// against the stand-in serving `tools`. A lost listing is bisected on stand-ins. Ctrl-C and
/// SIGTERM kill every client started.
fn capture_clients(
    args: &ClientsArgs,
    clients: &[RealClient],
    tools: &[Tool],
    timeout: Duration,
) -> anyhow::Result<RealRun> {
    let exe = std::env::current_exe().context("failed to find the mcp-fuzz executable")?;
    let stand_ins = StandIns::new(exe, &["serve-listing"])
        .context("failed to create a directory for the stand-in")?;
    let server_command =
        args.tools.is_none() && args.schema.is_none() && args.target.http.is_none();
    let (spec, served) = if server_command {
        let target = &args.target;
        let (program, rest) = target
            .command
            .split_first()
            .ok_or_else(|| CliError::Usage("no server command".into()))?;
        let mut spec = ClientServer::new(program);
        spec.args = rest.to_vec();
        spec.env = config::env_pairs(target)?.into_iter().collect();
        spec.cwd.clone_from(&target.cwd);
        (spec, Served::Server)
    } else {
        let raw: Vec<Value> = tools.iter().map(|t| t.raw.clone()).collect();
        let spec =
            stand_ins.serving(&raw).context("failed to write the listing for the stand-in")?;
        (spec, Served::Listing)
    };
    let options = CaptureOptions {
        timeout,
        clients_dir: args.clients_dir.clone(),
        subset_server: Some(stand_ins.subsets()),
        max_probes: MAX_PROBES,
        pin: args.pin,
        ..CaptureOptions::default()
    };
    let (clients, s, o) = (clients.to_vec(), spec.clone(), options.clone());
    let captures = in_background(move || real::capture_all(&clients, &s, &o))?;
    Ok(RealRun { captures, served, spec, options })
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
        mcp_fuzz_engine::transport::Target::Stdio { command, .. } => {
            format!("`{}`", command.join(" "))
        }
        mcp_fuzz_engine::transport::Target::Http { url, .. } => format!("`{url}`"),
    };
    let problems =
        listing.problems.iter().map(|p| serde_json::to_value(p).unwrap_or(Value::Null)).collect();
    let read_only = listing.tools.iter().map(Tool::read_only_hint).collect();
    Ok((Input { origin, problems, truncated: listing.truncated }, listing.tools, read_only))
}

/// `--call`: sends every canary [`Plan::new`] picks, with the same read-only gate and judgement
/// as `run`: a canary of mcpo or the Inspector CLI through that client when it ran the server
/// itself, the others straight to the server. A canary the server fails on becomes a `fail`
/// finding.
fn call_canaries(
    args: &ClientsArgs,
    read_only: &[Option<bool>],
    report: &mut ClientsReport,
    real: Option<&RealRun>,
) -> anyhow::Result<()> {
    let through = real.is_some_and(|r| r.served == Served::Server);
    let mut plan = Plan::new(report, read_only, args.include_destructive, |client| {
        through && real::can_call(client)
    });
    let names: Vec<String> = report.tools.iter().map(|t| t.name.clone()).collect();
    send_direct(args, &names, &mut plan)?;
    if let Some(r) = real {
        send_through(args, r, &names, &mut plan)?;
    }
    plan.apply(report);
    Ok(())
}

/// Sends the direct canaries not yet decided to the server, one server instance for all.
fn send_direct(args: &ClientsArgs, names: &[String], plan: &mut Plan) -> anyhow::Result<()> {
    let todo = plan.todo(Route::Direct);
    if todo.is_empty() {
        return Ok(());
    }
    let spec = config::server(&args.target)?;
    session::block_on(async {
        let mut server = session::start(&spec).await?;
        for i in todo {
            let Value::Object(arguments) = &plan.sends[i].witness else { continue };
            let called = server
                .call(&names[plan.sends[i].tool], arguments, None, Keep::default())
                .await
                .map_err(|e| session::start_error(&e, &spec.target))?;
            plan.decide(i, direct_outcome(called.outcome));
        }
        server.close().await;
        Ok(())
    })
}

/// Sends the canaries of clients that can call through them (all of one client's at once).
fn send_through(
    args: &ClientsArgs,
    real: &RealRun,
    names: &[String],
    plan: &mut Plan,
) -> anyhow::Result<()> {
    for client in RealClient::ALL {
        let todo = plan.todo(Route::Through(client));
        if todo.is_empty() {
            continue;
        }
        let calls: Vec<Call> = todo
            .iter()
            .map(|&i| Call {
                tool: names[plan.sends[i].tool].clone(),
                arguments: plan.sends[i].witness.clone(),
            })
            .collect();
        let result = match real::discover(client, args.clients_dir.as_deref()) {
            Ok(install) => {
                let (spec, options) = (real.spec.clone(), real.options.clone());
                in_background(move || real::call_through(&install, &spec, &calls, &options))?
            }
            Err(e) => Err(e.to_string()),
        };
        for (n, i) in todo.into_iter().enumerate() {
            let outcome = match &result {
                Ok(answers) => answers.get(n).cloned().map_or_else(
                    || skipped(&format!("{client} gave no answer for it")),
                    |answer| {
                        through_outcome(client, answer, &plan.sends[i].witness, judge::response)
                    },
                ),
                Err(why) => skipped(&format!("{client} could not send it: {why}")),
            };
            plan.decide(i, outcome);
        }
    }
    Ok(())
}

/// Runs blocking client work on a thread of its own, so that Ctrl-C and SIGTERM stop the command
/// (and every client it started) at once.
fn in_background<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> anyhow::Result<T> {
    let done = session::block_on(async move {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(work());
        });
        loop {
            match rx.try_recv() {
                Ok(value) => return Ok(value),
                Err(std::sync::mpsc::TryRecvError::Empty) => {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                Err(std::sync::mpsc::TryRecvError::Disconnected) => {
                    anyhow::bail!("the real-client work ended without a result")
                }
            }
        }
    });
    if done.is_err() {
        // Interrupted: the thread does not unwind, so end its clients here.
        real::stop_all();
    }
    done
}
