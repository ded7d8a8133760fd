//! The judge: one reply becomes one [`Outcome`] ([`reply`], the only place that reads a reply),
//! a tool's outcomes in case order become its findings ([`verdict`]).

mod reply;
mod verdict;

pub use mcp_fuzz_model::outcome::{Outcome, looks_like_validation};
pub use reply::{classify, looks_like_exception, looks_like_retry, looks_like_upstream, response};
pub(crate) use verdict::{clip, describe, judge, schema_finding};
