//! How `mcp-fuzz run` starts a stdio server and picks what to call: the minimal environment
//! (`--env`, `--inherit-env`), `--cwd`, `--tool`/`--skip-tool` globs with a reason for every
//! skipped tool, and the server's last stderr lines in an `exited` outcome.

use crate::run::{finding_of_kind, run_json, server};
use crate::util::{TempDir, command, finish, statuses};
use serde_json::Value;
use std::collections::BTreeMap;

/// Runs fx-healthy behind a `/bin/sh` wrapper that records its environment and working
/// directory in `dir`; returns the exit code, the report text and the recorded environment.
fn run_recording(
    dir: &TempDir,
    args: &[&str],
    caller_env: &[(&str, &str)],
) -> (i32, String, BTreeMap<String, String>, String) {
    let script = r#"env > "$0/env.txt"; pwd > "$0/pwd.txt"; exec "$1""#;
    let fx = server("fx-healthy");
    let mut all = vec!["--json", "--cases", "1"];
    all.extend_from_slice(args);
    all.extend([
        "--",
        "/bin/sh",
        "-c",
        script,
        dir.path().to_str().expect("utf-8"),
        fx.to_str().expect("utf-8"),
    ]);
    let mut cmd = command(&all);
    cmd.envs(caller_env.iter().copied());
    let run = finish(cmd.spawn().expect("mcp-fuzz starts"));
    let text = std::fs::read_to_string(dir.join("env.txt")).expect("the wrapper ran");
    let env = text
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
    let pwd = std::fs::read_to_string(dir.join("pwd.txt")).expect("the wrapper ran");
    (run.code, run.stdout, env, pwd.trim_end().to_owned())
}

#[test]
fn the_server_gets_a_minimal_environment_plus_env_and_runs_in_cwd() {
    let dir = TempDir::new("connect-env");
    let cwd = TempDir::new("connect-cwd");
    let cwd_arg = cwd.path().to_str().expect("utf-8");
    let (code, report, env, pwd) = run_recording(
        &dir,
        &["--env", "EXTRA_SETTING=hunter2-value", "--cwd", cwd_arg, "--no-sandbox"],
        &[("MCP_FUZZ_TEST_SECRET", "leaked"), ("LC_MCP_FUZZ_TEST", "kept")],
    );
    assert_eq!(code, 0, "{report}");
    // What the shell itself adds on start, plus the documented allow-list.
    let shell = ["PWD", "OLDPWD", "SHLVL", "_"];
    let allowed = ["PATH", "HOME", "USER", "LANG", "TMPDIR", "TERM", "EXTRA_SETTING"];
    let unexpected: Vec<&String> = env
        .keys()
        .filter(|k| {
            !k.starts_with("LC_") && !shell.contains(&k.as_str()) && !allowed.contains(&k.as_str())
        })
        .collect();
    assert!(unexpected.is_empty(), "the caller's environment leaked: {unexpected:?}");
    assert!(!env.contains_key("MCP_FUZZ_TEST_SECRET"));
    assert_eq!(env.get("EXTRA_SETTING").map(String::as_str), Some("hunter2-value"));
    assert_eq!(env.get("LC_MCP_FUZZ_TEST").map(String::as_str), Some("kept"));
    assert!(env.contains_key("PATH"));
    let want = std::fs::canonicalize(cwd.path()).expect("cwd exists");
    assert_eq!(std::fs::canonicalize(&pwd).expect("pwd exists"), want);
    // `--env` values are secrets: the report names the key only.
    assert!(!report.contains("hunter2-value"), "{report}");
    assert!(report.contains("EXTRA_SETTING=[REDACTED]"), "{report}");
}

#[test]
fn in_the_sandbox_the_server_gets_its_own_directory_home_and_tmpdir() {
    let dir = TempDir::new("connect-sandbox");
    let (tmp, home) = (TempDir::new("connect-tmp"), TempDir::new("connect-home"));
    std::fs::create_dir_all(home.join(".cargo")).expect("a toolchain directory");
    let tmp_arg = tmp.path().to_str().expect("utf-8");
    let home_arg = home.path().to_str().expect("utf-8");
    let (code, report, env, pwd) = run_recording(
        &dir,
        &["--env", "MY_DB={sandbox}/db.json"],
        &[("TMPDIR", tmp_arg), ("HOME", home_arg), ("CARGO_HOME", "")],
    );
    assert_eq!(code, 0, "{report}");
    let sandbox = pwd.strip_suffix("/work").expect("the working directory is the sandbox's");
    assert!(sandbox.starts_with(tmp_arg) && sandbox.contains("mcp-fuzz-sandbox-"), "{pwd}");
    assert_eq!(env["HOME"], format!("{sandbox}/home"));
    assert_eq!(env["TMPDIR"], format!("{sandbox}/tmp"));
    assert_eq!(env["MY_DB"], format!("{pwd}/db.json"), "{{sandbox}} in an --env value");
    // CARGO_HOME is set (empty) in the caller's environment: not overridden; RUSTUP_HOME's
    // directory does not exist: not set.
    assert!(!env.contains_key("CARGO_HOME") && !env.contains_key("RUSTUP_HOME"), "{env:?}");
    assert!(!std::path::Path::new(sandbox).exists(), "removed after the run");
}

#[test]
fn inherit_env_passes_the_callers_whole_environment() {
    let dir = TempDir::new("connect-inherit");
    let (code, report, env, _) =
        run_recording(&dir, &["--inherit-env"], &[("MCP_FUZZ_TEST_SECRET", "passed")]);
    assert_eq!(code, 0, "{report}");
    assert_eq!(env.get("MCP_FUZZ_TEST_SECRET").map(String::as_str), Some("passed"));
}

#[test]
fn tool_and_skip_tool_globs_select_and_every_skipped_tool_says_why() {
    // fx-paged lists tool_1 .. tool_7 over three pages.
    let (code, r, stderr) =
        run_json("fx-paged", &["--tool", "tool_?", "--skip-tool", "tool_2", "--skip-tool", "*7"]);
    assert_eq!(code, 0, "{stderr}");
    let s = statuses(&r);
    assert_eq!(s.len(), 7, "{s:?}");
    for t in ["tool_1", "tool_3", "tool_4", "tool_5", "tool_6"] {
        assert_eq!(s[t].0, "tested", "{t}: {s:?}");
    }
    for t in ["tool_2", "tool_7"] {
        assert_eq!(s[t], ("skipped".to_owned(), "excluded by --skip-tool".to_owned()), "{t}");
    }
    let (_, r, _) = run_json("fx-paged", &["--tool", "tool_1"]);
    let s = statuses(&r);
    assert_eq!(s["tool_1"].0, "tested");
    assert_eq!(s["tool_4"], ("skipped".to_owned(), "not selected by --tool".to_owned()));
}

#[test]
fn an_exited_outcome_quotes_the_servers_last_stderr_lines() {
    // example-notes panics on `limit: 0` the way an unchecked division does.
    let (_, r, _) = run_json("example-notes", &[]);
    let exited = finding_of_kind(&r, "exited");
    let stderr: Vec<&str> = exited["outcome"]["stderr"]
        .as_array()
        .expect("stderr lines")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        stderr.iter().any(|l| l.contains("attempt to divide by zero")),
        "stderr tail: {stderr:?}"
    );
}
