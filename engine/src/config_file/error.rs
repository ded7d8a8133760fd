//! What can be wrong with a config file: each error says where (the file, the line, the key) and
//! what to do.

use std::path::PathBuf;

/// A config file that cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The file could not be read.
    #[error("failed to read {}: {error}; check that the path exists and is readable", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// What the OS said.
        error: std::io::Error,
    },

    /// The file is not valid TOML, or a key or value is wrong.
    #[error(
        "{}:{line}:{column}: {message}; fix it (docs/config.schema.json lists every key, and \
         `mcp-fuzz init` writes a commented file)",
        path.display()
    )]
    Invalid {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong, naming the key.
        message: String,
    },

    /// `--profile` names a profile neither the file nor the defaults have.
    #[error("no profile `{name}`: {where_}; the profiles are {available}")]
    UnknownProfile {
        /// The profile asked for.
        name: String,
        /// Where profiles were looked for.
        where_: String,
        /// The profiles there are.
        available: String,
    },

    /// The `[server]` table cannot be turned into a server to reach.
    #[error("{0}")]
    Server(String),

    /// Neither the flags nor a config file name a server.
    #[error(
        "no server given: pass the server command after `--` (e.g. `mcp-fuzz -- node \
         server.js`) or --http URL, or name it in the [server] table of {file} (`mcp-fuzz init \
         -- CMD` writes one)"
    )]
    NoServer {
        /// The config file read, or the name looked for.
        file: String,
    },

    /// Settings that do not go together.
    #[error("{0}")]
    Conflict(&'static str),
}
