//! Errors of the real-client layer. A capture itself never fails with these: [`super::capture()`]
//! turns them into a [`super::CaptureStatus`]; they reach callers from discovery and from the
//! fallible building blocks.

use super::RealClient;
use std::path::PathBuf;
use std::time::Duration;

/// What went wrong while finding or running a real client.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RealError {
    /// The client is not installed where we looked.
    #[error("{client} is not installed (looked in {looked}); {hint}")]
    NotInstalled {
        /// The client that was not found.
        client: RealClient,
        /// The places searched, in order.
        looked: String,
        /// How to install it.
        hint: String,
    },
    /// The server spec cannot be run.
    #[error("invalid server spec: {reason}")]
    BadSpec {
        /// What is wrong with it.
        reason: String,
    },
    /// A scratch directory or file could not be made.
    #[error("failed to prepare {path} for the capture: {source}")]
    Scratch {
        /// The file or directory that could not be made.
        path: PathBuf,
        /// What the OS said.
        #[source]
        source: std::io::Error,
    },
    /// The loopback model-provider stand-in could not listen.
    #[error("failed to start the loopback provider on 127.0.0.1: {source}")]
    Provider {
        /// What the OS said (no free port, loopback down).
        #[source]
        source: std::io::Error,
    },
    /// The client process could not be started.
    #[error("failed to start {client} ({program}): {source}")]
    Spawn {
        /// The client that failed to start.
        client: RealClient,
        /// The executable that was run.
        program: PathBuf,
        /// What the OS said.
        #[source]
        source: std::io::Error,
    },
    /// The client did not finish within the deadline (it was killed with its process group).
    #[error(
        "{client} did not finish within {timeout:?} ({stage}); it was killed with its process group"
    )]
    Timeout {
        /// The client that was killed.
        client: RealClient,
        /// How long it was given.
        timeout: Duration,
        /// What it was doing.
        stage: &'static str,
    },
    /// The client ran but produced nothing we can read.
    #[error("{client} produced no usable output: {reason}")]
    NoOutput {
        /// The client whose output was unusable.
        client: RealClient,
        /// What is missing.
        reason: String,
    },
}
