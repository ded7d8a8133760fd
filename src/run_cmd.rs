//! `mcp-fuzz run` and `mcp-fuzz call`: resolve the flags, drive the engine, render the report and
//! pick the exit code.

use crate::cli::{CallArgs, RunArgs, TargetArgs};
use crate::errors::CliError;
use crate::exit_code;
use anyhow::Context as _;
use mcp_fuzz_engine::classify::classify;
use mcp_fuzz_engine::client::{ConnectOptions, Connection, Target};
use mcp_fuzz_engine::run::{Report, RunConfig, RunError, run};
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;
use std::time::Duration;

pub(crate) fn secs(s: f64, flag: &str) -> anyhow::Result<Duration> {
    Duration::try_from_secs_f64(s).map_err(|_| {
        CliError::Usage(format!("{flag} must be a positive number of seconds, got {s}")).into()
    })
}

pub(crate) fn target(args: &TargetArgs) -> anyhow::Result<Target> {
    if let Some(url) = &args.http {
        let headers = args
            .headers
            .iter()
            .map(|h| {
                h.split_once(':')
                    .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
                    .ok_or_else(|| {
                        CliError::Usage(format!(
                            "--header takes `Name: value`, got `{}: [REDACTED]`",
                            h.split(':').next().unwrap_or("")
                        ))
                    })
            })
            .collect::<Result<Vec<_>, _>>()?;
        return Ok(Target::Http { url: url.clone(), headers });
    }
    if args.command.is_empty() {
        return Err(CliError::Usage("no server given: pass the server command after `--` (e.g. `mcp-fuzz -- node server.js`) or --http URL".into()).into());
    }
    let env = args
        .env
        .iter()
        .map(|kv| {
            kv.split_once('=').map(|(k, v)| (k.to_owned(), v.to_owned())).ok_or_else(|| {
                CliError::Usage(format!(
                    "--env takes KEY=VALUE, got `{}`",
                    kv.split('=').next().unwrap_or("")
                ))
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Target::Stdio {
        command: args.command.clone(),
        env,
        inherit_env: args.inherit_env,
        cwd: args.cwd.clone(),
    })
}

pub(crate) fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("failed to start the async runtime")
}

pub(crate) fn connect_options(args: &TargetArgs) -> anyhow::Result<ConnectOptions> {
    Ok(ConnectOptions {
        startup_timeout: secs(args.startup_timeout, "--startup-timeout")?,
        max_response_bytes: args.max_response_bytes,
    })
}

/// `mcp-fuzz run`.
pub fn run_command(args: &RunArgs) -> anyhow::Result<u8> {
    let cfg = RunConfig {
        target: target(&args.target)?,
        connect: connect_options(&args.target)?,
        timeout: secs(args.target.timeout, "--timeout")?,
        seed: args.seed,
        cases: args.cases,
        include_destructive: args.include_destructive,
        tools: args.tools.clone(),
        skip_tools: args.skip_tools.clone(),
        max_pages: 100,
    };
    // Ctrl-C: the server lives in its own process group and does not get the terminal's SIGINT;
    // dropping the run drops its connection, which kills that group.
    let outcome = runtime()?.block_on(async {
        tokio::select! {
            r = run(&cfg, |_| {}) => Some(r),
            _ = tokio::signal::ctrl_c() => None,
        }
    });
    let Some(outcome) = outcome else {
        return Err(CliError::Interrupted.into());
    };
    let report = match outcome {
        Ok(r) => r,
        Err(RunError::Connect(e)) => {
            let tail = e.stderr_tail();
            let mut msg = format!("{e}");
            if tail.is_empty() {
                msg.push_str(match cfg.target {
                    Target::Stdio { .. } => "; check the command and that it speaks MCP over stdio",
                    Target::Http { .. } => {
                        "; check the URL, that the server is up, and the --header values it needs"
                    }
                });
            } else {
                let _ = write!(msg, "; the server's last stderr lines:\n  {}", tail.join("\n  "));
            }
            return Err(CliError::ServerStart(msg).into());
        }
        Err(e) => return Err(CliError::ServerStart(format!("{e}")).into()),
    };
    if let Some(path) = &args.output {
        write_atomically(
            path,
            &serde_json::to_vec_pretty(&report).context("failed to serialise the report")?,
        )?;
    }
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &report).context("failed to write the report")?;
        writeln!(out).context("failed to write the report")?;
    } else {
        out.write_all(human(&report, &cfg.target).as_bytes())
            .context("failed to write the report")?;
    }
    Ok(verdict(&report, args.fail_under))
}

/// The exit code of a finished run.
fn verdict(report: &Report, fail_under: Option<f64>) -> u8 {
    if report.tested() == 0 {
        return exit_code::NO_TOOLS;
    }
    match fail_under {
        Some(p) => {
            if report.score.percent.is_some_and(|s| s < p)
                || (report.score.percent.is_none() && report.failures() > 0)
            {
                exit_code::FINDINGS
            } else {
                exit_code::SUCCESS
            }
        }
        None if report.failures() > 0 => exit_code::FINDINGS,
        None => exit_code::SUCCESS,
    }
}

pub(crate) fn write_atomically(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or_else(|| Path::new("."));
    let tmp = dir.join(format!(
        ".{}.tmp-{}",
        path.file_name().and_then(|n| n.to_str()).unwrap_or("report"),
        std::process::id()
    ));
    std::fs::write(&tmp, bytes).with_context(|| {
        format!(
            "failed to write {}; check that the directory exists and is writable",
            tmp.display()
        )
    })?;
    std::fs::rename(&tmp, path)
        .with_context(|| format!("failed to move the report into {}", path.display()))
}

/// Quotes a word for a POSIX shell.
fn shell_quote(s: &str) -> String {
    if !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:@%+,".contains(c)) {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

fn replay_line(
    target: &Target,
    tool: &str,
    args: &serde_json::Map<String, serde_json::Value>,
) -> String {
    let json = serde_json::Value::Object(args.clone()).to_string();
    let server = match target {
        Target::Stdio { command, env, .. } => {
            let envs: String = env.iter().map(|(k, _)| format!(" --env {k}=…")).collect();
            format!(
                "{envs} -- {}",
                command.iter().map(|w| shell_quote(w)).collect::<Vec<_>>().join(" ")
            )
        }
        Target::Http { url, headers } => {
            let hs: String = headers
                .iter()
                .map(|(k, _)| format!(" --header {}", shell_quote(&format!("{k}: …"))))
                .collect();
            format!(" --http {}{hs}", shell_quote(url))
        }
    };
    format!("mcp-fuzz call --tool {} --args {}{server}", shell_quote(tool), shell_quote(&json))
}

/// The one-screen human summary.
fn human(r: &Report, target: &Target) -> String {
    let mut s = String::new();
    let name = r.server.name.as_deref().unwrap_or("(unnamed server)");
    let _ = writeln!(
        s,
        "mcp-fuzz {}: {name} {} (protocol {}), seed {}\n",
        r.tool_version,
        r.server.version.as_deref().unwrap_or(""),
        r.server.protocol_version.as_deref().unwrap_or("?"),
        r.seed
    );
    let width = r.tools.iter().map(|t| t.name.chars().count()).max().unwrap_or(4).clamp(4, 40);
    let _ = writeln!(
        s,
        "{:<width$}  {:<12} {:>6} {:>8} {:>9} {:>7}",
        "TOOL", "STATUS", "CASES", "INVALID", "GRACEFUL", "SCORE"
    );
    for t in &r.tools {
        let total = t.cases.boundary + t.cases.valid + t.cases.invalid;
        if t.status == "tested" || t.status == "gave-up" {
            let score = t.score.map_or("-".to_owned(), |p| format!("{p:.1}%"));
            let _ = writeln!(
                s,
                "{:<width$}  {:<12} {total:>6} {:>8} {:>9} {score:>7}",
                t.name, t.status, t.cases.invalid, t.graceful
            );
        } else {
            let _ = writeln!(
                s,
                "{:<width$}  {:<12} {}",
                t.name,
                t.status,
                t.reason.as_deref().unwrap_or("")
            );
        }
    }
    let shown: Vec<_> = r.findings.iter().filter(|f| f.severity != "info").collect();
    let infos = r.findings.len() - shown.len();
    let _ = writeln!(
        s,
        "\nFindings: {} ({} failures{})",
        shown.len(),
        r.failures(),
        if infos > 0 { format!(", {infos} info not shown") } else { String::new() }
    );
    for f in shown {
        let tool = f.tool.as_deref().unwrap_or("server");
        let _ = writeln!(s, "\n  [{}] {tool}: {} - {}", f.severity, f.kind, f.message);
        if let Some(a) = &f.arguments {
            let _ = writeln!(s, "      arguments: {}", serde_json::Value::Object(a.clone()));
        }
        if let Some(mcp_fuzz_engine::classify::Outcome::Exited { stderr, .. }) = &f.outcome {
            for line in stderr.iter().rev().take(3).rev() {
                let _ = writeln!(s, "      stderr: {line}");
            }
        }
        if let (Some(tool), Some(a)) = (&f.tool, &f.arguments) {
            let _ = writeln!(s, "      replay: {}", replay_line(target, tool, a));
        }
    }
    let score = r.score.percent.map_or("n/a (no invalid case was scored)".to_owned(), |p| {
        format!(
            "{p:.1}% ({}): {} of {} invalid cases handled gracefully",
            r.score.grade.unwrap_or("?"),
            r.score.graceful,
            r.score.scored
        )
    });
    let _ = writeln!(s, "\nCrash-resilience score: {score}");
    let _ = writeln!(s, "{} calls, {} restarts, {:.1}s", r.calls, r.restarts, r.duration_secs);
    s
}

/// `mcp-fuzz call`.
pub fn call_command(args: &CallArgs) -> anyhow::Result<u8> {
    let target = target(&args.target)?;
    let opts = connect_options(&args.target)?;
    let timeout = secs(args.target.timeout, "--timeout")?;
    let arguments: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(&args.arguments)
            .map_err(|e| CliError::Usage(format!("--args must be a JSON object: {e}")))?;
    let rt = runtime()?;
    let outcome = rt.block_on(async {
        let conn = Connection::connect(&target, &opts)
            .await
            .map_err(|e| CliError::ServerStart(e.to_string()))?;
        let reply = conn.call_tool(&args.tool, &arguments, timeout).await;
        let outcome = classify(reply, None, || conn.stderr_tail());
        conn.close().await;
        Ok::<_, CliError>(outcome)
    })?;
    let mut out = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, &outcome).context("failed to write the outcome")?;
    writeln!(out).context("failed to write the outcome")?;
    Ok(if outcome.is_failure() { exit_code::FINDINGS } else { exit_code::SUCCESS })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting() {
        assert_eq!(shell_quote("abc"), "abc");
        assert_eq!(shell_quote("{\"a\":1}"), "'{\"a\":1}'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
    }
}
