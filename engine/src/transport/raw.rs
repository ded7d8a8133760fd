//! A raw JSON-RPC session with a stdio server, below rmcp: the protocol phase sends what rmcp never
//! would (a request before `initialize`, request ids of its own choosing, params of the wrong
//! shape, an `initialize` with a version nobody supports) and reads every line the server writes.
//!
//! The process is started like any other ([`super::spawn`]: own process group, minimal
//! environment, stderr drained, exit watched) and killed with its group when the session ends.
//! Lines longer than the response limit are dropped while they stream, so memory stays bounded.

use super::{ConnectError, ConnectOptions, ExitInfo, Spawned, Target, spawn, tail};
use mcp_fuzz_process::Group;
use serde_json::{Value, json};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot, watch};

/// What the server wrote next, or why nothing came. A line that is not JSON is none of these:
/// the session skips it and counts it ([`RawSession::junk`]), as the main client does, so a
/// server that logs to stdout still gets every check.
///
/// See: issue 30 item 4 (the phase did not run on servers that print a banner).
#[derive(Debug, Clone, PartialEq)]
pub enum Heard {
    /// One line holding one JSON value (a message, well-formed or not: the caller judges it).
    Message(Value),
    /// A line longer than the limit (dropped): its length so far.
    Oversize(u64),
    /// The process ended.
    Exited(ExitInfo),
    /// Stdout closed while the process lives on.
    Closed,
    /// Nothing within the time given.
    Silent,
}

/// One line read: something heard, or a line that is not JSON (quoted, capped).
#[derive(Debug, Clone, PartialEq)]
enum Line {
    Heard(Heard),
    Junk(String),
}

/// Characters of a junk line quoted.
const JUNK_CHARS: usize = 200;

/// The lines that are not JSON a session skipped: how many, and the first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Junk {
    /// Lines skipped.
    pub lines: u64,
    /// The first, quoted (capped).
    pub first: Option<String>,
}

impl Junk {
    /// Adds another session's skipped lines.
    pub fn add(&mut self, other: &Self) {
        self.lines += other.lines;
        if self.first.is_none() {
            self.first.clone_from(&other.first);
        }
    }
}

/// A stdio server spoken to line by line.
pub struct RawSession {
    stdin: tokio::process::ChildStdin,
    lines: mpsc::Receiver<Line>,
    junk: Junk,
    exit: watch::Receiver<Option<ExitInfo>>,
    kill: Option<oneshot::Sender<()>>,
    group: Arc<Group>,
    stderr: Arc<Mutex<VecDeque<String>>>,
}

impl RawSession {
    /// Starts the server (stdio only); nothing is sent yet.
    ///
    /// # Errors
    /// [`ConnectError::Invalid`] for an HTTP target (a raw session needs the process's pipes),
    /// [`ConnectError::Spawn`] when the program cannot be started.
    pub fn start(target: &Target, opts: &ConnectOptions) -> Result<Self, ConnectError> {
        let Target::Stdio { command, env, inherit_env, cwd } = target else {
            return Err(ConnectError::Invalid(
                "a raw session needs a stdio server (its pipes); this one is reached over HTTP"
                    .into(),
            ));
        };
        let Spawned { stdin, stdout, stderr, exit_rx, kill_tx, group } =
            spawn(command, env, *inherit_env, cwd.as_ref(), opts.sandbox.as_deref())?;
        let (tx, lines) = mpsc::channel(64);
        tokio::spawn(read_lines(stdout, opts.max_response_bytes, tx));
        Ok(Self {
            stdin,
            lines,
            junk: Junk::default(),
            exit: exit_rx,
            kill: Some(kill_tx),
            group,
            stderr,
        })
    }

    /// Writes one message as one line. False when the pipe is closed.
    pub async fn send(&mut self, message: &Value) -> bool {
        let mut line = serde_json::to_vec(message).unwrap_or_default();
        line.push(b'\n');
        self.stdin.write_all(&line).await.is_ok() && self.stdin.flush().await.is_ok()
    }

    /// The next thing the server writes, within `timeout`; lines that are not JSON are skipped
    /// and counted on the way.
    pub async fn next(&mut self, timeout: Duration) -> Heard {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Heard::Silent;
            }
            match self.next_line(left).await {
                Line::Heard(h) => return h,
                Line::Junk(line) => {
                    self.junk.lines += 1;
                    self.junk.first.get_or_insert(line);
                }
            }
        }
    }

    /// The lines that are not JSON skipped so far.
    #[must_use]
    pub fn junk(&self) -> &Junk {
        &self.junk
    }

    async fn next_line(&mut self, timeout: Duration) -> Line {
        let mut exit = self.exit.clone();
        tokio::select! {
            biased;
            line = self.lines.recv() => match line {
                Some(l) => l,
                None => Line::Heard(self.exited_or_closed().await),
            },
            _ = exit.wait_for(Option::is_some) => {
                // Whatever it wrote before dying comes first.
                match tokio::time::timeout(Duration::from_millis(50), self.lines.recv()).await {
                    Ok(Some(l)) => l,
                    _ => Line::Heard(self.exited_or_closed().await),
                }
            }
            () = tokio::time::sleep(timeout) => Line::Heard(Heard::Silent),
        }
    }

    async fn exited_or_closed(&mut self) -> Heard {
        let mut exit = self.exit.clone();
        match tokio::time::timeout(Duration::from_millis(200), exit.wait_for(Option::is_some)).await
        {
            Ok(Ok(info)) => {
                Heard::Exited(info.clone().unwrap_or(ExitInfo { code: None, signal: None }))
            }
            _ => Heard::Closed,
        }
    }

    /// Sends a request with the given id and waits for the message answering it (same id, same
    /// JSON type), within `timeout` in all. Messages with another id, and notifications, are
    /// kept in `others`; junk is skipped; an oversize line, the process's end or silence end
    /// the wait.
    pub async fn request(
        &mut self,
        id: &Value,
        method: &str,
        params: Option<Value>,
        timeout: Duration,
        others: &mut Vec<Value>,
    ) -> Heard {
        let mut message = json!({"jsonrpc": "2.0", "id": id, "method": method});
        if let Some(p) = params {
            message["params"] = p;
        }
        self.exchange(&message, id, timeout, others).await
    }

    /// Sends `message` (any bytes a JSON value makes) and waits for the message with id `id`.
    pub async fn exchange(
        &mut self,
        message: &Value,
        id: &Value,
        timeout: Duration,
        others: &mut Vec<Value>,
    ) -> Heard {
        if !self.send(message).await {
            return self.exited_or_closed().await;
        }
        self.answer_to(id, timeout, others).await
    }

    /// Waits for the message with id `id`; see [`RawSession::request`].
    pub async fn answer_to(
        &mut self,
        id: &Value,
        timeout: Duration,
        others: &mut Vec<Value>,
    ) -> Heard {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.next(left).await {
                Heard::Message(m) if m.get("id") == Some(id) && m.get("method").is_none() => {
                    return Heard::Message(m);
                }
                Heard::Message(m) => others.push(m),
                other => return other,
            }
        }
    }

    /// Sends a notification (no id).
    pub async fn notify(&mut self, method: &str, params: Option<Value>) -> bool {
        let mut message = json!({"jsonrpc": "2.0", "method": method});
        if let Some(p) = params {
            message["params"] = p;
        }
        self.send(&message).await
    }

    /// The handshake: `initialize` with `version` (id 0), then `notifications/initialized` when
    /// the answer is a result. Returns the answer.
    pub async fn initialize(&mut self, version: &str, timeout: Duration) -> Heard {
        let params = json!({
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "mcp-fuzz", "version": env!("CARGO_PKG_VERSION")},
        });
        let mut others = Vec::new();
        let heard = self.request(&json!(0), "initialize", Some(params), timeout, &mut others).await;
        if let Heard::Message(m) = &heard
            && m.get("result").is_some()
        {
            self.notify("notifications/initialized", None).await;
        }
        heard
    }

    /// The last lines the server wrote to stderr.
    #[must_use]
    pub fn stderr_tail(&self) -> Vec<String> {
        tail(&self.stderr)
    }

    /// How the process ended, if it has.
    #[must_use]
    pub fn exited(&self) -> Option<ExitInfo> {
        self.exit.borrow().clone()
    }

    /// Kills the server's process group and waits (briefly) for its end.
    pub async fn close(mut self) {
        if let Some(k) = self.kill.take() {
            let _ = k.send(());
        }
        self.group.kill();
        let _ =
            tokio::time::timeout(Duration::from_secs(2), self.exit.wait_for(Option::is_some)).await;
    }
}

impl Drop for RawSession {
    fn drop(&mut self) {
        if let Some(k) = self.kill.take() {
            let _ = k.send(());
        }
        self.group.kill();
    }
}

/// Reads stdout line by line into `tx`: each line parsed as JSON, or quoted as junk; a line
/// past `max` bytes is dropped as it streams and reported once.
async fn read_lines(stdout: tokio::process::ChildStdout, max: usize, tx: mpsc::Sender<Line>) {
    let mut reader = BufReader::new(stdout);
    let mut line: Vec<u8> = Vec::new();
    let mut dropped: u64 = 0;
    loop {
        let (done, used) = match reader.fill_buf().await {
            Ok([]) | Err(_) => break,
            Ok(buf) => match buf.iter().position(|&b| b == b'\n') {
                Some(i) => {
                    take(&mut line, &mut dropped, &buf[..i], max);
                    (true, i + 1)
                }
                None => {
                    take(&mut line, &mut dropped, buf, max);
                    (false, buf.len())
                }
            },
        };
        reader.consume(used);
        if done {
            let heard = heard_of(&line, dropped);
            line.clear();
            dropped = 0;
            if let Some(h) = heard
                && tx.send(h).await.is_err()
            {
                return;
            }
        }
    }
}

/// Appends `bytes` to the line, or counts them once it is past `max`.
fn take(line: &mut Vec<u8>, dropped: &mut u64, bytes: &[u8], max: usize) {
    if *dropped > 0 || line.len() + bytes.len() > max {
        *dropped += (line.len() + bytes.len()) as u64;
        line.clear();
    } else {
        line.extend_from_slice(bytes);
    }
}

/// One whole line, judged as JSON or junk (blank lines are nothing).
fn heard_of(line: &[u8], dropped: u64) -> Option<Line> {
    if dropped > 0 {
        return Some(Line::Heard(Heard::Oversize(dropped)));
    }
    let text = String::from_utf8_lossy(line);
    let trimmed = text.trim_end_matches('\r');
    if trimmed.trim().is_empty() {
        return None;
    }
    Some(match serde_json::from_str::<Value>(trimmed) {
        Ok(v) => Line::Heard(Heard::Message(v)),
        Err(_) => Line::Junk(trimmed.chars().take(JUNK_CHARS).collect()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_is_json_or_junk_and_blank_lines_are_nothing() {
        assert_eq!(heard_of(br#"{"a":1}"#, 0), Some(Line::Heard(Heard::Message(json!({"a": 1})))));
        assert_eq!(heard_of(b"Server started\r", 0), Some(Line::Junk("Server started".into())));
        assert_eq!(heard_of(b"  ", 0), None);
        assert_eq!(heard_of(b"", 12), Some(Line::Heard(Heard::Oversize(12))));
    }

    #[test]
    fn a_line_past_the_limit_is_counted_not_kept() {
        let (mut line, mut dropped) = (Vec::new(), 0);
        take(&mut line, &mut dropped, b"abcd", 6);
        take(&mut line, &mut dropped, b"efgh", 6);
        assert!(line.is_empty());
        assert_eq!(dropped, 8);
        take(&mut line, &mut dropped, b"ij", 6);
        assert_eq!(dropped, 10, "the rest of the line is counted too");
    }
}
