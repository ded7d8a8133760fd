//! Real clients: run the actual MCP clients offline against a server and capture what each one
//! exposes to its model (issue 14). Unlike the rest of this crate this module does I/O: it
//! spawns processes (std threads and processes only, no async runtime) and listens on loopback.
//!
//! - [`RealClient`] names the five clients (`inspector`, `mcpo`, `codex-cli`, `claude-code`,
//!   `gemini-cli`) with their pinned versions; [`discover()`] finds one (a clients directory,
//!   `MCP_FUZZ_CLIENTS_DIR`, `target/clients`, then `PATH`) and reads its version.
//! - [`capture()`] runs one client once against a [`ServerSpec`] and returns a [`Capture`]: the
//!   tools as the client shows them ([`CapturedTool`], mapped back to the server's names), the
//!   tools it lost ([`LostTool`], with the client's reason), a [`ListingFailure`] when it lost
//!   every tool because of some (culprits from its log, or by bisection with a
//!   [`SubsetServer`]), what it declared in `initialize` ([`Handshake`]) and what the server
//!   listed to it, and the raw request it sent. [`capture_all`] runs several at once.
//! - [`call_through`] sends calls through a client that can call (mcpo's `POST /<tool>`, the
//!   Inspector CLI's `tools/call`) and reads the server's answers off the wire ([`Through`]).
//! - The agent CLIs talk to a loopback stand-in for their model provider that records the first
//!   request carrying tools and answers one minimal streamed reply, so each exits after one turn.
//!
//! See `DESIGN.md` in this directory for process control and the loopback design. Install the
//! clients with `scripts/install-clients.sh`.

mod call;
mod capture;
mod client;
mod discover;
mod driver;
mod error;
mod http;
mod names;
mod process;
mod provider;
mod scratch;
mod spec;
mod stand_in;
mod tap;

pub use call::{Call, Through, call_through, can_call};
pub use capture::{
    Capture, CaptureOptions, CaptureStatus, ListingFailure, capture, capture_all, capture_with,
};
pub use client::RealClient;
pub use discover::{CLIENTS_DIR_VAR, Installation, Origin, discover, discover_all, search_dirs};
pub use error::RealError;
pub(crate) use names::prefix as name_prefix;
pub use process::{MARKER_VAR, stop_all};
pub use spec::{CapturedTool, LostTool, ReasonSource, ServerSpec, SubsetServer};
pub use stand_in::{NOT_CALLED, StandIns, serve_listing, serve_listing_file, write_listing};
pub use tap::Handshake;
