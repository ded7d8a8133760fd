//! A transparent tap between a client and the server it spawns: the client is given a
//! `/bin/sh -c` script that runs `tee IN`, the server and `tee OUT` joined by two FIFOs instead
//! of the server, so both directions of the stdio JSON-RPC stream are recorded byte for byte
//! while the client speaks its own handshake. From the two files we read what the client
//! declared (`initialize`), what the server listed to it (`tools/list`, every page) and what it
//! answered to each call; a third file gets the server's exit status.

use super::RealError;
use super::spec::ServerSpec;
use serde::Serialize;
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The shell script of the tap. Positional parameters: the working directory, the absolute paths
/// of `tee` and `mkfifo`, the two transcript files, the FIFOs' base path, the status file, then
/// the server command. `exec`-free on purpose: the shell stays the process the client started and
/// owns, as if it were the server, and behaves like one:
///
/// - the server's exit ends the shell with its status (recorded in the status file), whether or
///   not the client still holds the server's stdin (the input `tee` is killed);
/// - SIGTERM, SIGINT or SIGHUP from the client (how SDK clients close a server that does not exit
///   at end of input) is passed to the server, so the client's pipes close; a plain pipeline
///   would leave the server and the output `tee` running, holding the client's stdout open;
/// - the `tee`s' stderr goes to `/dev/null`, so only the server holds the client's stderr;
/// - the input `tee` writes each chunk to its transcript (its stdout, written first) before the
///   server's FIFO, so a request that kills the server at once is on record before the shell
///   kills that `tee`.
const SCRIPT: &str = concat!(
    r#"cd "$1" || exit 97; t=$2; m=$3; i=$4; o=$5; fi=$6.in; fo=$6.out; s=$7; shift 7; "#,
    r#""$m" "$fi" "$fo" || exit 96; exec 3<&0; "$t" "$fi" <&3 >>"$i" 2>/dev/null & a=$!; "#,
    r#"exec 3<&-; "$@" <"$fi" >"$fo" & p=$!; "$t" -a "$o" <"$fo" 2>/dev/null & q=$!; "#,
    r#"trap 'kill -TERM $p 2>/dev/null; wait $p; echo $? >"$s"; kill $a 2>/dev/null; exit 143' TERM INT HUP; "#,
    r#"wait $p; r=$?; echo $r >"$s"; kill $a 2>/dev/null; wait $q; exit $r"#
);

/// What the client declared when it connected.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Handshake {
    /// `initialize.params.protocolVersion`; for a client that connected with a `server/discover`
    /// the server answered (the stateless protocol), the version in its `_meta`.
    pub protocol_version: Option<String>,
    /// `initialize.params.capabilities`, or the discover's `_meta` `clientCapabilities` (`null`
    /// when absent).
    pub capabilities: Value,
    /// `initialize.params.clientInfo`, or the discover's `_meta` `clientInfo` (`null` when
    /// absent).
    pub client_info: Value,
    /// Every request method the client sent, in order, repeats collapsed (`server/discover`,
    /// `initialize`, `tools/list`...).
    pub methods: Vec<String>,
}

/// Where the two directions and the server's exit status are recorded.
pub(crate) struct Tap {
    to_server: PathBuf,
    from_server: PathBuf,
    status: PathBuf,
}

/// The absolute path of `name` on `path` (a `PATH` value).
pub(crate) fn which(name: &str, path: &str) -> Option<PathBuf> {
    let found = std::env::split_paths(path).map(|dir| dir.join(name)).find(|p| {
        std::fs::metadata(p).is_ok_and(|m| {
            m.is_file() && std::os::unix::fs::PermissionsExt::mode(&m.permissions()) & 0o111 != 0
        })
    })?;
    // A relative PATH entry is relative to here, not to where the client runs.
    Some(std::path::absolute(&found).unwrap_or(found))
}

impl Tap {
    /// The spec the client is given: `spec` behind the tap, recording into `dir`. The server
    /// program is resolved to an absolute path now (on the spec's `PATH`, else ours), so the
    /// environment a client hands its server cannot change which program runs.
    pub(crate) fn wrap(spec: &ServerSpec, dir: &Path) -> Result<(Self, ServerSpec), RealError> {
        let search = spec
            .env
            .get("PATH")
            .cloned()
            .or_else(|| std::env::var("PATH").ok())
            .unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".to_owned());
        let program = if spec.program.components().count() > 1 || spec.program.is_absolute() {
            spec.program.clone()
        } else {
            let name = spec.program.to_string_lossy();
            which(&name, &search).ok_or_else(|| RealError::BadSpec {
                reason: format!("server program {name:?} is not on PATH ({search})"),
            })?
        };
        let tool = |name: &str| {
            which(name, &search).or_else(|| which(name, "/usr/bin:/bin")).ok_or_else(|| {
                RealError::BadSpec { reason: format!("`{name}` is not on PATH: the tap needs it") }
            })
        };
        let (tee, mkfifo) = (tool("tee")?, tool("mkfifo")?);
        let cwd = match &spec.cwd {
            Some(cwd) => cwd.clone(),
            None => std::env::current_dir()
                .map_err(|source| RealError::Scratch { path: ".".into(), source })?,
        };
        let tap = Self {
            to_server: dir.join("to-server.jsonl"),
            from_server: dir.join("from-server.jsonl"),
            status: dir.join("server-status"),
        };
        for file in [&tap.to_server, &tap.from_server] {
            std::fs::write(file, b"")
                .map_err(|source| RealError::Scratch { path: file.clone(), source })?;
        }
        let mut args: Vec<String> = vec![
            "-c".into(),
            SCRIPT.into(),
            "mcp-fuzz-tap".into(),
            cwd.to_string_lossy().into_owned(),
            tee.to_string_lossy().into_owned(),
            mkfifo.to_string_lossy().into_owned(),
            tap.to_server.to_string_lossy().into_owned(),
            tap.from_server.to_string_lossy().into_owned(),
            dir.join("fifo").to_string_lossy().into_owned(),
            tap.status.to_string_lossy().into_owned(),
            program.to_string_lossy().into_owned(),
        ];
        args.extend(spec.args.iter().cloned());
        let wrapped = ServerSpec {
            program: PathBuf::from("/bin/sh"),
            args,
            env: spec.env.clone(),
            cwd: spec.cwd.clone(),
        };
        Ok((tap, wrapped))
    }

    /// Reads both directions as recorded so far.
    pub(crate) fn read(&self) -> Transcript {
        let lines = |p: &Path| -> Vec<Value> {
            std::fs::read(p)
                .map(|b| {
                    String::from_utf8_lossy(&b)
                        .lines()
                        .filter_map(|l| serde_json::from_str(l.trim()).ok())
                        .collect()
                })
                .unwrap_or_default()
        };
        let mut t = Transcript::from_messages(&lines(&self.to_server), &lines(&self.from_server));
        t.server_exit =
            std::fs::read_to_string(&self.status).ok().and_then(|s| s.trim().parse::<i32>().ok());
        t
    }
}

/// What the two directions say.
#[derive(Debug, Clone, Default)]
pub(crate) struct Transcript {
    pub handshake: Option<Handshake>,
    /// The tools of the last complete `tools/list` (all pages), as the server sent them; `None`
    /// when no listing was answered with a `tools` array.
    pub listed: Option<Vec<Value>>,
    /// Whether the server answered `initialize` with a result.
    pub initialized: bool,
    /// The server's exit status once it has ended (a signal N is 128 + N, as the shell says).
    pub server_exit: Option<i32>,
    /// Every `tools/call` the client sent, in order, with the server's response if it came.
    pub calls: Vec<CallRecord>,
}

/// One `tools/call` on the wire.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CallRecord {
    /// `params.name`.
    pub name: String,
    /// `params.arguments` (`null` when absent).
    pub arguments: Value,
    /// The server's JSON-RPC response (with `result` or `error`), when it answered.
    pub response: Option<Value>,
}

impl Transcript {
    pub(crate) fn from_messages(to_server: &[Value], from_server: &[Value]) -> Self {
        let mut replies: HashMap<String, &Value> = HashMap::new();
        for message in from_server {
            if let Some(id) = message.get("id")
                && message.get("method").is_none()
            {
                replies.insert(id.to_string(), message);
            }
        }
        let mut methods: Vec<String> = Vec::new();
        let mut handshake = None;
        let mut initialized = false;
        let mut listings: Vec<Vec<Value>> = Vec::new();
        let mut calls = Vec::new();
        let mut current: Option<Vec<Value>> = None;
        for message in to_server {
            let (Some(method), Some(id)) =
                (message.get("method").and_then(Value::as_str), message.get("id"))
            else {
                continue;
            };
            if methods.last().is_none_or(|m| m != method) {
                methods.push(method.to_owned());
            }
            let reply = replies.get(&id.to_string()).copied();
            let params = message.get("params").unwrap_or(&Value::Null);
            match method {
                "initialize" => {
                    if handshake.is_none() {
                        handshake = Some(Handshake {
                            protocol_version: params
                                .get("protocolVersion")
                                .and_then(Value::as_str)
                                .map(str::to_owned),
                            capabilities: params
                                .get("capabilities")
                                .cloned()
                                .unwrap_or(Value::Null),
                            client_info: params.get("clientInfo").cloned().unwrap_or(Value::Null),
                            methods: Vec::new(),
                        });
                    }
                    initialized |= reply.is_some_and(|r| r.get("result").is_some());
                }
                // The stateless protocol (2026-07-28): a `server/discover` the server answers
                // replaces `initialize`, and every request carries the client's declarations
                // in `_meta` (Claude Code 2.1 speaks it to servers that do).
                "server/discover" if reply.is_some_and(|r| r.get("result").is_some()) => {
                    let meta = params.get("_meta").unwrap_or(&Value::Null);
                    let key = |name: &str| meta.get(format!("io.modelcontextprotocol/{name}"));
                    if handshake.is_none() {
                        handshake = Some(Handshake {
                            protocol_version: key("protocolVersion")
                                .and_then(Value::as_str)
                                .map(str::to_owned),
                            capabilities: key("clientCapabilities").cloned().unwrap_or(Value::Null),
                            client_info: key("clientInfo").cloned().unwrap_or(Value::Null),
                            methods: Vec::new(),
                        });
                    }
                    initialized = true;
                }
                "tools/call" => calls.push(CallRecord {
                    name: params.get("name").and_then(Value::as_str).unwrap_or_default().to_owned(),
                    arguments: params.get("arguments").cloned().unwrap_or(Value::Null),
                    response: reply.cloned(),
                }),
                "tools/list" => {
                    let page = reply.and_then(|r| r.get("result")).and_then(|r| r.get("tools"));
                    let cursor = params.get("cursor").filter(|c| !c.is_null());
                    if cursor.is_none() {
                        if let Some(done) = current.take() {
                            listings.push(done);
                        }
                        current = page.map(|_| Vec::new());
                    }
                    match (page, current.as_mut()) {
                        (Some(Value::Array(tools)), Some(list)) => {
                            list.extend(tools.iter().cloned())
                        }
                        // A `tools` value that is not an array lists nothing.
                        (Some(_), Some(_)) => {}
                        _ => {}
                    }
                }
                _ => {}
            }
        }
        if let Some(done) = current.take() {
            listings.push(done);
        }
        if let Some(h) = handshake.as_mut() {
            h.methods = methods;
        }
        Self { handshake, listed: listings.pop(), initialized, server_exit: None, calls }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_last_complete_listing_and_the_handshake_are_read() {
        let to = [
            json!({"jsonrpc":"2.0","id":"p","method":"server/discover"}),
            json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"roots":{}},"clientInfo":{"name":"c"}}}),
            json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
            json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}),
            json!({"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}),
            json!({"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"cursor":"p2"}}),
        ];
        let from = [
            json!({"jsonrpc":"2.0","id":"p","error":{"code":-32601,"message":"no"}}),
            json!({"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18"}}),
            json!({"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"old"}]}}),
            json!({"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"a"}],"nextCursor":"p2"}}),
            json!({"jsonrpc":"2.0","id":3,"result":{"tools":[{"name":"b"}]}}),
        ];
        let t = Transcript::from_messages(&to, &from);
        assert!(t.initialized);
        let h = t.handshake.expect("handshake");
        assert_eq!(h.protocol_version.as_deref(), Some("2025-06-18"));
        assert_eq!(h.capabilities, json!({"roots":{}}));
        assert_eq!(h.methods, ["server/discover", "initialize", "tools/list"]);
        let names: Vec<&str> =
            t.listed.as_ref().expect("listed").iter().filter_map(|t| t["name"].as_str()).collect();
        assert_eq!(names, ["a", "b"]);
        assert!(t.calls.is_empty());
        let to = [
            json!({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"a","arguments":{"x":1}}}),
            json!({"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"b"}}),
        ];
        let from = [json!({"jsonrpc":"2.0","id":7,"result":{"content":[]}})];
        let t = Transcript::from_messages(&to, &from);
        assert_eq!(t.calls.len(), 2);
        assert!(t.handshake.is_none(), "no initialize, no discover");
        assert_eq!((t.calls[0].name.as_str(), &t.calls[0].arguments), ("a", &json!({"x": 1})));
        assert_eq!(t.calls[0].response, Some(from[0].clone()));
        assert_eq!(
            (t.calls[1].arguments.clone(), t.calls[1].response.clone()),
            (Value::Null, None)
        );
    }

    /// The wrapped server, with its stdin and stdout piped.
    fn start(wrapped: &ServerSpec) -> std::process::Child {
        std::process::Command::new(&wrapped.program)
            .args(&wrapped.args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("the tap starts")
    }

    #[test]
    fn the_tap_runs_the_server_in_its_directory_and_records_both_directions() {
        let dir =
            std::env::temp_dir().join(format!("mcp-fuzz-tap-{}", super::super::scratch::unique()));
        let work = dir.join("work");
        std::fs::create_dir_all(&work).expect("dirs");
        // `sh -c` as the server: echoes what it reads, after printing its directory.
        let spec = ServerSpec::new("sh").arg("-c").arg("pwd; cat").cwd(&work);
        let (tap, wrapped) = Tap::wrap(&spec, &dir).expect("wraps");
        assert_eq!(wrapped.program, PathBuf::from("/bin/sh"));
        let mut child = start(&wrapped);
        let line = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n";
        std::io::Write::write_all(child.stdin.as_mut().expect("stdin"), line.as_bytes())
            .expect("writes");
        drop(child.stdin.take());
        let out = child.wait_with_output().expect("exits");
        let seen = String::from_utf8(out.stdout).expect("utf-8");
        assert_eq!(
            seen,
            format!("{}\n{line}", work.display()),
            "the client sees the server's bytes"
        );
        assert_eq!(std::fs::read_to_string(&tap.to_server).expect("recorded"), line);
        assert_eq!(std::fs::read_to_string(&tap.from_server).expect("recorded"), seen);
        assert_eq!(tap.read().server_exit, Some(0));
        let missing = Tap::wrap(&ServerSpec::new("no-such-program-xyz"), &work);
        assert!(
            matches!(missing, Err(RealError::BadSpec { .. })),
            "a missing program is a bad spec"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_terminated_tap_ends_a_server_that_ignores_end_of_input_and_records_its_status() {
        use std::io::{BufRead, Read, Write};
        let dir =
            std::env::temp_dir().join(format!("mcp-fuzz-tap-{}", super::super::scratch::unique()));
        std::fs::create_dir_all(&dir).expect("dir");
        // Like a Node server with timers: answers, then outlives its stdin.
        let spec = ServerSpec::new("sh").arg("-c").arg("read l; echo \"$l\"; exec sleep 300");
        let (tap, wrapped) = Tap::wrap(&spec, &dir).expect("wraps");
        let mut child = start(&wrapped);
        child.stdin.as_mut().expect("stdin").write_all(b"ping\n").expect("writes");
        let mut out = std::io::BufReader::new(child.stdout.take().expect("stdout"));
        let mut first = String::new();
        out.read_line(&mut first).expect("reads");
        assert_eq!(first, "ping\n");
        drop(child.stdin.take());
        let started = std::time::Instant::now();
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(i32::try_from(child.id()).expect("pid")),
            nix::sys::signal::Signal::SIGTERM,
        )
        .expect("signals");
        let mut rest = Vec::new();
        out.read_to_end(&mut rest).expect("the client's stdout closes");
        assert!(started.elapsed() < std::time::Duration::from_secs(5), "{:?}", started.elapsed());
        assert_eq!(child.wait().expect("exits").code(), Some(143));
        assert_eq!(tap.read().server_exit, Some(143), "the server was ended by SIGTERM");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn no_answer_means_no_listing() {
        let to = [json!({"jsonrpc":"2.0","id":1,"method":"tools/list"})];
        let t = Transcript::from_messages(&to, &[]);
        assert!(t.listed.is_none());
        assert!(!t.initialized);
        assert!(t.handshake.is_none());
    }

    #[test]
    fn a_discover_the_server_answers_is_the_handshake_of_the_stateless_protocol() {
        let meta = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "claude-code"},
            "io.modelcontextprotocol/clientCapabilities": {"roots": {"listChanged": true}}
        });
        let to = [
            json!({"jsonrpc":"2.0","id":"d","method":"server/discover","params":{"_meta": meta}}),
            json!({"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta": meta}}),
        ];
        let from = [
            json!({"jsonrpc":"2.0","id":"d","result":{"supportedVersions":["2026-07-28"]}}),
            json!({"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"a"}]}}),
        ];
        let t = Transcript::from_messages(&to, &from);
        assert!(t.initialized);
        let h = t.handshake.expect("handshake");
        assert_eq!(h.protocol_version.as_deref(), Some("2026-07-28"));
        assert_eq!(h.capabilities, json!({"roots": {"listChanged": true}}));
        assert_eq!(h.client_info["name"], "claude-code");
        assert_eq!(h.methods, ["server/discover", "tools/list"]);
        assert_eq!(t.listed.map(|l| l.len()), Some(1));
    }
}
