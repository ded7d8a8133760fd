//! Raw HTTP requests to a streamable HTTP server, for the protocol phase's transport checks:
//! requests rmcp would never send (a foreign `Origin`, a wrong `MCP-Protocol-Version`, a
//! `DELETE` of the session, a batch), sent and read byte for byte, with the answer's status,
//! headers and JSON-RPC messages (from a JSON body or from the events of an SSE stream) kept
//! for a judge. A server mcp-fuzz starts gets a process of its own for them.

use super::launch::{self, Launched};
use super::{ConnectError, ConnectOptions, Target};
use serde_json::{Value, json};
use std::time::Duration;

/// Characters of an answer's body quoted in words (the status is what the checks judge).
const SAID_CHARS: usize = 120;

/// The largest body read from one answer.
const BODY_LIMIT: usize = 1 << 20;

/// The protocol version the probe's session asks for.
pub const PROBE_VERSION: &str = "2025-11-25";

/// A session of raw HTTP requests to one server.
pub struct HttpProbe {
    client: reqwest::Client,
    /// The endpoint (its port filled in).
    url: String,
    /// `--header` values (secrets: never in an answer's words).
    headers: Vec<(String, String)>,
    /// The process serving it, when mcp-fuzz started one.
    launched: Option<Launched>,
    /// The session id the server issued to the probe's `initialize`.
    pub session: Option<String>,
    /// The protocol version it negotiated.
    pub protocol: Option<String>,
    /// The SSE event ids seen on the session's streams, in order.
    event_ids: std::sync::Mutex<Vec<String>>,
}

/// One request: its method, the headers to set (`None` drops a default one: `Accept`,
/// `Content-Type`, `Mcp-Session-Id`, `MCP-Protocol-Version`) and its body.
#[derive(Default)]
pub struct Sent {
    /// `POST`, `GET` or `DELETE`.
    pub method: http::Method,
    /// Headers set over the defaults, or dropped (`None`).
    pub headers: Vec<(&'static str, Option<String>)>,
    /// A JSON body (`POST`).
    pub body: Option<Value>,
    /// Whether to read the body (an SSE stream on `GET` never ends: its headers tell enough).
    pub read_body: bool,
    /// Without the `--header` values (the credentials).
    pub anonymous: bool,
    /// Another URL than the endpoint (the authorization metadata).
    pub url: Option<String>,
}

impl Sent {
    /// A `POST` of `body` with the session's headers.
    #[must_use]
    pub fn post(body: Value) -> Self {
        Self { method: http::Method::POST, body: Some(body), read_body: true, ..Self::default() }
    }

    /// The same request with `name` set to `value` (`None`: not sent).
    #[must_use]
    pub fn with(mut self, name: &'static str, value: Option<&str>) -> Self {
        self.headers.push((name, value.map(str::to_owned)));
        self
    }
}

/// What the server answered.
#[derive(Debug, Clone, Default)]
pub struct Answer {
    /// The HTTP status.
    pub status: u16,
    /// `Content-Type`, lower case, without parameters.
    pub content_type: String,
    /// `Mcp-Session-Id`.
    pub session: Option<String>,
    /// `WWW-Authenticate`.
    pub www_authenticate: Option<String>,
    /// The body's first bytes (lossy UTF-8), when read.
    pub body: String,
    /// The JSON-RPC messages of the body: a JSON body's value (each member of an array), or
    /// each SSE event's data, up to the first response.
    pub messages: Vec<Value>,
}

impl Answer {
    /// The first response (a message with an id and a result or error).
    #[must_use]
    pub fn response(&self) -> Option<&Value> {
        self.messages.iter().find(|m| {
            m.get("id").is_some() && (m.get("result").is_some() || m.get("error").is_some())
        })
    }

    /// The answer in words: status, content type and the first message or body bytes.
    #[must_use]
    pub fn said(&self) -> String {
        let mut s = format!("HTTP {}", self.status);
        if !self.content_type.is_empty() {
            s.push_str(&format!(" ({})", self.content_type));
        }
        if let Some(m) = self.messages.first() {
            let text = super::excerpt(m);
            let short: String = text.chars().take(SAID_CHARS).collect();
            let more = if short.len() < text.len() { "…" } else { "" };
            s.push_str(&format!(": {short}{more}"));
        } else if !self.body.trim().is_empty() {
            let body: String = self.body.trim().chars().take(SAID_CHARS).collect();
            s.push_str(&format!(": {body:?}"));
        }
        s
    }
}

/// How a request ended.
#[derive(Debug, Clone)]
pub enum Probed {
    /// An HTTP answer.
    Answer(Answer),
    /// No answer: the connection failed or the time ran out (in words).
    Failed(String),
}

impl HttpProbe {
    /// Reaches the target (starting its command when it has one) and opens a session with
    /// `initialize` and `notifications/initialized`.
    ///
    /// # Errors
    /// A target that is not HTTP, a server that does not start, or an `initialize` that is not
    /// answered with a result.
    pub async fn start(target: &Target, opts: &ConnectOptions) -> Result<Self, ConnectError> {
        let Target::Http { url, headers, launch } = target else {
            return Err(ConnectError::Invalid(
                "the HTTP checks need a server reached over --http".into(),
            ));
        };
        let launched = match launch {
            Some(l) => {
                Some(launch::start(url, l, opts.startup_timeout, opts.sandbox.as_deref()).await?)
            }
            None => None,
        };
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| ConnectError::Invalid(format!("no HTTP client: {e}")))?;
        let mut probe = Self {
            client,
            url: launched.as_ref().map_or_else(|| url.clone(), |l| l.url.clone()),
            headers: headers.clone(),
            launched,
            session: None,
            protocol: None,
            event_ids: std::sync::Mutex::new(Vec::new()),
        };
        let stderr = || probe_tail(&probe.launched);
        let answer = match probe.send(Sent::post(initialize(1)), opts.startup_timeout).await {
            Probed::Answer(a) => a,
            Probed::Failed(why) => {
                if probe.launched.is_none()
                    && let Some(addr) = launch::endpoint(&probe.url)
                    && !launch::accepts(&addr).await
                {
                    return Err(ConnectError::Gone { addr });
                }
                return Err(ConnectError::Handshake { message: why, stderr: stderr() });
            }
        };
        let Some(version) = answer
            .response()
            .and_then(|r| r.pointer("/result/protocolVersion"))
            .and_then(Value::as_str)
        else {
            let message = format!("`initialize` was answered {}", answer.said());
            return Err(ConnectError::Handshake { message, stderr: stderr() });
        };
        probe.protocol = Some(version.to_owned());
        probe.session = answer.session.clone();
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let _ = probe.send(Sent::post(initialized), opts.startup_timeout).await;
        Ok(probe)
    }

    /// Whether `--header` gave an `Authorization` header.
    #[must_use]
    pub fn authorized(&self) -> bool {
        self.headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("authorization"))
    }

    /// The RFC 9728 metadata URLs of the endpoint: with its path, then at the root.
    #[must_use]
    pub fn metadata_urls(&self) -> Vec<String> {
        let path = self.url.parse::<http::Uri>().map(|u| u.path().trim_end_matches('/').to_owned());
        let base = format!("{}/.well-known/oauth-protected-resource", self.origin());
        match path {
            Ok(p) if !p.is_empty() => vec![format!("{base}{p}"), base],
            _ => vec![base],
        }
    }

    /// The endpoint's origin (`http://127.0.0.1:PORT`).
    #[must_use]
    pub fn origin(&self) -> String {
        self.url
            .parse::<http::Uri>()
            .ok()
            .and_then(|u| Some(format!("{}://{}", u.scheme_str()?, u.authority()?)))
            .unwrap_or_default()
    }

    /// Sends one request and reads its answer within `timeout`.
    pub async fn send(&self, sent: Sent, timeout: Duration) -> Probed {
        match tokio::time::timeout(timeout, self.exchange(sent)).await {
            Ok(Ok(a)) => Probed::Answer(a),
            Ok(Err(e)) => Probed::Failed(super::redact(&reqwest_words(&e), &self.headers)),
            Err(_) => Probed::Failed(format!("no answer within {timeout:?}")),
        }
    }

    async fn exchange(&self, sent: Sent) -> Result<Answer, reqwest::Error> {
        let mut defaults: Vec<(&str, Option<String>)> = vec![
            ("accept", Some("application/json, text/event-stream".into())),
            ("mcp-session-id", self.session.clone()),
            ("mcp-protocol-version", self.protocol.clone()),
        ];
        if sent.body.is_some() {
            defaults.push(("content-type", Some("application/json".into())));
        }
        let mut req = self.client.request(sent.method, sent.url.as_deref().unwrap_or(&self.url));
        for (k, v) in self.headers.iter().filter(|_| !sent.anonymous) {
            req = req.header(k.as_str(), v.as_str());
        }
        let mut in_session = false;
        for (name, value) in &defaults {
            let given = sent.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name));
            if let Some(v) = given.map_or(value.as_ref(), |(_, v)| v.as_ref()) {
                in_session |= *name == "mcp-session-id" && self.session.as_ref() == Some(v);
                req = req.header(*name, v.as_str());
            }
        }
        for (name, value) in &sent.headers {
            if let (false, Some(v)) =
                (defaults.iter().any(|(n, _)| n.eq_ignore_ascii_case(name)), value)
            {
                req = req.header(*name, v.as_str());
            }
        }
        if let Some(body) = &sent.body {
            req = req.body(body.to_string());
        }
        let mut resp = req.send().await?;
        let header =
            |name: &str| resp.headers().get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);
        let content_type = header("content-type")
            .map(|c| c.split(';').next().unwrap_or_default().trim().to_ascii_lowercase())
            .unwrap_or_default();
        let mut answer = Answer {
            status: resp.status().as_u16(),
            session: header("mcp-session-id"),
            www_authenticate: header("www-authenticate"),
            content_type,
            ..Answer::default()
        };
        if !sent.read_body {
            return Ok(answer);
        }
        let sse = answer.content_type == "text/event-stream";
        let mut bytes = Vec::new();
        while let Some(chunk) = resp.chunk().await? {
            bytes.extend_from_slice(&chunk);
            if bytes.len() >= BODY_LIMIT {
                break;
            }
            // An SSE stream may stay open after its response: stop at the response.
            if sse && events(&bytes).iter().any(is_response) {
                break;
            }
        }
        answer.body = String::from_utf8_lossy(&bytes[..bytes.len().min(BODY_LIMIT)]).into_owned();
        if sse && in_session {
            self.event_ids.lock().expect("event ids").extend(event_ids(&bytes));
        }
        answer.messages = if sse {
            events(&bytes)
        } else {
            match serde_json::from_slice::<Value>(&bytes) {
                Ok(Value::Array(items)) => items,
                Ok(v) => vec![v],
                Err(_) => Vec::new(),
            }
        };
        Ok(answer)
    }

    /// For a server mcp-fuzz started: the addresses its processes listen on at the URL's port
    /// (empty where `/proc` does not tell); `None` for a server someone else runs.
    #[must_use]
    pub fn bound(&self) -> Option<Vec<std::net::IpAddr>> {
        let l = self.launched.as_ref()?;
        let port = self.url.parse::<http::Uri>().ok()?.port_u16()?;
        Some(l.group.id().map_or_else(Vec::new, |g| launch::listening(g, port)))
    }

    /// The SSE event ids seen so far on the streams of the probe's session.
    #[must_use]
    pub fn event_ids(&self) -> Vec<String> {
        self.event_ids.lock().expect("event ids").clone()
    }

    /// The last lines the server wrote (a server mcp-fuzz started).
    #[must_use]
    pub fn output_tail(&self) -> Vec<String> {
        probe_tail(&self.launched)
    }
}

/// Dropping the probe kills the process it started.
impl Drop for HttpProbe {
    fn drop(&mut self) {
        if let Some(l) = &self.launched {
            l.group.kill();
        }
    }
}

fn probe_tail(launched: &Option<Launched>) -> Vec<String> {
    launched.as_ref().map_or_else(Vec::new, |l| super::tail(&l.stderr))
}

/// An `initialize` request with this id.
#[must_use]
pub fn initialize(id: u64) -> Value {
    json!({
        "jsonrpc": "2.0",
        "id": id,
        "method": "initialize",
        "params": {
            "protocolVersion": PROBE_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "mcp-fuzz-probe", "version": env!("CARGO_PKG_VERSION")},
        },
    })
}

fn is_response(m: &Value) -> bool {
    m.get("id").is_some() && (m.get("result").is_some() || m.get("error").is_some())
}

/// The JSON data of each complete SSE event in `bytes` (events without data, or whose data is
/// not JSON, are left out).
fn events(bytes: &[u8]) -> Vec<Value> {
    let text = String::from_utf8_lossy(bytes).replace("\r\n", "\n");
    let mut out = Vec::new();
    let complete = text.rfind("\n\n").map_or("", |end| &text[..end]);
    for event in complete.split("\n\n") {
        let data: Vec<&str> = event
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(|d| d.strip_prefix(' ').unwrap_or(d))
            .collect();
        if let Ok(v) = serde_json::from_str::<Value>(&data.join("\n")) {
            out.push(v);
        }
    }
    out
}

/// The `id` of each complete SSE event in `bytes` that has one.
fn event_ids(bytes: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(bytes).replace("\r\n", "\n");
    let complete = text.rfind("\n\n").map_or("", |end| &text[..end]);
    complete
        .split("\n\n")
        .filter_map(|event| {
            event
                .lines()
                .filter_map(|l| l.strip_prefix("id:"))
                .next_back()
                .map(|id| id.trim().to_owned())
        })
        .collect()
}

/// A transport error in words (reqwest's own wording names the URL only).
fn reqwest_words(e: &reqwest::Error) -> String {
    use std::error::Error as _;
    let mut s = e.to_string();
    let mut source = e.source();
    while let Some(inner) = source {
        s.push_str(&format!(": {inner}"));
        source = inner.source();
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sse_events_are_read_up_to_the_last_complete_one() {
        let stream = b"id: 1\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"n\"}\n\n: keep-alive\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\ndata: \"result\":{}}\n\ndata: {\"half\"";
        let got = events(stream);
        assert_eq!(got.len(), 2, "{got:?}");
        assert!(is_response(&got[1]));
        assert_eq!(event_ids(stream), ["1"]);
    }
}
