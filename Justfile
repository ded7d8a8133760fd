# The same checks as `.ci/run`, one recipe each. `just` lists them.

default:
    @just --list

# Everything CI runs, in order.
ci: versions fmt-check clippy fuzz-check test bench-build package test-packages check-ci-recipes

# Print the tool versions.
versions:
    rustc --version
    cargo --version
    cargo fmt --version
    cargo clippy --version

# Check formatting.
fmt-check:
    cargo fmt --all --check

# Format the code.
fmt:
    cargo fmt --all

# Lint every crate and target, warnings as errors (release: the release build's build scripts and
# proc-macros serve it).
clippy:
    cargo clippy --workspace --all-targets --release -- -D warnings

# Check that the cargo-fuzz target still builds (its own workspace, the shared target directory).
fuzz-check:
    cargo check --manifest-path fuzz/Cargo.toml --release --target-dir target

# Run all tests (the README's test command).
test:
    bash scripts/install-e2e.sh && bash scripts/install-clients.sh && cargo test --workspace --release

# Check that the benches compile.
bench-build:
    cargo bench --workspace --no-run

# Build the Python wheel and the npm tarballs into dist/.
package:
    bash scripts/package.sh

# Install the packages in dist/ offline and run them.
test-packages:
    bash scripts/test-packages.sh

# Validate the CI recipes in docs/ci/ and run them with the wheel of dist/.
check-ci-recipes:
    bash scripts/check-ci-recipes.sh
