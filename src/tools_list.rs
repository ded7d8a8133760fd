//! Reading saved `tools/list` answers: the parser lives in the `mcp-fuzz-compat` crate (it is
//! shared by `gen`, `snapshot` and `diff`); this module re-exports it for the binary.

pub use mcp_fuzz_compat::capture::*;
