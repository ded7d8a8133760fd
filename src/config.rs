//! Flags to resolved configuration: the flags of `run` over the profile of `mcp-fuzz.toml` over
//! the built-in defaults (the engine's `config_file` reads and layers the file), the server
//! target, and one duration parser for every time flag. Errors are usage errors that name the
//! flag, or the file's line and key.

use crate::cli::{OutputArgs, RunArgs, TargetArgs};
use crate::errors::CliError;
use mcp_fuzz_engine::config::{RunConfig, parse_duration};
use mcp_fuzz_engine::config_file::{ConfigFile, Count, DEFAULT_PROFILE, Profile, Seconds};
use mcp_fuzz_engine::server::ServerSpec;
use mcp_fuzz_engine::transport::asks::{ClientCapability, Elicit};
use mcp_fuzz_engine::transport::{Launch, Target, check_launch};
use mcp_fuzz_report::Format;
use std::path::PathBuf;
use std::time::Duration;

/// A time flag: `90` (seconds), `90s`, `1500ms`, `2m` or `1h`; positive.
///
/// # Errors
/// A usage error naming `flag`.
pub fn duration(text: &str, flag: &str) -> Result<Duration, CliError> {
    parse_duration(text).ok_or_else(|| {
        CliError::Usage(format!(
            "{flag} takes a positive duration such as 90s, 1500ms, 2m or 1h, got `{text}`"
        ))
    })
}

/// An optional time flag, as a profile setting.
fn seconds(text: Option<&String>, flag: &str) -> Result<Option<Seconds>, CliError> {
    text.map(|t| duration(t, flag).map(Seconds)).transpose()
}

/// The `--client-capabilities` named (none given: the profile's).
fn client_capabilities(names: &[String]) -> Result<Option<Vec<ClientCapability>>, CliError> {
    if names.is_empty() {
        return Ok(None);
    }
    names
        .iter()
        .map(|n| {
            ClientCapability::from_name(n.trim()).ok_or_else(|| {
                CliError::Usage(format!(
                    "--client-capabilities `{n}` is not one of {} (roots are declared with --roots DIR)",
                    ClientCapability::NAMES.join(", ")
                ))
            })
        })
        .collect::<Result<_, _>>()
        .map(Some)
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
        let launch = if args.command.is_empty() {
            if args.cwd.is_some() || args.inherit_env || !args.env.is_empty() {
                return Err(CliError::Usage(
                    "--env, --inherit-env and --cwd go with a server command after `--`; a \
                     server reached by --http alone is already running"
                        .into(),
                ));
            }
            None
        } else {
            let launch = Launch {
                command: args.command.clone(),
                env: env_pairs(args)?,
                inherit_env: args.inherit_env,
                cwd: args.cwd.clone(),
            };
            check_launch(url, &launch).map_err(CliError::Usage)?;
            Some(launch)
        };
        return Ok(Target::Http { url: url.clone(), headers, launch });
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

/// The server-facing flags as a profile (the limits a flag does not give come from the
/// profile under it).
///
/// # Errors
/// A bad `--startup-timeout`, `--timeout` or `--max-call-time`.
fn server_flags(args: &TargetArgs) -> Result<Profile, CliError> {
    Ok(Profile {
        startup_timeout: seconds(args.startup_timeout.as_ref(), "--startup-timeout")?,
        timeout: seconds(args.timeout.as_ref(), "--timeout")?,
        max_call_time: seconds(args.max_call_time.as_ref(), "--max-call-time")?,
        max_response_bytes: args.max_response_bytes,
        roots: (!args.roots.is_empty())
            .then(|| args.roots.iter().map(|p| p.display().to_string()).collect()),
        no_sandbox: args.no_sandbox.then_some(true),
        keep_sandbox: args.keep_sandbox.then_some(true),
        sandbox_from: args.sandbox_from.as_ref().map(|p| p.display().to_string()),
        client_capabilities: client_capabilities(&args.client_capabilities)?,
        elicit: args
            .elicit
            .as_deref()
            .map(|e| {
                Elicit::from_name(e).ok_or_else(|| {
                    CliError::Usage(format!(
                        "--elicit `{e}` is not one of {}",
                        Elicit::NAMES.join(", ")
                    ))
                })
            })
            .transpose()?,
        ..Profile::default()
    })
}

/// A server named elsewhere (the config file, a case file) with the server flags applied:
/// `--env` adds variables, `--inherit-env` and `--cwd` replace what it says.
///
/// # Errors
/// A malformed `--env`.
pub fn with_server_flags(mut target: Target, args: &TargetArgs) -> Result<Target, CliError> {
    let command = match &mut target {
        Target::Stdio { env, inherit_env, cwd, .. } => Some((env, inherit_env, cwd)),
        Target::Http { launch: Some(l), .. } => Some((&mut l.env, &mut l.inherit_env, &mut l.cwd)),
        Target::Http { .. } => None,
    };
    if let Some((env, inherit_env, cwd)) = command {
        env.extend(env_pairs(args)?);
        *inherit_env |= args.inherit_env;
        *cwd = args.cwd.clone().or(cwd.take());
    }
    Ok(target)
}

/// The server's limits and the target, as the engine takes them; `target` is the one to reach
/// (usually [`target`] of the same flags). Limits not given are the built-in defaults.
///
/// # Errors
/// A bad `--startup-timeout`, `--timeout` or `--max-call-time`.
pub fn server_with(args: &TargetArgs, target: Target) -> Result<ServerSpec, CliError> {
    let defaults = ConfigFile::builtin().profile(DEFAULT_PROFILE)?;
    Ok(server_flags(args)?.over(defaults).server_spec(target))
}

/// The server the flags name, with its limits.
///
/// # Errors
/// As [`target`] and [`server_with`].
pub fn server(args: &TargetArgs) -> Result<ServerSpec, CliError> {
    server_with(args, target(args)?)
}

/// What a `run` is asked to do: the engine's configuration, and the binary's own settings
/// (each the profile key of the same name).
pub struct Run {
    pub cfg: RunConfig,
    pub output: OutputArgs,
    pub fail_under: Option<f64>,
    pub quiet: bool,
    pub baseline: Option<PathBuf>,
    pub update_baseline: bool,
    pub artifacts: Option<PathBuf>,
}

/// The run's settings: each flag given, else the config file's profile, else the default.
///
/// # Errors
/// A bad flag, a config file that cannot be used, or no server anywhere.
pub fn run(args: &RunArgs) -> Result<Run, CliError> {
    let file = match &args.config {
        Some(path) => ConfigFile::read(path)?,
        None => ConfigFile::discover(&std::env::current_dir().unwrap_or_default())?,
    };
    let profile = file.profile(args.profile.as_deref().unwrap_or(DEFAULT_PROFILE))?;
    let p = run_flags(args)?.over(profile);
    p.check()?;
    let t = &args.target;
    let target = if names_a_server(t) { target(t)? } else { with_server_flags(file.target()?, t)? };
    let format = p.format.iter().flatten().copied();
    Ok(Run {
        cfg: p.run_config(target, file.hints().to_vec()),
        output: OutputArgs {
            format: format.collect(),
            json: false,
            output_dir: p.output_dir.clone(),
            output: p.output.clone(),
        },
        fail_under: p.fail_under,
        quiet: p.quiet == Some(true),
        baseline: p.baseline.clone(),
        update_baseline: p.update_baseline == Some(true),
        artifacts: p.artifacts.clone(),
    })
}

/// The flags of `run` as a profile: what is not given is `None` (a switch not given is unset,
/// so the file decides).
fn run_flags(a: &RunArgs) -> Result<Profile, CliError> {
    let on = |b: bool| b.then_some(true);
    let list = |v: &Vec<String>| (!v.is_empty()).then(|| v.clone());
    let formats: Vec<Format> =
        a.output.format.iter().copied().chain(a.output.json.then_some(Format::Json)).collect();
    Ok(Profile {
        fail_under: a.fail_under,
        quiet: on(a.quiet),
        include_destructive: on(a.include_destructive),
        tool: list(&a.tools),
        skip_tool: list(&a.skip_tools),
        cases: a.cases,
        seed: a.seed,
        format: (!formats.is_empty()).then_some(formats),
        output_dir: a.output.output_dir.clone(),
        output: a.output.output.clone(),
        baseline: a.baseline.clone(),
        update_baseline: on(a.update_baseline),
        partition: a.partition,
        artifacts: a.artifacts.clone(),
        no_shrink: on(a.no_shrink),
        shrink_time: seconds(a.shrink_time.as_ref(), "--shrink-time")?,
        max_shrink_steps: a.max_shrink_steps,
        time_budget: seconds(a.time_budget.as_ref(), "--time-budget")?,
        tool_time_budget: seconds(a.tool_time_budget.as_ref(), "--tool-time-budget")?,
        max_failures: a.max_failures.map(Count),
        jobs: a.jobs.map(Count),
        no_feed: on(a.no_feed),
        no_stateful: on(a.no_stateful),
        no_prompts: on(a.no_prompts),
        no_resources: on(a.no_resources),
        no_protocol: on(a.no_protocol),
        sequences: a.sequences.map(Count),
        sequence_length: a.sequence_length.map(Count),
        ..server_flags(&a.target)?
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_duration_names_its_flag() {
        assert_eq!(duration("1500ms", "--x").expect("millis"), Duration::from_millis(1500));
        let e = duration("soon", "--timeout").expect_err("not a duration");
        assert!(e.to_string().starts_with("--timeout takes a positive duration"), "{e}");
    }

    /// Every flag of `run` can be set in the config file: under its own name in a profile, or
    /// in `[server]` (how to reach the server). Only the flags that pick the file itself and
    /// `--json` (a short form of `format = ["json"]`) are not keys.
    #[test]
    fn every_run_flag_is_a_config_key() {
        use clap::CommandFactory as _;
        use mcp_fuzz_engine::config_file::{KEYS, SERVER_KEYS};
        let cli = crate::cli::Cli::command();
        let run = cli.find_subcommand("run").expect("run is a command");
        let mut missing = Vec::new();
        for long in run.get_arguments().filter_map(clap::Arg::get_long) {
            let server = if long == "header" { "headers" } else { long };
            let is_key =
                KEYS.iter().any(|k| k.name == long) || SERVER_KEYS.iter().any(|k| k.name == server);
            if !is_key && !["config", "profile", "json", "help"].contains(&long) {
                missing.push(long);
            }
        }
        assert!(missing.is_empty(), "run flags the config file cannot set: {missing:?}");
    }

    #[test]
    fn flags_over_the_profile_over_the_defaults() {
        use clap::Parser as _;
        let argv = "mcp-fuzz run --sequences 3 --no-stateful --cases 2 -- srv";
        let cli = crate::cli::Cli::try_parse_from(argv.split(' ')).expect("parses");
        let crate::cli::Command::Run(args) = cli.command else { panic!("run") };
        let file: Profile =
            toml::from_str("sequences = 7\nsequence-length = 4\ncases = 9\nseed = 5")
                .expect("a profile");
        let defaults = ConfigFile::builtin().profile(DEFAULT_PROFILE).expect("defaults");
        let p = run_flags(&args).expect("flags").over(file).over(defaults);
        let cfg = p.run_config(target(&args.target).expect("target"), Vec::new());
        let s = &cfg.campaign.stateful;
        assert_eq!((s.enabled, s.sequences, s.length), (false, 3, 4));
        assert_eq!((cfg.cases, cfg.seed, cfg.server.timeout), (2, 5, Duration::from_secs(10)));
    }
}
