//! Flags to resolved configuration: one duration parser for every time flag, the server target,
//! and the run's configuration. Errors are usage errors that name the flag.

use crate::cli::{RunArgs, TargetArgs};
use crate::errors::CliError;
use mcp_fuzz_engine::client::{ConnectOptions, Target};
use mcp_fuzz_engine::config::{Campaign, RunConfig, Selection, Stateful};
use mcp_fuzz_engine::server::ServerSpec;
use mcp_fuzz_engine::shrink::ShrinkConfig;
use std::time::Duration;

/// A time flag: `90` (seconds), `90s`, `1500ms`, `2m` or `1h`; positive.
///
/// # Errors
/// A usage error naming `flag`.
pub fn duration(text: &str, flag: &str) -> Result<Duration, CliError> {
    let t = text.trim();
    let (number, unit) =
        t.find(|c: char| c.is_ascii_alphabetic()).map_or((t, "s"), |i| t.split_at(i));
    let scale = match unit {
        "ms" => 0.001,
        "s" => 1.0,
        "m" => 60.0,
        "h" => 3600.0,
        _ => f64::NAN,
    };
    number
        .trim()
        .parse::<f64>()
        .ok()
        .map(|n| n * scale)
        .filter(|n| n.is_finite() && *n > 0.0)
        .and_then(|n| Duration::try_from_secs_f64(n).ok())
        .ok_or_else(|| {
            CliError::Usage(format!(
                "{flag} takes a positive duration such as 90s, 1500ms, 2m or 1h, got `{text}`"
            ))
        })
}

/// The `--env KEY=VALUE` pairs.
///
/// # Errors
/// A pair without `=` (its value is never shown).
pub fn env_pairs(args: &TargetArgs) -> Result<Vec<(String, String)>, CliError> {
    args.env
        .iter()
        .map(|kv| {
            kv.split_once('=').map(|(k, v)| (k.to_owned(), v.to_owned())).ok_or_else(|| {
                CliError::Usage(format!(
                    "--env takes KEY=VALUE, got `{}`",
                    kv.split('=').next().unwrap_or("")
                ))
            })
        })
        .collect()
}

/// Whether the flags name a server (a command after `--` or `--http`).
pub fn names_a_server(args: &TargetArgs) -> bool {
    args.http.is_some() || !args.command.is_empty()
}

/// The server the flags name.
///
/// # Errors
/// No server, or a malformed `--header` or `--env`.
pub fn target(args: &TargetArgs) -> Result<Target, CliError> {
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
        return Err(CliError::Usage("no server given: pass the server command after `--` (e.g. `mcp-fuzz -- node server.js`) or --http URL".into()));
    }
    Ok(Target::Stdio {
        command: args.command.clone(),
        env: env_pairs(args)?,
        inherit_env: args.inherit_env,
        cwd: args.cwd.clone(),
    })
}

/// The server's limits and the target, as the engine takes them; `target` is the one to reach
/// (usually [`target`] of the same flags).
///
/// # Errors
/// A bad `--startup-timeout`, `--timeout` or `--max-call-time`.
pub fn server_with(args: &TargetArgs, target: Target) -> Result<ServerSpec, CliError> {
    let timeout = duration(&args.timeout, "--timeout")?;
    Ok(ServerSpec {
        target,
        connect: ConnectOptions {
            startup_timeout: duration(&args.startup_timeout, "--startup-timeout")?,
            max_response_bytes: args.max_response_bytes,
            max_call_time: match &args.max_call_time {
                Some(d) => duration(d, "--max-call-time")?.max(timeout),
                None => timeout * 2,
            },
        },
        timeout,
    })
}

/// The server the flags name, with its limits.
///
/// # Errors
/// As [`target`] and [`server_with`].
pub fn server(args: &TargetArgs) -> Result<ServerSpec, CliError> {
    server_with(args, target(args)?)
}

/// The run's configuration.
///
/// # Errors
/// A bad server, duration or count flag.
pub fn run(args: &RunArgs) -> Result<RunConfig, CliError> {
    let optional = |t: &Option<String>, flag| t.as_deref().map(|t| duration(t, flag)).transpose();
    Ok(RunConfig {
        server: server(&args.target)?,
        seed: args.seed,
        cases: args.cases,
        selection: Selection {
            include_destructive: args.include_destructive,
            tools: args.tools.clone(),
            skip_tools: args.skip_tools.clone(),
            partition: args.partition,
        },
        campaign: Campaign {
            shrink: ShrinkConfig {
                enabled: !args.no_shrink,
                time: duration(&args.shrink_time, "--shrink-time")?,
                max_steps: args.max_shrink_steps,
                reruns: 3,
            },
            jobs: usize::try_from(args.jobs).unwrap_or(1),
            time_budget: optional(&args.time_budget, "--time-budget")?,
            tool_time_budget: optional(&args.tool_time_budget, "--tool-time-budget")?,
            max_failures: args.max_failures.and_then(|n| usize::try_from(n).ok()),
            feed: !args.no_feed,
            stateful: Stateful {
                enabled: !args.no_stateful,
                sequences: usize::try_from(args.sequences).unwrap_or(usize::MAX),
                length: usize::try_from(args.sequence_length).unwrap_or(usize::MAX),
            },
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(duration("90", "--x").expect("plain seconds"), Duration::from_secs(90));
        assert_eq!(duration("60s", "--x").expect("seconds"), Duration::from_secs(60));
        assert_eq!(duration("1500ms", "--x").expect("millis"), Duration::from_millis(1500));
        assert_eq!(duration("2m", "--x").expect("minutes"), Duration::from_secs(120));
        assert_eq!(duration("0.5", "--x").expect("fractions"), Duration::from_millis(500));
        assert!(duration("0s", "--x").is_err());
        assert!(duration("5d", "--x").is_err());
        assert!(duration("-1", "--x").is_err());
        let e = duration("soon", "--timeout").expect_err("not a duration");
        assert!(e.to_string().starts_with("--timeout takes a positive duration"), "{e}");
    }
}
