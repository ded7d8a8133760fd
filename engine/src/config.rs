//! What a run is asked to do: the server, the selection, the cases, the campaign's shrinking,
//! budgets, parallel jobs and output feeding, and what `mcp-fuzz.toml` says per tool (overrides
//! by glob, value hints). [`crate::config_file`] reads the file; this is what it resolves to.

use crate::partition::Partition;
use crate::server::ServerSpec;
use mcp_fuzz_generators::hint::Hint;
use serde::{Deserialize, Deserializer};
use std::borrow::Cow;
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
    /// Per-tool overrides and value hints.
    pub per_tool: PerTool,
}

/// What the config file says per tool.
#[derive(Debug, Clone, Default)]
pub struct PerTool {
    /// Overrides by tool glob; for each setting, the first override that matches and sets it
    /// wins.
    pub overrides: Vec<ToolOverride>,
    /// Value hints, in the file's order (the first of a kind wins for a place).
    pub hints: Vec<ToolHint>,
}

/// Settings for the tools whose name matches a glob (`[[profile.NAME.overrides]]`).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ToolOverride {
    /// The tools it applies to (`*` and `?`).
    pub tools: String,
    /// Never call them.
    pub skip: Option<bool>,
    /// Call them even when they are not annotated read-only.
    pub include_destructive: Option<bool>,
    /// Their per-call timeout.
    #[serde(default, deserialize_with = "optional_seconds")]
    pub timeout: Option<Duration>,
    /// Their random valid and random invalid cases (each).
    pub cases: Option<usize>,
    /// Answers after the timeout are expected: `slow` findings become infos.
    pub expected_slow: Option<bool>,
}

/// A value hint for the tools whose name matches `tools` (every tool when `None`).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolHint {
    /// The tools it applies to.
    pub tools: Option<String>,
    /// The place and its values.
    pub hint: Hint,
}

/// One tool's settings, overrides applied.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSettings {
    /// An override skips it.
    pub skip: bool,
    /// It may be called though not annotated read-only.
    pub include_destructive: bool,
    /// Its per-call timeout.
    pub timeout: Duration,
    /// Its random cases of each kind.
    pub cases: usize,
    /// Its `slow` findings are infos.
    pub expected_slow: bool,
}

impl RunConfig {
    /// The settings of the tool `name`: each from the first override that matches and sets it,
    /// else the run's.
    #[must_use]
    pub fn tool_settings(&self, name: &str) -> ToolSettings {
        let matching: Vec<&ToolOverride> =
            self.per_tool.overrides.iter().filter(|o| glob(&o.tools, name)).collect();
        let first = |f: fn(&ToolOverride) -> Option<bool>| matching.iter().find_map(|o| f(o));
        ToolSettings {
            skip: first(|o| o.skip).unwrap_or(false),
            include_destructive: first(|o| o.include_destructive)
                .unwrap_or(self.selection.include_destructive),
            timeout: matching.iter().find_map(|o| o.timeout).unwrap_or(self.server.timeout),
            cases: matching.iter().find_map(|o| o.cases).unwrap_or(self.cases),
            expected_slow: first(|o| o.expected_slow).unwrap_or(false),
        }
    }

    /// The configuration the campaign of tool `name` runs with: its timeout, cases and
    /// expected-slow applied (borrowed when no override changes them).
    #[must_use]
    pub fn for_tool(&self, name: &str) -> Cow<'_, Self> {
        let s = self.tool_settings(name);
        if s.timeout == self.server.timeout && s.cases == self.cases && !s.expected_slow {
            return Cow::Borrowed(self);
        }
        let mut cfg = self.clone();
        cfg.server.timeout = s.timeout;
        cfg.cases = s.cases;
        cfg.campaign.expected_slow = s.expected_slow;
        Cow::Owned(cfg)
    }

    /// The value hints that apply to tool `name`, in order.
    #[must_use]
    pub fn hints_for(&self, name: &str) -> Vec<Hint> {
        self.per_tool
            .hints
            .iter()
            .filter(|h| h.tools.as_deref().is_none_or(|g| glob(g, name)))
            .map(|h| h.hint.clone())
            .collect()
    }
}

/// A duration as the flags and the config file write it: `90` (seconds), `90s`, `1500ms`, `2m`
/// or `1h`; `None` unless positive and finite.
#[must_use]
pub fn parse_duration(text: &str) -> Option<Duration> {
    let t = text.trim();
    let (number, unit) =
        t.find(|c: char| c.is_ascii_alphabetic()).map_or((t, "s"), |i| t.split_at(i));
    let scale = match unit {
        "ms" => 0.001,
        "s" => 1.0,
        "m" => 60.0,
        "h" => 3600.0,
        _ => return None,
    };
    number
        .trim()
        .parse::<f64>()
        .ok()
        .map(|n| n * scale)
        .filter(|n| n.is_finite() && *n > 0.0)
        .and_then(|n| Duration::try_from_secs_f64(n).ok())
}

/// A `*`/`?` glob match, in time linear in `pattern.len() * name.len()` at worst: on a
/// mismatch only the last `*` is retried, one character further on (a pattern of many `*`s
/// against a long tool name must not backtrack exponentially).
#[must_use]
pub fn glob(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    let (mut pi, mut ni) = (0, 0);
    // The position after the last `*` seen, and the name position it currently covers up to.
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        match p.get(pi) {
            Some('*') => {
                star = Some((pi + 1, ni));
                pi += 1;
            }
            Some(&c) if c == '?' || c == n[ni] => {
                pi += 1;
                ni += 1;
            }
            _ => match star {
                Some((after, covered)) => {
                    pi = after;
                    ni = covered + 1;
                    star = Some((after, covered + 1));
                }
                None => return false,
            },
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

/// A positive duration as the config file writes it: `"90s"`, `"1500ms"`, `"2m"`, `"1h"`, or a
/// number of seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seconds(pub Duration);

impl<'de> Deserialize<'de> for Seconds {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Number(f64),
            Text(String),
        }
        let parsed = match Raw::deserialize(d)? {
            Raw::Number(n) => parse_duration(&n.to_string()),
            Raw::Text(t) => parse_duration(&t),
        };
        parsed.map(Seconds).ok_or_else(|| {
            serde::de::Error::custom(
                "expected a positive duration such as \"90s\", \"1500ms\", \"2m\" or \"1h\" (or a number of seconds)",
            )
        })
    }
}

/// Reads an optional duration (a per-tool override's `timeout`).
fn optional_seconds<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
    Seconds::deserialize(d).map(|s| Some(s.0))
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
    /// This tool's `slow` findings are expected (a per-tool override): infos, not warnings.
    pub expected_slow: bool,
    /// The phases beyond tools: prompts, resources (and templates), protocol conformance.
    pub beyond: Beyond,
}

/// Which phases beyond tools run (each on by default; `--no-prompts`, `--no-resources`,
/// `--no-protocol` turn one off). Completions follow prompts and resources.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Beyond {
    /// `prompts/list` and `prompts/get`.
    pub prompts: bool,
    /// `resources/list`, `resources/templates/list` and `resources/read`.
    pub resources: bool,
    /// The protocol conformance checks.
    pub protocol: bool,
}

impl Default for Beyond {
    fn default() -> Self {
        Self { prompts: true, resources: true, protocol: true }
    }
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
            expected_slow: false,
            beyond: Beyond::default(),
        }
    }
}

/// How shrinking is bounded.
#[derive(Debug, Clone)]
pub struct ShrinkConfig {
    /// Shrink at all (`--no-shrink` turns it off; the re-runs still happen).
    pub enabled: bool,
    /// Time allowed per finding (`--shrink-time`).
    pub time: Duration,
    /// Candidate calls allowed per finding (`--max-shrink-steps`).
    pub max_steps: u32,
    /// Re-runs of the minimal case, to tell flaky failures from deterministic ones.
    pub reruns: u32,
}

impl Default for ShrinkConfig {
    fn default() -> Self {
        Self { enabled: true, time: Duration::from_secs(30), max_steps: 200, reruns: 3 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::{ConnectOptions, Target};

    fn cfg(overrides: Vec<ToolOverride>) -> RunConfig {
        RunConfig {
            server: ServerSpec {
                target: Target::Http {
                    url: "http://x.invalid".into(),
                    headers: Vec::new(),
                    launch: None,
                },
                connect: ConnectOptions {
                    startup_timeout: Duration::from_secs(1),
                    max_response_bytes: 1,
                    max_call_time: Duration::from_secs(20),
                    roots: Vec::new(),
                    client: crate::transport::asks::ClientFeatures::default(),
                    heard: std::sync::Arc::default(),
                    sandbox: None,
                },
                sandboxing: crate::sandbox::SandboxOptions::default(),
                timeout: Duration::from_secs(10),
                spares: std::sync::Arc::default(),
                call_limit: std::sync::Arc::default(),
            },
            seed: 0,
            cases: 10,
            selection: Selection::default(),
            campaign: Campaign::default(),
            per_tool: PerTool { overrides, hints: Vec::new() },
        }
    }

    #[test]
    fn the_first_override_that_sets_a_setting_wins() {
        let c = cfg(vec![
            ToolOverride { tools: "git_log".into(), cases: Some(50), ..ToolOverride::default() },
            ToolOverride {
                tools: "git_*".into(),
                cases: Some(5),
                timeout: Some(Duration::from_secs(30)),
                ..ToolOverride::default()
            },
            ToolOverride { tools: "*".into(), skip: Some(true), ..ToolOverride::default() },
        ]);
        let log = c.tool_settings("git_log");
        assert_eq!((log.cases, log.timeout, log.skip), (50, Duration::from_secs(30), true));
        assert_eq!(c.tool_settings("git_status").cases, 5);
        let other = c.tool_settings("echo");
        assert_eq!((other.cases, other.timeout), (10, Duration::from_secs(10)));
        assert!(matches!(c.for_tool("echo"), Cow::Borrowed(_)));
        let tuned = c.for_tool("git_log");
        assert_eq!((tuned.cases, tuned.server.timeout), (50, Duration::from_secs(30)));
    }

    #[test]
    fn durations() {
        let d = |t| parse_duration(t);
        assert_eq!(d("90"), Some(Duration::from_secs(90)));
        assert_eq!(d("1500ms"), Some(Duration::from_millis(1500)));
        assert_eq!(d(" 2m "), Some(Duration::from_secs(120)));
        assert_eq!(d("0.5"), Some(Duration::from_millis(500)));
        assert_eq!([d("0s"), d("5d"), d("-1"), d("soon"), d("1e400")], [None; 5]);
    }
}
