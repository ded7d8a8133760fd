#!/usr/bin/env bash
# The exact commands that start each end-to-end MCP server on stdio
# (newline-delimited JSON-RPC on stdin/stdout, logs on stderr), from the repo root.
# Install them first: scripts/install-e2e.sh.
#
#   everything  @modelcontextprotocol/server-everything (npm), the reference server:
#                 node fixtures/e2e/node_modules/@modelcontextprotocol/server-everything/dist/index.js stdio
#   ts          fixtures/e2e/ts-server.mjs, TypeScript SDK McpServer (greet, shout, checked):
#                 node fixtures/e2e/ts-server.mjs
#   py          fixtures/e2e/py_server.py, Python SDK FastMCP (greet, shout, checked):
#                 target/e2e-venv/bin/python fixtures/e2e/py_server.py
#
# Usage:
#   scripts/e2e-servers.sh             print the three commands, one per line: NAME<TAB>COMMAND
#   scripts/e2e-servers.sh NAME        run server NAME in the foreground (exec, from the repo root)
# Each server exits when its stdin closes.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

EVERYTHING=(node fixtures/e2e/node_modules/@modelcontextprotocol/server-everything/dist/index.js stdio)
TS=(node fixtures/e2e/ts-server.mjs)
PY=(target/e2e-venv/bin/python fixtures/e2e/py_server.py)

case "${1-}" in
"")
    printf 'everything\t%s\n' "${EVERYTHING[*]}"
    printf 'ts\t%s\n' "${TS[*]}"
    printf 'py\t%s\n' "${PY[*]}"
    ;;
everything) exec "${EVERYTHING[@]}" ;;
ts) exec "${TS[@]}" ;;
py) exec "${PY[@]}" ;;
*)
    echo "usage: $0 [everything|ts|py]" >&2
    exit 2
    ;;
esac
