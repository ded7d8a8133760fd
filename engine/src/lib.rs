//! # mcp-fuzz-engine
//!
//! Runs a fuzzing campaign against one MCP server: connects ([`client`]), lists the tools
//! ([`tools`]), plans cases from the generator ([`plan`]), calls the tools, classifies every
//! reply ([`classify`]), restarts the server when it dies or hangs, and scores the run
//! ([`run`]). It never prints: the binary renders the [`run::Report`].
#![deny(missing_docs)]

pub mod case_file;
pub mod classify;
pub mod client;
pub mod feed;
pub mod partition;
pub mod plan;
pub mod run;
pub mod shrink;
pub mod tools;
mod worker;
