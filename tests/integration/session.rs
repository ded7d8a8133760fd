//! Every command that starts a server stops cleanly on SIGINT (exit 130) and SIGTERM (exit 143):
//! the server's whole process group is killed and nothing is left behind. Each command is stopped
//! while it waits on a server that never answers (a hung call, or a handshake never answered).

use crate::run::{assert_no_marked_leftovers, run_marker, server};
use crate::util::{TempDir, command, finish};
use serde_json::json;
use std::time::Duration;

/// Starts `mcp-fuzz ARGS` (whose server carries `marker`), sends `signal` once it is waiting on
/// the server, and checks the exit code, the message and that no marked process survives.
fn stopped_by(signal: &str, args: &[String], marker: &str, server_path: &std::path::Path) {
    let child = command(args).spawn().expect("mcp-fuzz starts");
    std::thread::sleep(Duration::from_millis(1500));
    stop(child, signal);
    assert_no_marked_leftovers(marker, server_path);
}

/// Sends `signal` (`INT` or `TERM`) to the running mcp-fuzz `child`, waits for it and checks its
/// exit code (130 or 143) and message.
pub(crate) fn stop(child: std::process::Child, signal: &str) -> crate::util::Run {
    let status = std::process::Command::new("kill")
        .args([&format!("-{signal}"), &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success());
    let run = finish(child);
    let (code, word) = if signal == "INT" { (130, "interrupted") } else { (143, "terminated") };
    assert_eq!(run.code, code, "{}", run.stderr);
    assert!(run.stderr.contains(word), "{}", run.stderr);
    run
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| (*s).to_owned()).collect()
}

#[test]
fn call_stops_on_sigint_and_sigterm() {
    let path = server("fx-hang");
    for signal in ["INT", "TERM"] {
        let marker = run_marker();
        let p = path.to_str().expect("utf-8");
        let args =
            strings(&["call", "--tool", "wait", "--timeout", "60", "--env", &marker, "--", p]);
        stopped_by(signal, &args, &marker, &path);
    }
}

#[test]
fn replay_stops_on_sigint() {
    let path = server("fx-hang");
    let dir = TempDir::new("replay-signal");
    let case = dir.join("case.json");
    let p = path.to_str().expect("utf-8");
    std::fs::write(
        &case,
        json!({
            "caseVersion": 1, "toolVersion": "0.1.0", "tool": "wait", "kind": "timeout",
            "message": "no answer", "case": {"mode": "boundary"}, "seed": 0,
            "arguments": {}, "minimalArguments": {}, "outcome": {"kind": "timeout"},
            "signature": {"kind": "timeout"}, "stderr": [],
            "target": {"transport": "stdio", "command": [p], "env": [], "inheritEnv": false, "cwd": null},
            "timeoutSecs": 60.0
        })
        .to_string(),
    )
    .expect("case file is writable");
    let marker = run_marker();
    let c = case.to_str().expect("utf-8");
    stopped_by(
        "INT",
        &strings(&["replay", c, "--timeout", "60", "--env", &marker]),
        &marker,
        &path,
    );
}

#[test]
fn snapshot_and_clients_stop_during_a_handshake_that_never_ends() {
    let path = server("fx-no-init");
    let p = path.to_str().expect("utf-8");
    for sub in ["snapshot", "clients", "run"] {
        let marker = run_marker();
        let args = strings(&[sub, "--startup-timeout", "60", "--env", &marker, "--", p]);
        stopped_by("TERM", &args, &marker, &path);
    }
}

/// The pids whose environment has an entry starting with `prefix`.
fn pids_with_env_prefix(prefix: &str) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .expect("/proc")
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ")).is_ok_and(|env| {
                env.split(|b| *b == 0).any(|entry| entry.starts_with(prefix.as_bytes()))
            })
        })
        .collect()
}

/// Ctrl-C while the five real clients capture: every client, every server they started and
/// every helper is killed (each carries the capture marker, which begins with mcp-fuzz's pid),
/// and the run exits 130.
#[test]
fn clients_stop_every_real_client_on_sigint() {
    let path = server("fx-serve-tools");
    let marker = run_marker();
    let clients = std::env::var("MCP_FUZZ_CLIENTS_DIR")
        .unwrap_or_else(|_| format!("{}/target/clients", env!("CARGO_MANIFEST_DIR")));
    let p = path.to_str().expect("utf-8");
    let args =
        ["clients", "--adapter", "real", "--clients-dir", &clients, "--env", &marker, "--", p];
    let child = command(args).spawn().expect("mcp-fuzz starts");
    let capture = format!("MCP_FUZZ_CAPTURE={}-", child.id());
    // Wait until the clients' servers run (each carries the run marker through the client).
    let started = std::time::Instant::now();
    while pids_with_env_prefix(&marker).len() < 3 {
        assert!(started.elapsed() < Duration::from_secs(30), "the clients never started a server");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!pids_with_env_prefix(&capture).is_empty(), "the clients carry the capture marker");
    stop(child, "INT");
    assert_no_marked_leftovers(&marker, &path);
    let left = pids_with_env_prefix(&capture);
    assert!(left.is_empty(), "client processes left behind: {left:?}");
}
