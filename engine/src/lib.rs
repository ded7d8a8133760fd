//! # mcp-fuzz-engine
//!
//! Runs a fuzzing campaign against one MCP server and returns a typed [`report::Report`]; it
//! never prints. The pieces, bottom up:
//!
//! - [`client`]: the only module that talks MCP (spawn or connect, handshake, raw replies,
//!   process groups); [`tools`] reads `tools/list` raw.
//! - [`server`]: a server spec and a live [`server::Instance`] that calls, judges
//!   ([`classify`]) and restarts: the probe API every command calls tools through.
//! - [`plan`] orders a tool's cases from the generator; [`feed`] turns earlier results into
//!   inputs; [`select`] picks the tools; [`partition`] a shard of them.
//! - [`run`] drives the campaign over the tools; each tool's cases are dealt to the instances,
//!   judged in case order and shrunk ([`shrink`]); [`group`] makes one finding of one cause
//!   seen on several tools.
//! - [`config`] is what a run is asked to do; [`config_file`] reads `mcp-fuzz.toml` (profiles,
//!   per-tool overrides, value hints) and writes `mcp-fuzz init`'s starter file.
//! - [`finding`] (the vocabulary), [`report`] (the documented JSON shape), [`group`],
//!   [`partition`] and [`steps`] are the `mcp-fuzz-model` crate's, re-exported; [`case_file`]
//!   adds the replay to the model's replayable case.
#![deny(missing_docs)]

mod campaign;
pub mod case_file;
pub mod classify;
pub mod client;
pub mod config;
pub mod config_file;
pub mod feed;
mod judge;
mod limit;
pub mod plan;
pub mod protocol;
pub mod run;
pub mod select;
pub mod sequence;
pub mod server;
pub mod shrink;
pub mod surface;
pub mod tools;
mod worker;

pub use mcp_fuzz_model::{finding, group, partition, report, steps};
