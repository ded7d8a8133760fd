#!/usr/bin/env bash
# Install the real MCP clients that `mcp-fuzz-clients`' real-client captures run (issue 14), at
# the versions pinned in scripts/clients/ (package.json + package-lock.json, requirements.txt):
#   - DIR/node/node_modules (npm ci): MCP Inspector CLI, Codex CLI, Claude Code, Gemini CLI;
#   - DIR/mcpo-venv (pip): mcpo, with mcp<2 and fastapi<0.145.
# DIR is, in order: --dir DIR, $MCP_FUZZ_CLIENTS_DIR, target/clients in the repository. Inside the
# repository it must be ignored by git (target/ is). Run from anywhere.
# Idempotent: a part whose pin file has not changed since it was installed is left alone (the
# stamp files DIR/node/.pins and DIR/mcpo-venv/.pins); --force reinstalls both.
# Needs the npm and PyPI registries; nothing is downloaded when the clients run.
set -euo pipefail

die() {
    printf 'install-clients: error: %s\n' "$*" >&2
    exit 1
}

usage() {
    sed -n '2,10p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
    printf '\nusage: %s [--dir DIR] [--force]\n' "$0"
}

dir=${MCP_FUZZ_CLIENTS_DIR:-}
force=0
while [[ $# -gt 0 ]]; do
    case $1 in
        --dir)
            [[ $# -ge 2 && -n $2 ]] || die "--dir needs a directory"
            dir=$2
            shift 2
            ;;
        --dir=*)
            dir=${1#--dir=}
            [[ -n $dir ]] || die "--dir needs a directory"
            shift
            ;;
        --force)
            force=1
            shift
            ;;
        -h | --help)
            usage
            exit 0
            ;;
        *) die "unknown argument '$1' (see --help)" ;;
    esac
done

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
pins=$repo/scripts/clients
# A relative --dir is relative to where the script was started, like any other path argument.
if [[ -z $dir ]]; then
    dir=$repo/target/clients
elif [[ $dir != /* ]]; then
    dir=$PWD/$dir
fi
dir=$(realpath -m "$dir")

# The clients must never be committed: inside the repository the directory must be ignored.
case $dir/ in
    "$repo"/*)
        if command -v git >/dev/null && git -C "$repo" rev-parse --git-dir >/dev/null 2>&1; then
            git -C "$repo" check-ignore -q "$dir" ||
                die "$dir is inside the repository but not ignored by git; use target/clients or a directory outside it"
        fi
        ;;
esac
mkdir -p "$dir" || die "cannot create $dir"

command -v node >/dev/null || die "node not found (Node.js >= 20 is needed for the npm clients)"
command -v npm >/dev/null || die "npm not found (it comes with Node.js)"
command -v python3 >/dev/null || die "python3 not found (CPython >= 3.10 is needed for mcpo)"
node_major=$(node -p 'process.versions.node.split(".")[0]')
[[ $node_major -ge 20 ]] || die "Node.js >= 20 needed, found $(node --version)"
python3 -c 'import sys; sys.exit(sys.version_info < (3, 10))' ||
    die "Python >= 3.10 needed for mcpo, found $(python3 --version 2>&1)"
for f in package.json package-lock.json requirements.txt; do
    [[ -f $pins/$f ]] || die "$pins/$f is missing (it is committed with the script)"
done

# The checksum of the pin files a part was installed from.
stamp_of() {
    cat "$@" | sha256sum | cut -d' ' -f1
}

start=$SECONDS

node_dir=$dir/node
node_stamp=$(stamp_of "$pins/package.json" "$pins/package-lock.json")
if [[ $force -eq 0 && -f $node_dir/.pins && $(cat "$node_dir/.pins") == "$node_stamp" &&
    -d $node_dir/node_modules ]]; then
    echo "install-clients: npm clients already installed in $node_dir (pins unchanged)"
else
    echo "install-clients: npm ci in $node_dir (Codex CLI and Claude Code bring native binaries: ~700 MB)"
    mkdir -p "$node_dir"
    rm -f "$node_dir/.pins"
    cp "$pins/package.json" "$pins/package-lock.json" "$node_dir/"
    # Optional dependencies carry the native binaries of Codex and Claude Code: never omit them.
    npm ci --prefix "$node_dir" --include=optional --no-audit --no-fund --loglevel=error ||
        die "npm ci in $node_dir failed (is scripts/clients/package-lock.json in step with package.json? is the npm registry reachable?)"
    echo "$node_stamp" >"$node_dir/.pins"
fi

venv=$dir/mcpo-venv
venv_stamp=$(stamp_of "$pins/requirements.txt")
if [[ $force -eq 0 && -f $venv/.pins && $(cat "$venv/.pins") == "$venv_stamp" && -x $venv/bin/mcpo ]]; then
    echo "install-clients: mcpo already installed in $venv (pins unchanged)"
else
    echo "install-clients: mcpo venv in $venv"
    if [[ $force -eq 1 ]] || ! "$venv/bin/python" -c 'import sys' 2>/dev/null; then
        python3 -m venv --clear "$venv" || die "python3 -m venv $venv failed (Debian needs python3-venv)"
    fi
    rm -f "$venv/.pins"
    PIP_DISABLE_PIP_VERSION_CHECK=1 "$venv/bin/pip" install -q -r "$pins/requirements.txt" ||
        die "pip install -r scripts/clients/requirements.txt into $venv failed (is PyPI reachable?)"
    echo "$venv_stamp" >"$venv/.pins"
fi

# Check that every client starts, and print the versions (what the captures will record).
bin=$node_dir/node_modules/.bin
# Each CLI gets a throwaway HOME: --version must not write into the user's configuration.
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
# Prints the first stdout line of a version command (stderr holds warnings, e.g. Codex's about
# its HOME being under /tmp), or dies with the end of its stderr.
version_of() {
    local name=$1
    shift
    local out
    out=$("$@" </dev/null 2>"$scratch/stderr") ||
        die "$name does not start: $* failed: $(tail -n 3 "$scratch/stderr")"
    printf '  %-12s %s\n' "$name" "$(printf '%s' "$out" | head -n 1)"
}
for b in mcp-inspector codex claude gemini; do
    [[ -x $bin/$b ]] || die "$bin/$b missing after npm ci"
done
[[ -x $venv/bin/mcpo ]] || die "$venv/bin/mcpo missing after pip install"
echo "install-clients: versions"
version_of inspector node -p "require('$node_dir/node_modules/@modelcontextprotocol/inspector/package.json').version"
version_of mcpo "$venv/bin/python" -c 'from importlib.metadata import version; import mcpo; print(version("mcpo"), "(mcp", version("mcp") + ", fastapi", version("fastapi") + ")")'
version_of codex env -i PATH="$PATH" HOME="$scratch" CODEX_HOME="$scratch" "$bin/codex" --version
version_of claude-code env -i PATH="$PATH" HOME="$scratch" CLAUDE_CONFIG_DIR="$scratch" DISABLE_AUTOUPDATER=1 "$bin/claude" --version
version_of gemini-cli env -i PATH="$PATH" HOME="$scratch" "$bin/gemini" --version
echo "  node $(node --version), npm $(npm --version), $("$venv/bin/python" --version)"
echo "install-clients: done in $((SECONDS - start)) s; MCP_FUZZ_CLIENTS_DIR=$dir"
