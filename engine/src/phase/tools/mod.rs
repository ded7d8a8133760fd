//! The tools phase: each selected tool ([`select`]) gets its cases planned ([`plan`], [`feed`]),
//! sent to the server instances ([`worker`], from [`start`]), and is finished ([`finish`]): its
//! results rebuilt in case order ([`collect`]), judged, its timeouts settled ([`timeouts`]) and
//! every failure shrunk ([`shrink`]).

pub(crate) mod collect;
pub mod feed;
pub(crate) mod finish;
pub mod plan;
pub mod select;
pub mod shrink;
pub(crate) mod start;
pub(crate) mod timeouts;
pub(crate) mod worker;
