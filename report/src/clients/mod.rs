//! The `clients` document: its typed model ([`model`]), its policy and baseline ([`policy`]),
//! and its renderings.

pub mod canaries;
mod human;
mod junit;
mod markdown;
pub mod model;
pub mod policy;
mod sarif;

use crate::Format;
use model::{CallVerdict, ClientsReport, Verdict};
use std::fmt::Write as _;

/// The document in `format`.
#[must_use]
pub fn render(report: &ClientsReport, format: Format) -> String {
    match format {
        Format::Human => human::render(report),
        Format::Json => crate::pretty(&serde_json::to_value(report).unwrap_or_default()),
        Format::Markdown => markdown::render(report),
        Format::Junit => junit::render(report),
        Format::Sarif => crate::pretty(&sarif::render(report)),
    }
}

fn verdict_name(v: Verdict) -> &'static str {
    match v {
        Verdict::Pass => "pass",
        Verdict::Fail => "fail",
    }
}

fn call_verdict_name(v: CallVerdict) -> &'static str {
    match v {
        CallVerdict::Failure => "failure",
        CallVerdict::Graceful => "graceful",
        CallVerdict::Accepted => "accepted",
    }
}

/// `clients --list-rules`: the rule catalogue as text, each rule with its severity, source and
/// fix.
#[must_use]
pub fn rules_text() -> String {
    let mut s = String::new();
    for r in mcp_fuzz_clients::catalogue() {
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
