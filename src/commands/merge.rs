//! `mcp-fuzz report merge`: the JSON reports of `run --partition` shards into one report.

use crate::cli::MergeArgs;
use crate::errors::CliError;
use crate::output::OutputPlan;
use crate::{exit_code, input};
use mcp_fuzz_engine::report::Report;
use mcp_fuzz_report::run::{merge::merge, render};

/// `mcp-fuzz report merge`.
pub fn run(args: &MergeArgs) -> anyhow::Result<u8> {
    let plan = OutputPlan::resolve(&args.output)?;
    let mut shards = Vec::new();
    for path in &args.reports {
        let origin = path.display().to_string();
        let text = input::read(path, &origin)?;
        let report: Report = serde_json::from_str(&text).map_err(|e| {
            CliError::Usage(format!(
                "failed to read {origin} as an mcp-fuzz JSON report: {e}; pass the files written by `mcp-fuzz run --format json` or --output"
            ))
        })?;
        shards.push((origin, report));
    }
    let merged = merge(shards).map_err(|e| CliError::Usage(e.to_string()))?;
    plan.emit(|f| render(&merged, f))?;
    Ok(exit_code::of_run(&merged, args.fail_under))
}
