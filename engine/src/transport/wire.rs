//! A tap on both directions of a stdio connection. MCP's stdio framing is one JSON-RPC message
//! per line, UTF-8, and nothing else on stdout; rmcp skips what it cannot parse, so a broken
//! answer would look like no answer. Between the server's stdout and rmcp sits a reader that
//! checks every line strictly and hands rmcp only well-formed messages; between rmcp and the
//! server's stdin a writer notes the id of every request and every notification sent, so that
//! each response can be matched to what it answers.
//!
//! A breach is a [`Violation`], quoted (capped). It belongs to the call in flight when there is
//! one (and ends that call at once: the connection wakes it through `notify`), otherwise to the
//! server as a whole (a banner at start-up, a reply to a notification). Oversize lines are
//! dropped while they stream, with bounded memory, and the raw bytes of the last response are
//! kept so that the judge sees exactly what the server sent.

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::Value;
use std::collections::{HashMap, HashSet, VecDeque};
use std::pin::Pin;
use std::sync::Mutex;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::Notify;

/// Bytes of an offending line quoted in a violation.
const EXCERPT: usize = 200;

/// Bytes read from the server per read call.
const READ_CHUNK: usize = 64 * 1024;

/// Lines one message may be spread over before it is judged plain junk.
const MAX_CONTINUATION_LINES: usize = 10_000;

/// Server-wide violations kept (the count goes on).
const MAX_STRAY: usize = 20;

/// Answered ids remembered to recognise a second answer to one request.
const MAX_ANSWERED: usize = 1 << 16;

/// What was wrong with a line (or a run of lines) on stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Breach {
    /// Not UTF-8.
    InvalidUtf8,
    /// Not JSON at all (log text).
    NotJson,
    /// JSON with a bare `NaN` / `Infinity` / `-Infinity`.
    NonFinite,
    /// One message spread over several lines (pretty-printed).
    MultiLine,
    /// A JSON array (a batch) or a scalar, not one message object.
    NotAnObject,
    /// No `"jsonrpc": "2.0"`.
    NoVersion,
    /// A member twice.
    DuplicateMember,
    /// A response with neither `result` nor `error`.
    NeitherResultNorError,
    /// A response with both.
    BothResultAndError,
    /// A message with `method` and `result` or `error`.
    MethodAndResult,
    /// A response whose id matches no request sent.
    UnknownId,
    /// A response whose id is a request's id in another JSON type (`"7"` for `7`).
    IdType,
    /// A response with `id: null` (or none) to a request that had an id.
    NullId,
    /// A response to a notification.
    NotificationReply,
    /// A second response to one request.
    DuplicateResponse,
}

impl Breach {
    fn text(self) -> &'static str {
        match self {
            Self::InvalidUtf8 => "a line on stdout that is not UTF-8",
            Self::NotJson => {
                "a line on stdout that is not JSON-RPC (log to stderr: stdout carries only MCP messages)"
            }
            Self::NonFinite => {
                "a bare NaN or Infinity, which JSON does not have (send null or a string)"
            }
            Self::MultiLine => {
                "one message spread over several lines (stdio framing is one message per line: do not pretty-print)"
            }
            Self::NotAnObject => {
                "a line that is JSON but not one message object (MCP has no batches)"
            }
            Self::NoVersion => "a message without `\"jsonrpc\": \"2.0\"`",
            Self::DuplicateMember => "a message with a member given twice",
            Self::NeitherResultNorError => "a response with neither `result` nor `error`",
            Self::BothResultAndError => "a response with both `result` and `error`",
            Self::MethodAndResult => "a message with both `method` and `result`/`error`",
            Self::UnknownId => "a response whose id matches no request sent",
            Self::IdType => "a response whose id has another JSON type than the request's",
            Self::NullId => "a response with `id: null` to a request that had an id",
            Self::NotificationReply => "a response to a notification (notifications get no answer)",
            Self::DuplicateResponse => "a second response to one request",
        }
    }
}

/// One breach of the stdio framing or of JSON-RPC, with the bytes quoted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Violation {
    pub breach: Breach,
    /// The offending bytes, lossily decoded and cut to [`EXCERPT`] bytes.
    pub excerpt: String,
    /// Extra facts (the id sent, the column of a bad token, the number of lines).
    pub note: Option<String>,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.breach.text())?;
        if let Some(n) = &self.note {
            write!(f, " ({n})")?;
        }
        write!(f, ": `{}`", self.excerpt)
    }
}

fn quote(bytes: &[u8]) -> String {
    let cut = bytes.len().min(EXCERPT);
    let mut s = String::from_utf8_lossy(&bytes[..cut]).into_owned();
    if cut < bytes.len() {
        s.push_str(&format!("... ({} bytes)", bytes.len()));
    }
    s
}

/// A request id as a key: its JSON type and text, so `7` and `"7"` differ.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct IdKey {
    string: bool,
    text: String,
}

impl IdKey {
    fn of(v: &Value) -> Option<Self> {
        match v {
            Value::String(s) => Some(Self { string: true, text: s.clone() }),
            Value::Number(n) => Some(Self { string: false, text: n.to_string() }),
            _ => None,
        }
    }

    fn other_type(&self) -> Self {
        Self { string: !self.string, text: self.text.clone() }
    }
}

/// Bytes kept of a line dropped for its size: enough for the envelope before a large `result`.
const HEAD_BYTES: usize = 512;

/// The top-level `id` of a JSON-RPC message, read from the first bytes of its line (a line too
/// long to parse whole), when they hold it: a key `"id"` at depth 1 followed by a number or a
/// string.
fn head_id(head: &[u8]) -> Option<IdKey> {
    let (mut depth, mut i) = (0_usize, 0_usize);
    while i < head.len() {
        match head[i] {
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            b'"' => {
                let end = string_end(head, i)?;
                let is_id_key = depth == 1 && &head[i..=end] == b"\"id\"";
                i = end + 1;
                if is_id_key {
                    let rest = &head[i..];
                    let colon = rest.iter().position(|b| !b.is_ascii_whitespace())?;
                    if rest[colon] != b':' {
                        continue;
                    }
                    let value = &rest[colon + 1..];
                    let start = value.iter().position(|b| !b.is_ascii_whitespace())?;
                    let value = &value[start..];
                    let len = if value.first() == Some(&b'"') {
                        string_end(value, 0)? + 1
                    } else {
                        value
                            .iter()
                            .position(|b| matches!(b, b',' | b'}') || b.is_ascii_whitespace())?
                    };
                    return serde_json::from_slice::<Value>(&value[..len])
                        .ok()
                        .as_ref()
                        .and_then(IdKey::of);
                }
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// The index of the quote that closes the JSON string opening at `start`.
fn string_end(bytes: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return Some(i),
            _ => i += 1,
        }
    }
    None
}

/// One call in flight (or answered and not yet ended by its caller).
struct Call {
    ticket: Ticket,
    /// The id of its request, once known (from the line written, then from rmcp's handle).
    id: Option<IdKey>,
    /// Its answer came: what follows on stdout is not its own any more.
    answered: bool,
    violation: Option<Violation>,
    /// Size of the last line dropped for exceeding the limit while it was the newest call.
    oversize: Option<u64>,
    /// Raw bytes of its response line.
    response: Option<Vec<u8>>,
}

/// A call's handle on the wire state.
pub(crate) type Ticket = u64;

/// Responses kept for requests whose call has not claimed its id yet.
const MAX_UNCLAIMED: usize = 64;

#[derive(Default)]
struct Tap {
    /// Requests sent and not answered yet (also those the caller gave up on: a late answer is
    /// allowed), each with its place in the order of messages written.
    pending: HashMap<IdKey, u64>,
    answered: HashSet<IdKey>,
    /// Messages written so far (the place of the next one).
    written: u64,
    /// The places of the notifications the server may not have handled yet: a `null`-id answer
    /// while there are some answers the oldest. The answer to a request shows that every
    /// notification written before that request was handled (a server handles messages in
    /// order), not one written after it: a late answer to a call that was then cancelled comes
    /// before the reply to the cancellation.
    ///
    /// See: issue 30 item 4 (an `id: null` "Method not found: notifications/cancelled" was blamed
    /// on the call in flight).
    notifications: VecDeque<u64>,
    /// The calls in flight, oldest first. A breach belongs to the newest one still waiting for
    /// its answer (the one that was sent last: junk before its answer is most likely its own).
    calls: Vec<Call>,
    next_ticket: Ticket,
    /// Responses to requests no call has claimed yet (the answer can come before the caller
    /// learns its request's id).
    unclaimed: VecDeque<(IdKey, Vec<u8>)>,
    /// Violations outside any call: the first of each breach, and how many of that breach.
    stray: Vec<(Violation, u64)>,
    stray_total: u64,
}

impl Tap {
    fn push_stray(&mut self, v: Violation) {
        self.stray_total += 1;
        if let Some((_, n)) = self.stray.iter_mut().find(|(first, _)| first.breach == v.breach) {
            *n += 1;
        } else if self.stray.len() < MAX_STRAY {
            self.stray.push((v, 1));
        }
    }

    fn call(&mut self, ticket: Ticket) -> Option<&mut Call> {
        self.calls.iter_mut().find(|c| c.ticket == ticket)
    }

    /// The newest call still waiting for its answer.
    fn waiting(&mut self) -> Option<&mut Call> {
        self.calls.iter_mut().rev().find(|c| !c.answered)
    }
}

/// What the taps saw, shared with the connection.
#[derive(Default)]
pub(crate) struct WireState {
    tap: Mutex<Tap>,
    /// Woken on a violation of a call in flight and on an oversize line.
    pub notify: Notify,
    /// Where a malformed `notifications/message` is noted (rmcp drops it unseen).
    heard: std::sync::Arc<super::asks::Heard>,
}

impl WireState {
    /// A tap that notes malformed log messages in `heard`.
    pub fn hearing(heard: &std::sync::Arc<super::asks::Heard>) -> Self {
        Self { heard: std::sync::Arc::clone(heard), ..Self::default() }
    }

    fn tap(&self) -> std::sync::MutexGuard<'_, Tap> {
        self.tap.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A call starts: until its answer, what follows on stdout is its own (unless a newer
    /// call starts).
    pub fn begin_call(&self) -> Ticket {
        let mut t = self.tap();
        let ticket = t.next_ticket;
        t.next_ticket += 1;
        t.calls.push(Call {
            ticket,
            id: None,
            answered: false,
            violation: None,
            oversize: None,
            response: None,
        });
        ticket
    }

    /// The call's request went out with `id` (as rmcp says).
    pub fn bind(&self, ticket: Ticket, id: &Value) {
        let Some(key) = IdKey::of(id) else { return };
        let mut t = self.tap();
        let claimed = t.unclaimed.iter().position(|(k, _)| *k == key);
        let response = claimed.and_then(|i| t.unclaimed.remove(i)).map(|(_, r)| r);
        if let Some(c) = t.call(ticket) {
            c.id = Some(key);
            if let Some(r) = response {
                c.response = Some(r);
                c.answered = true;
            }
        }
    }

    /// The call ended: what follows belongs to the server as a whole.
    pub fn end_call(&self, ticket: Ticket) {
        self.tap().calls.retain(|c| c.ticket != ticket);
    }

    pub fn take_violation(&self, ticket: Ticket) -> Option<Violation> {
        self.tap().call(ticket).and_then(|c| c.violation.take())
    }

    pub fn oversize(&self, ticket: Ticket) -> Option<u64> {
        self.tap().call(ticket).and_then(|c| c.oversize)
    }

    pub fn take_response(&self, ticket: Ticket) -> Option<Vec<u8>> {
        self.tap().call(ticket).and_then(|c| c.response.take())
    }

    /// Violations outside any call: their number, and the first of each breach with its count.
    pub fn stray(&self) -> (u64, Vec<(Violation, u64)>) {
        let t = self.tap();
        (t.stray_total, t.stray.clone())
    }

    fn record(&self, v: Violation) {
        let mut t = self.tap();
        if v.breach != Breach::NotificationReply
            && let Some(c) = t.waiting()
        {
            if c.violation.is_none() {
                c.violation = Some(v);
            }
            drop(t);
            self.notify.notify_waiters();
        } else {
            t.push_stray(v);
        }
    }

    /// An oversize line of `n` bytes was dropped; `id`: the request it answers, when its first
    /// bytes named one. It belongs to that call, else to the newest one waiting.
    ///
    /// See: issue 29 item 4 (with slow calls in flight, a 50 MB answer was blamed on a newer
    /// call, and its own call never ended: its re-runs read as "did not fail again").
    fn set_oversize(&self, n: u64, id: Option<IdKey>) {
        let mut t = self.tap();
        let own = id.and_then(|k| t.calls.iter().position(|c| c.id.as_ref() == Some(&k)));
        let call = match own {
            Some(i) => t.calls.get_mut(i),
            None => t.waiting(),
        };
        let Some(c) = call else {
            let note = Some(format!("a line of {n} bytes, over the response limit"));
            t.push_stray(Violation { breach: Breach::NotJson, excerpt: String::new(), note });
            return;
        };
        c.oversize = Some(n);
        drop(t);
        self.notify.notify_waiters();
    }

    /// Judges one whole message line from the server; whether rmcp may see it.
    fn judge_incoming(&self, line: &[u8]) -> Result<(), Violation> {
        let env = envelope(line)?;
        let v = |breach, note: Option<String>| Violation { breach, excerpt: quote(line), note };
        if env.jsonrpc.as_ref().and_then(Value::as_str) != Some("2.0") {
            return Err(v(Breach::NoVersion, None));
        }
        if env.method.is_some() {
            if env.result.is_some() || env.error.is_some() {
                return Err(v(Breach::MethodAndResult, None));
            }
            self.note_log_message(line);
            return Ok(());
        }
        match (env.result.is_some(), env.error.is_some()) {
            (true, true) => return Err(v(Breach::BothResultAndError, None)),
            (false, false) => return Err(v(Breach::NeitherResultNorError, None)),
            _ => {}
        }
        let mut t = self.tap();
        let Some(key) = env.id.as_ref().and_then(IdKey::of) else {
            let breach = if t.notifications.pop_front().is_some() {
                Breach::NotificationReply
            } else {
                Breach::NullId
            };
            return Err(v(breach, None));
        };
        if let Some(place) = t.pending.remove(&key) {
            t.notifications.retain(|&n| n > place);
            if t.answered.len() >= MAX_ANSWERED {
                t.answered.clear();
            }
            if let Some(c) = t.calls.iter_mut().find(|c| c.id.as_ref() == Some(&key)) {
                c.response = Some(line.to_vec());
                // What follows the answer is not the call's any more.
                c.answered = true;
            } else {
                if t.unclaimed.len() >= MAX_UNCLAIMED {
                    t.unclaimed.pop_front();
                }
                t.unclaimed.push_back((key.clone(), line.to_vec()));
            }
            t.answered.insert(key);
            return Ok(());
        }
        if t.answered.contains(&key) {
            return Err(v(Breach::DuplicateResponse, None));
        }
        let other = key.other_type();
        if t.pending.contains_key(&other) {
            let sent = if other.string { format!("\"{}\"", other.text) } else { other.text };
            return Err(v(Breach::IdType, Some(format!("the request's id was {sent}"))));
        }
        Err(v(Breach::UnknownId, None))
    }

    /// A `notifications/message` that breaks its shape is noted (a well-formed one is counted
    /// by the client handler, where rmcp delivers it).
    fn note_log_message(&self, line: &[u8]) {
        const METHOD: &[u8] = b"\"notifications/message\"";
        if !line.windows(METHOD.len()).any(|w| w == METHOD) {
            return;
        }
        let Ok(message) = serde_json::from_slice::<Value>(line) else { return };
        if message["method"] != "notifications/message" {
            return;
        }
        if let Some(problem) = super::asks::log_message_problem(&message) {
            self.heard.log_message(Some(format!("{problem}: `{}`", quote(line))));
        }
    }

    /// Notes one message line rmcp sent to the server.
    fn note_outgoing(&self, line: &[u8]) {
        let Ok(env) = serde_json::from_slice::<Envelope>(line) else { return };
        let mut t = self.tap();
        let place = t.written;
        t.written += 1;
        match (&env.method, env.id.as_ref().and_then(IdKey::of)) {
            (Some(_), Some(id)) => {
                // Calls send their requests in the order they begin; rmcp's handle confirms.
                if let Some(c) = t.calls.iter_mut().find(|c| c.id.is_none()) {
                    c.id = Some(id.clone());
                }
                t.pending.insert(id, place);
            }
            (Some(_), None) => {
                if t.notifications.len() >= MAX_UNCLAIMED {
                    t.notifications.pop_front();
                }
                t.notifications.push_back(place);
            }
            (None, _) => {}
        }
    }
}

/// The members of a JSON-RPC message that framing checks need; the rest is skipped without
/// allocating. Present-but-`null` is told apart from absent.
#[derive(Deserialize)]
struct Envelope {
    #[serde(default, deserialize_with = "present")]
    jsonrpc: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    id: Option<Value>,
    #[serde(default, deserialize_with = "present_any")]
    method: Option<()>,
    #[serde(default, deserialize_with = "present_any")]
    result: Option<()>,
    #[serde(default, deserialize_with = "present_any")]
    error: Option<()>,
}

fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

fn present_any<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<()>, D::Error> {
    IgnoredAny::deserialize(d).map(|_| Some(()))
}

/// Whether `line` is incomplete JSON (it may go on over the next lines).
fn is_truncated_json(line: &[u8]) -> bool {
    serde_json::from_slice::<IgnoredAny>(line).is_err_and(|e| e.is_eof())
}

/// The envelope of a complete line, or why the line is not one message.
fn envelope(line: &[u8]) -> Result<Envelope, Violation> {
    let v = |breach, note: Option<String>| Violation { breach, excerpt: quote(line), note };
    if let Err(e) = std::str::from_utf8(line) {
        return Err(v(Breach::InvalidUtf8, Some(format!("at byte {}", e.valid_up_to()))));
    }
    match line.first() {
        Some(b'{') => {}
        Some(b'[') if serde_json::from_slice::<IgnoredAny>(line).is_ok() => {
            return Err(v(Breach::NotAnObject, Some("a batch".into())));
        }
        _ if serde_json::from_slice::<IgnoredAny>(line).is_ok() => {
            return Err(v(Breach::NotAnObject, None));
        }
        _ => return Err(v(Breach::NotJson, None)),
    }
    serde_json::from_slice::<Envelope>(line).map_err(|e| {
        if let Some(at) = non_finite_token(line) {
            v(Breach::NonFinite, Some(format!("at byte {at}")))
        } else if e.to_string().starts_with("duplicate field") {
            v(Breach::DuplicateMember, Some(e.to_string()))
        } else {
            v(Breach::NotJson, Some(e.to_string()))
        }
    })
}

/// The offset of a bare `NaN` / `Infinity` / `-Infinity` outside strings.
fn non_finite_token(line: &[u8]) -> Option<usize> {
    let (mut in_string, mut escaped) = (false, false);
    for (i, &b) in line.iter().enumerate() {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
        } else if b == b'"' {
            in_string = true;
        } else if [&b"NaN"[..], b"Infinity", b"-Infinity"].iter().any(|t| line[i..].starts_with(t))
        {
            return Some(i);
        }
    }
    None
}

/// The server's stdout as rmcp reads it: whole, well-formed message lines only.
pub(crate) struct WireReader<R> {
    inner: R,
    line: Vec<u8>,
    /// A message that began on an earlier line and has not been completed yet.
    continued: Vec<u8>,
    continued_lines: usize,
    out: Vec<u8>,
    out_pos: usize,
    discarding: Option<u64>,
    /// The first bytes of the line being discarded (they name the request it answers).
    head: Vec<u8>,
    max_line: usize,
    state: std::sync::Arc<WireState>,
    eof: bool,
    /// Read buffer, allocated once: a fresh 64 KiB buffer per read costs more than the read.
    buf: Vec<u8>,
}

impl<R> WireReader<R> {
    pub fn new(inner: R, max_line: usize, state: std::sync::Arc<WireState>) -> Self {
        Self {
            inner,
            line: Vec::new(),
            continued: Vec::new(),
            continued_lines: 0,
            out: Vec::new(),
            out_pos: 0,
            discarding: None,
            head: Vec::new(),
            max_line,
            state,
            eof: false,
            buf: vec![0; READ_CHUNK],
        }
    }

    fn forward(&mut self, message: &[u8]) {
        self.out.extend_from_slice(message);
        self.out.push(b'\n');
    }

    /// Judges `message` and forwards it when it is well-formed.
    fn judge(&mut self, message: &[u8]) {
        match self.state.judge_incoming(message) {
            Ok(()) => self.forward(message),
            Err(v) => self.state.record(v),
        }
    }

    /// The pending multi-line text is not going to become a message: junk.
    fn flush_continued(&mut self) {
        if !self.continued.is_empty() {
            let text = std::mem::take(&mut self.continued);
            self.continued_lines = 0;
            self.state.record(Violation {
                breach: Breach::NotJson,
                excerpt: quote(&text),
                note: None,
            });
        }
    }

    fn finish_line(&mut self) {
        let line = std::mem::take(&mut self.line);
        let trimmed = line.trim_ascii();
        if trimmed.is_empty() {
            return;
        }
        if !self.continued.is_empty() {
            let standalone = trimmed.first() == Some(&b'{')
                && serde_json::from_slice::<IgnoredAny>(trimmed).is_ok();
            if standalone {
                self.flush_continued();
            } else {
                self.continued.push(b'\n');
                self.continued.extend_from_slice(trimmed);
                self.continued_lines += 1;
                if serde_json::from_slice::<IgnoredAny>(&self.continued).is_ok() {
                    self.finish_continued();
                } else if self.continued_lines >= MAX_CONTINUATION_LINES
                    || self.continued.len() > self.max_line
                    || !is_truncated_json(&self.continued)
                {
                    self.flush_continued();
                }
                return;
            }
        }
        // A pretty-printer ends a message's first line with `{`, `[` or `,`, never with the
        // brace that closes it: a line that does is one broken message (an unescaped quote), and
        // waiting for more would leave the call in flight unanswered until it times out.
        let closed = matches!(trimmed.last(), Some(b'}' | b']'));
        if matches!(trimmed.first(), Some(b'{' | b'[')) && !closed && is_truncated_json(trimmed) {
            self.continued = trimmed.to_vec();
            self.continued_lines = 1;
            return;
        }
        self.judge(trimmed);
    }

    /// A message spread over lines is complete: one violation, and rmcp gets nothing (the
    /// call it answers ends on the violation).
    fn finish_continued(&mut self) {
        let text = std::mem::take(&mut self.continued);
        let lines = std::mem::take(&mut self.continued_lines);
        let compact = serde_json::from_slice::<Value>(&text)
            .ok()
            .and_then(|v| serde_json::to_vec(&v).ok())
            .unwrap_or_default();
        self.state.record(Violation {
            breach: Breach::MultiLine,
            excerpt: quote(&text),
            note: Some(format!("{lines} lines")),
        });
        // Matching the id keeps the bookkeeping right for what follows.
        let _ = self.state.judge_incoming(&compact);
    }

    fn take(&mut self, chunk: &[u8]) {
        let mut rest = chunk;
        while !rest.is_empty() {
            let nl = rest.iter().position(|&b| b == b'\n');
            let (part, after) = match nl {
                Some(i) => (&rest[..i], Some(&rest[i + 1..])),
                None => (rest, None),
            };
            if let Some(n) = &mut self.discarding {
                *n += part.len() as u64;
            } else if self.line.len() + part.len() > self.max_line {
                self.discarding = Some((self.line.len() + part.len()) as u64);
                let mut head = std::mem::take(&mut self.line);
                head.extend_from_slice(&part[..part.len().min(HEAD_BYTES)]);
                head.truncate(HEAD_BYTES);
                self.head = head;
            } else {
                self.line.extend_from_slice(part);
            }
            match after {
                Some(a) => {
                    if let Some(n) = self.discarding.take() {
                        let head = std::mem::take(&mut self.head);
                        self.state.set_oversize(n, head_id(&head));
                    } else {
                        self.finish_line();
                    }
                    rest = a;
                }
                None => rest = &[],
            }
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for WireReader<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = &mut *self;
        loop {
            if this.out_pos < this.out.len() {
                let n = (this.out.len() - this.out_pos).min(buf.remaining());
                buf.put_slice(&this.out[this.out_pos..this.out_pos + n]);
                this.out_pos += n;
                if this.out_pos == this.out.len() {
                    this.out.clear();
                    this.out_pos = 0;
                }
                return Poll::Ready(Ok(()));
            }
            if this.eof {
                return Poll::Ready(Ok(()));
            }
            let mut chunk = std::mem::take(&mut this.buf);
            let mut rb = ReadBuf::new(&mut chunk);
            let polled = Pin::new(&mut this.inner).poll_read(cx, &mut rb);
            let n = rb.filled().len();
            let result = match polled {
                Poll::Pending => Some(Poll::Pending),
                Poll::Ready(Err(e)) => Some(Poll::Ready(Err(e))),
                Poll::Ready(Ok(())) if n == 0 => {
                    this.eof = true;
                    if this.discarding.is_none() {
                        this.finish_line();
                    }
                    this.flush_continued();
                    None
                }
                Poll::Ready(Ok(())) => {
                    this.take(&chunk[..n]);
                    None
                }
            };
            this.buf = chunk;
            if let Some(r) = result {
                return r;
            }
        }
    }
}

/// The server's stdin as rmcp writes it: bytes pass through unchanged, and each whole line
/// written is noted (request ids, notifications).
pub(crate) struct WireWriter<W> {
    inner: W,
    line: Vec<u8>,
    state: std::sync::Arc<WireState>,
}

impl<W> WireWriter<W> {
    pub fn new(inner: W, state: std::sync::Arc<WireState>) -> Self {
        Self { inner, line: Vec::new(), state }
    }

    fn noted(&mut self, written: &[u8]) {
        let mut rest = written;
        while let Some(i) = rest.iter().position(|&b| b == b'\n') {
            self.line.extend_from_slice(&rest[..i]);
            let line = std::mem::take(&mut self.line);
            self.state.note_outgoing(line.trim_ascii());
            rest = &rest[i + 1..];
        }
        self.line.extend_from_slice(rest);
    }
}

impl<W: AsyncWrite + Unpin> AsyncWrite for WireWriter<W> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let this = &mut *self;
        let polled = Pin::new(&mut this.inner).poll_write(cx, buf);
        if let Poll::Ready(Ok(n)) = polled {
            this.noted(&buf[..n]);
        }
        polled
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use tokio::io::AsyncReadExt;

    /// Feeds `input` as the server's stdout after the requests `sent` went out, with a call in
    /// flight when `active`; what rmcp got and the state.
    async fn run(
        sent: &[&str],
        input: &[u8],
        max: usize,
        active: bool,
    ) -> (String, Arc<WireState>) {
        let state = Arc::new(WireState::default());
        // The first request is the call in flight, the others are older.
        let (first, older) = sent.split_first().map_or((None, &[][..]), |(f, o)| (Some(f), o));
        for s in older {
            state.note_outgoing(s.as_bytes());
        }
        if active {
            assert_eq!(state.begin_call(), 0, "tests name the call in flight 0");
        }
        if let Some(s) = first {
            state.note_outgoing(s.as_bytes());
        }
        let mut r = WireReader::new(input, max, Arc::clone(&state));
        let mut out = String::new();
        r.read_to_string(&mut out).await.expect("reads");
        (out, state)
    }

    const REQ7: &str = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{}}"#;
    const OK7: &str = r#"{"jsonrpc":"2.0","id":7,"result":{}}"#;

    async fn breach_of(sent: &[&str], input: &str) -> (String, Option<Violation>) {
        let (out, st) = run(sent, input.as_bytes(), 10_000, true).await;
        (out, st.take_violation(0))
    }

    #[tokio::test]
    async fn a_well_formed_answer_passes_and_is_kept() {
        let (out, st) = run(&[REQ7], format!("{OK7}\n").as_bytes(), 1000, true).await;
        assert_eq!(out, format!("{OK7}\n"));
        assert!(st.take_violation(0).is_none());
        assert_eq!(st.take_response(0).as_deref(), Some(OK7.as_bytes()));
        assert_eq!(st.stray().0, 0);
    }

    #[tokio::test]
    async fn server_requests_and_notifications_pass() {
        let input = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\
                     {\"jsonrpc\":\"2.0\",\"id\":\"s1\",\"method\":\"roots/list\"}\n";
        let (out, v) = breach_of(&[REQ7], input).await;
        assert_eq!(out, input);
        assert_eq!(v, None);
    }

    #[tokio::test]
    async fn each_breach_is_named_and_the_line_held_back() {
        let cases: &[(&str, Breach)] = &[
            ("INFO:echo:handling tools/call id=7", Breach::NotJson),
            (r#"{"jsonrpc":"2.0","id":7,"result":{"ms":NaN}}"#, Breach::NonFinite),
            (r#"{"jsonrpc":"2.0","id":7,"result":{"ms":-Infinity}}"#, Breach::NonFinite),
            (r#"{"jsonrpc":"2.0","id":1007,"result":{}}"#, Breach::UnknownId),
            (r#"{"jsonrpc":"2.0","id":"7","result":{}}"#, Breach::IdType),
            (r#"{"jsonrpc":"2.0","id":null,"result":{}}"#, Breach::NullId),
            (r#"{"jsonrpc":"2.0","id":7}"#, Breach::NeitherResultNorError),
            (
                r#"{"jsonrpc":"2.0","id":7,"result":{},"error":{"code":1,"message":"x"}}"#,
                Breach::BothResultAndError,
            ),
            (r#"{"id":7,"result":{}}"#, Breach::NoVersion),
            (r#"{"jsonrpc":"1.0","id":7,"result":{}}"#, Breach::NoVersion),
            (r#"{"jsonrpc":"2.0","id":7,"result":{},"result":{}}"#, Breach::DuplicateMember),
            (r#"[{"jsonrpc":"2.0","id":7,"result":{}}]"#, Breach::NotAnObject),
            ("42", Breach::NotAnObject),
            (r#"{"jsonrpc":"2.0","id":7,"method":"x","result":{}}"#, Breach::MethodAndResult),
        ];
        for (line, want) in cases {
            let (out, v) = breach_of(&[REQ7], &format!("{line}\n")).await;
            let v = v.unwrap_or_else(|| panic!("no violation for {line}"));
            assert_eq!(v.breach, *want, "{line}: {v}");
            assert!(v.to_string().contains(&line[..line.len().min(20)]), "quoted: {v}");
            assert_eq!(out, "", "{line} must not reach rmcp");
        }
    }

    #[tokio::test]
    async fn invalid_utf8_is_named_with_its_offset() {
        let mut input = br#"{"jsonrpc":"2.0","id":7,"result":{"t":""#.to_vec();
        input.extend_from_slice(b"\xabEcho\xbb\"}}\n");
        let (out, st) = run(&[REQ7], &input, 1000, true).await;
        let v = st.take_violation(0).expect("a violation");
        assert_eq!(v.breach, Breach::InvalidUtf8);
        assert_eq!(v.note.as_deref(), Some("at byte 39"));
        assert_eq!(out, "");
    }

    #[tokio::test]
    async fn a_pretty_printed_answer_is_one_violation_not_many() {
        let pretty = "{\n  \"jsonrpc\": \"2.0\",\n  \"id\": 7,\n  \"result\": {}\n}\n";
        let (out, st) = run(&[REQ7], pretty.as_bytes(), 1000, true).await;
        let v = st.take_violation(0).expect("a violation");
        assert_eq!(v.breach, Breach::MultiLine);
        assert_eq!(v.note.as_deref(), Some("5 lines"));
        assert_eq!(st.stray().0, 0, "the other lines are the same violation");
        assert_eq!(out, "");
        // The id was answered: a repeat is a duplicate, not unknown.
        st.begin_call();
        let again = st.judge_incoming(OK7.as_bytes());
        assert!(again.is_err_and(|v| v.breach == Breach::DuplicateResponse));
    }

    #[tokio::test]
    async fn a_broken_continuation_is_junk_and_the_next_message_still_passes() {
        let input = format!("{{ \"oops\n{OK7}\n");
        let (out, st) = run(&[REQ7], input.as_bytes(), 1000, true).await;
        assert_eq!(st.take_violation(0).map(|v| v.breach), Some(Breach::NotJson));
        assert_eq!(out, format!("{OK7}\n"));
    }

    #[tokio::test]
    async fn a_line_closed_by_its_brace_but_broken_by_a_quote_is_judged_at_once() {
        // See: issue 30 item 4 (an unescaped `"` in a result text left the call waiting for a
        // continuation until it timed out).
        let broken = "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"text\":\"Echo: \\\"}}\n";
        let (out, st) = run(&[REQ7], broken.as_bytes(), 1000, true).await;
        assert_eq!(st.take_violation(0).map(|v| v.breach), Some(Breach::NotJson));
        assert_eq!(out, "");
    }

    #[tokio::test]
    async fn outside_a_call_violations_are_server_wide() {
        let input = format!("Echo MCP Server running on stdio\n{OK7}\n");
        let (out, st) = run(&[REQ7], input.as_bytes(), 1000, false).await;
        assert_eq!(out, format!("{OK7}\n"));
        assert_eq!(st.take_violation(0), None);
        let (n, first) = st.stray();
        assert_eq!(n, 1);
        assert_eq!(first[0].0.breach, Breach::NotJson);
        assert!(first[0].0.excerpt.contains("Echo MCP Server"));
    }

    #[tokio::test]
    async fn a_reply_to_a_notification_is_server_wide_even_during_a_call() {
        let note = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        let st = Arc::new(WireState::default());
        st.begin_call();
        st.note_outgoing(REQ7.as_bytes());
        st.note_outgoing(note.as_bytes());
        let input: &[u8] = b"{\"jsonrpc\":\"2.0\",\"id\":null,\"result\":{}}\n";
        let mut out = String::new();
        WireReader::new(input, 1000, Arc::clone(&st))
            .read_to_string(&mut out)
            .await
            .expect("reads");
        assert_eq!(st.take_violation(0), None);
        assert_eq!(st.stray().1[0].0.breach, Breach::NotificationReply);
    }

    #[tokio::test]
    async fn a_reply_to_a_notification_sent_before_the_request_is_still_the_notifications() {
        let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize"}"#;
        let note = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        let list = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
        let st = Arc::new(WireState::default());
        st.note_outgoing(init.as_bytes());
        assert!(st.judge_incoming(br#"{"jsonrpc":"2.0","id":0,"result":{}}"#).is_ok());
        st.note_outgoing(note.as_bytes());
        st.begin_call();
        st.note_outgoing(list.as_bytes());
        let null = st.judge_incoming(br#"{"jsonrpc":"2.0","id":null,"result":{}}"#);
        assert_eq!(null.map_err(|v| v.breach), Err(Breach::NotificationReply));
        assert!(st.judge_incoming(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#).is_ok());
        st.begin_call();
        let again = st.judge_incoming(br#"{"jsonrpc":"2.0","id":null,"result":{}}"#);
        assert_eq!(again.map_err(|v| v.breach), Err(Breach::NullId), "no notification pending");
    }

    #[tokio::test]
    async fn a_reply_to_a_cancellation_after_the_cancelled_call_s_late_answer_is_the_notifications()
    {
        // See: issue 30 item 4. Call 5 times out and is cancelled; call 6 begins; the server
        // answers 5 late, then answers the cancellation with an `id: null` error.
        let st = Arc::new(WireState::default());
        st.begin_call();
        st.note_outgoing(br#"{"jsonrpc":"2.0","id":5,"method":"tools/call"}"#);
        st.note_outgoing(
            br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}"#,
        );
        st.begin_call();
        st.note_outgoing(br#"{"jsonrpc":"2.0","id":6,"method":"tools/call"}"#);
        assert!(st.judge_incoming(br#"{"jsonrpc":"2.0","id":5,"result":{}}"#).is_ok());
        let reply = st.judge_incoming(
            br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32601,"message":"Method not found: notifications/cancelled"}}"#,
        );
        assert_eq!(reply.map_err(|v| v.breach), Err(Breach::NotificationReply));
        // Once 6 is answered, the notification written before it was handled: a null id now
        // answers nothing the client sent.
        assert!(st.judge_incoming(br#"{"jsonrpc":"2.0","id":6,"result":{}}"#).is_ok());
        let again = st.judge_incoming(br#"{"jsonrpc":"2.0","id":null,"result":{}}"#);
        assert_eq!(again.map_err(|v| v.breach), Err(Breach::NullId));
    }

    #[tokio::test]
    async fn a_late_answer_to_a_given_up_request_is_fine() {
        let req8 = r#"{"jsonrpc":"2.0","id":8,"method":"tools/call"}"#;
        let ok8 = r#"{"jsonrpc":"2.0","id":8,"result":{}}"#;
        let input = format!("{OK7}\nINFO late\n{ok8}\nINFO after\n");
        let (out, st) = run(&[req8, REQ7], input.as_bytes(), 1000, true).await;
        assert_eq!(out, format!("{OK7}\n{ok8}\n"));
        let during = st.take_violation(0).expect("the line before the answer is the call's");
        assert!(during.excerpt.contains("late"), "{during}");
        assert_eq!(st.take_response(0).as_deref(), Some(ok8.as_bytes()));
        let (n, stray) = st.stray();
        assert_eq!(n, 1, "the line after the answer is server-wide");
        assert!(stray[0].0.excerpt.contains("after"));
    }

    #[tokio::test]
    async fn oversize_lines_are_dropped_with_bounded_memory() {
        let mut input = vec![b'{'];
        input.extend(std::iter::repeat_n(b'x', 5000));
        input.extend_from_slice(b"\n");
        input.extend_from_slice(OK7.as_bytes());
        input.push(b'\n');
        let (out, st) = run(&[REQ7], &input, 100, true).await;
        assert_eq!(out, format!("{OK7}\n"));
        assert_eq!(st.oversize(0), Some(5001));
    }

    #[tokio::test]
    async fn an_oversize_answer_belongs_to_the_call_it_names_not_the_newest() {
        // See: issue 29 item 4. Call 0 (id 7) is slow, call 1 (id 8) newer; the 5 KB answer
        // to id 7 is its own.
        let state = Arc::new(WireState::default());
        let older = state.begin_call();
        state.bind(older, &serde_json::json!(7));
        let newer = state.begin_call();
        state.bind(newer, &serde_json::json!(8));
        let mut input =
            br#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":""#.to_vec();
        input.extend(std::iter::repeat_n(b'x', 5000));
        input.extend_from_slice(b"\"}]}}\n");
        let mut r = WireReader::new(&input[..], 100, Arc::clone(&state));
        let mut out = String::new();
        r.read_to_string(&mut out).await.expect("reads");
        assert!(state.oversize(older).is_some_and(|n| n > 5000));
        assert_eq!(state.oversize(newer), None);
    }

    #[test]
    fn the_id_of_a_line_is_read_from_its_first_bytes() {
        let id = |s: &str| head_id(s.as_bytes());
        assert_eq!(id(r#"{"jsonrpc":"2.0","id":7,"result":{"x"#), IdKey::of(&serde_json::json!(7)));
        assert_eq!(
            id(r#"{"result":{"id":1},"id" : "a\"b","#),
            IdKey::of(&serde_json::json!("a\"b"))
        );
        assert_eq!(
            id(r#"{"jsonrpc":"2.0","result":{"id":3,"text":"xxx"#),
            None,
            "a nested id is not it"
        );
        assert_eq!(id(r#"{"jsonrpc":"2.0","id":12"#), None, "cut inside the value");
    }

    #[tokio::test]
    async fn the_writer_notes_ids_across_split_writes() {
        use tokio::io::AsyncWriteExt;
        let state = Arc::new(WireState::default());
        let mut w = WireWriter::new(Vec::new(), Arc::clone(&state));
        let req = format!("{REQ7}\n");
        let (a, b) = req.as_bytes().split_at(10);
        w.write_all(a).await.expect("write");
        w.write_all(b).await.expect("write");
        assert_eq!(w.inner, req.as_bytes());
        let call = state.begin_call();
        assert!(state.judge_incoming(OK7.as_bytes()).is_ok());
        assert_eq!(state.take_response(call), None, "the request went out before the call");
    }

    #[tokio::test]
    async fn calls_in_flight_together_each_get_their_answer_and_junk_goes_to_the_newest() {
        let req8 = r#"{"jsonrpc":"2.0","id":8,"method":"tools/call"}"#;
        let ok8 = r#"{"jsonrpc":"2.0","id":8,"result":{"n":8}}"#;
        let st = Arc::new(WireState::default());
        let hung = st.begin_call();
        st.note_outgoing(REQ7.as_bytes());
        let next = st.begin_call();
        st.note_outgoing(req8.as_bytes());
        // rmcp's handles confirm the ids (the second one after its answer came).
        st.bind(hung, &serde_json::json!(7));
        let input = format!("{ok8}\nINFO working\n");
        let mut out = String::new();
        WireReader::new(input.as_bytes(), 1000, Arc::clone(&st))
            .read_to_string(&mut out)
            .await
            .expect("reads");
        st.bind(next, &serde_json::json!(8));
        assert_eq!(st.take_response(next).as_deref(), Some(ok8.as_bytes()));
        let v = st.take_violation(hung).expect("the junk is the call still waiting");
        assert!(v.excerpt.contains("working"), "{v}");
        assert_eq!(st.take_violation(next), None);
        st.end_call(next);
        assert!(st.judge_incoming(OK7.as_bytes()).is_ok());
        assert_eq!(st.take_response(hung).as_deref(), Some(OK7.as_bytes()));
        st.end_call(hung);
        st.record(Violation { breach: Breach::NotJson, excerpt: "x".into(), note: None });
        assert_eq!(st.stray().0, 1, "with no call in flight a breach is server-wide");
    }

    #[tokio::test]
    async fn an_answer_before_the_id_is_known_is_kept_for_its_call() {
        let st = Arc::new(WireState::default());
        st.note_outgoing(REQ7.as_bytes());
        assert!(st.judge_incoming(OK7.as_bytes()).is_ok());
        let call = st.begin_call();
        st.bind(call, &serde_json::json!(7));
        assert_eq!(st.take_response(call).as_deref(), Some(OK7.as_bytes()));
    }

    #[test]
    fn non_finite_tokens_inside_strings_do_not_count() {
        assert_eq!(non_finite_token(br#"{"a":"NaN","b":1}"#), None);
        assert_eq!(non_finite_token(br#"{"a":"\"NaN","b":NaN}"#), Some(17));
    }
}
