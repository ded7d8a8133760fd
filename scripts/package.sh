#!/usr/bin/env bash
# Build the installable packages of mcp-fuzz into dist/ (ignored by git):
#   - dist/mcp_fuzz-VERSION-py3-none-PLATFORM.whl: the Python wheel, holding only the binary
#     (the layout of maturin's `bindings = "bin"`, configured by pyproject.toml); for pip, pipx and uv;
#   - dist/mcp-fuzz-VERSION.tgz: the npm package `mcp-fuzz`, a launcher (bin/mcp-fuzz.js) that
#     runs the binary of the platform's package;
#   - dist/mcp-fuzz-OS-CPU-VERSION.tgz: the npm package `@mcp-fuzz/OS-CPU` of this machine, holding
#     the binary (`npm pack` of what packaging/npm/stage.mjs lays out from packaging/npm/);
#   - dist/SHA256SUMS.
# On Linux the binary is the release build's (`cargo build --release --workspace`, nothing to do
# after `cargo test --workspace --release`), without its line tables (objcopy --strip-debug keeps
# the symbol table, so a panic's backtrace still names functions), packed by packaging/wheel.py:
# packaging compiles nothing twice (issue 28). On other hosts maturin builds the wheel with the
# `dist` profile, as `pip install .` does; maturin comes from PyPI (packaging/requirements.txt)
# into target/packaging-venv.
# The npm package takes its binary out of the wheel, so both carry the same bytes. VERSION is the
# Cargo workspace's. Idempotent: each run replaces every artefact of a previous run. Run from
# anywhere. Test the packages: scripts/test-packages.sh.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

DIST=dist
VENV=target/packaging-venv
STAGE=target/packaging

die() {
    printf 'package: error: %s\n' "$*" >&2
    exit 1
}

say() {
    printf 'package: %s\n' "$*"
}

command -v cargo >/dev/null || die "cargo not found (install Rust with rustup)"
command -v rustc >/dev/null || die "rustc not found (install Rust with rustup)"
command -v python3 >/dev/null || die "python3 not found (CPython >= 3.11 is needed to pack the wheel)"
command -v node >/dev/null || die "node not found (Node.js >= 18 is needed to lay out the npm packages)"
command -v npm >/dev/null || die "npm not found (it comes with Node.js)"

version=$(cargo metadata --no-deps --locked --format-version 1 | python3 -c '
import json, sys
print(next(p["version"] for p in json.load(sys.stdin)["packages"] if p["name"] == "mcp-fuzz-cli"))
') || die "cannot read the version of mcp-fuzz-cli from cargo metadata (is Cargo.lock up to date?)"
host=$(rustc -vV | sed -n 's/^host: //p')
[[ -n $host ]] || die "cannot read the host target from rustc -vV"
say "mcp-fuzz $version for $host"

# Everything is built under $STAGE first; dist/ only gets finished files.
rm -rf "$STAGE"
mkdir -p "$STAGE/wheel" "$STAGE/bin" "$STAGE/npm" "$STAGE/tarballs"

if [[ $host == *-linux-gnu ]]; then
    command -v objcopy >/dev/null || die "objcopy not found (Debian: binutils, which gcc brings)"
    say "the release build: cargo build --release --workspace --locked (cargo's output follows)"
    cargo build --release --workspace --locked || die "cargo build --release failed (see its errors above)"
    target_dir=$(cargo metadata --no-deps --locked --format-version 1 |
        python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])') ||
        die "cannot read the target directory from cargo metadata"
    objcopy --strip-debug "$target_dir/release/mcp-fuzz" "$STAGE/mcp-fuzz" ||
        die "objcopy --strip-debug $target_dir/release/mcp-fuzz failed"
    say "packing the wheel: packaging/wheel.py"
    python3 packaging/wheel.py --binary "$STAGE/mcp-fuzz" --version "$version" --out "$STAGE/wheel" >/dev/null ||
        die "packaging/wheel.py failed"
else
    say "maturin in $VENV (packaging/requirements.txt)"
    if ! "$VENV/bin/python" -c 'import sys' 2>/dev/null; then
        python3 -m venv --clear "$VENV" || die "python3 -m venv $VENV failed (Debian needs python3-venv)"
    fi
    PIP_DISABLE_PIP_VERSION_CHECK=1 "$VENV/bin/pip" install -q -r packaging/requirements.txt ||
        die "pip install -r packaging/requirements.txt into $VENV failed (PyPI unreachable?)"
    maturin_pin=$(sed -n 's/^maturin==//p' packaging/requirements.txt)
    maturin_have=$("$VENV/bin/maturin" --version) || die "$VENV/bin/maturin does not run"
    [[ $maturin_have == "maturin $maturin_pin" ]] ||
        die "$VENV/bin/maturin is '$maturin_have', packaging/requirements.txt pins $maturin_pin"
    say "building the wheel: maturin build --locked, cargo profile dist (cargo's output follows)"
    "$VENV/bin/maturin" build --locked --out "$STAGE/wheel" ||
        die "maturin build failed (see cargo's errors above)"
fi
wheels=("$STAGE"/wheel/*.whl)
[[ ${#wheels[@]} -eq 1 && -f ${wheels[0]} ]] || die "the build left ${#wheels[@]} wheels in $STAGE/wheel, expected 1"
wheel=${wheels[0]}
[[ $(basename "$wheel") == mcp_fuzz-"$version"-py3-none-*.whl ]] ||
    die "the wheel is $(basename "$wheel"); expected mcp_fuzz-$version-py3-none-PLATFORM.whl (check pyproject.toml)"

# The binary the wheel installs, for the npm package.
python3 - "$wheel" "$version" "$STAGE/bin/mcp-fuzz" <<'EOF' || die "cannot take the binary out of $wheel"
import os, shutil, sys, zipfile
wheel, version, out = sys.argv[1:]
member = f"mcp_fuzz-{version}.data/scripts/mcp-fuzz"
with zipfile.ZipFile(wheel) as z, z.open(member) as src, open(out, "wb") as dst:
    shutil.copyfileobj(src, dst)
os.chmod(out, 0o755)
EOF
# The oldest glibc the binary runs on, from the wheel's manylinux tag (wheel.py, or maturin's auditwheel, reads the
# symbol versions the binary needs), for the npm launcher to check.
glibc_args=()
if [[ $host == *-linux-gnu ]]; then
    [[ $(basename "$wheel") =~ -manylinux_([0-9]+)_([0-9]+)_ ]] ||
        die "the wheel $(basename "$wheel") has no manylinux_X_Y tag (compatibility = \"pypi\" in pyproject.toml?)"
    glibc_args=(--min-glibc "${BASH_REMATCH[1]}.${BASH_REMATCH[2]}")
    say "the binary needs glibc ${BASH_REMATCH[1]}.${BASH_REMATCH[2]} or newer (the wheel's manylinux tag)"
fi
said=$("$STAGE/bin/mcp-fuzz" --version) || die "the binary in $wheel does not run"
[[ $said == "mcp-fuzz $version" ]] || die "the binary in $wheel says '$said', expected 'mcp-fuzz $version'"

say "laying out the npm packages (packaging/npm/stage.mjs)"
staged=$(node packaging/npm/stage.mjs --version "$version" --target "$host" \
    --binary "$STAGE/bin/mcp-fuzz" --out "$STAGE/npm" "${glibc_args[@]}") || die "packaging/npm/stage.mjs failed"
mapfile -t package_dirs <<<"$staged"
[[ ${#package_dirs[@]} -eq 2 ]] || die "stage.mjs laid out ${#package_dirs[@]} packages, expected 2"
for dir in "${package_dirs[@]}"; do
    say "npm pack $dir"
    npm pack --pack-destination "$STAGE/tarballs" --loglevel=error "$dir" >/dev/null ||
        die "npm pack $dir failed"
done

mkdir -p "$DIST"
# Only one set in dist/: test-packages.sh and `pip install --find-links dist` must not pick an
# artefact of an older version or build.
rm -f "$DIST"/mcp_fuzz-*.whl "$DIST"/mcp-fuzz-*.tgz "$DIST"/SHA256SUMS
mv "$wheel" "$STAGE"/tarballs/*.tgz "$DIST"/
(cd "$DIST" && sha256sum mcp_fuzz-*.whl mcp-fuzz-*.tgz >SHA256SUMS.tmp && mv SHA256SUMS.tmp SHA256SUMS) ||
    die "cannot write $DIST/SHA256SUMS"

size() {
    local bytes
    bytes=$(stat -c %s "$1")
    awk -v b="$bytes" 'BEGIN {
        if (b >= 1048576) printf "%.1f MiB (%d bytes)", b / 1048576, b
        else printf "%.1f KiB (%d bytes)", b / 1024, b
    }'
}
say "artefacts in $DIST/ (the binary they hold: $(size "$STAGE/bin/mcp-fuzz")):"
for f in "$DIST"/mcp_fuzz-*.whl "$DIST"/mcp-fuzz-*.tgz "$DIST"/SHA256SUMS; do
    printf '  %-60s %s\n' "$f" "$(size "$f")"
done
say "done; test them with: bash scripts/test-packages.sh"
