//! `mcp-fuzz diff OLD NEW`: directional compatibility of two tool surfaces; the renderings are in
//! the report crate.

use crate::cli::{DiffArgs, FailOn, OpenContentMode};
use crate::errors::CliError;
use crate::output::{write_atomically, write_stdout};
use crate::{config, exit_code, input};
use mcp_fuzz_compat::capture::Capture;
use mcp_fuzz_compat::diff::{OpenContent, Options, Verdict, diff};
use mcp_fuzz_compat::rules::RULES;
use mcp_fuzz_report::diff::{DiffDoc, render};
use std::fmt::Write as _;
use std::path::Path;

/// `mcp-fuzz diff`.
pub fn run(args: &DiffArgs) -> anyhow::Result<u8> {
    if args.list_rules {
        let mut text = String::new();
        for rule in RULES.iter() {
            let _ =
                writeln!(text, "{:<48} {:<9} {}", rule.id, rule.level.as_str(), rule.explanation);
        }
        write_stdout(&text)?;
        return Ok(exit_code::SUCCESS);
    }
    let (Some(old_path), Some(new_path)) = (&args.old, &args.new) else {
        return Err(CliError::Usage("diff needs two files: mcp-fuzz diff OLD NEW".into()).into());
    };
    let old = load(old_path)?;
    let new = load(new_path)?;
    if args.max_candidates == 0 {
        return Err(CliError::Usage("--max-candidates must be at least 1".into()).into());
    }
    let options = Options {
        max_candidates: args.max_candidates,
        time_budget: config::duration(&args.time_budget, "--time-budget")?,
        seed: args.seed,
        open_content: match args.open_content {
            OpenContentMode::Review => OpenContent::Review,
            OpenContentMode::Strict => OpenContent::Strict,
        },
    };
    let fail_on: Vec<Verdict> = args
        .fail_on
        .iter()
        .map(|f| match f {
            FailOn::Breaking => Verdict::Breaking,
            FailOn::Unknown => Verdict::Unknown,
            FailOn::Review => Verdict::Review,
        })
        .collect();
    let result = diff(&old, &new, &options);
    let names = (old_path.display().to_string(), new_path.display().to_string());
    let doc = DiffDoc {
        diff: &result,
        old: (&old, &names.0),
        new: (&new, &names.1),
        options: &options,
        fail_on: &fail_on,
    };
    let rendered = render(&doc, args.format);
    if let Some(path) = &args.output {
        write_atomically(path, rendered.as_bytes())?;
    }
    write_stdout(&rendered)?;
    Ok(if result.passes(&fail_on) { exit_code::SUCCESS } else { exit_code::FINDINGS })
}

fn load(path: &Path) -> Result<Capture, CliError> {
    input::read_capture(path).map(|(c, _)| c).map_err(|e| match e {
        CliError::Capture { origin, error } => CliError::Usage(format!(
            "failed to read a snapshot or capture from {origin}: {error}; diff expects files \
             written by `mcp-fuzz snapshot`, or tools/list answers ({{\"tools\": [...]}}, a \
             JSON-RPC response, an array of tools)"
        )),
        other => other,
    })
}
