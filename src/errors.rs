//! The binary's typed errors: each knows its exit code, and says what was wrong and what to do.
//!
//! Commands return `anyhow::Result`; `main` finds a [`CliError`] in the chain to pick the exit
//! code (any other error is a usage or input error).

use crate::exit_code;
use mcp_fuzz_compat::capture::ToolsListError;
use mcp_fuzz_generators::SchemaError;
use std::io;

/// An error of a command, with enough context to act on it.
///
/// Messages embed their cause instead of exposing it as `source()`, so `{:#}` prints it once.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// A file (or standard input) could not be read.
    #[error("failed to read {origin}: {error}; check that the path exists and is readable")]
    Read {
        /// The file, as shown to the user.
        origin: String,
        /// What the OS said.
        error: io::Error,
    },

    /// The `--schema` input is not JSON.
    #[error(
        "failed to parse {origin} as JSON: {error}; --schema expects one JSON Schema document (an \
         object or a boolean)"
    )]
    SchemaJson {
        /// The file, as shown to the user.
        origin: String,
        /// Where the JSON is broken.
        error: serde_json::Error,
    },

    /// The `--schema` input is a tools/list capture or a tool, not a schema.
    #[error(
        "{origin} holds {what}, not a JSON Schema; pass it with --tools FILE instead of --schema"
    )]
    SchemaIsCapture {
        /// The file, as shown to the user.
        origin: String,
        /// "a tools/list capture", "a tool".
        what: &'static str,
    },

    /// The `--tools` input is not a capture this tool can read.
    #[error(
        "failed to read a tools/list capture from {origin}: {error}; --tools expects the answer to \
         a tools/list request ({{\"tools\": [...]}} or a JSON-RPC response with result.tools), an \
         array of tools, or a single tool"
    )]
    Capture {
        /// The file, as shown to the user.
        origin: String,
        /// What is wrong with it.
        error: ToolsListError,
    },

    /// The capture lists no tools.
    #[error("{origin} lists no tools; capture tools/list from a server that offers tools")]
    NoTools {
        /// The file, as shown to the user.
        origin: String,
    },

    /// `--tool` names a tool the capture does not list.
    #[error("{origin} has no tool named `{name}`; available: {available}")]
    UnknownTool {
        /// The file, as shown to the user.
        origin: String,
        /// The name asked for.
        name: String,
        /// The names listed, formatted.
        available: String,
    },

    /// The capture lists several tools and `--tool` was not given.
    #[error("{origin} lists {count} tools; choose one with --tool NAME: {available}")]
    ToolRequired {
        /// The file, as shown to the user.
        origin: String,
        /// How many tools it lists.
        count: usize,
        /// The names listed, formatted.
        available: String,
    },

    /// The selected tool lacks the schema asked for.
    #[error("tool `{tool}` in {origin} has no {which}{hint}")]
    MissingSchema {
        /// The tool's name.
        tool: String,
        /// The file, as shown to the user.
        origin: String,
        /// `inputSchema` or `outputSchema`.
        which: &'static str,
        /// What to do, starting with "; ", or empty.
        hint: &'static str,
    },

    /// A usage error found after parsing (a bad `--env`, `--header`, no server command...).
    #[error("{0}")]
    Usage(String),

    /// A config file that cannot be used (its line and key named).
    #[error(transparent)]
    Config(#[from] mcp_fuzz_engine::config_file::ConfigError),

    /// The sandbox could not be made (or `{sandbox}` was used without it).
    #[error(transparent)]
    Sandbox(#[from] mcp_fuzz_engine::sandbox::SandboxError),

    /// Ctrl-C: the run was stopped and the server's process group killed.
    #[error("interrupted: the run was stopped and the server killed; no report was written")]
    Interrupted,

    /// SIGTERM: the run was stopped and the server's process group killed.
    #[error("terminated: the run was stopped and the server killed; no report was written")]
    Terminated,

    /// The server could not be started or initialised.
    #[error("the server could not be started: {0}")]
    ServerStart(String),

    /// The generators cannot honour the schema (unsatisfiable, unsupported, malformed...).
    #[error(
        "cannot generate for {} in {origin}: {}",
        describe_pointer(&.error.pointer),
        .error.kind
    )]
    CannotGenerate {
        /// The schema, as shown to the user (a file, or a tool's schema in a file).
        origin: String,
        /// What the generators said.
        error: SchemaError,
    },
}

impl CliError {
    /// The process exit code for this error; see [`crate::exit_code`].
    pub fn exit_code(&self) -> u8 {
        match self {
            Self::Read { .. }
            | Self::SchemaJson { .. }
            | Self::SchemaIsCapture { .. }
            | Self::Capture { .. }
            | Self::ToolRequired { .. }
            | Self::MissingSchema { .. }
            | Self::Usage(_)
            | Self::Sandbox(_)
            | Self::Config(_) => exit_code::USAGE,
            Self::ServerStart(_) => exit_code::SERVER_START,
            Self::Interrupted => exit_code::INTERRUPTED,
            Self::Terminated => exit_code::TERMINATED,
            Self::NoTools { .. } | Self::UnknownTool { .. } => exit_code::NO_TOOLS,
            Self::CannotGenerate { .. } => exit_code::UNSATISFIABLE_SCHEMA,
        }
    }
}

/// The exit code for an error returned by a command.
pub fn exit_code_for(error: &anyhow::Error) -> u8 {
    error
        .chain()
        .find_map(|cause| cause.downcast_ref::<CliError>())
        .map_or(exit_code::USAGE, CliError::exit_code)
}

/// Whether the error is a closed stdout pipe (`mcp-fuzz gen ... | head`), which is not a failure.
pub fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause.downcast_ref::<io::Error>().is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
    })
}

/// Same wording as [`SchemaError`]'s `Display`: "schema pointer `/x`" or "the schema root".
fn describe_pointer(pointer: &str) -> String {
    if pointer.is_empty() {
        "the schema root".to_owned()
    } else {
        format!("schema pointer `{pointer}`")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_fuzz_generators::SchemaErrorKind;

    #[test]
    fn exit_codes_follow_the_table() {
        let no_tools = CliError::NoTools { origin: "`x`".to_owned() };
        assert_eq!(exit_code_for(&anyhow::Error::new(no_tools)), exit_code::NO_TOOLS);
        let wrapped = anyhow::Error::new(CliError::ToolRequired {
            origin: "`x`".to_owned(),
            count: 2,
            available: "a, b".to_owned(),
        })
        .context("outer");
        assert_eq!(exit_code_for(&wrapped), exit_code::USAGE);
        assert_eq!(exit_code_for(&anyhow::anyhow!("anything else")), exit_code::USAGE);
    }

    #[test]
    fn cannot_generate_names_the_pointer_and_the_reason() {
        let error = CliError::CannotGenerate {
            origin: "`s.json`".to_owned(),
            error: SchemaError {
                kind: SchemaErrorKind::Unsatisfiable("minimum 5 is above maximum 1".to_owned()),
                pointer: "/properties/n".to_owned(),
            },
        };
        assert_eq!(
            error.to_string(),
            "cannot generate for schema pointer `/properties/n` in `s.json`: unsatisfiable \
             schema: minimum 5 is above maximum 1"
        );
        assert_eq!(error.exit_code(), exit_code::UNSATISFIABLE_SCHEMA);
    }

    #[test]
    fn broken_pipe_is_found_through_context() {
        let error = anyhow::Error::new(io::Error::from(io::ErrorKind::BrokenPipe))
            .context("failed to write to stdout");
        assert!(is_broken_pipe(&error));
        assert!(!is_broken_pipe(&anyhow::anyhow!("other")));
    }
}
