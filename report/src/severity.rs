//! The one severity order every document maps onto: `Note < Warning < Error`.
//!
//! Each document keeps its own words, because they say what matters to its reader: a run's
//! findings are `info` / `warning` / `failure`, a client rule's `info` / `warn` / `fail`, a diff
//! change's `info` / `review` / `breaking`. They are one idea; [`Level`] is its order, and the
//! formats that need one scale (SARIF levels, sorting, `--fail-on` thresholds) read it.

use crate::writers::sarif;

/// How much something matters, in one order for every document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Level {
    /// Worth knowing; nothing is wrong for sure.
    Note,
    /// A problem that does not fail by default.
    Warning,
    /// A problem that fails the command.
    Error,
}

impl Level {
    /// The SARIF `level` of the same meaning.
    #[must_use]
    pub fn sarif(self) -> sarif::Level {
        match self {
            Self::Note => sarif::Level::Note,
            Self::Warning => sarif::Level::Warning,
            Self::Error => sarif::Level::Error,
        }
    }
}

impl From<mcp_fuzz_model::finding::Severity> for Level {
    fn from(s: mcp_fuzz_model::finding::Severity) -> Self {
        use mcp_fuzz_model::finding::Severity;
        match s {
            Severity::Info => Self::Note,
            Severity::Warning => Self::Warning,
            Severity::Failure => Self::Error,
        }
    }
}

impl From<mcp_fuzz_clients::Severity> for Level {
    fn from(s: mcp_fuzz_clients::Severity) -> Self {
        use mcp_fuzz_clients::Severity;
        match s {
            Severity::Info => Self::Note,
            Severity::Warn => Self::Warning,
            Severity::Fail => Self::Error,
        }
    }
}

impl From<mcp_fuzz_compat::rules::Level> for Level {
    fn from(l: mcp_fuzz_compat::rules::Level) -> Self {
        use mcp_fuzz_compat::rules::Level as Change;
        match l {
            Change::Info => Self::Note,
            Change::Review => Self::Warning,
            Change::Breaking => Self::Error,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_vocabulary_keeps_its_order() {
        use mcp_fuzz_model::finding::Severity as Run;
        let run: Vec<Level> = [Run::Info, Run::Warning, Run::Failure].map(Level::from).to_vec();
        use mcp_fuzz_clients::Severity as Clients;
        let clients: Vec<Level> =
            [Clients::Info, Clients::Warn, Clients::Fail].map(Level::from).to_vec();
        use mcp_fuzz_compat::rules::Level as Diff;
        let diff: Vec<Level> = [Diff::Info, Diff::Review, Diff::Breaking].map(Level::from).to_vec();
        for levels in [run, clients, diff] {
            assert!(levels.windows(2).all(|w| w[0] < w[1]), "{levels:?}");
        }
    }
}
