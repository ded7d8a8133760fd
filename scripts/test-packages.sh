#!/usr/bin/env bash
# Test the packages that scripts/package.sh built, installed the ways users install them, but
# offline: from dist/ only, with no package index, an empty npm cache and the npm registry set to
# a closed local port.
#   - pip: the wheel into a fresh venv (`pip install --no-index --find-links dist mcp-fuzz`);
#     pipx and uvx (from PyPI, packaging/test-requirements.txt) install it the same way;
#   - npm: the launcher and the platform tarballs into a fresh project (run as
#     node_modules/.bin/mcp-fuzz, with `npx mcp-fuzz`, and with `npx --package`), and into a fresh
#     global prefix (`npm install -g`). The launcher must exit 127 with a message that says what to
#     do when its platform package is missing, when the platform has none, and when the binary
#     needs a newer glibc.
# Each route must print the version and pass exit codes through (2 usage error, 3 server failed to
# start, 4 no tool, 5 unsatisfiable schema, 1 breaking diff); the binary and the npm launcher must
# also pass standard input, a closed stdout pipe, SIGINT to the process or its group (130, server
# killed) and a death by SIGTERM.
# Usage: scripts/test-packages.sh [DIST_DIR] (default dist). Run from anywhere.
set -euo pipefail

# DIST_DIR is relative to where the script is run from; the default is the repository's dist/.
DIST=$(realpath -m "${1:-$(dirname "${BASH_SOURCE[0]}")/../dist}")
cd "$(dirname "${BASH_SOURCE[0]}")/.."

TOOLS_VENV=target/package-test-venv

die() {
    printf 'test-packages: error: %s\n' "$*" >&2
    exit 1
}

say() {
    printf 'test-packages: %s\n' "$*"
}

passed=0
ok() {
    passed=$((passed + 1))
    printf '  ok  %s\n' "$*"
}

command -v python3 >/dev/null || die "python3 not found (CPython >= 3.11 is needed, for pipx)"
python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' ||
    die "CPython >= 3.11 is needed for pipx (packaging/test-requirements.txt), found $(python3 --version 2>&1)"
command -v node >/dev/null || die "node not found (Node.js >= 18 is needed for the npm packages)"
command -v npm >/dev/null || die "npm not found (it comes with Node.js)"

version=$(cargo metadata --no-deps --locked --format-version 1 | python3 -c '
import json, sys
print(next(p["version"] for p in json.load(sys.stdin)["packages"] if p["name"] == "mcp-fuzz-cli"))
') || die "cannot read the version of mcp-fuzz-cli from cargo metadata"

shopt -s nullglob
wheels=("$DIST"/mcp_fuzz-"$version"-py3-none-*.whl)
launchers=("$DIST"/mcp-fuzz-"$version".tgz)
platforms=("$DIST"/mcp-fuzz-*-"$version".tgz)
shopt -u nullglob
[[ ${#wheels[@]} -eq 1 ]] ||
    die "expected one mcp_fuzz-$version wheel in $DIST, found ${#wheels[@]}: run bash scripts/package.sh first"
[[ ${#launchers[@]} -eq 1 ]] ||
    die "no mcp-fuzz-$version.tgz in $DIST: run bash scripts/package.sh first"
[[ ${#platforms[@]} -eq 1 ]] ||
    die "expected one platform tarball mcp-fuzz-OS-CPU-$version.tgz in $DIST, found ${#platforms[@]}: run bash scripts/package.sh"
wheel=${wheels[0]} launcher_tgz=${launchers[0]} platform_tgz=${platforms[0]}
(cd "$DIST" && sha256sum --quiet -c SHA256SUMS) || die "$DIST/SHA256SUMS does not match the artefacts: run bash scripts/package.sh again"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/mcp-fuzz-test-packages.XXXXXX")
cleanup() {
    # Servers a failed signal test may have left (their pid files are under $WORK).
    local f
    for f in "$WORK"/*.server-pid; do
        [[ -s $f ]] && kill -KILL "$(cat "$f")" 2>/dev/null || true
    done
    rm -rf "$WORK"
}
trap cleanup EXIT

# Nothing below may reach a registry (but for the tools of packaging/test-requirements.txt): pip
# and uv get --no-index, npm an empty cache, --offline and a
# registry on a closed port (9, discard), uv no Python downloads.
export PIP_DISABLE_PIP_VERSION_CHECK=1
export npm_config_cache=$WORK/npm-cache npm_config_registry=http://127.0.0.1:9/ npm_config_offline=true
export npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false
export npm_config_loglevel=error

# Inputs for the exit-code checks.
printf '{"tools":[]}' >"$WORK/no-tools.json"
printf '{"type":"string","minLength":3,"maxLength":1}' >"$WORK/unsatisfiable.json"
printf '{"type":"integer"}' >"$WORK/integer.json"
printf '{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}' >"$WORK/old.json"
printf '{"tools":[{"name":"b","inputSchema":{"type":"object"}}]}' >"$WORK/new.json"

# expect_exit CODE WHAT CMD...: CMD exits with CODE; its stderr is shown only when it does not.
expect_exit() {
    local want=$1 what=$2 got=0
    shift 2
    "$@" >"$WORK/out" 2>"$WORK/err" </dev/null || got=$?
    if [[ $got -ne $want ]]; then
        sed 's/^/    stderr: /' "$WORK/err" >&2
        die "$what: \`$*\` exited $got, expected $want"
    fi
    ok "$what (exit $want)"
}

# The checks every route must pass: the version and the exit codes.
check_exit_codes() {
    local route=$1
    shift
    local said
    said=$("$@" --version) || die "$route: \`$* --version\` failed"
    [[ $said == "mcp-fuzz $version" ]] || die "$route: --version printed '$said', expected 'mcp-fuzz $version'"
    ok "$route: --version prints 'mcp-fuzz $version'"
    expect_exit 2 "$route: gen without input is a usage error" "$@" gen
    grep -q 'required arguments were not provided' "$WORK/err" ||
        die "$route: gen without input did not print clap's usage error on stderr"
    # Also shows that `--` reaches mcp-fuzz: without it, `false` would be an unknown command (2).
    expect_exit 3 "$route: a server that exits at once did not start" "$@" -- false
    expect_exit 4 "$route: a capture without tools" "$@" gen --tools "$WORK/no-tools.json"
    expect_exit 5 "$route: an unsatisfiable schema" "$@" gen --schema "$WORK/unsatisfiable.json"
    expect_exit 1 "$route: a removed tool is a breaking diff" "$@" diff "$WORK/old.json" "$WORK/new.json"
}

# wait_gone PID: true once PID has exited (a zombie waiting for its reaper counts as gone).
wait_gone() {
    local pid=$1 state
    for _ in $(seq 100); do
        state=$(awk '{ print $3 }' "/proc/$pid/stat" 2>/dev/null) || return 0
        [[ $state == Z ]] && return 0
        sleep 0.1
    done
    return 1
}

# signal_run ROUTE SIGNAL WHO WANT CMD...: start a run whose server never answers, send SIGNAL
# once the server is up to CMD's process (WHO=process: a supervisor) or to its whole process group
# (WHO=group: Ctrl-C in a terminal), and expect exit status WANT (as the shell reports it).
signal_run() {
    local route=$1 signal=$2 who=$3 want=$4
    shift 4
    local pidfile="$WORK/$signal.server-pid" pid got=0
    rm -f "$pidfile"
    # Job control gives the run its own process group with the default SIGINT disposition, as
    # in a terminal (a script's background jobs otherwise ignore SIGINT).
    set -m
    "$@" --startup-timeout 120 -- bash -c "echo \$\$ >'$pidfile'; exec sleep 300" </dev/null >/dev/null 2>"$WORK/err" &
    pid=$!
    set +m
    for _ in $(seq 300); do
        [[ -s $pidfile ]] && break
        sleep 0.1
    done
    [[ -s $pidfile ]] || die "$route: the server of the $signal test did not start within 30 s"
    if [[ $who == group ]]; then
        kill "-$signal" -- "-$pid"
    else
        kill "-$signal" "$pid"
    fi
    wait "$pid" || got=$?
    if [[ $got -ne $want ]]; then
        sed 's/^/    stderr: /' "$WORK/err" >&2
        die "$route: after $signal to its $who the run exited $got, expected $want"
    fi
    ok "$route: $signal to the $who gives exit status $want"
}

check_signals() {
    local route=$1
    shift
    local who
    for who in process group; do
        signal_run "$route" INT "$who" 130 "$@"
        wait_gone "$(cat "$WORK/INT.server-pid")" || die "$route: after SIGINT to the $who the server is still running"
        ok "$route: after SIGINT to the $who the server is gone"
    done
    # mcp-fuzz does not handle SIGTERM: it dies of it, and so must the launcher, with status
    # 128 + 15. (The server of this test ignores stdin, so it outlives mcp-fuzz; a real server
    # exits when its stdin closes.)
    signal_run "$route" TERM process 143 "$@"
    kill -KILL "$(cat "$WORK/TERM.server-pid")" 2>/dev/null || true
}

check_streams() {
    local route=$1
    shift
    local lines status
    lines=$("$@" gen --schema - --mode valid --count 3 <"$WORK/integer.json" | wc -l) ||
        die "$route: gen --schema - failed"
    [[ $lines -eq 3 ]] || die "$route: gen --schema - --count 3 printed $lines lines, expected 3"
    ok "$route: standard input and output pass through"
    set +o pipefail
    "$@" gen --schema "$WORK/integer.json" --mode valid --count 100000000 2>"$WORK/err" | head -n 1 >/dev/null
    status=${PIPESTATUS[0]}
    set -o pipefail
    [[ $status -eq 0 ]] || die "$route: gen | head exited $status; a closed stdout pipe must exit 0"
    ok "$route: a closed stdout pipe exits 0"
}

say "mcp-fuzz $version from $DIST"

say "pip: $(basename "$wheel") into a fresh venv"
python3 -m venv "$WORK/venv" || die "python3 -m venv failed (Debian needs python3-venv)"
"$WORK/venv/bin/pip" install -q --no-index --find-links "$DIST" mcp-fuzz ||
    die "pip install --no-index --find-links $DIST mcp-fuzz failed"
pip_bin=$WORK/venv/bin/mcp-fuzz
[[ -x $pip_bin ]] || die "pip installed no $pip_bin"
"$WORK/venv/bin/python" - "$version" <<'EOF' || die "the wheel's metadata is wrong (see pyproject.toml)"
import sys
from importlib.metadata import metadata
m = metadata("mcp-fuzz")
want = {"Name": "mcp-fuzz", "Version": sys.argv[1], "License-Expression": "MIT"}
bad = {k: m.get(k) for k, v in want.items() if m.get(k) != v}
assert not bad, f"metadata {bad}, expected {want}"
assert m.get("Requires-Python") and m.get("Summary") and m.get("Description"), "no summary, readme or requires-python"
EOF
ok "pip: metadata (name, version, MIT, summary, readme, requires-python)"
check_exit_codes pip "$pip_bin"
check_streams pip "$pip_bin"
check_signals pip "$pip_bin"

say "npm: $(basename "$launcher_tgz") and $(basename "$platform_tgz") into a fresh project, offline"
mkdir "$WORK/project"
printf '{"name":"mcp-fuzz-package-test","version":"0.0.0","private":true}\n' >"$WORK/project/package.json"
(cd "$WORK/project" && npm install --offline "$launcher_tgz" "$platform_tgz" >/dev/null) ||
    die "npm install --offline of the two tarballs failed"
npm_bin=$WORK/project/node_modules/.bin/mcp-fuzz
[[ -x $npm_bin ]] || die "npm installed no $npm_bin"
platform_pkg=$(tar -xOzf "$platform_tgz" package/package.json | node -p 'JSON.parse(require("fs").readFileSync(0)).name')
npm_binary=$WORK/project/node_modules/$platform_pkg/bin/mcp-fuzz
cmp -s "$pip_bin" "$npm_binary" || die "the binary of $platform_pkg differs from the wheel's"
ok "npm: $platform_pkg holds the wheel's binary, byte for byte"
check_exit_codes "npm launcher" "$npm_bin"
check_streams "npm launcher" "$npm_bin"
check_signals "npm launcher" "$npm_bin"
(
    cd "$WORK/project"
    check_exit_codes "npx (project)" npx --offline mcp-fuzz
) || exit 1

# The launcher refuses a binary that needs a newer glibc than the machine's (the loader would fail
# with exit status 1, which reads as "findings"): a copy of the project whose platform package
# claims to need glibc 99.0.
if [[ $platform_pkg == */linux-* ]]; then
    cp -r "$WORK/project" "$WORK/old-glibc"
    node -e '
        const fs = require("fs"), f = process.argv[1], p = JSON.parse(fs.readFileSync(f));
        if (!p.mcpFuzz || !p.mcpFuzz.minGlibc) { console.error(f + " has no mcpFuzz.minGlibc"); process.exit(1); }
        p.mcpFuzz.minGlibc = "99.0";
        fs.writeFileSync(f, JSON.stringify(p));
    ' "$WORK/old-glibc/node_modules/$platform_pkg/package.json" || die "cannot edit the copy's $platform_pkg/package.json"
    expect_exit 127 "npm launcher: a binary for a newer glibc" "$WORK/old-glibc/node_modules/.bin/mcp-fuzz" --version
    grep -q 'needs glibc 99.0 or newer' "$WORK/err" ||
        die "the launcher did not explain the glibc mismatch: $(cat "$WORK/err")"
    ok "npm launcher: says the binary needs glibc 99.0 and how to build it"
fi

say "npm: the two tarballs into a fresh global prefix, offline"
npm install -g --prefix "$WORK/global" --offline "$launcher_tgz" "$platform_tgz" >/dev/null ||
    die "npm install -g --offline of the two tarballs failed"
check_exit_codes "npm -g" "$WORK/global/bin/mcp-fuzz"

say "npx --package: a one-off run from the tarballs, offline"
check_exit_codes "npx --package" npx --offline --yes --package "$launcher_tgz" --package "$platform_tgz" -- mcp-fuzz

say "npm: the launcher without its platform package"
mkdir "$WORK/bare"
printf '{"name":"mcp-fuzz-package-test-bare","version":"0.0.0","private":true}\n' >"$WORK/bare/package.json"
(cd "$WORK/bare" && npm install --offline "$launcher_tgz" >/dev/null) || die "npm install --offline of $launcher_tgz failed"
expect_exit 127 "npm launcher alone: no binary" "$WORK/bare/node_modules/.bin/mcp-fuzz" --version
grep -q "$platform_pkg@$version is missing" "$WORK/err" ||
    die "the launcher without its binary did not name $platform_pkg@$version: $(cat "$WORK/err")"
grep -q "npm install $platform_pkg@$version" "$WORK/err" ||
    die "the launcher without its binary did not say how to install $platform_pkg"
ok "npm launcher alone: names $platform_pkg@$version and how to install it"
# A platform without a package: the launcher of a copy that lists none for this machine.
cp -r "$WORK/bare" "$WORK/unsupported"
node -e '
    const fs = require("fs"), f = process.argv[1], p = JSON.parse(fs.readFileSync(f));
    const name = process.argv[2];
    if (!(name in p.optionalDependencies)) { console.error(f + " does not list " + name); process.exit(1); }
    delete p.optionalDependencies[name];
    fs.writeFileSync(f, JSON.stringify(p));
' "$WORK/unsupported/node_modules/mcp-fuzz/package.json" "$platform_pkg" ||
    die "cannot edit the copy's mcp-fuzz/package.json"
expect_exit 127 "npm launcher: a platform without a package" "$WORK/unsupported/node_modules/.bin/mcp-fuzz" --version
grep -q "has no prebuilt binary for ${platform_pkg#@mcp-fuzz/}" "$WORK/err" ||
    die "the launcher did not say that the platform has no binary: $(cat "$WORK/err")"
grep -q 'cargo install' "$WORK/err" || die "the launcher did not say how to build the binary: $(cat "$WORK/err")"
ok "npm launcher: says the platform has no binary and how to build one"
MCP_FUZZ_BINARY=$pip_bin expect_exit 2 "npm launcher alone: MCP_FUZZ_BINARY runs that binary" \
    "$WORK/bare/node_modules/.bin/mcp-fuzz" gen

say "pipx and uvx (packaging/test-requirements.txt, from PyPI into $TOOLS_VENV)"
if ! "$TOOLS_VENV/bin/python" -c 'import sys' 2>/dev/null; then
    python3 -m venv --clear "$TOOLS_VENV" || die "python3 -m venv $TOOLS_VENV failed"
fi
"$TOOLS_VENV/bin/pip" install -q -r packaging/test-requirements.txt ||
    die "pip install -r packaging/test-requirements.txt into $TOOLS_VENV failed (PyPI unreachable?)"
PIPX_HOME=$WORK/pipx PIPX_BIN_DIR=$WORK/pipx-bin PIPX_MAN_DIR=$WORK/pipx-man \
    "$TOOLS_VENV/bin/pipx" install --pip-args="--no-index --find-links $DIST" "mcp-fuzz==$version" \
    >"$WORK/pipx.log" 2>&1 || die "pipx install mcp-fuzz==$version from $DIST failed: $(cat "$WORK/pipx.log")"
check_exit_codes pipx "$WORK/pipx-bin/mcp-fuzz"
export UV_CACHE_DIR=$WORK/uv-cache UV_TOOL_DIR=$WORK/uv-tools UV_PYTHON_DOWNLOADS=never UV_NO_CONFIG=1
check_exit_codes uvx "$TOOLS_VENV/bin/uvx" --offline --no-index --find-links "$DIST" "mcp-fuzz@$version"

printf '\n%d passed, 0 failed\n' "$passed"
