//! mcp-fuzz against mcp-runtime-check 0.10.1: `tools/call` requests per second of wall time of a
//! default run of each, on the same servers, side by side (issue 12's target: mcp-fuzz >= 3x).
//!
//! For each server (`versus/server-everything`: `@modelcontextprotocol/server-everything` over
//! stdio; `versus/fx-seventeen`: the fixture with 17 tools, six of which hang and three crash on
//! some valid inputs; `versus/slow-tools`: fx-ids with every call answered after 20 ms) it runs, in `VERSUS_ROUNDS` rounds (default 5) that alternate who goes
//! first, `mcp-fuzz -q --json -- SERVER` and mcp-runtime-check's `mcp-fuzz --json -- SERVER`,
//! both with every default (read-only tools only, their own timeouts, cases and restarts).
//! Neither tool's own count is trusted: each server is started through a counting wrapper (this
//! bench binary run as `versus --versus-count-into FILE SERVER...`) that spawns the real server,
//! passes bytes through both ways unchanged and unbuffered, and appends one byte to FILE per
//! client-to-server line whose JSON `method` is `tools/call`. A byte per request, appended at
//! once, counts every server instance of a run (both tools restart servers after a crash or a
//! hang) and survives the wrapper being killed with its process group. The FILE is an argument,
//! not an environment variable, because both tools start servers with a minimal environment.
//!
//! It prints each run, then per server the medians (calls, wall time, calls/s) and the median of
//! the per-round ratios mcp-fuzz / mcp-runtime-check, which drift in machine load cannot bias.
//! Each tool's self-reported call count and number of failures are printed beside, for context.
//!
//! Run: `bash scripts/install-e2e.sh && bash scripts/install-bench.sh && cargo build --release
//! -p mcp-fuzz-fixtures && cargo bench --bench versus` (about 8 minutes with 5 rounds;
//! `cargo bench --bench versus -- fx-seventeen` runs one server). Every missing piece fails the
//! bench with the command that installs it. Without `--bench` (`cargo test --benches`) it only
//! checks that those pieces are there.

use serde_json::Value;
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{Read as _, Write as _};
use std::os::fd::AsFd as _;
use std::os::unix::process::ExitStatusExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::Instant;

/// The first argument that turns this binary into the counting wrapper.
const WRAP: &str = "--versus-count-into";
/// Interleaved rounds per server unless `VERSUS_ROUNDS` says otherwise: a default run of
/// mcp-fuzz takes 20 to 45 s on these servers, so 5 rounds keep the bench near 7 minutes.
const ROUNDS: usize = 5;
/// The rate the target asks of mcp-fuzz, as a multiple of mcp-runtime-check's.
const TARGET_RATIO: f64 = 3.0;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const EVERYTHING: &str =
    "fixtures/e2e/node_modules/@modelcontextprotocol/server-everything/dist/index.js";
const MRC: &str = "target/bench-venv/bin/mcp-fuzz";
/// The slow-tools server: fx-ids with every call taking 20 ms before it answers.
const SLOW: &str = "FX_DELAY_MS=20";

fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    match args.split_first() {
        Some((flag, rest)) if flag == WRAP => wrap(rest),
        _ => {
            bench(&args);
            ExitCode::SUCCESS
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The counting wrapper.

/// `versus --versus-count-into FILE PROGRAM ARGS...`: runs the server, copies its stdin and
/// stdout through unchanged, counts the `tools/call` requests into FILE, exits with its status.
fn wrap(args: &[OsString]) -> ExitCode {
    let [file, program, rest @ ..] = args else {
        panic!("usage: versus {WRAP} FILE PROGRAM [ARGS...]");
    };
    let mut count = File::options().create(true).append(true).open(file).expect("count file");
    let mut child = Command::new(program)
        .args(rest)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap_or_else(|e| panic!("versus wrapper: cannot start {}: {e}", program.display()));
    let mut to_server = child.stdin.take().expect("piped stdin");
    let mut from_server = child.stdout.take().expect("piped stdout");
    // Unbuffered handles on fds 0 and 1 (std's Stdout would buffer up to a newline).
    let mut stdin = File::from(std::io::stdin().as_fd().try_clone_to_owned().expect("fd 0"));
    let mut stdout = File::from(std::io::stdout().as_fd().try_clone_to_owned().expect("fd 1"));

    let up = std::thread::spawn(move || {
        let mut buf = vec![0u8; 64 << 10];
        let mut line = Vec::new();
        loop {
            let n = match stdin.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            // Forward first, count after: counting never delays a request.
            if to_server.write_all(&buf[..n]).is_err() {
                break;
            }
            for chunk in buf[..n].split_inclusive(|b| *b == b'\n') {
                line.extend_from_slice(chunk);
                if line.ends_with(b"\n") {
                    for _ in 0..tool_calls(&line) {
                        count.write_all(b"c").expect("count");
                    }
                    line.clear();
                }
            }
        }
        // Dropping `to_server` closes the server's stdin, as the client closing ours meant.
    });
    let down = std::thread::spawn(move || {
        let mut buf = vec![0u8; 64 << 10];
        while let Ok(n @ 1..) = from_server.read(&mut buf) {
            if stdout.write_all(&buf[..n]).is_err() {
                break;
            }
        }
    });
    let status = child.wait().expect("wait for the server");
    let _ = down.join();
    drop(up); // still reading our stdin: the exit ends it
    let code = status.code().or_else(|| status.signal().map(|s| 128 + s)).unwrap_or(1);
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}

/// `tools/call` requests in one JSON-RPC line (a message, or a batch of them).
fn tool_calls(line: &[u8]) -> usize {
    fn is_call(m: &Value) -> bool {
        m.get("method").and_then(Value::as_str) == Some("tools/call")
    }
    if !line.windows(10).any(|w| w == b"tools/call") {
        return 0;
    }
    match serde_json::from_slice::<Value>(line) {
        Ok(Value::Array(batch)) => batch.iter().filter(|m| is_call(m)).count(),
        Ok(m) => usize::from(is_call(&m)),
        Err(_) => 0,
    }
}

// ---------------------------------------------------------------------------------------------
// The bench.

struct Server {
    name: &'static str,
    command: Vec<OsString>,
    /// `--env KEY=VALUE` for the server, given to both tools.
    env: &'static [&'static str],
}

#[derive(Clone, Copy, PartialEq)]
enum Tool {
    McpFuzz,
    RuntimeCheck,
}

impl Tool {
    fn label(self) -> &'static str {
        match self {
            Tool::McpFuzz => "mcp-fuzz",
            Tool::RuntimeCheck => "mcp-runtime-check",
        }
    }
}

/// One default run of one tool on one server.
struct Run {
    calls: u64,
    secs: f64,
    /// What the tool's own JSON says: calls made, failures found (context only).
    reported_calls: Option<u64>,
    reported_failures: Option<u64>,
}

impl Run {
    fn rate(&self) -> f64 {
        self.calls as f64 / self.secs
    }
}

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| Path::new(ROOT).join("target"), PathBuf::from)
}

fn which(program: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
}

/// The two servers and the two tools, or a panic naming every missing piece and its install
/// command: the bench never skips a server or a tool.
fn prerequisites() -> (Vec<Server>, PathBuf, PathBuf) {
    let mcp_fuzz = PathBuf::from(env!("CARGO_BIN_EXE_mcp-fuzz"));
    let mrc = Path::new(ROOT).join(MRC);
    let everything = Path::new(ROOT).join(EVERYTHING);
    let seventeen = target_dir().join("release/fx-seventeen");
    let ids = target_dir().join("release/fx-ids");
    let node = which("node");
    let mut missing = Vec::new();
    if !mcp_fuzz.is_file() {
        missing.push(format!("{} (cargo build --release)", mcp_fuzz.display()));
    }
    if !mrc.is_file() {
        missing.push(format!("{} (bash scripts/install-bench.sh)", mrc.display()));
    }
    if node.is_none() {
        missing.push("node on PATH (Node.js >= 20)".to_owned());
    }
    if !everything.is_file() {
        missing.push(format!("{} (bash scripts/install-e2e.sh)", everything.display()));
    }
    for fixture in [&seventeen, &ids] {
        if !fixture.is_file() {
            missing.push(format!(
                "{} (cargo build --release -p mcp-fuzz-fixtures)",
                fixture.display()
            ));
        }
    }
    assert!(
        missing.is_empty(),
        "versus: missing, with the command that installs each:\n  {}\nor all at once: bash \
         scripts/install-e2e.sh && bash scripts/install-bench.sh && cargo build --release -p \
         mcp-fuzz-fixtures",
        missing.join("\n  ")
    );
    let node = node.expect("checked").into_os_string();
    let servers = vec![
        Server {
            name: "server-everything",
            command: vec![node, everything.into_os_string(), "stdio".into()],
            env: &[],
        },
        Server { name: "fx-seventeen", command: vec![seventeen.into_os_string()], env: &[] },
        Server { name: "slow-tools", command: vec![ids.into_os_string()], env: &[SLOW] },
    ];
    (servers, mcp_fuzz, mrc)
}

#[expect(clippy::print_stdout, reason = "a bench reports on stdout")]
fn bench(args: &[OsString]) {
    let (servers, mcp_fuzz, mrc) = prerequisites();
    // Like criterion: `cargo bench` passes `--bench`; `cargo test --benches` does not.
    if !args.iter().any(|a| a == "--bench") {
        println!("versus: test mode, prerequisites present; `cargo bench --bench versus` measures");
        return;
    }
    let filter = args.iter().filter_map(|a| a.to_str()).find(|a| !a.starts_with('-'));
    let rounds = std::env::var("VERSUS_ROUNDS")
        .ok()
        .map(|r| {
            r.parse::<usize>().ok().filter(|r| *r > 0).expect("VERSUS_ROUNDS: a positive number")
        })
        .unwrap_or(ROUNDS);
    let wrapper = std::env::current_exe().expect("this bench's path");
    let counts = target_dir().join("versus");
    std::fs::create_dir_all(&counts).expect("target/versus");

    for server in &servers {
        let id = format!("versus/{}", server.name);
        if filter.is_some_and(|f| !id.contains(f)) {
            continue;
        }
        println!("{id}: {rounds} rounds, default runs, through the counting wrapper");
        let mut runs: [Vec<Run>; 2] = Default::default();
        let mut ratios = Vec::new();
        for round in 0..rounds {
            let order = if round % 2 == 0 {
                [Tool::McpFuzz, Tool::RuntimeCheck]
            } else {
                [Tool::RuntimeCheck, Tool::McpFuzz]
            };
            for tool in order {
                let exe = if tool == Tool::McpFuzz { &mcp_fuzz } else { &mrc };
                let file = counts.join(format!("{}-{}-{round}.count", server.name, tool.label()));
                let run = run_once(tool, exe, &wrapper, &file, server);
                println!(
                    "  round {round} {:<17} {:>5} tools/call in {:>6.2} s = {:>7.1}/s \
                     (self-reported {} calls, {} failures)",
                    tool.label(),
                    run.calls,
                    run.secs,
                    run.rate(),
                    opt(run.reported_calls.map(|n| vec![n])),
                    opt(run.reported_failures.map(|n| vec![n])),
                );
                runs[tool as usize].push(run);
            }
            let [mf, rc] = [&runs[0][round], &runs[1][round]];
            ratios.push(mf.rate() / rc.rate());
        }
        println!("{id} (medians of {rounds} rounds):");
        println!(
            "  {:<17} {:>10} {:>8} {:>10} {:>15} {:>9}",
            "tool", "tools/call", "wall s", "calls/s", "self-reported", "failures"
        );
        for tool in [Tool::McpFuzz, Tool::RuntimeCheck] {
            let r = &runs[tool as usize];
            println!(
                "  {:<17} {:>10} {:>8.2} {:>10.1} {:>15} {:>9}",
                tool.label(),
                median(r.iter().map(|r| r.calls as f64)),
                median(r.iter().map(|r| r.secs)),
                median(r.iter().map(Run::rate)),
                opt(r.iter().map(|r| r.reported_calls).collect()),
                opt(r.iter().map(|r| r.reported_failures).collect()),
            );
        }
        let ratio = median(ratios.iter().copied());
        println!(
            "  ratio mcp-fuzz / mcp-runtime-check: {ratio:.2}x (median of per-round ratios; \
             target >= {TARGET_RATIO}x: {})",
            if ratio >= TARGET_RATIO { "met" } else { "NOT met" }
        );
    }
}

/// Runs `tool` with its defaults on `server` started through the counting wrapper.
fn run_once(tool: Tool, exe: &Path, wrapper: &Path, file: &Path, server: &Server) -> Run {
    match std::fs::remove_file(file) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => panic!("{}: {e}", file.display()),
        _ => {}
    }
    File::create(file).expect("count file");
    let mut cmd = Command::new(exe);
    match tool {
        Tool::McpFuzz => cmd.args(["-q", "--json"]),
        // Its argument parser drops the `--`: the wrapper's arguments arrive the same.
        Tool::RuntimeCheck => cmd.args(["--json"]),
    };
    for kv in server.env {
        cmd.args(["--env", kv]);
    }
    cmd.arg("--").arg(wrapper).arg(WRAP).arg(file).args(&server.command).stdin(Stdio::null());
    let start = Instant::now();
    let out = cmd.output().unwrap_or_else(|e| panic!("cannot start {}: {e}", exe.display()));
    let secs = start.elapsed().as_secs_f64();
    // mcp-fuzz: 0 nothing found, 1 findings; mcp-runtime-check: 0 (no --fail-under given).
    let ok = match tool {
        Tool::McpFuzz => matches!(out.status.code(), Some(0 | 1)),
        Tool::RuntimeCheck => out.status.code() == Some(0),
    };
    assert!(
        ok,
        "{} {}: {}\nstderr (end):\n{}",
        tool.label(),
        join(&server.command),
        out.status,
        tail(&out.stderr)
    );
    let calls = std::fs::metadata(file).expect("count file").len();
    let json: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    let (reported_calls, reported_failures) = match tool {
        Tool::McpFuzz => (
            json.get("calls").and_then(Value::as_u64),
            json.get("findings")
                .and_then(Value::as_array)
                .map(|f| f.iter().filter(|f| f["severity"] == "failure").count() as u64),
        ),
        Tool::RuntimeCheck => {
            let n = |k: &str| json.get(k).and_then(Value::as_u64);
            (
                n("tested_count").zip(n("total_bad_input_cases")).map(|(t, b)| t + b),
                n("crash_count").zip(n("timeout_count")).map(|(c, t)| c + t),
            )
        }
    };
    Run { calls, secs, reported_calls, reported_failures }
}

fn median(values: impl Iterator<Item = f64>) -> f64 {
    let mut v: Vec<f64> = values.collect();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => f64::midpoint(v[n / 2 - 1], v[n / 2]),
    }
}

/// A count, or the median of counts, or `?` where a tool's JSON did not say.
fn opt(n: Option<Vec<u64>>) -> String {
    n.map_or_else(|| "?".to_owned(), |v| median(v.into_iter().map(|n| n as f64)).to_string())
}

fn join(args: &[OsString]) -> String {
    args.iter().map(|a| OsStr::to_string_lossy(a)).collect::<Vec<_>>().join(" ")
}

fn tail(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(20)..].join("\n")
}
