//! The client's side of the conversation: the features mcp-fuzz declares when asked
//! (`--client-capabilities sampling,elicitation`, `--elicit`), how it answers the server's
//! requests for them, and what it heard from the server on every connection of the run (its
//! requests, its log messages, its progress), for the protocol phase's checks of what the run
//! observed ([`Heard`]).
//!
//! Off by default: a client that declares sampling or elicitation lets the server reach paths
//! that only run with one (a tool that asks the user, or a model), so they are fuzzed only when
//! the user says so. A request for a feature the client did not declare is noted either way.
//!
//! See: issue 31 item 4; <https://modelcontextprotocol.io/specification/2025-11-25/client>.

// Sampling and logging are in the 2025-11-25 specification servers follow; rmcp marks them
// deprecated ahead of SEP-2577.
#![allow(deprecated)]

use mcp_fuzz_generators::Generator;
use rmcp::model::{CreateMessageRequestParams, ElicitRequestParams, LoggingLevel};
use serde_json::Value;
use std::sync::Mutex;

/// The client features mcp-fuzz declares, and how it answers them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ClientFeatures {
    /// Declare `sampling` and answer `sampling/createMessage` with a fixed text.
    pub sampling: bool,
    /// Declare `elicitation` (form mode) and answer `elicitation/create` as `elicit` says.
    pub elicitation: bool,
    /// The answer to an elicitation.
    pub elicit: Elicit,
}

/// A client capability mcp-fuzz can declare besides roots (`--client-capabilities`, the
/// profile's `client-capabilities`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ClientCapability {
    /// `sampling`.
    Sampling,
    /// `elicitation` (form mode).
    Elicitation,
}

impl ClientCapability {
    /// The names, as flags and files write them.
    pub const NAMES: &'static [&'static str] = &["sampling", "elicitation"];

    /// The capability of this name.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "sampling" => Some(Self::Sampling),
            "elicitation" => Some(Self::Elicitation),
            _ => None,
        }
    }
}

impl ClientFeatures {
    /// The features `capabilities` declare, answering elicitations as `elicit` says.
    #[must_use]
    pub fn of(capabilities: &[ClientCapability], elicit: Elicit) -> Self {
        Self {
            sampling: capabilities.contains(&ClientCapability::Sampling),
            elicitation: capabilities.contains(&ClientCapability::Elicitation),
            elicit,
        }
    }
}

/// How mcp-fuzz answers a form elicitation (`--elicit`); a URL elicitation is always declined
/// (there is no user to visit it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Elicit {
    /// `decline` (the default).
    #[default]
    Decline,
    /// `accept`, with content generated from the requested schema (valid for it).
    Accept,
    /// `cancel`.
    Cancel,
}

impl Elicit {
    /// The names `--elicit` takes.
    pub const NAMES: &'static [&'static str] = &["decline", "accept", "cancel"];

    /// The answer of this name.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "decline" => Some(Self::Decline),
            "accept" => Some(Self::Accept),
            "cancel" => Some(Self::Cancel),
            _ => None,
        }
    }
}

/// The eight levels of `notifications/message` (RFC 5424's severities).
const LEVELS: &[&str] =
    &["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"];

/// How many of one kind of message were heard, how many broke a rule, and the first that did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Count {
    /// Heard.
    pub seen: u64,
    /// Broke a rule.
    pub bad: u64,
    /// What the first that broke one did.
    pub first_bad: Option<String>,
}

impl Count {
    fn note(&mut self, problem: Option<String>) {
        self.seen += 1;
        if let Some(p) = problem {
            self.bad += 1;
            self.first_bad.get_or_insert(p);
        }
    }
}

/// What the server asked of the client and told it, on every connection of the run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Record {
    /// `sampling/createMessage` requests, judged by their params.
    pub sampling: Count,
    /// `elicitation/create` requests, judged by their params.
    pub elicitation: Count,
    /// Requests for a client feature the client did not declare (sampling, elicitation,
    /// roots): every one breaks the rule.
    pub undeclared: Count,
    /// `notifications/message`, judged by their shape (over stdio, the raw line).
    pub log_messages: Count,
    /// Progress notifications; bad: one that did not increase its token's progress.
    pub progress: Count,
    /// `logging/setLevel` sent (the server declared `logging`); bad: not answered with a
    /// result.
    pub set_level: Count,
    /// `notifications/{tools,prompts,resources}/list_changed`; bad: for a list whose
    /// `listChanged` the server did not declare.
    pub list_changed: Count,
}

/// [`Record`], shared by the run's connections.
#[derive(Debug, Default)]
pub struct Heard(Mutex<Record>);

impl Heard {
    fn with(&self, f: impl FnOnce(&mut Record)) {
        f(&mut self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner));
    }

    /// What was heard so far.
    #[must_use]
    pub fn snapshot(&self) -> Record {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    pub(crate) fn sampling(&self, problem: Option<String>) {
        self.with(|o| o.sampling.note(problem));
    }

    pub(crate) fn elicitation(&self, problem: Option<String>) {
        self.with(|o| o.elicitation.note(problem));
    }

    pub(crate) fn undeclared(&self, what: String) {
        self.with(|o| o.undeclared.note(Some(what)));
    }

    pub(crate) fn log_message(&self, problem: Option<String>) {
        self.with(|o| o.log_messages.note(problem));
    }

    pub(crate) fn list_changed(&self, problem: Option<String>) {
        self.with(|o| o.list_changed.note(problem));
    }

    pub(crate) fn progress(&self, problem: Option<String>) {
        self.with(|o| o.progress.note(problem));
    }

    /// Whether a `logging/setLevel` of the run was not answered with a result: it is not sent
    /// again (a server that hangs on it would cost every start a wait).
    pub(crate) fn set_level_failed(&self) -> bool {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).set_level.bad > 0
    }

    pub(crate) fn set_level(&self, problem: Option<String>) {
        self.with(|o| o.set_level.note(problem));
    }
}

/// Why `params` do not fit `P`'s shape (the specification's), quoting them; `None` when they
/// do.
#[must_use]
pub fn misshapen<P: serde::de::DeserializeOwned>(params: &Value) -> Option<String> {
    let error = serde_json::from_value::<P>(params.clone()).err()?;
    let text = params.to_string();
    let cut: String = text.chars().take(200).collect();
    Some(format!("params that do not fit the specification's shape ({error}): `{cut}`"))
}

/// What is wrong with a sampling request (2025-11-25 `client/sampling`), if anything. The
/// client declared sampling without `tools` or `context`.
#[must_use]
pub fn sampling_problem(p: &CreateMessageRequestParams) -> Option<String> {
    if p.messages.is_empty() {
        return Some("`messages` is empty: there is nothing to answer".into());
    }
    if p.max_tokens == 0 {
        return Some("`maxTokens` is 0: no answer fits".into());
    }
    if p.tools.as_ref().is_some_and(|t| !t.is_empty()) || p.tool_choice.is_some() {
        return Some(
            "`tools` in a request to a client that did not declare `sampling.tools` (servers \
             MUST NOT send tool-enabled sampling requests to such a client)"
                .into(),
        );
    }
    None
}

/// What is wrong with an elicitation request (2025-11-25 `client/elicitation`), if anything.
/// The client declared form mode only.
#[must_use]
pub fn elicitation_problem(p: &ElicitRequestParams) -> Option<String> {
    match p {
        ElicitRequestParams::FormElicitationParams { message, requested_schema, .. } => {
            if message.trim().is_empty() {
                return Some("an empty `message`: the user is asked for nothing".into());
            }
            let schema = serde_json::to_value(requested_schema).unwrap_or(Value::Null);
            let unknown = schema["required"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .find(|r| schema["properties"].get(r).is_none());
            unknown.map(|r| format!("`requestedSchema` requires `{r}`, which it does not define"))
        }
        _ => Some(
            "URL mode to a client that declared form mode only (`elicitation.url` absent)".into(),
        ),
    }
}

/// What an elicitation is answered with: `elicit`'s action, and for `accept` of a form, content
/// generated from the requested schema (valid for it; the `n`th answer of the connection).
#[must_use]
pub fn elicitation_answer(
    p: &ElicitRequestParams,
    elicit: Elicit,
    n: u64,
) -> rmcp::model::ElicitResult {
    use rmcp::model::{ElicitResult, ElicitationAction};
    match (elicit, p) {
        (Elicit::Accept, ElicitRequestParams::FormElicitationParams { requested_schema, .. }) => {
            let schema = serde_json::to_value(requested_schema).unwrap_or(Value::Null);
            match Generator::compile(&schema).and_then(|g| g.sampler(n).valid()) {
                Ok(content) => ElicitResult::new(ElicitationAction::Accept).with_content(content),
                Err(_) => ElicitResult::new(ElicitationAction::Decline),
            }
        }
        (Elicit::Cancel, _) => ElicitResult::new(ElicitationAction::Cancel),
        _ => ElicitResult::new(ElicitationAction::Decline),
    }
}

/// What is wrong with a `notifications/message` as sent (its whole message), if anything: params
/// an object with one of the eight level names and `data`.
#[must_use]
pub fn log_message_problem(message: &Value) -> Option<String> {
    let params = &message["params"];
    if !params.is_object() {
        return Some("`params` is not an object".into());
    }
    match params.get("level") {
        Some(Value::String(l)) if LEVELS.contains(&l.as_str()) => {}
        Some(other) => {
            return Some(format!(
                "level {other} is not one of {} (RFC 5424's names)",
                LEVELS.join(", ")
            ));
        }
        None => return Some("no `level`".into()),
    }
    params.get("data").is_none().then(|| "no `data`".into())
}

/// The level `logging/setLevel` asks for: the most verbose, so that every message is heard.
#[must_use]
pub fn set_level() -> LoggingLevel {
    LoggingLevel::Debug
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn capabilities_and_answers_are_named() {
        let caps: Vec<_> =
            ClientCapability::NAMES.iter().filter_map(|n| ClientCapability::from_name(n)).collect();
        assert_eq!(
            ClientFeatures::of(&caps, Elicit::Accept),
            ClientFeatures { sampling: true, elicitation: true, elicit: Elicit::Accept }
        );
        assert_eq!(ClientCapability::from_name("roots"), None);
        assert!(Elicit::NAMES.iter().all(|n| Elicit::from_name(n).is_some()));
    }

    #[test]
    fn log_messages_need_a_known_level_and_data() {
        let m = |params: Value| json!({"jsonrpc": "2.0", "method": "notifications/message", "params": params});
        assert_eq!(log_message_problem(&m(json!({"level": "info", "data": "x"}))), None);
        assert!(
            log_message_problem(&m(json!({"level": "verbose", "data": "x"})))
                .is_some_and(|p| p.contains("\"verbose\""))
        );
        assert_eq!(log_message_problem(&m(json!({"level": "info"}))), Some("no `data`".into()));
        assert!(log_message_problem(&m(json!("info"))).is_some());
    }

    #[test]
    fn sampling_requests_need_messages_and_tokens() {
        let p = |v: Value| serde_json::from_value::<CreateMessageRequestParams>(v).expect("parses");
        let hi = json!([{"role": "user", "content": {"type": "text", "text": "hi"}}]);
        assert_eq!(sampling_problem(&p(json!({"messages": hi, "maxTokens": 10}))), None);
        assert!(sampling_problem(&p(json!({"messages": [], "maxTokens": 10}))).is_some());
        assert!(sampling_problem(&p(json!({"messages": hi, "maxTokens": 0}))).is_some());
    }

    #[test]
    fn an_accepted_form_gets_content_its_schema_accepts() {
        let p: ElicitRequestParams = serde_json::from_value(json!({
            "mode": "form",
            "message": "Your name?",
            "requestedSchema": {"type": "object", "properties": {
                "name": {"type": "string", "minLength": 2},
                "age": {"type": "integer", "minimum": 18}
            }, "required": ["name", "age"]}
        }))
        .expect("parses");
        assert_eq!(elicitation_problem(&p), None);
        let answer = elicitation_answer(&p, Elicit::Accept, 1);
        let content = answer.content.expect("content");
        assert!(content["name"].as_str().is_some_and(|n| n.chars().count() >= 2), "{content}");
        assert!(content["age"].as_i64().is_some_and(|a| a >= 18), "{content}");
        let declined = elicitation_answer(&p, Elicit::Decline, 1);
        assert_eq!(declined.action, rmcp::model::ElicitationAction::Decline);
    }
}
