//! What a run is asked to do: the server, the selection, the cases, and the campaign's
//! shrinking, budgets, parallel jobs and output feeding.

use crate::partition::Partition;
use crate::server::ServerSpec;
use crate::shrink::ShrinkConfig;
use std::time::Duration;

/// Restarts allowed per tool and kind of case (valid, invalid) before the run gives up on it.
///
/// Why: a server that dies on every call would otherwise be restarted once per case; five
/// restarts are enough to see that a crash is systematic.
pub const MAX_RESTARTS_PER_TOOL: u32 = 5;

/// `tools/list` pages read before a listing is called truncated.
///
/// Why: a server whose cursors never end (or never repeat) would otherwise be listed forever;
/// real servers with hundreds of tools use a handful of pages.
pub const MAX_PAGES: usize = 100;

/// Everything a run needs.
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// Where the server is and how long to wait for it.
    pub server: ServerSpec,
    /// The run seed: the same seed makes the same calls.
    pub seed: u64,
    /// Random valid and random invalid cases per tool (each).
    pub cases: usize,
    /// Which tools are called.
    pub selection: Selection,
    /// Shrinking, budgets, parallel jobs and output feeding.
    pub campaign: Campaign,
}

/// Which tools are called.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// Call tools that are not annotated read-only.
    pub include_destructive: bool,
    /// Only tools matching one of these globs (empty: all).
    pub tools: Vec<String>,
    /// Never tools matching one of these globs.
    pub skip_tools: Vec<String>,
    /// Only this shard of the selectable tools (`--partition`); the others are skipped.
    pub partition: Option<Partition>,
}

/// How a campaign searches: shrinking, budgets, parallel server instances, output feeding.
#[derive(Debug, Clone)]
pub struct Campaign {
    /// Shrinking of failing cases.
    pub shrink: ShrinkConfig,
    /// Server instances the cases are spread over (`--jobs`); the report is the same for any.
    pub jobs: usize,
    /// Wall time for the whole run (`--time-budget`); tools not reached are skipped.
    pub time_budget: Option<Duration>,
    /// Wall time per tool (`--tool-time-budget`).
    pub tool_time_budget: Option<Duration>,
    /// Stop after this many failure findings (`--max-failures`).
    pub max_failures: Option<usize>,
    /// Feed values from earlier results into later tools' inputs.
    pub feed: bool,
    /// The sequence phase.
    pub stateful: Stateful,
}

/// The sequence phase: random walks of calls after the single-call phases.
#[derive(Debug, Clone)]
pub struct Stateful {
    /// Run it (`--no-stateful` turns it off).
    pub enabled: bool,
    /// Walks per run (`--sequences`).
    pub sequences: usize,
    /// Steps per walk at most (`--sequence-length`).
    pub length: usize,
}

impl Default for Stateful {
    /// 20 walks of 10 steps, each walk from a fresh process.
    ///
    /// Why: 200 calls and 20 process starts take a second or two on a local server, yet play
    /// each classic pattern (create-read, create-delete-use, altered handle) a few times per
    /// family.
    fn default() -> Self {
        Self { enabled: true, sequences: 20, length: 10 }
    }
}

impl Default for Campaign {
    fn default() -> Self {
        Self {
            shrink: ShrinkConfig::default(),
            jobs: 1,
            time_budget: None,
            tool_time_budget: None,
            max_failures: None,
            feed: true,
            stateful: Stateful::default(),
        }
    }
}
