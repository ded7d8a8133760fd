//! The judge, in one room: a reply becomes an [`Outcome`] ([`reply`], the only place that
//! reads a reply), a tool's outcomes in case order become its findings ([`verdict`]), a tool's
//! timeouts are settled as hangs or slow work ([`settle`]), and every finding made from a case
//! gets its kind, severity and words from its facts ([`words`]).

mod reply;
mod settle;
mod unchecked;
mod verdict;
pub mod words;

pub use mcp_fuzz_model::outcome::Outcome;
pub use mcp_fuzz_model::wording::{
    looks_like_exception, looks_like_retry, looks_like_upstream, looks_like_validation,
};
pub use reply::{Caller, classify, outcome, response};
pub use settle::settled;
pub(crate) use verdict::{judge, merge_same_cause, schema_finding};

/// A finding with the index of the case it was made from (`None`: about the tool as a whole).
pub(crate) type Found = (crate::report::Finding, Option<usize>);
pub use words::{describe, learn};
