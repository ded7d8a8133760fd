//! `mcp-fuzz run --http` against `fx-http` (the `fx-healthy` tools over streamable HTTP): a run
//! with the right bearer token succeeds, a wrong one fails the handshake with exit code 3, and no
//! header value ever appears in stdout, stderr or the `--output` report.

use crate::run::server;
use crate::util::{Run, TempFile, command, finish};
use serde_json::Value;
use std::io::{BufRead as _, BufReader};
use std::process::{Child, Command, Stdio};

const SUCCESS: i32 = 0;
const SERVER_START: i32 = 3;

const TOKEN: &str = "s3cr3t-token-123";
const WRONG_TOKEN: &str = "wr0ng-token-456";

/// A running `fx-http`, killed on drop (also when the test panics).
pub(crate) struct HttpServer {
    child: Child,
    pub(crate) url: String,
}

impl HttpServer {
    /// Starts `fx-http` requiring `Authorization: Bearer <token>` and reads its URL.
    pub(crate) fn start(token: &str) -> Self {
        let mut child = Command::new(server("fx-http"))
            .env("FX_REQUIRE_TOKEN", token)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("fx-http starts");
        let stdout = child.stdout.take().expect("piped stdout");
        // Guard first, so a failed read below still kills the child.
        let mut guard = Self { child, url: String::new() };
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line).expect("fx-http writes its URL");
        guard.url = line
            .trim_end()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("unexpected first line from fx-http: {line:?}"))
            .to_owned();
        guard
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs `mcp-fuzz --json --cases 3 --http URL --header 'Authorization: Bearer <token>' EXTRA`.
fn run_http(url: &str, token: &str, extra: &[&str]) -> Run {
    let header = format!("Authorization: Bearer {token}");
    let mut args = vec!["--json", "--cases", "3", "--http", url, "--header", &header];
    args.extend_from_slice(extra);
    finish(command(&args).spawn().expect("mcp-fuzz starts"))
}

#[track_caller]
fn assert_hidden(run: &Run, secrets: &[&str]) {
    for secret in secrets {
        assert!(!run.stdout.contains(secret), "{secret} leaked to stdout:\n{}", run.stdout);
        assert!(!run.stderr.contains(secret), "{secret} leaked to stderr:\n{}", run.stderr);
    }
}

fn report(run: &Run) -> Value {
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| {
        panic!("report is not JSON ({e}); stderr:\n{}\nstdout:\n{}", run.stderr, run.stdout)
    })
}

#[test]
fn right_token_scores_100_and_stays_secret() {
    let fx = HttpServer::start(TOKEN);
    let run = run_http(&fx.url, TOKEN, &[]);
    run.assert_code(SUCCESS);
    assert_hidden(&run, &[TOKEN]);
    let r = report(&run);
    assert_eq!(r["score"]["percent"], 100.0, "{r:#}");
    assert_eq!(r["target"]["transport"], "streamable-http");
    assert_eq!(r["target"]["headers"], serde_json::json!(["Authorization: [REDACTED]"]));
}

#[test]
fn wrong_token_fails_the_handshake_without_leaking_either_token() {
    let fx = HttpServer::start(TOKEN);
    let run = run_http(&fx.url, WRONG_TOKEN, &[]);
    run.assert_code(SERVER_START);
    assert_hidden(&run, &[TOKEN, WRONG_TOKEN]);
    let stderr = run.stderr.to_lowercase();
    assert!(
        stderr.contains("handshake") || stderr.contains("401") || stderr.contains("auth"),
        "stderr does not say the handshake was refused:\n{}",
        run.stderr
    );
}

#[test]
fn output_file_does_not_hold_the_token() {
    let fx = HttpServer::start(TOKEN);
    let out = TempFile::new("http-report.json", "");
    let path = out.path().to_str().expect("UTF-8 temp path");
    let run = run_http(&fx.url, TOKEN, &["--output", path]);
    run.assert_code(SUCCESS);
    assert_hidden(&run, &[TOKEN]);
    let written = std::fs::read_to_string(out.path()).expect("--output file is written");
    assert!(!written.contains(TOKEN), "the token leaked to the --output file:\n{written}");
    let r: Value = serde_json::from_str(&written).expect("--output file is JSON");
    assert_eq!(r["target"]["transport"], "streamable-http");
    assert_eq!(r["score"]["percent"], 100.0);
}
