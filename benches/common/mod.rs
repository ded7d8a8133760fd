//! What the benches share: where the fixture servers are.

use std::path::PathBuf;

/// The release build of fixture server `name`, which must exist.
pub fn fixture(name: &str) -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(
        || PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/target")),
        PathBuf::from,
    );
    let path = target.join("release").join(name);
    assert!(
        path.exists(),
        "{} is missing: run `cargo build --release -p mcp-fuzz-fixtures` first",
        path.display()
    );
    path
}
