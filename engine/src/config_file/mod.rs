//! `mcp-fuzz.toml`: the server (`[server]`), profiles of `run` settings (`[profile.NAME]`, with
//! per-tool overrides by glob) and value hints (`[hints]`), layered over the built-in defaults
//! (`engine/default-config.toml`, itself a commented config file). Reading it is strict: an
//! unknown key or a bad value is an error naming the line and the key. The binary merges the
//! flags over the profile this module resolves; [`json_schema`] writes
//! `docs/config.schema.json` from the same key tables, and [`starter`] writes the file
//! `mcp-fuzz init` starts a project with.
//!
//! See: <https://nexte.st/docs/configuration/> (profiles over an embedded default config).

mod error;
mod hints;
mod keys;
mod load;
mod resolve;
mod schema;
mod server;

pub use error::ConfigError;
pub use keys::{Count, KEYS, Key, OVERRIDE_KEYS, Profile, SERVER_KEYS, Seconds};
pub use load::{ConfigFile, DEFAULT_CONFIG, DEFAULT_PROFILE, FILE_NAME};
pub use schema::json_schema;
pub use server::{How, ServerTable};
