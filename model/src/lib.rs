//! # mcp-fuzz-model
//!
//! Everything an mcp-fuzz document holds, as plain typed data: the floor every other crate
//! stands on. The engine fills these types during a run; the report crate renders them; a report
//! read back from JSON (a shard, a baseline) is the same data. Nothing here does I/O, starts a
//! process or knows a transport.
//!
//! - [`facts`]: what the judge and the steps after it learned about a finding, typed.
//! - [`format`]: the formats every document is written in.
//! - [`finding`]: the vocabulary of findings (kinds with their rules, severities, tool statuses,
//!   skip and stop reasons, a finding's stable identity).
//! - [`report`]: the run report's documented JSON shape (`docs/report.schema.json`), with its
//!   findings and score.
//! - [`outcome`]: the outcome of one call and its normalised cause; [`case`]: how a case was
//!   made; [`shrink`]: what shrinking did; [`steps`]: the steps of a call sequence.
//! - [`target`]: the server under test and one exchange with it.
//! - [`group`]: one finding per cause across tools (a run's last step, and `report merge`'s);
//!   [`partition`]: the deterministic shards of `--partition`; [`case_file`]: the replayable case.
//! - [`wording`]: the tables that tell what an error's text means (exception, upstream,
//!   retry, validation).
//! - [`text`]: the one clip of a long text (the generators crate's, the floor every crate shares).
//!
//! ```
//! use mcp_fuzz_model::finding::{FindingKind, Severity};
//! use mcp_fuzz_model::report::Finding;
//!
//! let f = Finding::general(None, FindingKind::Hang, Severity::Failure, "no answer".into());
//! assert!(f.fails());
//! assert_eq!(f.kind.rule().id, "MCPF0020");
//! ```
#![deny(missing_docs)]

pub mod case;
pub mod case_file;
pub mod facts;
pub mod finding;
pub mod format;
pub mod group;
pub mod outcome;
pub mod partition;
pub mod report;
pub mod shrink;
pub mod steps;
pub mod target;
pub mod template;
pub mod wording;

pub use mcp_fuzz_generators::text;
