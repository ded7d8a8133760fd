//! Throwaway directories: one per capture, holding the client's HOME, its config files and the tap
//! transcripts, removed when the capture ends.

use super::RealError;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// A number no other call in this process returns, mixed with the clock so that two processes
/// rarely agree either.
pub(crate) fn unique() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    format!("{}-{n}-{nanos:x}", std::process::id())
}

/// The scratch directories alive now (removed by [`remove_all`] when the process stops early).
static LIVE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn live() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    LIVE.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Removes every scratch directory still alive (see `process::stop_all`).
pub(crate) fn remove_all() {
    for path in std::mem::take(&mut *live()) {
        let _ = std::fs::remove_dir_all(path);
    }
}

/// A directory removed on drop (unless kept).
pub(crate) struct Scratch {
    path: PathBuf,
    keep: bool,
}

impl Scratch {
    /// Creates `<root>/mcp-fuzz-<label>-<unique>`.
    pub(crate) fn new(root: &Path, label: &str, keep: bool) -> Result<Self, RealError> {
        let path = root.join(format!("mcp-fuzz-{label}-{}", unique()));
        std::fs::create_dir_all(&path)
            .map_err(|source| RealError::Scratch { path: path.clone(), source })?;
        if !keep {
            live().push(path.clone());
        }
        Ok(Self { path, keep })
    }

    /// Creates (and returns) a subdirectory.
    pub(crate) fn dir(&self, name: &str) -> Result<PathBuf, RealError> {
        let path = self.path.join(name);
        std::fs::create_dir_all(&path)
            .map_err(|source| RealError::Scratch { path: path.clone(), source })?;
        Ok(path)
    }

    /// Writes a file (creating its parents) and returns its path.
    pub(crate) fn write(&self, name: &str, contents: &[u8]) -> Result<PathBuf, RealError> {
        let path = self.path.join(name);
        let parent = path.parent().expect("a file under the scratch dir has a parent");
        std::fs::create_dir_all(parent)
            .and_then(|()| std::fs::write(&path, contents))
            .map_err(|source| RealError::Scratch { path: path.clone(), source })?;
        Ok(path)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if !self.keep {
            live().retain(|p| p != &self.path);
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}
