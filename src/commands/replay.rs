//! `mcp-fuzz replay CASE.json`: re-run a case file's minimal arguments and say whether the bug is
//! still there (exit 1) or fixed (exit 0): the regression test for a fix.

use crate::cli::ReplayArgs;
use crate::errors::CliError;
use crate::exit_code;
use crate::output::write_stdout;
use crate::{config, session};
use mcp_fuzz_engine::case_file::{CASE_VERSION, CaseFile, OLDEST_CASE_VERSION};
use serde_json::json;

/// `mcp-fuzz replay`.
pub fn run(args: &ReplayArgs) -> anyhow::Result<u8> {
    let case = load(args)?;
    let target = if config::names_a_server(&args.target) {
        config::target(&args.target)?
    } else {
        let recorded = case.recorded_target().ok_or_else(|| {
            CliError::Usage(format!(
                "{} records no server that can be started again; give one after `--` or with --http URL",
                args.case.display()
            ))
        })?;
        // The server flags still apply to the recorded command (its environment values were
        // redacted when it was recorded).
        config::with_server_flags(recorded, &args.target)?
    };
    let mut spec = config::server_with(&args.target, target)?;
    // The run's limits, unless the flags change them: an oversize answer or a hang replays
    // against the limit it broke.
    if args.target.timeout.is_none() && case.timeout_secs.is_finite() && case.timeout_secs > 0.0 {
        spec.timeout = std::time::Duration::from_secs_f64(case.timeout_secs);
    }
    if args.target.max_response_bytes.is_none()
        && let Some(n) = case.max_response_bytes.and_then(|n| usize::try_from(n).ok())
    {
        spec.connect.max_response_bytes = n;
    }
    // Replayed in a sandbox of its own, as the run that found it was.
    let _sandbox = spec.enter_sandbox().map_err(CliError::from)?;
    let replayed = session::block_on(async {
        mcp_fuzz_engine::case_file::replay(&case, &spec)
            .await
            .map_err(|e| session::start_error(&e, &spec.target).into())
    })?;
    let outcome = &replayed.outcome;
    let fails = replayed.failure.is_some();
    // A sequence fails the same way when its state check fails again too.
    let same = case.signature.matches_call(outcome, &case.minimal_arguments)
        && (case.sequence.is_empty() || replayed.failure.as_ref() == Some(&case.kind));
    let verdict = match (same && fails, fails) {
        (true, _) => "still-fails",
        (false, true) => "fails-differently",
        (false, false) => "passes",
    };
    let mut doc = json!({
        "tool": case.tool,
        "arguments": case.minimal_arguments,
        "expected": case.signature,
        "outcome": outcome,
        "verdict": verdict,
    });
    if !case.sequence.is_empty() {
        doc["kind"] = json!(case.kind);
        doc["sequence"] = json!(case.sequence.len());
        doc["calls"] = json!(replayed.calls);
    }
    let mut text = serde_json::to_string_pretty(&doc).expect("a replay result serialises");
    text.push('\n');
    write_stdout(&text)?;
    Ok(if fails { exit_code::FINDINGS } else { exit_code::SUCCESS })
}

/// Reads and checks the case file.
fn load(args: &ReplayArgs) -> Result<CaseFile, CliError> {
    let text = std::fs::read_to_string(&args.case).map_err(|e| {
        CliError::Usage(format!(
            "cannot read the case file {}: {e}; pass a file written by `mcp-fuzz run --artifacts DIR`",
            args.case.display()
        ))
    })?;
    let version = serde_json::from_str::<serde_json::Value>(&text)
        .ok()
        .and_then(|v| v.get("caseVersion").and_then(serde_json::Value::as_u64));
    if version
        .is_some_and(|v| !(u64::from(OLDEST_CASE_VERSION)..=u64::from(CASE_VERSION)).contains(&v))
    {
        return Err(CliError::Usage(format!(
            "{} is a version {} case file; this mcp-fuzz reads versions {OLDEST_CASE_VERSION} to {CASE_VERSION}",
            args.case.display(),
            version.unwrap_or_default()
        )));
    }
    serde_json::from_str(&text).map_err(|e| {
        CliError::Usage(format!(
            "{} is not an mcp-fuzz case file: {e}; pass a file written by `mcp-fuzz run --artifacts DIR`",
            args.case.display()
        ))
    })
}
