"""Check the CI recipes in docs/ci/ beyond their JSON Schemas (scripts/check-ci-recipes.sh runs it).

    check-ci-recipes.py VERSION SHELLCHECK GITHUB_WORKFLOW GITLAB_CI

Parses both files strictly (ruamel.yaml: duplicate keys are errors), runs shellcheck on every
shell script in them (GitHub `run:` as bash with `${{ }}` expressions replaced, GitLab
`before_script`/`script`/`after_script` as POSIX sh), and checks the promises docs/ci/README.md
makes: mcp-fuzz pinned to VERSION, third-party actions pinned by commit, every step after the fuzz
run and the GitLab artifacts kept when the run fails. Prints one line per check; exits 1 on the
first failed one, naming the file and the step.
"""

import re
import subprocess
import sys
from pathlib import Path

from ruamel.yaml import YAML

passed = 0


def ok(what):
    global passed
    passed += 1
    print(f"  ok  {what}")


def fail(what):
    print(f"check-ci-recipes: error: {what}", file=sys.stderr)
    sys.exit(1)


def load(path):
    try:
        return YAML(typ="safe", pure=True).load(Path(path).read_text())
    except Exception as e:  # noqa: BLE001 - any parse error is reported the same way
        fail(f"{path} is not valid YAML: {e}")


def shellcheck(shellcheck_bin, path, where, script, shell):
    result = subprocess.run(
        [shellcheck_bin, "--shell", shell, "--severity", "style", "--format", "gcc", "-"],
        input=script,
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        fail(f"{path}: shellcheck ({shell}) found problems in {where}:\n{result.stdout}{result.stderr}")
    ok(f"{path}: {where} passes shellcheck ({shell})")


# `${{ expr }}` is substituted by the runner before the shell sees the script; shellcheck is given
# a plain word in its place, as actionlint does.
EXPRESSION = re.compile(r"\$\{\{.*?\}\}", re.S)
PINNED_ACTION = re.compile(r"^[\w.-]+/[\w./-]+@[0-9a-f]{40}$")


def check_github(path, version, shellcheck_bin, text):
    doc = load(path)
    jobs = doc.get("jobs") or fail(f"{path} has no jobs")
    for job_id, job in jobs.items():
        if str(job.get("env", {}).get("MCP_FUZZ_VERSION")) != version:
            fail(f"{path}: job {job_id} must pin MCP_FUZZ_VERSION to {version}, the workspace version")
        ok(f"{path}: job {job_id} pins mcp-fuzz {version}")
        fuzzed = False
        for n, step in enumerate(job.get("steps", []), 1):
            name = step.get("name") or step.get("uses") or f"step {n}"
            if "uses" in step:
                uses = step["uses"]
                if not PINNED_ACTION.match(uses):
                    fail(f"{path}: {name}: `uses: {uses}` must be pinned to a full commit SHA")
                line = next((ln for ln in text.splitlines() if f"uses: {uses}" in ln), "")
                if not re.search(r"# v\d", line):
                    fail(f"{path}: {name}: the pin of {uses} needs its tag in a `# vX.Y.Z` comment")
                ok(f"{path}: {name} is pinned by commit ({line.split('#')[-1].strip()})")
            if "run" in step:
                script = EXPRESSION.sub("GITHUB_EXPRESSION", step["run"])
                shellcheck(shellcheck_bin, path, f"the run: of '{name}'", script, "bash")
                if "mcp-fuzz --profile ci" in step["run"]:
                    fuzzed = True
                    continue
            if fuzzed and not str(step.get("if", "")).lstrip().startswith("always()"):
                fail(f"{path}: '{name}' comes after the fuzz run and needs `if: always()` to run when it fails")
            if fuzzed:
                ok(f"{path}: '{name}' runs when the fuzz run fails (if: always())")
        if not fuzzed:
            fail(f"{path}: job {job_id} has no step running `mcp-fuzz --profile ci`")


def check_gitlab(path, version, shellcheck_bin):
    doc = load(path)
    jobs = {k: v for k, v in doc.items() if isinstance(v, dict) and "script" in v}
    if not jobs:
        fail(f"{path} has no job (a mapping with a script)")
    for job_id, job in jobs.items():
        if str(job.get("variables", {}).get("MCP_FUZZ_VERSION")) != version:
            fail(f"{path}: job {job_id} must pin MCP_FUZZ_VERSION to {version}, the workspace version")
        ok(f"{path}: job {job_id} pins mcp-fuzz {version}")
        for key in ("before_script", "script", "after_script"):
            lines = job.get(key, [])
            if isinstance(lines, str):
                lines = [lines]
            # The runner runs a job's lines in one shell, so check them as one script.
            shellcheck(shellcheck_bin, path, f"{job_id}.{key}", "\n".join(lines) + "\n", "sh")
        if "mcp-fuzz --profile ci" not in job["script"]:
            fail(f"{path}: job {job_id} does not run `mcp-fuzz --profile ci`")
        artifacts = job.get("artifacts", {})
        if artifacts.get("when") != "always":
            fail(f"{path}: job {job_id} needs `artifacts: when: always` to keep the reports of a failing run")
        junit = artifacts.get("reports", {}).get("junit")
        if junit != "mcp-fuzz-report/report.junit.xml":
            fail(f"{path}: job {job_id} must report mcp-fuzz-report/report.junit.xml as junit, not {junit}")
        if "mcp-fuzz-report/" not in artifacts.get("paths", []):
            fail(f"{path}: job {job_id} must keep mcp-fuzz-report/ (the SARIF and Markdown reports)")
        ok(f"{path}: job {job_id} keeps the JUnit report and mcp-fuzz-report/ when the run fails")


def main():
    if len(sys.argv) != 5:
        fail("usage: check-ci-recipes.py VERSION SHELLCHECK GITHUB_WORKFLOW GITLAB_CI")
    version, shellcheck_bin, github, gitlab = sys.argv[1:]
    check_github(github, version, shellcheck_bin, Path(github).read_text())
    check_gitlab(gitlab, version, shellcheck_bin)
    print(f"check-ci-recipes.py: {passed} checks passed")


if __name__ == "__main__":
    main()
