//! `mcp-fuzz run` (the default command): resolve the flags, drive the engine, write case files,
//! apply the baseline, render every requested format and pick the exit code.

use crate::cli::RunArgs;
use crate::errors::CliError;
use crate::exit_code;
use crate::output::{OutputPlan, write_atomically};
use crate::{config, input, session};
use anyhow::Context as _;
use indicatif::{ProgressBar, ProgressStyle};
use mcp_fuzz_engine::case_file::CaseFile;
use mcp_fuzz_engine::config::RunConfig;
use mcp_fuzz_engine::events::{Later, PhaseFinished, RunEvent, RunEventKind, Totals};
use mcp_fuzz_engine::report::Report;
use mcp_fuzz_engine::run::{RunError, run as run_campaign};
use mcp_fuzz_report::run::{baseline, render};
use std::io::IsTerminal as _;
use std::io::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};

/// `mcp-fuzz run`.
pub fn run(args: &RunArgs) -> anyhow::Result<u8> {
    let settings = config::run(args)?;
    let plan = OutputPlan::resolve(&settings.output)?;
    // Read the baseline first: a bad file is a usage error before any server is started.
    let known = settings
        .baseline
        .as_deref()
        .map(|p| input::read_baseline(p, settings.update_baseline))
        .transpose()?;
    let mut cfg = settings.cfg;
    let sandbox = cfg.server.enter_sandbox().map_err(CliError::from)?;
    let bar = if settings.quiet { None } else { progress_bar(plan.stdout_is_machine()) };
    let mut lines = (!settings.quiet && bar.is_none()).then(ProgressLines::new);
    // A test hook: panic once this many cases have run, to check that a panic leaves no server
    // behind (`tests/integration/run.rs`). Not part of the interface.
    let panic_after =
        std::env::var("__MCP_FUZZ_TEST_PANIC_AFTER_CASES").ok().and_then(|v| v.parse::<u64>().ok());
    let outcome = session::block_on(async {
        Ok(run_campaign(&cfg, |e: &RunEvent| {
            assert!(
                panic_after.is_none_or(|n| e.totals.cases_done < n),
                "__MCP_FUZZ_TEST_PANIC_AFTER_CASES reached"
            );
            show_progress(bar.as_ref(), &e.totals);
            if let Some(l) = lines.as_mut() {
                l.update(e);
            }
        })
        .await)
    });
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    let mut report = match outcome? {
        Ok(r) => r,
        Err(RunError::Connect(e)) => {
            return Err(session::start_error(&e, &cfg.server.target).into());
        }
        Err(e) => return Err(CliError::ServerStart(format!("{e}")).into()),
    };
    if let Some(dir) = &settings.artifacts {
        write_case_files(dir, &report, &cfg)?;
    }
    if let (Some(b), Some(path)) = (&known, &settings.baseline) {
        baseline::apply(b, &mut report, &path.display().to_string());
    }
    plan.emit(|f| render(&report, f))?;
    if let Some(s) = sandbox.as_ref().filter(|s| s.kept()) {
        // A closed stderr is no reason to fail the run.
        let _ = writeln!(std::io::stderr(), "mcp-fuzz: sandbox kept at {}", s.root().display());
    }
    if let (true, Some(b), Some(path)) = (settings.update_baseline, &known, &settings.baseline) {
        write_atomically(path, &baseline::updated(b, &report).to_bytes())?;
    }
    Ok(exit_code::of_run(&report, settings.fail_under))
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

fn show_progress(bar: Option<&ProgressBar>, t: &Totals) {
    if let Some(b) = bar {
        b.set_length(t.cases_planned);
        b.set_position(t.cases_done);
        b.set_message(format!("{} findings, {} restarts", t.findings, t.restarts));
    }
}

/// Progress for a log (stderr not a terminal: CI): a line per tool done, and one every
/// [`ProgressLines::EVERY`] inside a long tool, so that a stalled job shows where it is.
struct ProgressLines {
    started: Instant,
    last: Instant,
}

impl ProgressLines {
    const EVERY: Duration = Duration::from_secs(10);

    fn new() -> Self {
        let now = Instant::now();
        Self { started: now, last: now }
    }

    fn update(&mut self, e: &RunEvent) {
        let elapsed = self.started.elapsed().as_secs_f64();
        let t = &e.totals;
        let finished = match &e.kind {
            RunEventKind::ToolFinished { tool } => Some(tool.clone()),
            RunEventKind::PhaseFinished(phase) => Some(phase_words(phase)),
            RunEventKind::CasesPlanned
            | RunEventKind::CaseFinished
            | RunEventKind::PhaseProgressed { .. } => None,
        };
        let line = if let Some(what) = finished {
            format!(
                "mcp-fuzz: {what} done; {} tool(s), {} cases, {} findings, {} restarts so far ({elapsed:.1}s)",
                t.tools_done, t.cases_done, t.findings, t.restarts
            )
        } else if self.last.elapsed() < Self::EVERY {
            return;
        } else if let RunEventKind::PhaseProgressed { phase, done } = &e.kind {
            format!(
                "mcp-fuzz: {}, {} findings so far ({elapsed:.1}s)",
                work_words(*phase, *done),
                t.findings
            )
        } else {
            format!(
                "mcp-fuzz: {} of {} planned cases, {} findings so far ({elapsed:.1}s)",
                t.cases_done, t.cases_planned, t.findings
            )
        };
        self.last = Instant::now();
        // A closed stderr is no reason to stop the run.
        let _ = writeln!(std::io::stderr(), "{line}");
    }
}

/// The work a phase after the tools did so far, in the words of a progress line.
fn work_words(phase: Later, done: u64) -> String {
    match phase {
        Later::Sequences => format!("sequence phase: {done} walk(s) so far"),
        Later::Surfaces => format!("prompts and resources: {done} request(s) so far"),
        Later::Protocol => format!("protocol checks: {done} done so far"),
    }
}

/// A phase after the tools, in the words of a progress line.
fn phase_words(phase: &PhaseFinished) -> String {
    match phase {
        PhaseFinished::Sequences { walks } => format!("sequence phase ({walks} walks)"),
        PhaseFinished::SequencesSkipped => "sequence phase (skipped: nothing to chain)".into(),
        PhaseFinished::Surfaces { requests } => {
            format!("prompts and resources ({requests} requests)")
        }
        PhaseFinished::Protocol { passed, failed, skipped } => {
            format!("protocol checks ({passed} passed, {failed} failed, {skipped} skipped)")
        }
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
        let limits =
            (cfg.server.timeout.as_secs_f64(), cfg.server.connect.max_response_bytes as u64);
        if let Some(case) = CaseFile::from_finding(report, f, &cfg.server.target, limits) {
            let bytes =
                serde_json::to_vec_pretty(&case).context("failed to serialise a case file")?;
            write_atomically(&dir.join(case.file_name()), &bytes)?;
        }
    }
    Ok(())
}
