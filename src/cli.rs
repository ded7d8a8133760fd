//! Command-line arguments: clap types only, no behaviour.
//!
//! Every subcommand gets one `Args` struct here; what the flags *mean* is resolved by the command's
//! own module (`gen.rs` for `gen`).

use clap::{ArgGroup, Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// Schema-driven fuzzing for MCP servers: values generated from each tool's JSON Schema.
#[derive(Debug, Parser)]
#[command(name = "mcp-fuzz", version, about, long_about = None, propagate_version = true)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
///
/// Planned: `run` (fuzz a live server), `diff` (compare two versions of a server), `clients`
/// (client rendering checks).
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
        let Command::Gen(args) = cli.command;
        assert_eq!(args.mode, Mode::All);
        assert_eq!(args.count, 10);
        assert_eq!(args.seed, 0);
        assert!(!args.output_schema);
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
