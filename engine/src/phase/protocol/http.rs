//! The streamable HTTP transport's own rules (MCP 2025-11-25 `basic/transports`), checked with
//! raw requests on a session of their own ([`HttpProbe`]): DNS-rebinding protection (`Origin`),
//! sessions, the protocol-version header, what a POST of a notification or a response gets,
//! the GET stream, batches, SSE event ids, the metadata behind a 401, and (for a server mcp-fuzz
//! started) the addresses it listens on. Each request is harmless: `ping`, `initialize`, a
//! cancellation of a request that never was, a `DELETE` of the probe's own session (last). Severity follows the specification's word: a MUST broken is a
//! failure, a SHOULD a warning; a refusal with another status than the one required is a
//! warning (nothing was served).

use super::checks::{CHECKS, Check, HTTP_CHECKS, How, Rule, Silence};
use super::{Judged, Observed, Protocol, Tally, fail, grouped};
use crate::config::RunConfig;
use crate::finding::Severity;
use crate::report::ProtocolSummary;
use crate::transport::http_probe::{Answer, HttpProbe, Probed, Sent};
use serde_json::{Value, json};
use std::time::Duration;

/// A foreign origin, as a page on another site would send it (`.invalid` never resolves).
const FOREIGN: &str = "http://mcp-fuzz.invalid";

/// A session id no server issued.
const UNKNOWN_SESSION: &str = "mcp-fuzz-no-such-session";

/// A protocol version no server supports.
const UNSUPPORTED_VERSION: &str = "1999-01-01";

/// An `initialize` opens a session of its own: without the probe's session id ...
const NO_SESSION: (&str, Option<&str>) = ("mcp-session-id", None);
/// ... and without a protocol version (none is negotiated yet).
const NO_VERSION: (&str, Option<&str>) = ("mcp-protocol-version", None);

/// Runs every HTTP check on a session (and, for a server mcp-fuzz starts, a process) of its own,
/// and the JSON-RPC request checks of the stdio table on the same session, before its `DELETE`
/// (the last HTTP check). `tool` is a tool the gate allows calling.
pub(super) async fn check_all(
    cfg: &RunConfig,
    tool: Option<&str>,
    progress: &dyn Fn(u64),
) -> Protocol {
    let probe = match HttpProbe::start(&cfg.server.target, &cfg.server.connect).await {
        Ok(p) => p,
        Err(e) => {
            let why = format!("the HTTP checks could not open a session: {e}");
            return Protocol {
                summary: ProtocolSummary::of(Vec::new(), Some(why)),
                findings: Vec::new(),
            };
        }
    };
    let timeout = cfg.server.timeout;
    let mut tally = Tally::default();
    for c in HTTP_CHECKS {
        if let How::Http(Rule::SessionDeleted) = &c.how {
            for r in CHECKS.iter().filter(|r| matches!(r.how, How::Request { .. })) {
                request_check(&probe, r, tool, timeout, &mut tally).await;
                progress(1);
            }
        }
        if let How::Http(rule) = &c.how {
            match judge(&probe, rule, timeout).await {
                Ok((request, judged)) => tally.record(c, Some(request), judged),
                Err(why) => tally.skip(c, why),
            }
        }
        progress(1);
    }
    drop(probe);
    Protocol { summary: ProtocolSummary::of(tally.results, None), findings: grouped(tally.failed) }
}

/// A JSON-RPC request check of the stdio table ([`How::Request`]), POSTed on the probe's
/// session: judged by the JSON-RPC response in the answer (a JSON body or an SSE event), as
/// over stdio. An HTTP status without one is a refusal (a warning) or, for a 5xx, a failure;
/// no answer in time means what the check's silence means.
async fn request_check(
    probe: &HttpProbe,
    c: &'static Check,
    tool: Option<&str>,
    timeout: Duration,
    tally: &mut Tally,
) {
    let How::Request { id, method, params, judge, silence } = &c.how else { return };
    let Some(params) = params.with_tool(tool) else {
        return tally.skip(c, super::NO_TOOL.into());
    };
    let mut body = json!({"jsonrpc": "2.0", "id": id(), "method": method});
    if let Some(p) = params {
        body["params"] = p;
    }
    let (request, answer) = post(probe, body, &[], timeout).await;
    let judged = match answer {
        Ok(a) => match a.response() {
            Some(m) => judge(m),
            None if a.status >= 500 => saw(&a, Severity::Failure),
            None => saw(&a, Severity::Warning),
        },
        Err(why) => match silence {
            Silence::Fails => silent(why),
            Silence::ToolMayRun => fail(Observed::said(why), Severity::Warning),
            Silence::Passes => Judged::Pass(why),
        },
    };
    tally.record(c, Some(request), judged);
}

/// A `ping` request.
fn ping(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "ping"})
}

/// A request as the report shows it: method, the headers that differ from a client's, body.
fn shown(method: &str, headers: &[(&str, Option<&str>)], body: Option<&Value>) -> Value {
    let headers: serde_json::Map<String, Value> = headers
        .iter()
        .map(|(k, v)| ((*k).to_owned(), v.map_or(Value::Null, |v| json!(v))))
        .collect();
    json!({"http": method, "headers": headers, "body": body})
}

/// Sends `body` by POST with `headers` over the session's: the request as shown and the answer.
async fn post(
    probe: &HttpProbe,
    body: Value,
    headers: &[(&'static str, Option<&str>)],
    timeout: Duration,
) -> (Value, Result<Answer, String>) {
    let request = shown("POST", headers, Some(&body));
    let sent = headers.iter().fold(Sent::post(body), |s, (k, v)| s.with(k, *v));
    (request, answered(probe.send(sent, timeout).await))
}

fn answered(p: Probed) -> Result<Answer, String> {
    match p {
        Probed::Answer(a) => Ok(a),
        Probed::Failed(why) => Err(why),
    }
}

fn is_2xx(a: &Answer) -> bool {
    (200..300).contains(&a.status)
}

fn is_4xx(a: &Answer) -> bool {
    (400..500).contains(&a.status)
}

/// A failure of `severity` observing `a`.
fn saw(a: &Answer, severity: Severity) -> Judged {
    fail(Observed::said(a.said()), severity)
}

/// No answer at all: a failure (the server must answer every request).
fn silent(why: String) -> Judged {
    fail(Observed::said(why), Severity::Failure)
}

/// Runs one rule: the request as shown and the verdict, or why it was skipped.
async fn judge(
    probe: &HttpProbe,
    rule: &Rule,
    timeout: Duration,
) -> Result<(Value, Judged), String> {
    let need_session = || {
        probe
            .session
            .as_deref()
            .ok_or_else(|| "the server issued no session id (a stateless server)".to_owned())
    };
    let host = FOREIGN.trim_start_matches("http://");
    let own = probe.origin();
    Ok(match rule {
        Rule::OriginForeign => {
            let headers = [("origin", Some(FOREIGN)), NO_SESSION, NO_VERSION];
            let (req, a) = post(probe, init(), &headers, timeout).await;
            (req, origin_foreign(a))
        }
        Rule::OriginForeignHost => {
            let headers = [("origin", Some(FOREIGN)), ("host", Some(host)), NO_SESSION, NO_VERSION];
            let (req, a) = post(probe, init(), &headers, timeout).await;
            (req, foreign_refused(a))
        }
        Rule::OriginOwn => {
            let headers = [("origin", Some(own.as_str())), NO_SESSION, NO_VERSION];
            let (req, a) = post(probe, init(), &headers, timeout).await;
            (req, served(a, false))
        }
        Rule::SessionIdVisible => session_id_visible(need_session()?),
        Rule::SessionMissing => {
            need_session()?;
            let (req, a) = post(probe, ping(201), &[NO_SESSION], timeout).await;
            (req, status_is(a, 400, Severity::Warning))
        }
        Rule::SessionUnknown => {
            need_session()?;
            let headers = [("mcp-session-id", Some(UNKNOWN_SESSION))];
            let (req, a) = post(probe, ping(202), &headers, timeout).await;
            (req, status_is(a, 404, Severity::Warning))
        }
        Rule::VersionUnsupported => {
            let headers = [("mcp-protocol-version", Some(UNSUPPORTED_VERSION))];
            let (req, a) = post(probe, ping(203), &headers, timeout).await;
            (req, status_is(a, 400, Severity::Failure))
        }
        Rule::VersionAbsent => {
            let (req, a) = post(probe, ping(204), &[NO_VERSION], timeout).await;
            (req, served(a, true))
        }
        Rule::AcceptJsonOnly => {
            let headers = [("accept", Some("application/json"))];
            let (req, a) = post(probe, ping(205), &headers, timeout).await;
            (req, json_or_406(a))
        }
        Rule::Notification => {
            let note = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "mcp-fuzz-no-such-request", "reason": "a probe"}});
            let (req, a) = post(probe, note, &[], timeout).await;
            (req, accepted_without_body(a))
        }
        Rule::Response => {
            let response =
                json!({"jsonrpc": "2.0", "id": "mcp-fuzz-no-such-request", "result": {}});
            let (req, a) = post(probe, response, &[], timeout).await;
            (req, accepted_without_body(a))
        }
        Rule::GetStream => get_stream(probe, timeout).await,
        Rule::Batch => {
            let (req, a) = post(probe, json!([ping(206), ping(207)]), &[], timeout).await;
            (req, batch(a))
        }
        Rule::EventIds => event_ids_unique(&probe.event_ids()),
        Rule::BindsLoopback => binds_loopback(probe.bound())?,
        Rule::AuthMetadata => auth_metadata(probe, timeout).await?,
        Rule::SessionDeleted => {
            need_session()?;
            session_deleted(probe, timeout).await
        }
    })
}

/// A refusal (4xx) passes; a request served is a failure; anything else a warning.
fn foreign_refused(a: Result<Answer, String>) -> Judged {
    match a {
        Ok(a) if is_4xx(&a) => Judged::Pass(a.said()),
        Ok(a) if is_2xx(&a) => fail(foreign_served(&a), Severity::Failure),
        Ok(a) => saw(&a, Severity::Warning),
        Err(why) => silent(why),
    }
}

/// A request served (with its response, when `response`) passes; anything else is a warning.
fn served(a: Result<Answer, String>, response: bool) -> Judged {
    match a {
        Ok(a) if is_2xx(&a) && (!response || a.response().is_some()) => Judged::Pass(a.said()),
        Ok(a) => saw(&a, Severity::Warning),
        Err(why) => silent(why),
    }
}

fn session_id_visible(id: &str) -> (Value, Judged) {
    let judged = if !id.is_empty() && id.bytes().all(|b| (0x21..=0x7e).contains(&b)) {
        Judged::Pass(format!("{} visible ASCII characters", id.len()))
    } else {
        fail(Observed::said(format!("the session id {id:?}")), Severity::Failure)
    };
    (json!({"http": "POST", "body": init()}), judged)
}

/// 406, or the answer as JSON, passes.
fn json_or_406(a: Result<Answer, String>) -> Judged {
    match a {
        Ok(a) if a.status == 406 => Judged::Pass(a.said()),
        Ok(a) if is_2xx(&a) && a.content_type == "application/json" && a.response().is_some() => {
            Judged::Pass(a.said())
        }
        Ok(a) => saw(&a, Severity::Warning),
        Err(why) => silent(why),
    }
}

/// A batch processed (a result in the answer) is a warning; a refusal passes.
fn batch(a: Result<Answer, String>) -> Judged {
    match a {
        Ok(a) if a.messages.iter().any(|m| m.get("result").is_some()) => fail(
            Observed::said(format!("{} (the batch was processed)", a.said())),
            Severity::Warning,
        ),
        Ok(a) => Judged::Pass(a.said()),
        Err(why) => silent(why),
    }
}

async fn get_stream(probe: &HttpProbe, timeout: Duration) -> (Value, Judged) {
    let sent = Sent {
        method: http::Method::GET,
        headers: vec![("accept", Some("text/event-stream".into()))],
        ..Sent::default()
    };
    let req = shown("GET", &[("accept", Some("text/event-stream"))], None);
    let judged = match answered(probe.send(sent, timeout).await) {
        Ok(a) if a.status == 405 => Judged::Pass(a.said()),
        Ok(a) if a.status == 200 && a.content_type == "text/event-stream" => Judged::Pass(a.said()),
        Ok(a) => saw(&a, Severity::Failure),
        Err(why) => silent(why),
    };
    (req, judged)
}

/// A server mcp-fuzz started listens on loopback addresses only (a warning: a SHOULD).
fn binds_loopback(bound: Option<Vec<std::net::IpAddr>>) -> Result<(Value, Judged), String> {
    let bound =
        bound.ok_or("the server was not started by mcp-fuzz (its sockets are not ours to read)")?;
    if bound.is_empty() {
        return Err("no listening socket of the server's processes found at the URL's port (/proc tells nothing here)".into());
    }
    let open: Vec<String> =
        bound.iter().filter(|ip| !ip.is_loopback()).map(ToString::to_string).collect();
    let shown: Vec<String> = bound.iter().map(ToString::to_string).collect();
    let judged = if open.is_empty() {
        Judged::Pass(format!("listens on {}", shown.join(", ")))
    } else {
        let all = bound.iter().any(std::net::IpAddr::is_unspecified);
        let what = if all { "binds all interfaces" } else { "binds a non-loopback address" };
        fail(
            Observed::said(format!(
                "{what} ({}): other machines can reach it; bind 127.0.0.1 for a local server",
                open.join(", ")
            )),
            Severity::Warning,
        )
    };
    Ok((json!({"listening": shown}), judged))
}

/// A request without the credentials gets 401 that points at RFC 9728 metadata (its
/// `resource_metadata`, or the well-known URL), and the metadata names the resource and its
/// authorization servers.
async fn auth_metadata(probe: &HttpProbe, timeout: Duration) -> Result<(Value, Judged), String> {
    if !probe.authorized() {
        return Err("no Authorization header was given (--header)".into());
    }
    let sent = Sent { anonymous: true, ..Sent::post(ping(209)) };
    let req = json!({"http": "POST", "headers": {"authorization": null}, "body": ping(209)});
    let a = match answered(probe.send(sent, timeout).await) {
        Ok(a) if a.status == 401 => a,
        Ok(a) => {
            return Ok((
                req,
                Judged::Pass(format!("{} (the credentials are not required)", a.said())),
            ));
        }
        Err(why) => return Ok((req, silent(why))),
    };
    let challenge = a.www_authenticate.clone().unwrap_or_default();
    let named = challenge.split("resource_metadata=").nth(1).map(|v| {
        v.trim_start_matches('"').split(['"', ',', ' ']).next().unwrap_or_default().to_owned()
    });
    let urls = named.clone().map_or_else(|| probe.metadata_urls(), |u| vec![u]);
    for url in &urls {
        let get = Sent {
            method: http::Method::GET,
            read_body: true,
            anonymous: true,
            url: Some(url.clone()),
            ..Sent::default()
        };
        if let Ok(m) = answered(probe.send(get, timeout).await)
            && m.status == 200
            && m.messages.first().is_some_and(|v| {
                v.get("resource").is_some() && v.get("authorization_servers").is_some()
            })
        {
            return Ok((
                req,
                Judged::Pass(format!("401, WWW-Authenticate {challenge:?}; metadata at {url}")),
            ));
        }
    }
    let why = match named {
        Some(url) => format!(
            "401 with WWW-Authenticate {challenge:?}; its resource_metadata {url} is not RFC 9728 metadata (`resource`, `authorization_servers`)"
        ),
        None => format!(
            "401 with WWW-Authenticate {challenge:?} (no resource_metadata), and no RFC 9728 metadata at {}",
            urls.join(" or ")
        ),
    };
    Ok((req, fail(Observed::said(why), Severity::Warning)))
}

/// The session's SSE event ids: none twice.
fn event_ids_unique(ids: &[String]) -> (Value, Judged) {
    let mut seen = std::collections::BTreeSet::new();
    let twice: Vec<&String> = ids.iter().filter(|id| !seen.insert(id.as_str())).collect();
    let judged = match twice.first() {
        _ if ids.is_empty() => {
            Judged::Pass("no event ids (the server offers no resumption)".into())
        }
        None => Judged::Pass(format!("{} event ids, all distinct", ids.len())),
        Some(id) => fail(
            Observed::said(format!(
                "the event id {id:?} twice among {} ({} repeated in all)",
                ids.len(),
                twice.len()
            )),
            Severity::Failure,
        ),
    };
    (json!({"http": "POST", "note": "the answers of the checks before this one"}), judged)
}

/// `DELETE` of the probe's session, then a `ping` in it.
async fn session_deleted(probe: &HttpProbe, timeout: Duration) -> (Value, Judged) {
    let sent = Sent { method: http::Method::DELETE, read_body: true, ..Sent::default() };
    let req = shown("DELETE", &[], None);
    let judged = match answered(probe.send(sent, timeout).await) {
        Ok(a) if a.status == 405 => {
            Judged::Pass(format!("{} (the server does not let clients end sessions)", a.said()))
        }
        Ok(a) if is_2xx(&a) => {
            let (_, after) = post(probe, ping(208), &[], timeout).await;
            let said = |b: &Answer| format!("DELETE: {}; then {}", a.said(), b.said());
            match after {
                Ok(b) if b.status == 404 => Judged::Pass(said(&b)),
                Ok(b) => fail(Observed::said(said(&b)), Severity::Failure),
                Err(why) => silent(format!("DELETE: {}; then {why}", a.said())),
            }
        }
        Ok(a) => fail(Observed::said(format!("DELETE: {}", a.said())), Severity::Warning),
        Err(why) => silent(why),
    };
    (req, judged)
}

/// `initialize` for a check (a session of its own, never used again).
pub(super) fn init() -> Value {
    crate::transport::http_probe::initialize(1)
}

/// What a foreign origin served is observed as: one cause, whichever origin check saw it (a
/// server without Origin validation fails both).
fn foreign_served(a: &Answer) -> Observed {
    Observed {
        text: format!("{} (served: any web page the user visits can drive the server)", a.said()),
        code: Some("a foreign origin served".into()),
    }
}

/// 403 passes; a request served fails; another refusal is a warning.
fn origin_foreign(a: Result<Answer, String>) -> Judged {
    match a {
        Ok(a) if a.status == 403 => Judged::Pass(a.said()),
        Ok(a) if is_2xx(&a) => fail(foreign_served(&a), Severity::Failure),
        Ok(a) => saw(&a, Severity::Warning),
        Err(why) => silent(why),
    }
}

/// `status` passes; a request served is a failure of `severity`'s weight at least a warning;
/// another refusal a warning.
fn status_is(a: Result<Answer, String>, status: u16, severity: Severity) -> Judged {
    match a {
        Ok(a) if a.status == status => Judged::Pass(a.said()),
        Ok(a) if is_2xx(&a) => fail(Observed::said(format!("{} (served)", a.said())), severity),
        Ok(a) => saw(&a, Severity::Warning),
        Err(why) => silent(why),
    }
}

/// 202 with no body, or a 4xx, passes; anything else breaks a MUST.
fn accepted_without_body(a: Result<Answer, String>) -> Judged {
    match a {
        Ok(a) if a.status == 202 && a.body.trim().is_empty() => Judged::Pass(a.said()),
        Ok(a) if is_4xx(&a) => Judged::Pass(a.said()),
        Ok(a) => saw(&a, Severity::Failure),
        Err(why) => silent(why),
    }
}
