#!/usr/bin/env bash
# Install the real MCP servers that mcp-fuzz's end-to-end tests run against,
# at the versions pinned in fixtures/e2e/ (package-lock.json, requirements.txt):
#   - fixtures/e2e/node_modules: @modelcontextprotocol/server-everything,
#     @modelcontextprotocol/server-memory, @modelcontextprotocol/server-filesystem,
#     @itseasy21/mcp-knowledge-graph and the TypeScript SDK (+ zod) for
#     fixtures/e2e/ts-server.mjs, via `npm ci`;
#   - target/e2e-venv: the Python SDK `mcp` for fixtures/e2e/py_server.py.
# Idempotent: run it as often as you like. Run from anywhere.
# How to start each server: scripts/e2e-servers.sh.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

E2E=fixtures/e2e
VENV=target/e2e-venv

die() {
    printf 'install-e2e: error: %s\n' "$*" >&2
    exit 1
}

command -v node >/dev/null || die "node not found (Node.js >= 20 is needed for the TypeScript servers)"
command -v npm >/dev/null || die "npm not found (it comes with Node.js)"
command -v python3 >/dev/null || die "python3 not found (CPython >= 3.10 is needed for the Python server)"

node_major=$(node -p 'process.versions.node.split(".")[0]')
[[ $node_major -ge 20 ]] || die "Node.js >= 20 needed, found $(node --version)"
python3 -c 'import sys; sys.exit(sys.version_info < (3, 10))' ||
    die "Python >= 3.10 needed, found $(python3 --version 2>&1)"

echo "install-e2e: npm ci in $E2E"
npm ci --prefix "$E2E" --no-audit --no-fund --loglevel=error ||
    die "npm ci --prefix $E2E failed (is $E2E/package-lock.json in step with package.json?)"

echo "install-e2e: Python venv in $VENV"
if ! "$VENV/bin/python" -c 'import sys' 2>/dev/null; then
    python3 -m venv --clear "$VENV" || die "python3 -m venv $VENV failed (Debian needs python3-venv)"
fi
PIP_DISABLE_PIP_VERSION_CHECK=1 "$VENV/bin/pip" install -q -r "$E2E/requirements.txt" ||
    die "pip install -r $E2E/requirements.txt into $VENV failed"

# Check that what the servers load is there, and print the versions.
everything="$E2E/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
[[ -f $everything ]] || die "$everything missing after npm ci"
(cd "$E2E" && node --input-type=module -e '
    import { readFileSync } from "node:fs";
    await import("@modelcontextprotocol/sdk/server/mcp.js");
    await import("@modelcontextprotocol/sdk/server/stdio.js");
    await import("zod");
    for (const p of ["@modelcontextprotocol/server-everything", "@modelcontextprotocol/server-memory", "@itseasy21/mcp-knowledge-graph", "@modelcontextprotocol/sdk", "zod"]) {
        const { version } = JSON.parse(readFileSync(`node_modules/${p}/package.json`, "utf8"));
        console.log(`  ${p} ${version} (npm)`);
    }
') || die "the npm packages in $E2E/node_modules do not load"
"$VENV/bin/python" -c '
from importlib.metadata import version
from mcp.server.fastmcp import FastMCP  # noqa: F401
print("  mcp %s (PyPI), pydantic %s" % (version("mcp"), version("pydantic")))
' || die "the Python SDK in $VENV does not load mcp.server.fastmcp"
echo "  node $(node --version), npm $(npm --version), $("$VENV/bin/python" --version)"
echo "install-e2e: done"
