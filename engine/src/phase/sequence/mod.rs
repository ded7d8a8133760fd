//! Stateful campaigns: sequences of calls that reach the bugs living in server state (a read
//! after a delete, a handle nobody issued, a create the next read cannot find, a crash that needs
//! earlier calls), and minimal failing sequences.
//!
//! The reference model ([`model`]: families named from tool names, handles returned by results,
//! which input a handle fits) is apart from the driver ([`walk`]: which step next) and from the
//! executor ([`exec`]: bind, call, judge), so a failing sequence can be replayed and shrunk
//! ([`minimize`]) against fresh server processes. [`walks`] runs the walks of a run;
//! [`history`] replays the failures of the single-call phases that a fresh process did not
//! repeat with the calls their process had been sent.
//!
//! See: proptest-state-machine (reference model apart from the driver, shrinking to a minimal
//! sequence); schemathesis' stateful checks (`use_after_free`, `ensure_resource_availability`).

pub mod exec;
pub mod history;
pub mod minimize;
pub mod model;
pub mod walk;
pub mod walks;

pub use exec::{Binding, SeqStep, StepCheck};
