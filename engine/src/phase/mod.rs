//! The phases of a run, each in a room of its own: [`tools`] (every selected tool through its
//! cases: plan, call, judge, shrink), [`sequence`] (walks over the tools that reach state),
//! [`surfaces`] (prompts, resources, templates, completions), [`protocol`] (the conformance
//! checks on a raw session), and [`limit`] (the proof of a call limit behind deaths that a fresh
//! process did not repeat).

pub(crate) mod limit;
pub mod protocol;
pub mod sequence;
pub mod surfaces;
pub mod tools;
