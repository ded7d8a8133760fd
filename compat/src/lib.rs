//! # mcp-fuzz-compat
//!
//! Directional compatibility of two MCP tool surfaces. Pure: no I/O, no printing, no async.
//!
//! - [`capture`] reads a saved `tools/list` answer in every shape people keep them in;
//! - [`normalize`] turns one into a deterministic snapshot;
//! - [`dialect`] rewrites schemas of older drafts into the 2020-12 form;
//! - [`prove`] proves `source ⊆ target` structurally, or says why it could not;
//! - [`witness`] searches for a value the source accepts and the target rejects, and shrinks it;
//! - [`rules`] is the catalogue of change ids;
//! - [`diff`] puts them together: per tool and direction a [`diff::Verdict`] with its evidence.
//!
//! Inputs must keep working (old `inputSchema` ⊆ new), outputs must stay within what old clients
//! expect (new `outputSchema` ⊆ old). `compatible` is only ever said with a proof; `breaking`
//! only with a witness (or a removed tool); otherwise `unknown` with the reason.
//!
//! ```
//! use mcp_fuzz_compat::capture::parse_capture;
//! use mcp_fuzz_compat::diff::{Options, Verdict, diff};
//!
//! let old = parse_capture(r#"{"tools": [{"name": "t", "inputSchema": {"type": "object",
//!     "properties": {"mode": {"enum": ["a", "b"]}}}}]}"#).unwrap();
//! let new = parse_capture(r#"{"tools": [{"name": "t", "inputSchema": {"type": "object",
//!     "properties": {"mode": {"enum": ["a"]}}}}]}"#).unwrap();
//! let result = diff(&old, &new, &Options::default());
//! let input = result.entries.iter().find(|e| e.direction.as_str() == "input").unwrap();
//! assert_eq!(input.verdict, Verdict::Breaking);
//! assert_eq!(input.witness.as_ref().unwrap().value, serde_json::json!({"mode": "b"}));
//! ```
#![deny(missing_docs)]

pub mod capture;
pub mod dialect;
pub mod diff;
pub mod normalize;
pub mod prove;
pub mod rules;
pub mod witness;
