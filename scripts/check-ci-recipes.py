"""Check the CI recipes in docs/ci/ beyond their JSON Schemas (scripts/check-ci-recipes.sh runs it).

    check-ci-recipes.py lint VERSION SHELLCHECK GITHUB_WORKFLOW GITLAB_CI
    check-ci-recipes.py run GITHUB_WORKFLOW GITLAB_CI REPO SARIF_SCHEMA

`lint` parses both files strictly (ruamel.yaml: duplicate keys are errors), runs shellcheck on
every shell script in them (GitHub `run:` as bash with `${{ }}` expressions replaced, GitLab
`before_script`/`script`/`after_script` as POSIX sh), and checks the promises docs/ci/README.md
makes: mcp-fuzz pinned to VERSION, third-party actions pinned by commit, every step after the fuzz
run and the GitLab artifacts kept when the run fails.

`run` takes REPO, a directory where the recipes' plain-flags command has just run (so it holds
mcp-fuzz-report/), and runs the recipes' own scripts there as the CI systems would: the GitHub
steps `summary` and `sarif` (bash -eo pipefail, with GITHUB_STEP_SUMMARY and RUNNER_TEMP), and the
GitLab after_script (sh -e). It checks that the job summary holds the Markdown report, that the
SARIF given to code scanning validates against SARIF_SCHEMA and anchors every result to a file,
and that every path the recipes upload exists; then the summary step once more without a report.

Prints one line per check; exits 1 on the first failed one, naming the file and the step.
"""

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import jsonschema
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


def github_step(doc, path, step_id):
    job = next(iter(doc["jobs"].values()))
    for step in job["steps"]:
        if step.get("id") == step_id:
            return job, step
    fail(f"{path} has no step with `id: {step_id}`")


def run_script(path, where, argv, script, cwd, env):
    result = subprocess.run([*argv, "-c", script], cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        fail(f"{path}: {where} exited {result.returncode} when run:\n{result.stdout}{result.stderr}")
    return result.stdout


# GitHub's `shell: bash` on Linux: `bash --noprofile --norc -eo pipefail {0}`.
GITHUB_BASH = ["bash", "--noprofile", "--norc", "-eo", "pipefail"]


def run_github(path, repo, sarif_schema, tmp):
    doc = load(path)
    report_md = (repo / "mcp-fuzz-report" / "report.md").read_text()

    def step_env(job, step, summary, runner_temp):
        env = dict(os.environ)
        env.update({k: str(v) for k, v in job.get("env", {}).items()})
        env.update({k: str(v) for k, v in step.get("env", {}).items()})
        env.update({"GITHUB_STEP_SUMMARY": str(summary), "RUNNER_TEMP": str(runner_temp), "GITHUB_WORKSPACE": str(repo)})
        return env

    job, step = github_step(doc, path, "summary")
    summary = tmp / "step-summary.md"
    summary.write_text("")
    run_script(path, "the summary step", GITHUB_BASH, step["run"], repo, step_env(job, step, summary, tmp))
    if report_md.strip() not in summary.read_text():
        fail(f"{path}: the summary step did not append mcp-fuzz-report/report.md to $GITHUB_STEP_SUMMARY")
    ok(f"{path}: the summary step appends report.md to the job summary")
    empty = tmp / "no-report"
    empty.mkdir()
    summary.write_text("")
    run_script(path, "the summary step (no report)", GITHUB_BASH, step["run"], empty, step_env(job, step, summary, tmp))
    if "no report" not in summary.read_text():
        fail(f"{path}: without a report the summary step did not say so: {summary.read_text()!r}")
    ok(f"{path}: without a report (exit 2, 3, 4) the summary step says there is none")

    job, step = github_step(doc, path, "sarif")
    run_script(path, "the sarif step", GITHUB_BASH, step["run"], repo, step_env(job, step, summary, tmp))
    prepared = tmp / "mcp-fuzz.sarif"
    if not prepared.is_file():
        fail(f"{path}: the sarif step wrote no $RUNNER_TEMP/mcp-fuzz.sarif")
    sarif = json.loads(prepared.read_text())
    schema = json.loads(Path(sarif_schema).read_text())
    validator = jsonschema.validators.validator_for(schema)(schema)
    errors = sorted(validator.iter_errors(sarif), key=lambda e: list(e.path))
    if errors:
        fail(f"{path}: the SARIF for code scanning is not valid SARIF 2.1.0: {errors[0].message} at {list(errors[0].path)}")
    results = [r for run in sarif["runs"] for r in run.get("results", [])]
    if not results:
        fail(f"{path}: the run of the check found nothing, so the SARIF step was not exercised on a result")
    for r in results:
        locations = r.get("locations") or []
        if not locations or not all(loc.get("physicalLocation", {}).get("artifactLocation", {}).get("uri") for loc in locations):
            fail(f"{path}: a result of the SARIF for code scanning has no physical location: {json.dumps(r)[:300]}")
    ok(f"{path}: the SARIF for code scanning is valid SARIF 2.1.0 and anchors its {len(results)} result(s) to a file")
    upload = next(s for s in job["steps"] if "upload-sarif" in s.get("uses", ""))
    if upload.get("with", {}).get("sarif_file") != "${{ runner.temp }}/mcp-fuzz.sarif":
        fail(f"{path}: upload-sarif must upload ${{{{ runner.temp }}}}/mcp-fuzz.sarif, the file the sarif step writes")
    ok(f"{path}: upload-sarif uploads the file the sarif step writes")
    for s in job["steps"]:
        if "upload-artifact" in s.get("uses", ""):
            target = repo / s["with"]["path"]
            if not target.exists():
                fail(f"{path}: '{s.get('name')}' uploads {s['with']['path']}, which the run did not write")
            ok(f"{path}: '{s.get('name')}' uploads {s['with']['path']}, which the run wrote")


def run_gitlab(path, repo):
    doc = load(path)
    report_md = (repo / "mcp-fuzz-report" / "report.md").read_text()
    for job_id, job in ((k, v) for k, v in doc.items() if isinstance(v, dict) and "script" in v):
        out = run_script(path, f"{job_id}.after_script", ["sh", "-e"], "\n".join(job["after_script"]), repo, dict(os.environ))
        if report_md.strip() not in out:
            fail(f"{path}: {job_id}.after_script did not print mcp-fuzz-report/report.md")
        ok(f"{path}: {job_id}.after_script prints report.md in the job log")
        artifacts = job["artifacts"]
        for p in [*artifacts["paths"], artifacts["reports"]["junit"]]:
            if not (repo / p).exists():
                fail(f"{path}: {job_id} keeps {p} as an artifact, which the run did not write")
            ok(f"{path}: {job_id} keeps {p}, which the run wrote")


def main():
    if len(sys.argv) == 6 and sys.argv[1] == "lint":
        version, shellcheck_bin, github, gitlab = sys.argv[2:]
        check_github(github, version, shellcheck_bin, Path(github).read_text())
        check_gitlab(gitlab, version, shellcheck_bin)
    elif len(sys.argv) == 6 and sys.argv[1] == "run":
        github, gitlab, repo, sarif_schema = sys.argv[2:]
        with tempfile.TemporaryDirectory() as tmp:
            run_github(github, Path(repo), sarif_schema, Path(tmp))
        run_gitlab(gitlab, Path(repo))
    else:
        fail(
            "usage: check-ci-recipes.py lint VERSION SHELLCHECK GITHUB_WORKFLOW GITLAB_CI\n"
            "       check-ci-recipes.py run GITHUB_WORKFLOW GITLAB_CI REPO SARIF_SCHEMA"
        )
    print(f"check-ci-recipes.py {sys.argv[1]}: {passed} checks passed")


if __name__ == "__main__":
    main()
