#!/usr/bin/env bash
# Install what benches/versus.rs compares mcp-fuzz with, at the versions pinned in
# fixtures/bench/requirements.txt:
#   - target/bench-venv: mcp-runtime-check 0.10.1 (PyPI), whose command is also named
#     `mcp-fuzz`: the bench runs it as target/bench-venv/bin/mcp-fuzz.
# The servers it runs both tools on come from scripts/install-e2e.sh (server-everything) and
# `cargo build --release -p mcp-fuzz-fixtures` (fx-seventeen).
# Idempotent: run it as often as you like. Run from anywhere.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

REQS=fixtures/bench/requirements.txt
VENV=target/bench-venv

die() {
    printf 'install-bench: error: %s\n' "$*" >&2
    exit 1
}

command -v python3 >/dev/null || die "python3 not found (CPython >= 3.10 is needed for mcp-runtime-check)"
python3 -c 'import sys; sys.exit(sys.version_info < (3, 10))' ||
    die "Python >= 3.10 needed, found $(python3 --version 2>&1)"
[[ -f $REQS ]] || die "$REQS missing"

echo "install-bench: Python venv in $VENV"
if ! "$VENV/bin/python" -c 'import sys' 2>/dev/null; then
    python3 -m venv --clear "$VENV" || die "python3 -m venv $VENV failed (Debian needs python3-venv)"
fi
PIP_DISABLE_PIP_VERSION_CHECK=1 "$VENV/bin/pip" install -q -r "$REQS" ||
    die "pip install -r $REQS into $VENV failed"

# Check that the command runs, and print the versions.
[[ -x $VENV/bin/mcp-fuzz ]] || die "$VENV/bin/mcp-fuzz (mcp-runtime-check's command) missing after pip install"
"$VENV/bin/mcp-fuzz" --help >/dev/null || die "$VENV/bin/mcp-fuzz --help failed"
"$VENV/bin/python" -c '
import sys
from importlib.metadata import version
got = version("mcp-runtime-check")
if got != "0.10.1":
    sys.exit("mcp-runtime-check %s installed, 0.10.1 wanted" % got)
print("  mcp-runtime-check %s (PyPI), mcp %s" % (got, version("mcp")))
' || die "mcp-runtime-check 0.10.1 is not what $VENV has"
echo "  $("$VENV/bin/python" --version)"
echo "install-bench: done"
