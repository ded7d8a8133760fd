//! The steps of a call sequence as reports and case files record them: plain data, with no
//! dependency on how a sequence is run (that is `sequence/`).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// What a step's answer is expected to be, beyond the checks of every call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StepCheck {
    /// It reads a handle that an earlier step just created: it must not answer "not found".
    AfterCreate,
    /// It uses a handle that an earlier step just closed or deleted: a tool error is right, a
    /// crash is not.
    AfterDelete,
    /// It uses a well-formed handle that nobody issued: a tool error is right, a crash is not.
    UnknownHandle,
}

/// Where a step's argument came from: an earlier step's result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Binding {
    /// Where in this step's arguments (a JSON Pointer).
    pub pointer: String,
    /// The earlier step (its index in the sequence, from 0) whose result gave the value.
    pub step: usize,
    /// Where in that step's result data (a JSON Pointer into its `structuredContent`, or into
    /// the JSON of its text).
    pub from: String,
    /// The value was altered into a well-formed one that the step did not return.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub altered: bool,
}

/// One call of a sequence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SeqStep {
    /// The tool called.
    pub tool: String,
    /// The arguments as sent when the sequence was recorded (bound values included).
    pub arguments: Map<String, Value>,
    /// The arguments taken from earlier results; bound again on every replay.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bindings: Vec<Binding>,
    /// The state check the step was made for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check: Option<StepCheck>,
    /// The outcome kind of the step when the sequence was recorded (`ok`, `tool-error`,
    /// `exited`...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<String>,
}
