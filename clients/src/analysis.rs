//! Every adapter on every tool: the rendering, its drift from the advertised schema, and the
//! canaries the drift makes possible. The clients report is built from an [`Analysis`].

use crate::canary::{self, Canaries};
use crate::diff::{self, Comparison};
use crate::{Adapter, Finding, Rendering, Tool, listing_findings, render};

/// One adapter's result for one tool.
#[derive(Debug, Clone)]
pub struct AdapterResult {
    /// What the adapter makes of the tool.
    pub rendering: Rendering,
    /// How the rendering differs from the advertised schema.
    pub comparison: Comparison,
    /// Values the rendering and the server disagree on.
    pub canaries: Canaries,
}

/// The analysis of a listing.
#[derive(Debug, Clone)]
pub struct Analysis {
    /// The adapters applied, in report order.
    pub adapters: Vec<Adapter>,
    /// The tools, in listed order.
    pub tools: Vec<Tool>,
    /// `results[tool][adapter]`, in the orders above.
    pub results: Vec<Vec<AdapterResult>>,
    /// Per adapter, the findings about the whole listing.
    pub listing: Vec<Vec<Finding>>,
}

/// Runs every adapter on every tool; `seed` seeds the canary samples.
#[must_use]
pub fn analyse(tools: Vec<Tool>, adapters: &[Adapter], seed: u64) -> Analysis {
    let results = tools
        .iter()
        .map(|tool| {
            adapters
                .iter()
                .map(|&adapter| {
                    let rendering = render(adapter, tool);
                    let comparison = diff::compare(tool, &rendering);
                    let directions = comparison.canary_directions();
                    let canaries = match &rendering.input {
                        Some(rendered) if !directions.is_empty() => {
                            canary::find_in(tool.input(), rendered, seed, &directions)
                        }
                        _ => Canaries::default(),
                    };
                    AdapterResult { rendering, comparison, canaries }
                })
                .collect()
        })
        .collect();
    let listing = adapters.iter().map(|&a| listing_findings(a, &tools)).collect();
    Analysis { adapters: adapters.to_vec(), tools, results, listing }
}
