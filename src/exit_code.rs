//! The process exit codes: the one documented table (mirrored in the README).
//!
//! | Code | Name                   | Meaning                                                             |
//! |-----:|------------------------|---------------------------------------------------------------------|
//! |    0 | `SUCCESS`              | Done, nothing found; also `--help`, `--version`, a closed stdout.   |
//! |    1 | `FINDINGS`             | Problems found (`run`, `report merge`: not in the baseline; `call`), with `--fail-under P` a score below P instead, or the `diff --fail-on` policy failed. |
//! |    2 | `USAGE`                | Usage or input error: bad flags, unreadable file, malformed JSON, bad baseline, shards of different runs. |
//! |    3 | `SERVER_START`         | The server did not start or finish the initialize handshake.              |
//! |    4 | `NO_TOOLS`             | No tools selected: none listed, or `--tool` names none of them; a run that tested no tool and failed nothing else. |
//! |    5 | `UNSATISFIABLE_SCHEMA` | `gen`: the schema cannot be honoured (unsatisfiable, unsupported).  |
//! |    6 | `CLIENT_UNAVAILABLE`   | `clients`: a real client asked for was not captured (not installed, another version with `--pin`, broken) and no finding fails. |
//! |  101 | `INTERNAL_ERROR`       | A bug in mcp-fuzz (a panic): every server it started was killed.    |
//! |  130 | `INTERRUPTED`          | Ctrl-C: the run stopped and the server's process group was killed.  |
//! |  143 | `TERMINATED`           | SIGTERM: the same, for a cancelled CI job or `timeout`.             |
//!
//! A number is never reused for another meaning: new outcomes get new numbers.
//! See: <https://github.com/nextest-rs/nextest/blob/main/nextest-metadata/src/exit_codes.rs>.

/// Done; nothing found. Also used for `--help`, `--version` and a closed stdout pipe.
pub const SUCCESS: u8 = 0;

/// The run found problems in the server under test, or the `diff` policy failed.
pub const FINDINGS: u8 = 1;

/// Usage or input error: bad flags, an unreadable file, malformed JSON or a malformed capture.
pub const USAGE: u8 = 2;

/// The server failed to start or to complete the MCP handshake.
pub const SERVER_START: u8 = 3;

/// No tools selected: the capture lists no tools, or `--tool` names none of them.
pub const NO_TOOLS: u8 = 4;

/// `gen`: the schema cannot be honoured (unsatisfiable, unsupported construct, malformed schema).
pub const UNSATISFIABLE_SCHEMA: u8 = 5;

/// `clients`: a real client named with `--adapter` could not be captured (not installed, another
/// version with `--pin`, broken) and no finding fails the policy; the report says which and why,
/// and every other adapter's results are in it.
pub const CLIENT_UNAVAILABLE: u8 = 6;

/// A panic: a bug in mcp-fuzz, not a finding. Every server process group it started was killed
/// first (Rust's own status for a panic, kept so that wrappers recognise it).
pub const INTERNAL_ERROR: u8 = 101;

/// Interrupted by Ctrl-C (the shell convention: 128 + SIGINT).
pub const INTERRUPTED: u8 = 130;

/// Stopped by SIGTERM (128 + SIGTERM): a cancelled CI job, `timeout`.
pub const TERMINATED: u8 = 143;

/// The exit code of a finished run (or of merged shards): findings that fail the run (a failure
/// among prompts, resources or protocol checks counts even when no tool was tested), no tool
/// tested (unless this is a shard whose share was empty: the merged report decides), or a score
/// below `fail_under`.
///
/// See: issue 30 item 10 (exit 4, "no tool was tested", won over a failure among resources).
pub fn of_run(report: &mcp_fuzz_engine::report::Report, fail_under: Option<f64>) -> u8 {
    if report.tested() == 0 && !report.is_empty_shard() {
        return if report.failures() > 0 { FINDINGS } else { NO_TOOLS };
    }
    let failing = match (fail_under, report.score.percent) {
        (Some(p), Some(score)) => score < p,
        _ => report.failures() > 0,
    };
    if failing { FINDINGS } else { SUCCESS }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_beats_no_tool_tested() {
        let report = |status: &str, findings: serde_json::Value| {
            serde_json::from_value::<mcp_fuzz_engine::report::Report>(serde_json::json!({
                "reportVersion": 1, "toolVersion": "0.1.0",
                "target": {"transport": "stdio", "command": ["srv"], "env": [], "inheritEnv": false, "cwd": null},
                "server": {"name": "s", "version": "1", "protocolVersion": "2025-06-18"},
                "seed": 3,
                "tools": [{"name": "t", "status": status, "cases": {"boundary": 0, "valid": 0, "invalid": 0},
                           "graceful": 0, "scored": 0, "outcomes": {}, "elapsedSecs": 0.0}],
                "findings": findings,
                "score": {"graceful": 0, "scored": 0},
                "restarts": 0, "calls": 0, "durationSecs": 0.1
            }))
            .expect("a report")
        };
        let resource_failure = serde_json::json!([{
            "kind": "handler-exception", "severity": "failure",
            "surface": {"kind": "resource", "name": "file:///x"},
            "request": {"method": "resources/read", "params": {"uri": "file:///x"}},
            "outcome": {"kind": "handler-exception", "text": "TypeError: x is not a function"},
            "message": "m", "flaky": false
        }]);
        assert_eq!(of_run(&report("skipped", serde_json::json!([])), None), NO_TOOLS);
        assert_eq!(of_run(&report("skipped", resource_failure), None), FINDINGS);
        assert_eq!(of_run(&report("tested", serde_json::json!([])), None), SUCCESS);
    }

    #[test]
    fn codes_are_distinct() {
        let codes = [
            SUCCESS,
            FINDINGS,
            USAGE,
            SERVER_START,
            NO_TOOLS,
            UNSATISFIABLE_SCHEMA,
            CLIENT_UNAVAILABLE,
            INTERNAL_ERROR,
            INTERRUPTED,
            TERMINATED,
        ];
        for (i, a) in codes.iter().enumerate() {
            for b in &codes[i + 1..] {
                assert_ne!(a, b);
            }
        }
    }
}
