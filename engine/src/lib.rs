//! # mcp-fuzz-engine
//!
//! Runs a fuzzing campaign against one MCP server and returns a typed [`report::Report`]; it
//! never prints. Its rooms, bottom up (`DESIGN.md` beside this file tells the life of a call, a
//! finding and a phase):
//!
//! - [`transport`]: the only module that talks MCP (spawn or connect, handshake, wire taps, raw
//!   sessions, raw `tools/list` pages and replies, process groups).
//! - [`judge`]: a reply becomes an outcome, a tool's outcomes its findings.
//! - [`server`]: a server spec and a live [`server::Instance`] that calls, judges and restarts:
//!   the probe API every command calls tools through.
//! - [`phase`]: the phases of a run (tools, sequences, surfaces, protocol checks).
//! - [`run`] drives the phases over the listing and groups the findings into the report;
//!   [`events`] is what it tells as it goes.
//! - [`config`] is what a run is asked to do; [`config_file`] reads `mcp-fuzz.toml` (profiles,
//!   per-tool overrides, value hints); [`init`] writes `mcp-fuzz init`'s starter file.
//! - [`sandbox`]: the throwaway directory every server process starts in, and what a tool
//!   wrote there.
//! - [`finding`] (the vocabulary), [`report`] (the documented JSON shape), [`group`],
//!   [`partition`] and [`steps`] are the `mcp-fuzz-model` crate's, re-exported; [`case_file`]
//!   adds the replay to the model's replayable case.
#![deny(missing_docs)]

pub mod case_file;
pub mod config;
pub mod config_file;
pub mod events;
pub mod init;
pub mod judge;
pub mod phase;
pub mod run;
pub mod sandbox;
pub mod server;
pub mod transport;

pub use mcp_fuzz_model::{finding, group, partition, report, steps};
