//! The report crate's errors: input that cannot be used, said with what to do.

/// Why a document could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReportError {
    /// A baseline file that cannot be used.
    #[error("{0}")]
    Baseline(String),
    /// Shard reports that cannot be merged.
    #[error("{0}")]
    Merge(String),
}
