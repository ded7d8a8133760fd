//! The loopback stand-in for a model provider: records the first request that carries tools and
//! answers every request with one minimal valid reply ("ok") in the provider's wire format, so an
//! agent CLI finishes its one turn and exits by itself.
//!
//! One thread accepts on `127.0.0.1:0`; each connection gets its own thread (keep-alive, several
//! requests). Dropping the [`Provider`] stops accepting and shuts every open connection down.

use super::http::{self, Request};
use serde_json::{Value, json};
use std::io::{self, BufReader};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

/// Why: how long the accept loop sleeps between polls of its non-blocking listener; the clients
/// connect once or twice per capture.
const ACCEPT_POLL: Duration = Duration::from_millis(5);
/// Why: a client that opens a connection and sends nothing must not hold a thread forever.
const IDLE: Duration = Duration::from_secs(60);

/// The provider's wire format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wire {
    /// OpenAI Responses API (`POST /v1/responses`, SSE), for Codex CLI.
    OpenAiResponses,
    /// Anthropic Messages API (`POST /v1/messages`, SSE or JSON), for Claude Code.
    AnthropicMessages,
    /// Gemini API (`:streamGenerateContent?alt=sse`, `:generateContent`), for Gemini CLI.
    Gemini,
}

/// One request the provider saw.
#[derive(Debug, Clone)]
pub(crate) struct Seen {
    pub method: String,
    pub path: String,
    pub bytes: usize,
    pub has_tools: bool,
}

#[derive(Default)]
struct State {
    seen: Vec<Seen>,
    /// The body of the first request carrying a non-empty `tools` array.
    captured: Option<Value>,
    /// Bodies that were not JSON (or were encoded), for the error message.
    unreadable: Vec<String>,
    streams: Vec<TcpStream>,
}

struct Shared {
    wire: Wire,
    stop: AtomicBool,
    state: Mutex<State>,
    changed: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A running stand-in.
pub(crate) struct Provider {
    addr: SocketAddr,
    shared: Arc<Shared>,
    accept: Option<JoinHandle<()>>,
}

impl Provider {
    /// Listens on a free loopback port.
    pub(crate) fn start(wire: Wire) -> io::Result<Self> {
        let listener = TcpListener::bind(("127.0.0.1", 0))?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            wire,
            stop: AtomicBool::new(false),
            state: Mutex::new(State::default()),
            changed: Condvar::new(),
        });
        let accept_shared = Arc::clone(&shared);
        let accept = thread::spawn(move || accept_loop(&listener, &accept_shared));
        Ok(Self { addr, shared, accept: Some(accept) })
    }

    /// `http://127.0.0.1:PORT`.
    pub(crate) fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Waits until a request with tools arrived, or `deadline`, or `give_up()` says the client
    /// is gone.
    pub(crate) fn wait_captured(
        &self,
        deadline: Instant,
        mut give_up: impl FnMut() -> bool,
    ) -> Option<Value> {
        let mut state = self.shared.lock();
        loop {
            if let Some(body) = &state.captured {
                return Some(body.clone());
            }
            let now = Instant::now();
            if now >= deadline {
                return None;
            }
            drop(state);
            if give_up() {
                // The client may have sent its request just before exiting.
                return self.shared.lock().captured.clone();
            }
            state = self.shared.lock();
            let wait = (deadline - now).min(Duration::from_millis(20));
            state = self
                .shared
                .changed
                .wait_timeout(state, wait)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }

    /// Every request seen, in order.
    pub(crate) fn seen(&self) -> Vec<Seen> {
        self.shared.lock().seen.clone()
    }

    /// What could not be read, as short notes.
    pub(crate) fn unreadable(&self) -> Vec<String> {
        self.shared.lock().unreadable.clone()
    }
}

impl Drop for Provider {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        for stream in self.shared.lock().streams.drain(..) {
            let _ = stream.shutdown(Shutdown::Both);
        }
        if let Some(accept) = self.accept.take() {
            let _ = accept.join();
        }
    }
}

fn accept_loop(listener: &TcpListener, shared: &Arc<Shared>) {
    while !shared.stop.load(Ordering::SeqCst) {
        match listener.accept() {
            Ok((stream, _)) => {
                if let Ok(clone) = stream.try_clone() {
                    shared.lock().streams.push(clone);
                }
                let conn_shared = Arc::clone(shared);
                thread::spawn(move || {
                    // The accept loop keeps a clone for shutting down at drop, so closing our
                    // handle would not close the socket: shut it down explicitly.
                    let handle = stream.try_clone();
                    let _ = serve_connection(stream, &conn_shared);
                    if let Ok(handle) = handle {
                        let _ = handle.shutdown(Shutdown::Both);
                    }
                });
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => thread::sleep(ACCEPT_POLL),
            Err(_) => thread::sleep(ACCEPT_POLL),
        }
    }
}

fn serve_connection(stream: TcpStream, shared: &Shared) -> io::Result<()> {
    stream.set_nonblocking(false)?;
    stream.set_read_timeout(Some(IDLE))?;
    stream.set_write_timeout(Some(IDLE))?;
    let mut writer = stream.try_clone()?;
    let mut reader = BufReader::new(stream);
    while !shared.stop.load(Ordering::SeqCst) {
        let Some(request) = http::read_request(&mut reader)? else { return Ok(()) };
        record(shared, &request);
        let (status, content_type, body) = reply(shared.wire, &request);
        let close = request.wants_close();
        http::write_response(&mut writer, status, content_type, &body, close)?;
        if close {
            return Ok(());
        }
    }
    Ok(())
}

fn record(shared: &Shared, request: &Request) {
    let parsed: Option<Value> = serde_json::from_slice(&request.body).ok();
    let has_tools = parsed
        .as_ref()
        .and_then(|b| b.get("tools"))
        .and_then(Value::as_array)
        .is_some_and(|t| !t.is_empty());
    let mut state = shared.lock();
    state.seen.push(Seen {
        method: request.method.clone(),
        path: request.path.clone(),
        bytes: request.body.len(),
        has_tools,
    });
    if parsed.is_none() && !request.body.is_empty() {
        let encoding = request.header("content-encoding").unwrap_or("none");
        state.unreadable.push(format!(
            "{} {}: {} bytes that are not JSON (content-encoding {encoding})",
            request.method,
            request.path,
            request.body.len()
        ));
    }
    if has_tools && state.captured.is_none() {
        state.captured = parsed;
        shared.changed.notify_all();
    }
}

/// Server-sent events, one `event:`/`data:` pair each (no `event:` line when the name is empty).
fn sse(events: &[(&str, Value)]) -> Vec<u8> {
    let mut out = String::new();
    for (name, data) in events {
        if !name.is_empty() {
            out.push_str("event: ");
            out.push_str(name);
            out.push('\n');
        }
        out.push_str("data: ");
        out.push_str(&data.to_string());
        out.push_str("\n\n");
    }
    out.into_bytes()
}

const SSE: &str = "text/event-stream";
const JSON: &str = "application/json";

/// The minimal valid answer to `request` in `wire`'s format.
fn reply(wire: Wire, request: &Request) -> (u16, &'static str, Vec<u8>) {
    let path = request.path.as_str();
    let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
    let model = body.get("model").and_then(Value::as_str).unwrap_or("stand-in").to_owned();
    let not_found =
        || (404, JSON, br#"{"error":{"message":"not served by the stand-in"}}"#.to_vec());
    if request.method != "POST" {
        return not_found();
    }
    match wire {
        Wire::OpenAiResponses if path.contains("/responses") => {
            let message = json!({
                "type": "message", "id": "msg_standin", "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": "ok", "annotations": []}],
            });
            let usage = json!({
                "input_tokens": 1, "output_tokens": 1, "total_tokens": 2,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens_details": {"reasoning_tokens": 0},
            });
            let response = |status: &str, output: Value| {
                json!({"id": "resp_standin", "object": "response", "created_at": 0,
                       "status": status, "model": model, "output": output, "usage": usage})
            };
            let events = [
                (
                    "response.created",
                    json!({"type": "response.created", "response": response("in_progress", json!([]))}),
                ),
                (
                    "response.output_item.done",
                    json!({"type": "response.output_item.done", "output_index": 0, "item": message}),
                ),
                (
                    "response.completed",
                    json!({"type": "response.completed", "response": response("completed", json!([message]))}),
                ),
            ];
            (200, SSE, sse(&events))
        }
        Wire::AnthropicMessages if path.contains("/count_tokens") => {
            (200, JSON, br#"{"input_tokens":1}"#.to_vec())
        }
        Wire::AnthropicMessages if path.contains("/messages") => {
            let usage = json!({"input_tokens": 1, "output_tokens": 1});
            if body.get("stream").and_then(Value::as_bool) == Some(true) {
                let events = [
                    (
                        "message_start",
                        json!({"type": "message_start", "message": {
                        "id": "msg_standin", "type": "message", "role": "assistant", "model": model,
                        "content": [], "stop_reason": null, "stop_sequence": null, "usage": usage}}),
                    ),
                    (
                        "content_block_start",
                        json!({"type": "content_block_start", "index": 0,
                        "content_block": {"type": "text", "text": ""}}),
                    ),
                    (
                        "content_block_delta",
                        json!({"type": "content_block_delta", "index": 0,
                        "delta": {"type": "text_delta", "text": "ok"}}),
                    ),
                    ("content_block_stop", json!({"type": "content_block_stop", "index": 0})),
                    (
                        "message_delta",
                        json!({"type": "message_delta",
                        "delta": {"stop_reason": "end_turn", "stop_sequence": null},
                        "usage": {"output_tokens": 1}}),
                    ),
                    ("message_stop", json!({"type": "message_stop"})),
                ];
                (200, SSE, sse(&events))
            } else {
                let message = json!({"id": "msg_standin", "type": "message", "role": "assistant",
                    "model": model, "content": [{"type": "text", "text": "ok"}],
                    "stop_reason": "end_turn", "stop_sequence": null, "usage": usage});
                (200, JSON, message.to_string().into_bytes())
            }
        }
        Wire::Gemini if path.contains(":countTokens") => {
            (200, JSON, br#"{"totalTokens":1}"#.to_vec())
        }
        Wire::Gemini if path.to_ascii_lowercase().contains("generatecontent") => {
            let chunk = json!({
                "candidates": [{"content": {"parts": [{"text": "ok"}], "role": "model"},
                                "finishReason": "STOP", "index": 0}],
                "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2},
                "modelVersion": "stand-in",
            });
            if path.contains("streamGenerateContent") {
                (200, SSE, sse(&[("", chunk)]))
            } else {
                (200, JSON, chunk.to_string().into_bytes())
            }
        }
        _ => not_found(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    fn post(addr: &str, path: &str, body: &str, chunked: bool) -> String {
        let mut s = TcpStream::connect(addr).expect("connects");
        s.set_read_timeout(Some(Duration::from_secs(5))).expect("timeout");
        let framing = if chunked {
            format!("transfer-encoding: chunked\r\n\r\n{:x}\r\n{body}\r\n0\r\n\r\n", body.len())
        } else {
            format!("content-length: {}\r\n\r\n{body}", body.len())
        };
        write!(s, "POST {path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n{framing}")
            .expect("writes");
        let mut out = String::new();
        s.read_to_string(&mut out).expect("reads");
        out
    }

    #[test]
    fn records_the_first_request_with_tools_and_answers_in_the_wire_format() {
        let p = Provider::start(Wire::AnthropicMessages).expect("listens");
        let addr = p.base_url().trim_start_matches("http://").to_owned();
        let plain = post(&addr, "/v1/messages", r#"{"stream":false,"messages":[]}"#, false);
        assert!(plain.starts_with("HTTP/1.1 200") && plain.contains(r#""text":"ok""#), "{plain}");
        assert!(p.wait_captured(Instant::now(), || false).is_none(), "no tools yet");
        let streamed = post(
            &addr,
            "/v1/messages?beta=true",
            r#"{"stream":true,"tools":[{"name":"a"}]}"#,
            true,
        );
        assert!(streamed.contains("event: message_stop"), "{streamed}");
        post(&addr, "/v1/messages", r#"{"stream":true,"tools":[{"name":"second"}]}"#, false);
        let got =
            p.wait_captured(Instant::now() + Duration::from_secs(5), || false).expect("captured");
        assert_eq!(got["tools"][0]["name"], "a", "the first request with tools is kept");
        assert_eq!(p.seen().len(), 3);
    }

    #[test]
    fn every_wire_answers_its_streaming_endpoint() {
        for (wire, path, marker) in [
            (Wire::OpenAiResponses, "/v1/responses", "response.completed"),
            (
                Wire::Gemini,
                "/v1beta/models/m:streamGenerateContent?alt=sse",
                "\"finishReason\":\"STOP\"",
            ),
        ] {
            let p = Provider::start(wire).expect("listens");
            let addr = p.base_url().trim_start_matches("http://").to_owned();
            let out = post(&addr, path, r#"{"tools":[{"x":1}]}"#, false);
            assert!(out.contains(marker), "{wire:?}: {out}");
            assert!(out.contains("content-type: text/event-stream"));
            assert!(post(&addr, "/elsewhere", "{}", false).starts_with("HTTP/1.1 404"));
        }
    }

    #[test]
    fn a_body_that_is_not_json_is_noted() {
        let p = Provider::start(Wire::Gemini).expect("listens");
        let addr = p.base_url().trim_start_matches("http://").to_owned();
        post(&addr, "/v1beta/models/m:generateContent", "\u{1}garbage", false);
        assert_eq!(p.unreadable().len(), 1);
        assert!(p.wait_captured(Instant::now() + Duration::from_millis(50), || false).is_none());
    }
}
