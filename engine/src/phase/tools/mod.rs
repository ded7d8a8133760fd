//! The tools phase: each selected tool's cases are planned ([`plan`], [`feed`]), dealt to the
//! server instances ([`worker`]), judged in case order and shrunk ([`shrink`]); [`select`] picks
//! the tools and [`campaign`] runs one tool from plan to findings.

pub(crate) mod campaign;
pub mod feed;
pub mod plan;
pub mod select;
pub mod shrink;
pub(crate) mod worker;
