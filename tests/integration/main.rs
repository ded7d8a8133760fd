//! End-to-end tests of the `mcp-fuzz` binary, built as one test binary with a module per area.
//!
//! Every test runs the real binary on files under `fixtures/` (or on temporary files it writes)
//! and checks stdout, stderr and the exit code. Values are checked with the `jsonschema` crate
//! (formats asserted), independently of the generators' own oracle.

mod annotations;
mod baseline;
mod beyond;
mod campaign;
mod client_features;
mod clients;
mod config;
mod connect;
mod diff;
mod e2e;
mod expected;
mod formats;
mod r#gen; // `gen` is a reserved keyword since edition 2024.
mod http;
mod partition;
mod real_clients;
mod run;
mod session;
mod snapshots;
mod stateful;
mod tools_list;
mod util;
