//! `mcp-fuzz run --http` against `fx-http` (the `fx-healthy` tools over streamable HTTP): a run
//! with the right bearer token succeeds, a wrong one fails the handshake with exit code 3, and no
//! header value ever appears in stdout, stderr, the `--output` report or a case file; a case
//! recorded over HTTP (`--artifacts`) replays over HTTP against the bug and against the fix.

use crate::run::server;
use crate::util::{Run, TempDir, TempFile, command, finish};
use serde_json::Value;
use std::io::{BufRead as _, BufReader};
use std::process::{Child, Command, Stdio};

const SUCCESS: i32 = 0;
const FINDINGS: i32 = 1;
const SERVER_START: i32 = 3;

const TOKEN: &str = "s3cr3t-token-123";
const WRONG_TOKEN: &str = "wr0ng-token-456";

/// A running `fx-http`, killed on drop (also when the test panics).
pub(crate) struct HttpServer {
    child: Child,
    pub(crate) url: String,
}

impl HttpServer {
    /// Starts `fx-http` requiring `Authorization: Bearer <token>` (none for an empty token) and
    /// reads its URL.
    pub(crate) fn start(token: &str) -> Self {
        Self::start_with(token, None)
    }

    /// [`HttpServer::start`] with `FX_HTTP_BUG` set to `bug` (`1`: a buggy `ratio` tool,
    /// `fixed`: the same tool, fixed).
    pub(crate) fn start_with(token: &str, bug: Option<&str>) -> Self {
        let mut cmd = Command::new(server("fx-http"));
        if let Some(bug) = bug {
            cmd.env("FX_HTTP_BUG", bug);
        }
        if !token.is_empty() {
            cmd.env("FX_REQUIRE_TOKEN", token);
        }
        let mut child = cmd
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
    // A request without the token gets 401, but nothing tells a client where to authorize.
    let auth = crate::util::entry(&r["protocol"], "checks", "id", "http-auth-metadata");
    assert_eq!(auth["status"], "fail", "{auth:#}");
    assert!(
        auth["observed"].as_str().is_some_and(|o| o.contains("no resource_metadata")),
        "{auth:#}"
    );
}

/// The same server pointing its 401 at RFC 9728 metadata (`FX_AUTH_METADATA`), started by
/// mcp-fuzz: the check passes, and the token is not in any output.
#[test]
fn a_401_that_names_its_metadata_passes_the_auth_check() {
    let header = format!("Authorization: Bearer {TOKEN}");
    let run = finish(
        command([
            "--json",
            "--cases",
            "1",
            "--no-stateful",
            "--header",
            &header,
            "--env",
            &format!("FX_REQUIRE_TOKEN={TOKEN}"),
            "--env",
            "FX_AUTH_METADATA=1",
            "--http",
            "http://127.0.0.1:{port}/mcp",
            "--",
            server("fx-http").to_str().expect("utf-8"),
        ])
        .spawn()
        .expect("starts"),
    );
    run.assert_code(SUCCESS);
    assert_hidden(&run, &[TOKEN]);
    let r = report(&run);
    let checks = r["protocol"]["checks"].as_array().expect("checks");
    let failed: Vec<&Value> = checks
        .iter()
        .filter(|c| {
            c["status"] == "fail"
                || c["id"].as_str().is_some_and(|i| i.starts_with("http-")) && c["status"] != "pass"
        })
        .collect();
    assert!(failed.is_empty(), "{failed:#?}");
    let auth = crate::util::entry(&r["protocol"], "checks", "id", "http-auth-metadata");
    assert!(auth["observed"].as_str().is_some_and(|o| o.contains("resource_metadata")), "{auth:#}");
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

/// An `https://` URL is spoken to over TLS (rustls on the ring provider, which the engine
/// installs itself: issue 28): against a plain-HTTP server the TLS handshake fails and the run
/// exits 3 with the reason; it does not panic (exit 101) for want of a crypto provider.
#[test]
fn an_https_url_is_spoken_to_over_tls() {
    let fx = HttpServer::start(TOKEN);
    let url = fx.url.replacen("http://", "https://", 1);
    let run = run_http(&url, TOKEN, &[]);
    run.assert_code(SERVER_START);
    assert_hidden(&run, &[TOKEN]);
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    assert!(run.stderr.contains("handshake"), "the reason is given:\n{}", run.stderr);
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

#[test]
fn a_case_recorded_over_http_replays_over_http_against_the_bug_and_the_fix() {
    let dir = TempDir::new("http-artifacts");
    let dir_arg = dir.path().to_str().expect("utf-8");
    let buggy = HttpServer::start_with(TOKEN, Some("1"));
    let run = run_http(&buggy.url, TOKEN, &["--artifacts", dir_arg]);
    run.assert_code(FINDINGS);
    assert_hidden(&run, &[TOKEN]);
    let cases: Vec<(std::path::PathBuf, Value)> = std::fs::read_dir(dir.path())
        .expect("artifacts dir")
        .map(|e| e.expect("entry").path())
        .map(|p| {
            let text = std::fs::read_to_string(&p).expect("readable");
            assert!(!text.contains(TOKEN), "the token leaked to {}", p.display());
            let v = serde_json::from_str(&text).expect("a case file is JSON");
            (p, v)
        })
        .collect();
    let (file, case) = cases
        .iter()
        .find(|(_, c)| c["tool"] == "ratio")
        .unwrap_or_else(|| panic!("no case file for ratio: {cases:?}"));
    assert_eq!(case["minimalArguments"]["b"], 0, "{case:#}");
    // Over HTTP the bytes are not seen: the response is rebuilt from the reply, and says so.
    assert_eq!(case["exchange"]["raw"], false);
    assert_eq!(case["exchange"]["response"]["error"]["code"], -32603);
    let file = file.to_str().expect("utf-8");
    let header = format!("Authorization: Bearer {TOKEN}");
    let replay = |url: &str| {
        let run = finish(
            command(["replay", file, "--http", url, "--header", &header])
                .spawn()
                .expect("mcp-fuzz starts"),
        );
        assert_hidden(&run, &[TOKEN]);
        let out: Value = serde_json::from_str(&run.stdout).unwrap_or(Value::Null);
        (run.code, out, run.stderr)
    };
    let (code, out, err) = replay(&buggy.url);
    assert_eq!(code, FINDINGS, "{err}");
    assert_eq!(out["verdict"], "still-fails");
    let fixed = HttpServer::start_with(TOKEN, Some("fixed"));
    let (code, out, err) = replay(&fixed.url);
    assert_eq!(code, SUCCESS, "{err}");
    assert_eq!(out["verdict"], "passes");
}

/// `fx-http` with `FX_HTTP_BUG=exit` (its `ratio` tool exits the process with 101 on `b: 0`),
/// started by mcp-fuzz (`--http URL -- command`, a port of its own per process): the crash is
/// caught, the server restarted, the input shrunk, and the case file replays over HTTP with the
/// command, exactly as over stdio; no process is left behind.
///
/// See: issue 31 item 1.
#[test]
fn a_crash_of_a_launched_http_server_is_restarted_shrunk_and_replayed() {
    let artifacts = TempDir::new("http-launch-crash");
    let dir = artifacts.path().display().to_string();
    let (code, r, stderr) = crate::run::run_json(
        "fx-http",
        &[
            "--http",
            "http://127.0.0.1:{port}/mcp",
            "--env",
            "FX_HTTP_BUG=exit",
            "--artifacts",
            &dir,
        ],
    );
    assert_eq!(code, FINDINGS, "{stderr}");
    assert_eq!(r["target"]["transport"], "streamable-http", "{:#}", r["target"]);
    assert!(r["target"]["launch"]["command"][0].as_str().is_some_and(|c| c.ends_with("fx-http")));
    let exited = crate::run::finding_of_kind(&r, "exited");
    assert_eq!(exited["tool"], "ratio");
    assert_eq!(exited["outcome"]["exit"]["code"], 101, "{exited:#}");
    assert_eq!(exited["minimalArguments"], serde_json::json!({"a": 0, "b": 0}), "{exited:#}");
    assert!(exited["outcome"]["stderr"].to_string().contains("attempt to divide by zero"));
    assert!(r["restarts"].as_u64() >= Some(1), "{}", r["restarts"]);
    // The other tools were judged on the restarted processes: no other failure.
    let others: Vec<&Value> = r["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["severity"] == "failure" && f["tool"] != "ratio")
        .collect();
    assert!(others.is_empty(), "{others:#?}");
    let case = std::fs::read_dir(artifacts.path())
        .expect("artifacts")
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "json"))
        .expect("a case file");
    let replay = finish(
        command(["replay", "--env", "FX_HTTP_BUG=exit", case.to_str().expect("utf-8")])
            .spawn()
            .expect("starts"),
    );
    let out: Value = serde_json::from_str(&replay.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", replay.stdout, replay.stderr));
    assert_eq!(out["verdict"], "still-fails", "{out:#}");
}

/// A launched server must be reached where it was started, and must open its port: a remote
/// URL with a command is refused before anything starts (exit 2), and a command that never
/// listens ends the run with exit 3 naming the address and quoting what it printed.
///
/// See: issue 31, "Bad input".
#[test]
fn a_launched_http_server_must_be_local_and_must_listen() {
    let fx = server("fx-http").display().to_string();
    let remote = finish(
        command(["--http", "https://mcp.example.com/mcp", "--", fx.as_str()])
            .spawn()
            .expect("starts"),
    );
    assert_eq!(remote.code, 2, "{}", remote.stderr);
    assert!(remote.stderr.contains("loopback"), "{}", remote.stderr);
    let silent = finish(
        command([
            "--http",
            "http://127.0.0.1:{port}/mcp",
            "--startup-timeout",
            "2",
            "--",
            "sh",
            "-c",
            "echo starting on $PORT >&2; exec sleep 30",
        ])
        .spawn()
        .expect("starts"),
    );
    assert_eq!(silent.code, SERVER_START, "{}", silent.stderr);
    assert!(silent.stderr.contains("did not open 127.0.0.1:"), "{}", silent.stderr);
    assert!(silent.stderr.contains("starting on "), "the server's output: {}", silent.stderr);
}

/// A server someone else runs (`--http URL` without a command) that dies on an input: the call
/// ends as the server's death as soon as its port refuses connections (not after the call's
/// timeout), the tool is given up with a note that says why nothing was restarted, and the
/// other tools keep their results.
///
/// See: issue 31 item 1 ("a clear note when it goes away").
#[test]
fn an_external_http_server_that_goes_away_is_reported_not_waited_for() {
    let fx = HttpServer::start_with("", Some("exit"));
    let run = finish(
        command(["--json", "--no-stateful", "--timeout", "60", "--http", &fx.url])
            .spawn()
            .expect("starts"),
    );
    run.assert_code(FINDINGS);
    let r = report(&run);
    let exited = crate::run::finding_of_kind(&r, "exited");
    assert_eq!(exited["tool"], "ratio", "{exited:#}");
    let ratio = crate::util::tool(&r, "ratio");
    assert!(
        ratio["reason"]
            .as_str()
            .is_some_and(|n| n.contains("went away") && n.contains("--http URL -- COMMAND")),
        "{ratio:#}"
    );
    assert!(crate::run::findings_of_kind(&r, "hang").is_empty(), "{r:#}");
    assert!(
        r["protocol"]["reason"].as_str().is_some_and(|n| n.contains("went away")),
        "{:#}",
        r["protocol"]
    );
}

/// `fx-http-bad` answers every call of `echo` with bad HTTP: each way is one finding about
/// `echo` with its own kind and facts, the other tools keep their results, nothing is
/// restarted (the server did not die), and the run ends within its timeouts.
///
/// See: issue 31, "Bad input" (a redirect, a 5xx storm, an SSE stream that never ends, a body
/// larger than `--max-response-bytes`).
#[test]
fn bad_http_answers_are_findings_of_their_own() {
    let fx = server("fx-http-bad").display().to_string();
    // (FX_HTTP_BAD, finding kind, a field of the outcome that must hold)
    let ways: [(&str, &str, (&str, Value)); 5] = [
        ("oversize", "oversize", ("atLeast", Value::Bool(true))),
        ("storm", "http-error", ("status", 503.into())),
        ("redirect", "http-error", ("status", 307.into())),
        ("notjson", "protocol-violation", ("kind", "protocol-violation".into())),
        ("endless", "hang", ("kind", "timeout".into())),
    ];
    for (way, kind, (field, value)) in ways {
        let env = format!("FX_HTTP_BAD={way}");
        let run = finish(
            command([
                "--json",
                "--no-stateful",
                "--no-protocol",
                "--cases",
                "2",
                "--timeout",
                "1",
                "--max-call-time",
                "2",
                "--max-response-bytes",
                "65536",
                "--env",
                &env,
                "--http",
                "http://127.0.0.1:{port}/mcp",
                "--",
                &fx,
            ])
            .spawn()
            .expect("starts"),
        );
        run.assert_code(FINDINGS);
        let r = report(&run);
        let findings = r["findings"].as_array().expect("findings");
        assert_eq!(findings.len(), 1, "{way}: one finding, about echo: {r:#}");
        let f = &findings[0];
        assert_eq!((f["tool"].as_str(), f["kind"].as_str()), (Some("echo"), Some(kind)), "{way}");
        assert_eq!(f["outcome"][field], value, "{way}: {f:#}");
        assert_eq!(r["restarts"], 0, "{way}: the server never died");
        for other in ["add", "strict"] {
            assert_eq!(crate::util::tool(&r, other)["score"], 100.0, "{way}: {other}");
        }
    }
}

/// A URL that is not the server's MCP endpoint: the handshake's HTTP answer is named, with
/// where to look (exit 3), not rmcp's transport types.
#[test]
fn a_url_that_is_not_the_endpoint_says_so() {
    let fx = server("fx-http").display().to_string();
    let run = finish(
        command(["--http", "http://127.0.0.1:{port}/nothing", "--", fx.as_str()])
            .spawn()
            .expect("starts"),
    );
    assert_eq!(run.code, SERVER_START, "{}", run.stderr);
    assert!(run.stderr.contains("answered with HTTP 404 Not Found"), "{}", run.stderr);
    assert!(run.stderr.contains("the server's MCP endpoint?"), "{}", run.stderr);
    assert!(!run.stderr.contains("rmcp::"), "{}", run.stderr);
}
