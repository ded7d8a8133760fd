//! `mcp-fuzz run` and `mcp-fuzz call`: resolve the flags, drive the engine, render the report and
//! pick the exit code.

use crate::cli::{CallArgs, Format, MergeArgs, OutputArgs, RunArgs, TargetArgs};
use crate::errors::CliError;
use crate::exit_code;
use crate::report::{
    self,
    baseline::Baseline,
    merge::merge,
    model::{Doc, Identity},
};
use anyhow::Context as _;
use indicatif::{ProgressBar, ProgressStyle};
use mcp_fuzz_engine::case_file::CaseFile;
use mcp_fuzz_engine::classify::classify;
use mcp_fuzz_engine::client::{ConnectError, ConnectOptions, Connection, Target};
use mcp_fuzz_engine::run::{Campaign, Progress, Report, RunConfig, RunError, run};
use mcp_fuzz_engine::shrink::ShrinkConfig;
use std::fmt::Write as _;
use std::io::IsTerminal as _;
use std::io::Write as _;
use std::path::Path;
use std::time::Duration;

pub(crate) fn secs(s: f64, flag: &str) -> anyhow::Result<Duration> {
    Duration::try_from_secs_f64(s).map_err(|_| {
        CliError::Usage(format!("{flag} must be a positive number of seconds, got {s}")).into()
    })
}

/// A duration flag: `90`, `90s`, `1500ms`, `2m` or `1h`.
fn duration(text: &str, flag: &str) -> anyhow::Result<Duration> {
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
            .into()
        })
}

/// The `--env KEY=VALUE` pairs.
pub(crate) fn env_pairs(args: &TargetArgs) -> anyhow::Result<Vec<(String, String)>> {
    args.env
        .iter()
        .map(|kv| {
            kv.split_once('=').map(|(k, v)| (k.to_owned(), v.to_owned())).ok_or_else(|| {
                CliError::Usage(format!(
                    "--env takes KEY=VALUE, got `{}`",
                    kv.split('=').next().unwrap_or("")
                ))
                .into()
            })
        })
        .collect()
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
    let env = env_pairs(args)?;
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
    let plan = OutputPlan::resolve(&args.output)?;
    // Read the baseline first: a bad file is a usage error before any server is started.
    let baseline = args
        .baseline
        .as_deref()
        .map(|p| Baseline::<Identity>::load(p, args.update_baseline))
        .transpose()?;
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
        partition: args.partition,
        campaign: Campaign {
            shrink: ShrinkConfig {
                enabled: !args.no_shrink,
                time: duration(&args.shrink_time, "--shrink-time")?,
                max_steps: args.max_shrink_steps,
                reruns: 3,
            },
            jobs: usize::try_from(args.jobs).unwrap_or(1),
            time_budget: args
                .time_budget
                .as_deref()
                .map(|t| duration(t, "--time-budget"))
                .transpose()?,
            tool_time_budget: args
                .tool_time_budget
                .as_deref()
                .map(|t| duration(t, "--tool-time-budget"))
                .transpose()?,
            max_failures: args.max_failures.and_then(|n| usize::try_from(n).ok()),
            feed: !args.no_feed,
        },
    };
    let bar = progress_bar(plan.stdout_is_machine());
    // A test hook: panic once this many cases have run, to check that a panic leaves no server
    // behind (`tests/integration/run.rs`). Not part of the interface.
    let panic_after =
        std::env::var("__MCP_FUZZ_TEST_PANIC_AFTER_CASES").ok().and_then(|v| v.parse::<u64>().ok());
    // Ctrl-C: the server lives in its own process group and does not get the terminal's SIGINT;
    // dropping the run drops its connection, which kills that group.
    let outcome = runtime()?.block_on(async {
        tokio::select! {
            r = run(&cfg, |p| {
                assert!(
                    panic_after.is_none_or(|n| p.done < n),
                    "__MCP_FUZZ_TEST_PANIC_AFTER_CASES reached"
                );
                show_progress(bar.as_ref(), p);
            }) => Some(r),
            _ = tokio::signal::ctrl_c() => None,
        }
    });
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    let Some(outcome) = outcome else {
        return Err(CliError::Interrupted.into());
    };
    let report = match outcome {
        Ok(r) => r,
        Err(RunError::Connect(e)) => return Err(start_error(&e, &cfg.target).into()),
        Err(e) => return Err(CliError::ServerStart(format!("{e}")).into()),
    };
    if let Some(dir) = &args.artifacts {
        write_case_files(dir, &report, &cfg)?;
    }
    let mut doc = Doc::from_report(&report);
    doc.partition = args.partition.map(|p| p.to_string());
    if let (Some(b), Some(path)) = (&baseline, &args.baseline) {
        b.apply(&mut doc, &path.display().to_string());
    }
    plan.emit(|f| report::render(&doc, f))?;
    if let (true, Some(b), Some(path)) = (args.update_baseline, &baseline, &args.baseline) {
        write_atomically(path, &b.updated(&doc).to_bytes())?;
    }
    Ok(verdict(&doc, args.fail_under))
}

/// The error for a server that did not start: what happened, its last stderr lines or advice.
pub(crate) fn start_error(e: &ConnectError, target: &Target) -> CliError {
    let tail = e.stderr_tail();
    let mut msg = format!("{e}");
    if tail.is_empty() {
        msg.push_str(match target {
            Target::Stdio { .. } => "; check the command and that it speaks MCP over stdio",
            Target::Http { .. } => {
                "; check the URL, that the server is up, and the --header values it needs"
            }
        });
    } else {
        let _ = write!(msg, "; the server's last stderr lines:\n  {}", tail.join("\n  "));
    }
    CliError::ServerStart(msg)
}

/// `mcp-fuzz report merge`.
pub fn merge_command(args: &MergeArgs) -> anyhow::Result<u8> {
    let plan = OutputPlan::resolve(&args.output)?;
    let mut shards = Vec::new();
    for path in &args.reports {
        let origin = path.display().to_string();
        let text = std::fs::read_to_string(path)
            .map_err(|error| CliError::Read { origin: origin.clone(), error })?;
        let doc: Doc = serde_json::from_str(&text).map_err(|e| {
            CliError::Usage(format!(
                "failed to read {origin} as an mcp-fuzz JSON report: {e}; pass the files written by `mcp-fuzz run --format json` or --output"
            ))
        })?;
        shards.push((origin, doc));
    }
    let merged = merge(shards)?;
    plan.emit(|f| report::render(&merged, f))?;
    Ok(verdict(&merged, args.fail_under))
}

/// Where each requested format goes (shared by `run`, `report merge` and `clients`).
pub(crate) struct OutputPlan {
    /// The format printed on stdout, if any.
    stdout: Option<Format>,
    /// Formats written under a directory.
    files: Vec<Format>,
    dir: Option<std::path::PathBuf>,
    json_file: Option<std::path::PathBuf>,
}

impl OutputPlan {
    pub(crate) fn resolve(args: &OutputArgs) -> anyhow::Result<Self> {
        let mut formats: Vec<Format> = Vec::new();
        for f in args.format.iter().copied().chain(args.json.then_some(Format::Json)) {
            if !formats.contains(&f) {
                formats.push(f);
            }
        }
        let Some(dir) = &args.output_dir else {
            if formats.len() > 1 {
                let names: Vec<&str> = formats.iter().map(|f| format_name(*f)).collect();
                return Err(CliError::Usage(format!(
                    "--format {} asks for {} documents but stdout holds one; add --output-dir DIR to write them to files",
                    names.join(","),
                    formats.len()
                ))
                .into());
            }
            return Ok(Self {
                stdout: Some(formats.first().copied().unwrap_or(Format::Human)),
                files: Vec::new(),
                dir: None,
                json_file: args.output.clone(),
            });
        };
        if formats.is_empty() {
            formats =
                vec![Format::Human, Format::Json, Format::Junit, Format::Sarif, Format::Markdown];
        }
        Ok(Self {
            stdout: formats.contains(&Format::Human).then_some(Format::Human),
            files: formats.into_iter().filter(|f| *f != Format::Human).collect(),
            dir: Some(dir.clone()),
            json_file: args.output.clone(),
        })
    }

    /// Whether stdout carries a machine-readable document (then no progress bar).
    fn stdout_is_machine(&self) -> bool {
        self.stdout.is_some_and(|f| f != Format::Human)
    }

    /// Writes every requested document; `render` gives a document in one format.
    pub(crate) fn emit(&self, render: impl Fn(Format) -> String) -> anyhow::Result<()> {
        if let Some(path) = &self.json_file {
            write_atomically(path, render(Format::Json).as_bytes())?;
        }
        if let Some(dir) = &self.dir {
            std::fs::create_dir_all(dir).with_context(|| {
                format!(
                    "failed to create --output-dir {}; check the path and permissions",
                    dir.display()
                )
            })?;
            for f in &self.files {
                let name = report::file_name(*f).expect("only file formats are listed");
                write_atomically(&dir.join(name), render(*f).as_bytes())?;
            }
        }
        if let Some(f) = self.stdout {
            let mut out = std::io::stdout().lock();
            out.write_all(render(f).as_bytes()).context("failed to write the report")?;
            out.flush().context("failed to write the report")?;
        }
        Ok(())
    }
}

fn format_name(f: Format) -> &'static str {
    match f {
        Format::Human => "human",
        Format::Json => "json",
        Format::Junit => "junit",
        Format::Sarif => "sarif",
        Format::Markdown => "markdown",
    }
}

/// A progress bar on stderr, only when stderr is a terminal and stdout is not a machine format.
fn progress_bar(stdout_is_machine: bool) -> Option<ProgressBar> {
    if stdout_is_machine || !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = ProgressBar::new(0);
    let style = ProgressStyle::with_template(
        "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} cases, {msg}",
    )
    .expect("the progress template is valid");
    bar.set_style(style);
    Some(bar)
}

fn show_progress(bar: Option<&ProgressBar>, p: Progress) {
    if let Some(b) = bar {
        b.set_length(p.planned);
        b.set_position(p.done);
        b.set_message(format!("{} findings, {} restarts", p.findings, p.restarts));
    }
}

/// The exit code of a finished run (or of merged shards).
fn verdict(doc: &Doc, fail_under: Option<f64>) -> u8 {
    if doc.tested() == 0 {
        // A shard whose share holds no testable tool is not a failure of the server: the merged
        // report decides.
        let empty_shard = doc.partition.is_some()
            && doc
                .tools
                .iter()
                .any(|t| t.reason.as_deref().is_some_and(|r| r.starts_with("not in partition")));
        if !empty_shard {
            return exit_code::NO_TOOLS;
        }
    }
    match fail_under {
        Some(p) => {
            if doc.score.percent.is_some_and(|s| s < p)
                || (doc.score.percent.is_none() && doc.failures() > 0)
            {
                exit_code::FINDINGS
            } else {
                exit_code::SUCCESS
            }
        }
        None if doc.failures() > 0 => exit_code::FINDINGS,
        None => exit_code::SUCCESS,
    }
}

/// One case file per failure finding, written atomically into `dir` (created if missing).
fn write_case_files(dir: &Path, report: &Report, cfg: &RunConfig) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| {
        format!(
            "failed to create the --artifacts directory {}; check the path and its permissions",
            dir.display()
        )
    })?;
    for f in &report.findings {
        if let Some(case) =
            CaseFile::from_finding(report, f, &cfg.target, cfg.timeout.as_secs_f64())
        {
            let bytes =
                serde_json::to_vec_pretty(&case).context("failed to serialise a case file")?;
            write_atomically(&dir.join(case.file_name()), &bytes)?;
        }
    }
    Ok(())
}

/// Writes `bytes` to `path` through a temporary file in the same directory and a rename, so a
/// reader never sees a partial file.
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
    fn durations() {
        assert_eq!(duration("90", "--x").expect("plain seconds"), Duration::from_secs(90));
        assert_eq!(duration("60s", "--x").expect("seconds"), Duration::from_secs(60));
        assert_eq!(duration("1500ms", "--x").expect("millis"), Duration::from_millis(1500));
        assert_eq!(duration("2m", "--x").expect("minutes"), Duration::from_secs(120));
        assert!(duration("0s", "--x").is_err());
        assert!(duration("5d", "--x").is_err());
        assert!(duration("-1", "--x").is_err());
    }
}
