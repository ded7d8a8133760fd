//! The `mcp-fuzz` binary: thin wiring over the library crates.

fn main() {}
