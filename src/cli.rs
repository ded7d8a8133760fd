//! Command-line arguments: clap types only, no behaviour.
//!
//! Every subcommand gets one `Args` struct here; what the flags *mean* is resolved in `config.rs`
//! and by the command's own module (`commands/gen.rs` for `gen`).

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::{ArgGroup, Args, Parser, Subcommand, ValueEnum};
use mcp_fuzz_report::Format;
use std::path::PathBuf;

/// Schema-driven fuzzing for MCP servers: values generated from each tool's JSON Schema.
#[derive(Debug, Parser)]
#[command(name = "mcp-fuzz", version, about, long_about = None, propagate_version = true)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands; `run` is the default (see `main.rs`).
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Generate values for a JSON Schema, or for a tool's schema in a saved tools/list answer.
    ///
    /// Prints one JSON object per line on stdout: {"mode":"valid","value":...},
    /// {"mode":"boundary","value":...} or {"mode":"invalid","value":...,"mutation":...,
    /// "pointer":...,"keyword":...}. With --mode all (the default) the order is: every boundary
    /// value, every deterministic mutation, then --count random valid values and --count random
    /// invalid values.
    Gen(GenArgs),

    /// Fuzz a live MCP server (the default command): list its tools, call the read-only ones
    /// with generated arguments, classify every outcome and score its crash resilience.
    ///
    /// Settings come from the flags, then mcp-fuzz.toml (the working directory or a parent; see
    /// --config and --profile), then the defaults. Example: mcp-fuzz --fail-under 90 -- node
    /// server.js, or `mcp-fuzz` alone with a config file that names the server.
    Run(Box<RunArgs>),

    /// Write a commented starter mcp-fuzz.toml for a server: its tools (which are gated and
    /// why), every setting with its default, and hint stubs for the properties whose valid
    /// calls failed in a short probe run of the read-only tools.
    ///
    /// Example: mcp-fuzz init -- node server.js
    Init(InitArgs),

    /// Call one tool once with the given arguments (or get a prompt, read a resource, ask a
    /// completion) and print how it was judged and what the server returned: the replay line of
    /// a finding.
    ///
    /// Prints {"outcome": {"kind": ...}, "result": {...}} (the result as the server sent it,
    /// when it sent one). Exit 1 when the outcome is a failure, 0 otherwise.
    ///
    /// Example: mcp-fuzz call --prompt summarize --args '{"topic":"x"}' -- node server.js
    Call(CallArgs),

    /// Capture a server's complete tools/list as a normalized snapshot (sorted keys, tools sorted
    /// by name), or normalize a saved capture with --normalize FILE.
    ///
    /// Example: mcp-fuzz snapshot --output tools.snapshot.json -- node server.js
    Snapshot(SnapshotArgs),

    /// Compare two snapshots (or captures): may clients of OLD break against NEW?
    ///
    /// Inputs: every argument the old inputSchema accepted must still be accepted. Outputs: every
    /// structuredContent the new outputSchema allows must fit the old one. Each tool and
    /// direction is compatible (proved), breaking (a shrunk witness), review or unknown.
    /// Exit 0 when the --fail-on policy passes, 1 when it fails, 2 for bad input.
    Diff(DiffArgs),

    /// Work with saved run reports (`report merge`).
    #[command(subcommand)]
    Report(ReportCommand),

    /// Show how model providers and MCP clients render each tool: what they reject, what they
    /// silently drop, and canary values on which the rendering and the server disagree.
    ///
    /// Example: mcp-fuzz clients --tools capture.json --adapter openai-strict --format json
    Clients(ClientsArgs),

    /// Re-run a case file written by `run --artifacts`: exit 1 if its minimal arguments still
    /// fail, 0 if they now pass. By default against the recorded server command.
    ///
    /// Example: mcp-fuzz replay cases/search-exited-valid-1a2b3c4d.json -- ./server
    Replay(ReplayArgs),

    /// Internal: serve a saved listing over stdio (the stand-in `clients` points a real client at
    /// when there is no server command, and for bisection).
    #[command(name = "serve-listing", hide = true)]
    ServeListing(ServeListingArgs),
}

/// Arguments of the hidden `mcp-fuzz serve-listing`.
#[derive(Debug, Args)]
pub struct ServeListingArgs {
    /// A `{"tools": [...]}` file.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
}

/// Arguments of `mcp-fuzz snapshot`.
#[derive(Debug, Args)]
pub struct SnapshotArgs {
    #[command(flatten)]
    pub target: TargetArgs,

    /// Normalize a saved capture (a snapshot, {"tools": [...]}, a JSON-RPC response, an array of
    /// tools...) instead of asking a server; `-` reads standard input.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["command", "http"], help_heading = "Input")]
    pub normalize: Option<PathBuf>,

    /// Write the snapshot to FILE (atomically) instead of standard output.
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    pub output: Option<PathBuf>,
}

/// Arguments of `mcp-fuzz diff`.
#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The old snapshot or capture.
    #[arg(value_name = "OLD", required_unless_present = "list_rules")]
    pub old: Option<PathBuf>,

    /// The new snapshot or capture.
    #[arg(value_name = "NEW", required_unless_present = "list_rules")]
    pub new: Option<PathBuf>,

    /// Verdicts that fail the diff (exit 1), comma-separated.
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        value_name = "VERDICTS",
        default_value = "breaking,unknown",
        help_heading = "Policy"
    )]
    pub fail_on: Vec<FailOn>,

    /// How a break that needs a property the old schema never declared counts: as review (the
    /// default) or as breaking (strict).
    #[arg(long, value_enum, value_name = "MODE", default_value_t = OpenContentMode::Review, help_heading = "Policy")]
    pub open_content: OpenContentMode,

    /// Candidate values tried per tool and direction when no proof is found.
    #[arg(long, value_name = "N", default_value_t = 300, help_heading = "Search")]
    pub max_candidates: usize,

    /// Time for the whole diff (`10s`, `2m`); what is left undecided when it runs out is
    /// unknown.
    #[arg(long, value_name = "DURATION", default_value = "10s", help_heading = "Search")]
    pub time_budget: String,

    /// Seed of the random candidates: the same seed gives the same witnesses.
    #[arg(long, value_name = "SEED", default_value_t = 0, help_heading = "Search")]
    pub seed: u64,

    /// Output format.
    #[arg(long, value_name = "FORMAT", value_parser = formats(DIFF_FORMATS), default_value = "human", help_heading = "Output")]
    pub format: Format,

    /// Also write the report, in --format, to FILE (atomically).
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    pub output: Option<PathBuf>,

    /// Print the catalogue of change ids with their levels and exit.
    #[arg(long, conflicts_with_all = ["old", "new"])]
    pub list_rules: bool,
}

/// A verdict that can fail `diff`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FailOn {
    /// A witness shows old clients break (or a tool was removed).
    Breaking,
    /// Neither proved nor shown broken.
    Unknown,
    /// Behaviour, documentation or open-content changes.
    Review,
}

/// How open-content witnesses count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OpenContentMode {
    /// As review.
    Review,
    /// As breaking.
    Strict,
}

/// What each format of `diff` holds.
const DIFF_FORMATS: [&str; 5] = [
    "A summary for people.",
    "One JSON document (`diffVersion` 1, docs/diff.schema.json).",
    "JUnit XML: one test case per tool and direction.",
    "SARIF 2.1.0: one result per entry that is not compatible.",
    "A Markdown table, e.g. for a pull-request comment.",
];

/// `mcp-fuzz report ...`.
#[derive(Debug, Subcommand)]
pub enum ReportCommand {
    /// Merge the JSON reports of shards (`run --partition`) into one report and one score.
    ///
    /// Exits like `run` would have for the whole server: 1 on findings (or below --fail-under),
    /// 4 when no shard tested a tool, 2 when the reports come from different runs.
    Merge(MergeArgs),
}

/// Arguments of `mcp-fuzz report merge`.
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The shard reports (`run --format json` / `--output`), from the same run (seed, server).
    #[arg(value_name = "REPORT", required = true)]
    pub reports: Vec<PathBuf>,

    /// Exit 1 when the merged crash-resilience score is below P percent.
    #[arg(long, value_name = "P", help_heading = "Policy")]
    pub fail_under: Option<f64>,

    #[command(flatten)]
    pub output: OutputArgs,
}

/// What each format of a run report holds (`run`, `report merge`, `clients`).
const REPORT_FORMATS: [&str; 5] = [
    "The one-screen summary (stdout only).",
    "The versioned JSON report (docs/report.schema.json); file report.json.",
    "JUnit XML, one test case per tool and check; file report.junit.xml.",
    "SARIF 2.1.0 with stable rule ids; file report.sarif.",
    "Markdown for a PR comment or job summary; file report.md.",
];

/// `--format`'s values: every [`Format`], each with what it holds for this command (`help`, in
/// the order of [`Format::ALL`]).
fn formats(help: [&'static str; 5]) -> impl TypedValueParser<Value = Format> {
    let values =
        Format::ALL.into_iter().zip(help).map(|(f, h)| PossibleValue::new(f.as_str()).help(h));
    PossibleValuesParser::new(values).map(|name| name.parse::<Format>().expect("a listed format"))
}

/// Where reports go (shared by `run` and `report merge`).
#[derive(Debug, Args)]
pub struct OutputArgs {
    /// Report format (repeatable or comma-separated). More than one needs --output-dir.
    #[arg(long, value_name = "FORMAT", value_delimiter = ',', value_parser = formats(REPORT_FORMATS), help_heading = "Output")]
    pub format: Vec<Format>,

    /// Same as --format json.
    #[arg(long, help_heading = "Output")]
    pub json: bool,

    /// Write each format to DIR (report.json, report.junit.xml, report.sarif, report.md),
    /// atomically; `human` still goes to stdout. Without --format: human on stdout and all four
    /// files.
    #[arg(long, value_name = "DIR", help_heading = "Output")]
    pub output_dir: Option<PathBuf>,

    /// Also write the JSON report to FILE (atomically).
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    pub output: Option<PathBuf>,
}

/// How to reach the server (shared by `run` and `call`).
#[derive(Debug, Args)]
pub struct TargetArgs {
    /// Reach the server over streamable HTTP at URL. With a command after `--`, mcp-fuzz
    /// starts (and restarts) that command and waits for the URL; `{port}` in the URL, the
    /// command or an --env value is a free loopback port per process, also passed as PORT.
    #[arg(long, value_name = "URL", help_heading = "Server")]
    pub http: Option<String>,

    /// Extra HTTP header `Name: value` (repeatable); values never appear in any output.
    #[arg(long = "header", value_name = "HEADER", requires = "http", help_heading = "Server")]
    pub headers: Vec<String>,

    /// Extra environment variable KEY=VALUE for the server (repeatable).
    #[arg(long = "env", value_name = "KEY=VALUE", help_heading = "Server")]
    pub env: Vec<String>,

    /// Give the server this process's whole environment instead of a minimal one (PATH, HOME,
    /// USER, LANG, LC_*, TMPDIR, TERM).
    #[arg(long, help_heading = "Server")]
    pub inherit_env: bool,

    /// Working directory of the server.
    #[arg(long, value_name = "DIR", help_heading = "Server")]
    pub cwd: Option<PathBuf>,

    /// Time allowed for start-up and the initialize handshake (default `30s`; a plain number is
    /// seconds).
    #[arg(long, value_name = "DURATION", help_heading = "Server")]
    pub startup_timeout: Option<String>,

    /// Time allowed per call (default `10s`; `1500ms`; a plain number is seconds).
    #[arg(long, value_name = "DURATION", help_heading = "Server")]
    pub timeout: Option<String>,

    /// Longest a call may take (`60s`; default twice `--timeout`): progress notifications extend
    /// `--timeout` up to this, and a call past `--timeout` is watched until this for a late
    /// answer (`slow`, not `hang`).
    #[arg(long, value_name = "DURATION", help_heading = "Server")]
    pub max_call_time: Option<String>,

    /// Largest response accepted, in bytes (default 16777216); larger ones are dropped and
    /// reported as oversize.
    #[arg(long, value_name = "BYTES", help_heading = "Server")]
    pub max_response_bytes: Option<usize>,

    /// Declare the `roots` client capability and answer `roots/list` with this directory
    /// (repeat for more). Off by default: a root may widen what a server allows (server-filesystem
    /// replaces its allowed directories with the client's roots).
    #[arg(long = "roots", value_name = "DIR", help_heading = "Server")]
    pub roots: Vec<PathBuf>,

    /// Run the server where it is told, with your HOME and TMPDIR, instead of in a throwaway
    /// sandbox. Without the sandbox, a tool that writes (even one annotated read-only) writes
    /// your files, and what tools write is not checked against their annotations.
    #[arg(long = "no-sandbox", help_heading = "Server")]
    pub no_sandbox: bool,

    /// Keep the sandbox directory after the run; its path is printed.
    #[arg(long = "keep-sandbox", help_heading = "Server", conflicts_with = "no_sandbox")]
    pub keep_sandbox: bool,

    /// Copy DIR into the sandbox's working directory before the server starts (DIR itself is
    /// never touched); `{sandbox}` in the server command is that directory.
    #[arg(
        long = "sandbox-from",
        value_name = "DIR",
        help_heading = "Server",
        conflicts_with = "no_sandbox"
    )]
    pub sandbox_from: Option<PathBuf>,

    /// Declare these client capabilities too (`sampling`, `elicitation`; comma-separated), so
    /// that the server's paths behind them are fuzzed: sampling is answered with a fixed text,
    /// elicitation as --elicit says. Off by default.
    #[arg(long, value_name = "LIST", value_delimiter = ',', help_heading = "Server")]
    pub client_capabilities: Vec<String>,

    /// How an elicitation is answered: `decline` (default), `cancel`, or `accept` with content
    /// generated from the requested schema.
    #[arg(long, value_name = "ACTION", help_heading = "Server")]
    pub elicit: Option<String>,

    /// The server command and its arguments, after `--`.
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

/// Arguments of `mcp-fuzz init`.
#[derive(Debug, Args)]
pub struct InitArgs {
    #[command(flatten)]
    pub target: TargetArgs,

    /// The file to write.
    #[arg(long, value_name = "FILE", default_value = "mcp-fuzz.toml", help_heading = "Output")]
    pub output: PathBuf,

    /// Overwrite the file if it exists.
    #[arg(long, help_heading = "Output")]
    pub force: bool,
}

/// Arguments of `mcp-fuzz run`. A flag that is not given takes its value from the config file.
#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub target: TargetArgs,

    /// Read the settings from FILE instead of the mcp-fuzz.toml found in the working directory
    /// or its parents.
    #[arg(long, value_name = "FILE", help_heading = "Configuration")]
    pub config: Option<PathBuf>,

    /// The profile of the config file to use (`default`; `ci` writes every report to
    /// mcp-fuzz-report/).
    #[arg(long, value_name = "NAME", help_heading = "Configuration")]
    pub profile: Option<String>,

    /// Exit 1 when the crash-resilience score is below P percent.
    #[arg(long, value_name = "P", help_heading = "Policy")]
    pub fail_under: Option<f64>,

    /// No progress on stderr (else a bar on a terminal, otherwise a line per tool done and
    /// one every 10 s in a long tool).
    #[arg(long, short = 'q', help_heading = "Output")]
    pub quiet: bool,

    /// Also call tools that are not annotated readOnlyHint: true.
    #[arg(long, help_heading = "Selection")]
    pub include_destructive: bool,

    /// Only call tools whose name matches GLOB (repeatable; `*` and `?`).
    #[arg(long = "tool", value_name = "GLOB", help_heading = "Selection")]
    pub tools: Vec<String>,

    /// Never call tools whose name matches GLOB (repeatable).
    #[arg(long = "skip-tool", value_name = "GLOB", help_heading = "Selection")]
    pub skip_tools: Vec<String>,

    /// Random valid and random invalid cases per tool (each; default 10), after the
    /// deterministic ones.
    #[arg(long, value_name = "N", help_heading = "Generation")]
    pub cases: Option<usize>,

    /// Seed of the whole run (default 0): the same seed makes the same calls.
    #[arg(long, value_name = "SEED", help_heading = "Generation")]
    pub seed: Option<u64>,

    #[command(flatten)]
    pub output: OutputArgs,

    /// Findings listed in FILE (see README: Baseline) do not fail the run; listed findings that
    /// no longer occur are reported as stale.
    #[arg(long, value_name = "FILE", help_heading = "Policy")]
    pub baseline: Option<PathBuf>,

    /// Rewrite the --baseline file with this run's findings (atomically; left untouched when the
    /// run does not complete).
    #[arg(long, help_heading = "Policy")]
    pub update_baseline: bool,

    /// Run only a deterministic share of the tools: hash:M/N (by tool name) or count:M/N
    /// (round-robin over the selectable tools). Merge the shards with `mcp-fuzz report merge`.
    #[arg(long, value_name = "SCHEME:M/N", help_heading = "Selection")]
    pub partition: Option<mcp_fuzz_engine::partition::Partition>,

    /// Write one case file per failure finding into DIR (JSON, see docs/case.schema.json); replay
    /// one with `mcp-fuzz replay FILE`.
    #[arg(long, value_name = "DIR", help_heading = "Output")]
    pub artifacts: Option<PathBuf>,

    /// Do not shrink failing cases (the minimal case is then the original; it is still re-run to
    /// tell flaky failures apart).
    #[arg(long, help_heading = "Shrinking")]
    pub no_shrink: bool,

    /// Time allowed to shrink each failure (default `30s`).
    #[arg(long, value_name = "DURATION", help_heading = "Shrinking")]
    pub shrink_time: Option<String>,

    /// Candidate calls allowed to shrink each failure (default 200).
    #[arg(long, value_name = "N", help_heading = "Shrinking")]
    pub max_shrink_steps: Option<u32>,

    /// Stop the whole run after DURATION (e.g. `60s`, `10m`); tools not reached are skipped.
    #[arg(long, value_name = "DURATION", help_heading = "Budgets")]
    pub time_budget: Option<String>,

    /// Stop calling a tool after DURATION.
    #[arg(long, value_name = "DURATION", help_heading = "Budgets")]
    pub tool_time_budget: Option<String>,

    /// Stop the run after N failure findings.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..), help_heading = "Budgets")]
    pub max_failures: Option<u64>,

    /// Server instances to spread the cases over (default 1); the report is the same for any N.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=64), help_heading = "Generation")]
    pub jobs: Option<u64>,

    /// Do not feed values from earlier results (ids, cursors, paths) into later tools' inputs.
    #[arg(long, help_heading = "Generation")]
    pub no_feed: bool,

    /// Skip the sequence phase (random walks of calls over the tools, each from a fresh server
    /// process, that look for bugs in server state).
    #[arg(long, help_heading = "Sequences")]
    pub no_stateful: bool,

    /// Skip the prompts phase (prompts/list, prompts/get with generated arguments,
    /// completions of prompt arguments).
    #[arg(long, help_heading = "Beyond tools")]
    pub no_prompts: bool,

    /// Skip the resources phase (resources/list and reads, templates expanded with generated
    /// values, completions of template variables).
    #[arg(long, help_heading = "Beyond tools")]
    pub no_resources: bool,

    /// Skip the protocol conformance phase (well-formed but wrong requests, on a separate
    /// server process; its own score, never the crash-resilience score).
    #[arg(long, help_heading = "Beyond tools")]
    pub no_protocol: bool,

    /// Walks the sequence phase makes (default 20).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=10_000), help_heading = "Sequences")]
    pub sequences: Option<u64>,

    /// Calls per walk, at most (default 10).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1_000), help_heading = "Sequences")]
    pub sequence_length: Option<u64>,
}

/// Arguments of `mcp-fuzz replay`.
#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// The case file (written by `mcp-fuzz run --artifacts DIR`).
    #[arg(value_name = "CASE.json")]
    pub case: PathBuf,

    #[command(flatten)]
    pub target: TargetArgs,
}

/// Arguments of `mcp-fuzz call`.
#[derive(Debug, Args)]
pub struct CallArgs {
    #[command(flatten)]
    pub target: TargetArgs,

    /// The tool to call.
    #[arg(long, value_name = "NAME", required_unless_present_any = ["prompt", "resource", "complete"], conflicts_with_all = ["prompt", "resource", "complete"])]
    pub tool: Option<String>,

    /// Get this prompt instead (`prompts/get`, with --args as its arguments).
    #[arg(long, value_name = "NAME", conflicts_with_all = ["resource", "complete"])]
    pub prompt: Option<String>,

    /// Read this resource instead (`resources/read`).
    #[arg(long, value_name = "URI", conflicts_with_all = ["complete", "arguments"])]
    pub resource: Option<String>,

    /// Send `completion/complete` with these params instead (a JSON object with `ref` and
    /// `argument`).
    #[arg(long, value_name = "JSON", conflicts_with = "arguments")]
    pub complete: Option<String>,

    /// The arguments of the tool or prompt, as a JSON object (a tool's default: `{}`; a
    /// prompt's: no `arguments` at all).
    #[arg(long = "args", value_name = "JSON")]
    pub arguments: Option<String>,
}

/// Arguments of `mcp-fuzz clients`.
#[derive(Debug, Args)]
pub struct ClientsArgs {
    #[command(flatten)]
    pub target: TargetArgs,

    /// Read a saved tools/list answer from FILE (`-` reads standard input) instead of starting a
    /// server; every shape `gen --tools` accepts.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["http", "command"], help_heading = "Input")]
    pub tools: Option<PathBuf>,

    /// Read one JSON Schema from FILE (`-` reads standard input) and treat it as the inputSchema
    /// of one tool named after the file stem (`search.json` -> `search`).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["http", "command", "tools", "call"], help_heading = "Input")]
    pub schema: Option<PathBuf>,

    /// Only these adapters (repeatable or comma-separated); default: the six modelled ones
    /// (`anthropic-strict-api`, strict tool use sent to the Messages API directly, only when named).
    /// The real clients (`inspector`, `mcpo`, `codex-cli`, `claude-code`, `gemini-cli`, or
    /// `real` for all five) run only when named: each is started against the server, offline.
    #[arg(
        long = "adapter",
        value_enum,
        value_name = "NAME",
        value_delimiter = ',',
        help_heading = "Adapters"
    )]
    pub adapters: Vec<AdapterName>,

    /// Look for the real clients in DIR first (as laid out by scripts/install-clients.sh), then
    /// in $MCP_FUZZ_CLIENTS_DIR, target/clients and PATH.
    #[arg(long, value_name = "DIR", help_heading = "Real clients")]
    pub clients_dir: Option<PathBuf>,

    /// Run a real client only at its pinned version (the one the README's tables describe);
    /// another version found is reported as `wrong-version` and not run.
    #[arg(long, help_heading = "Real clients")]
    pub pin: bool,

    /// Time allowed for one run of a real client (`60s`; a plain number is seconds).
    #[arg(long, value_name = "DURATION", default_value = "60s", help_heading = "Real clients")]
    pub client_timeout: String,

    /// Print the rule catalogue (id, severity, source, fix) and exit.
    #[arg(long, help_heading = "Adapters")]
    pub list_rules: bool,

    /// Send each canary the rendering allows and the server's schema rejects to the live server,
    /// and report whether it answers gracefully (tool error, invalid params) or fails; a failure
    /// counts as a fail finding.
    #[arg(long, conflicts_with = "tools", help_heading = "Canaries")]
    pub call: bool,

    /// With --call, also call tools that are not annotated readOnlyHint: true.
    #[arg(long, requires = "call", help_heading = "Canaries")]
    pub include_destructive: bool,

    /// Seed of the random samples behind the canaries.
    #[arg(long, value_name = "SEED", default_value_t = 0, help_heading = "Canaries")]
    pub seed: u64,

    /// The lowest severity that fails (exit 1): `fail`, or `warn` (fail and warn). Ambiguous
    /// findings never fail.
    #[arg(long, value_enum, value_name = "SEVERITY", default_value_t = ClientsFailOn::Fail, help_heading = "Policy")]
    pub fail_on: ClientsFailOn,

    /// Findings listed in FILE (adapter, rule, tool, pointer; see README: Baseline) do not fail
    /// the run; listed findings that no longer occur are reported as stale.
    #[arg(long, value_name = "FILE", help_heading = "Policy")]
    pub baseline: Option<PathBuf>,

    /// Rewrite the --baseline file with this run's fail and warn findings (atomically; left
    /// untouched when the command does not complete).
    #[arg(long, requires = "baseline", help_heading = "Policy")]
    pub update_baseline: bool,

    #[command(flatten)]
    pub output: OutputArgs,
}

/// The lowest severity that fails `clients`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ClientsFailOn {
    /// Only `fail` findings (the request or the listing is rejected).
    Fail,
    /// `fail` and `warn` findings (silently dropped constraints too).
    Warn,
}

/// An adapter of `clients`: a modelled rendering or a real client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AdapterName {
    /// OpenAI strict function calling.
    OpenaiStrict,
    /// Anthropic Messages API tool use.
    Anthropic,
    /// Anthropic strict tool use, as the SDKs send it (unsupported constraints stripped).
    AnthropicStrict,
    /// Anthropic strict tool use sent to the Messages API directly (they are refused).
    AnthropicStrictApi,
    /// Gemini function declarations.
    Gemini,
    /// MCP-to-OpenAPI proxy (mcpo-style).
    Openapi,
    /// The MCP tool definition against real SDK clients.
    Mcp,
    /// Real client: MCP Inspector CLI (tools/list in CLI mode).
    Inspector,
    /// Real client: the mcpo proxy (its /openapi.json, on 127.0.0.1).
    Mcpo,
    /// Real client: OpenAI Codex CLI (its Responses API request).
    CodexCli,
    /// Real client: Anthropic Claude Code (its Messages API request).
    ClaudeCode,
    /// Real client: Google Gemini CLI (its streamGenerateContent request).
    GeminiCli,
    /// All five real clients.
    Real,
}

/// Arguments of `mcp-fuzz gen`.
#[derive(Debug, Args)]
#[command(group(ArgGroup::new("input").required(true).args(["schema", "tools"])))]
pub struct GenArgs {
    /// Read the JSON Schema from FILE (`-` reads standard input).
    #[arg(long, value_name = "FILE", help_heading = "Input")]
    pub schema: Option<PathBuf>,

    /// Read a saved tools/list answer from FILE (`-` reads standard input).
    ///
    /// Accepted shapes: {"tools": [...]} (extra keys allowed), a JSON-RPC response
    /// {"jsonrpc": "2.0", "id": ..., "result": {"tools": [...]}}, an array of tools, an array of
    /// such pages, a single tool object, or a JSON Lines transcript of a session.
    #[arg(long, value_name = "FILE", help_heading = "Input")]
    pub tools: Option<PathBuf>,

    /// The tool whose schema to use; required when the capture lists more than one tool.
    // `conflicts_with`, not `requires = "tools"`: clap waives a requirement that conflicts with a
    // present argument, and `tools` conflicts with `schema` through the group.
    #[arg(long, value_name = "NAME", conflicts_with = "schema", help_heading = "Input")]
    pub tool: Option<String>,

    /// Use the tool's outputSchema instead of its inputSchema.
    #[arg(long, conflicts_with = "schema", help_heading = "Input")]
    pub output_schema: bool,

    /// What to generate.
    #[arg(long, value_enum, value_name = "MODE", default_value_t = Mode::All, help_heading = "Generation")]
    pub mode: Mode,

    /// How many random values of each kind (valid, invalid) to draw; boundary values and
    /// deterministic mutations are always printed in full.
    #[arg(long, value_name = "N", default_value_t = 10, help_heading = "Generation")]
    pub count: usize,

    /// Seed of the random values: the same seed prints the same values.
    #[arg(long, value_name = "SEED", default_value_t = 0, help_heading = "Generation")]
    pub seed: u64,
}

/// What `gen` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Mode {
    /// --count random valid values.
    Valid,
    /// Every deterministic mutation, then --count random labelled invalid values.
    Invalid,
    /// Every deterministic boundary value (all valid); --count is ignored.
    Boundary,
    /// Boundary values, mutations, then --count random valid and --count random invalid values.
    All,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory as _;

    #[test]
    fn clap_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn gen_defaults() {
        let cli = Cli::try_parse_from(["mcp-fuzz", "gen", "--schema", "s.json"]).expect("parses");
        let Command::Gen(args) = cli.command else { panic!("gen parses as gen") };
        assert_eq!(args.mode, Mode::All);
        assert_eq!(args.count, 10);
        assert_eq!(args.seed, 0);
        assert!(!args.output_schema);
    }

    #[test]
    fn run_takes_the_server_command_after_the_separator() {
        let cli = Cli::try_parse_from([
            "mcp-fuzz",
            "run",
            "--fail-under",
            "90",
            "--",
            "node",
            "server.js",
            "--flag",
        ])
        .expect("parses");
        let Command::Run(args) = cli.command else { panic!("run parses as run") };
        assert_eq!(args.fail_under, Some(90.0));
        assert_eq!(args.target.command, ["node", "server.js", "--flag"]);
        assert_eq!(args.cases, None, "the default comes from the config file's layers");
    }

    #[test]
    fn diff_defaults_and_list_rules() {
        let cli = Cli::try_parse_from(["mcp-fuzz", "diff", "a.json", "b.json"]).expect("parses");
        let Command::Diff(args) = cli.command else { panic!("diff parses as diff") };
        assert_eq!(args.fail_on, [FailOn::Breaking, FailOn::Unknown]);
        assert_eq!(args.format, Format::Human);
        assert!(Cli::try_parse_from(["mcp-fuzz", "diff", "a.json"]).is_err());
        assert!(Cli::try_parse_from(["mcp-fuzz", "diff", "--list-rules"]).is_ok());
        let cli = Cli::try_parse_from(["mcp-fuzz", "diff", "a", "b", "--fail-on", "review"])
            .expect("parses");
        let Command::Diff(args) = cli.command else { panic!("diff parses as diff") };
        assert_eq!(args.fail_on, [FailOn::Review]);
        assert!(
            Cli::try_parse_from(["mcp-fuzz", "snapshot", "--normalize", "x", "--", "node"])
                .is_err()
        );
    }

    #[test]
    fn clients_takes_a_capture_or_a_server_and_adapter_lists() {
        let cli = Cli::try_parse_from([
            "mcp-fuzz",
            "clients",
            "--tools",
            "t.json",
            "--adapter",
            "gemini,openapi",
            "--adapter",
            "mcp",
        ])
        .expect("parses");
        let Command::Clients(args) = cli.command else { panic!("clients parses as clients") };
        assert_eq!(args.adapters, [AdapterName::Gemini, AdapterName::Openapi, AdapterName::Mcp]);
        assert!(args.output.format.is_empty());
        assert_eq!(args.fail_on, ClientsFailOn::Fail);
        let cli = Cli::try_parse_from([
            "mcp-fuzz",
            "clients",
            "--schema",
            "s.json",
            "--format",
            "sarif,junit",
            "--fail-on",
            "warn",
            "--output-dir",
            "out",
        ])
        .expect("parses");
        let Command::Clients(args) = cli.command else { panic!("clients parses as clients") };
        assert_eq!(args.output.format, [Format::Sarif, Format::Junit]);
        assert_eq!(args.fail_on, ClientsFailOn::Warn);
        assert!(
            Cli::try_parse_from(["mcp-fuzz", "clients", "--schema", "a", "--tools", "b"]).is_err()
        );
        assert!(
            Cli::try_parse_from(["mcp-fuzz", "clients", "--tools", "a", "--update-baseline"])
                .is_err()
        );
        assert!(
            Cli::try_parse_from(["mcp-fuzz", "clients", "--tools", "t.json", "--", "node", "s.js"])
                .is_err()
        );
        assert!(Cli::try_parse_from(["mcp-fuzz", "clients", "--adapter", "nope"]).is_err());
    }

    #[test]
    fn gen_needs_exactly_one_input() {
        assert!(Cli::try_parse_from(["mcp-fuzz", "gen"]).is_err());
        assert!(Cli::try_parse_from(["mcp-fuzz", "gen", "--schema", "a", "--tools", "b"]).is_err());
        assert!(Cli::try_parse_from(["mcp-fuzz", "gen", "--schema", "a", "--tool", "x"]).is_err());
        assert!(
            Cli::try_parse_from(["mcp-fuzz", "gen", "--schema", "a", "--output-schema"]).is_err()
        );
        assert!(Cli::try_parse_from(["mcp-fuzz", "gen", "--tool", "x"]).is_err());
        assert!(Cli::try_parse_from(["mcp-fuzz", "gen", "--tools", "b", "--tool", "x"]).is_ok());
    }
}
