//! The reference model of a stateful walk: what the tools are for (families named from their
//! names), which values earlier steps returned (handles), which input a value fits, and how a
//! handle is altered into a well-formed one nobody issued. Pure: no server, no I/O.

use mcp_fuzz_generators::pointer::push;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// What a tool does to the things of its family, read from its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    /// `create_x`, `open_x`, `start_x`, `add_x`...: makes a thing and returns its handle.
    Creates,
    /// `list_x`, `search_x`: returns handles of things that exist.
    Lists,
    /// `get_x`, `read_x`, `status_x`...: reads one thing by its handle.
    Reads,
    /// `update_x`, `set_x`, `rename_x`...: changes one thing by its handle.
    Updates,
    /// `delete_x`, `close_x`, `stop_x`...: ends one thing by its handle.
    Deletes,
}

/// First words of tool names, by role. A name's first word that is in none is no role.
const VERBS: &[(Role, &[&str])] = &[
    (
        Role::Creates,
        &[
            "create",
            "add",
            "new",
            "open",
            "start",
            "insert",
            "make",
            "register",
            "upload",
            "begin",
            "launch",
            "spawn",
            "init",
            "allocate",
            "acquire",
            "connect",
            "subscribe",
            "submit",
            "schedule",
            "enqueue",
            "post",
        ],
    ),
    (Role::Lists, &["list", "search", "find", "query", "browse", "enumerate"]),
    (
        Role::Reads,
        &[
            "get", "read", "fetch", "show", "describe", "view", "status", "inspect", "load",
            "lookup", "info", "ping", "check", "poll", "wait", "download", "export",
        ],
    ),
    (
        Role::Updates,
        &[
            "update", "edit", "set", "modify", "patch", "rename", "append", "move", "write", "put",
            "replace", "change", "assign", "tag", "resume", "pause",
        ],
    ),
    (
        Role::Deletes,
        &[
            "delete",
            "remove",
            "close",
            "stop",
            "destroy",
            "drop",
            "cancel",
            "kill",
            "end",
            "terminate",
            "clear",
            "unregister",
            "finish",
            "release",
            "disconnect",
            "unsubscribe",
            "archive",
            "revoke",
            "purge",
        ],
    ),
];

/// A tool name split into its role and the thing it acts on (`delete_entities` -> deletes,
/// `entity`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Named {
    /// What the tool does, if its first word says.
    pub role: Option<Role>,
    /// The thing, singular and lower case (`entity`, `file handle`); empty when the name is one
    /// word.
    pub noun: String,
}

/// Splits a tool name (`snake_case`, `camelCase`, `kebab-case`, dotted) into its role and noun.
#[must_use]
pub fn name(tool: &str) -> Named {
    let words = words(tool);
    let Some((first, rest)) = words.split_first() else {
        return Named { role: None, noun: String::new() };
    };
    let role = VERBS.iter().find(|(_, vs)| vs.contains(&first.as_str())).map(|(r, _)| *r);
    let rest: Vec<String> = rest.iter().map(|w| singular(w)).collect();
    Named { role, noun: if role.is_some() { rest.join(" ") } else { String::new() } }
}

/// The lower-case words of an identifier.
fn words(name: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if !c.is_alphanumeric() {
            if !word.is_empty() {
                out.push(std::mem::take(&mut word));
            }
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower && !word.is_empty() {
            out.push(std::mem::take(&mut word));
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        word.extend(c.to_lowercase());
    }
    if !word.is_empty() {
        out.push(word);
    }
    out
}

/// A plural English word made singular, good enough for identifiers (`entities` -> `entity`,
/// `names` -> `name`, `addresses` -> `address`, `status` stays).
#[must_use]
pub fn singular(word: &str) -> String {
    if let Some(stem) = word.strip_suffix("ies").filter(|s| s.len() > 1) {
        return format!("{stem}y");
    }
    for ending in ["sses", "shes", "ches", "xes"] {
        if word.ends_with(ending) {
            return word[..word.len() - 2].to_owned();
        }
    }
    match word.strip_suffix('s') {
        Some(stem) if stem.len() >= 2 && !stem.ends_with('s') && !stem.ends_with('u') => {
            stem.to_owned()
        }
        _ => word.to_owned(),
    }
}

/// Words that name a handle: a value one call returns and another takes back.
const HANDLE_WORDS: &[&str] = &[
    "id", "handle", "name", "uri", "url", "path", "key", "session", "token", "cursor", "ref",
    "slug", "uuid", "code", "number",
];

/// A property name as it is compared: its words, singular, joined (`entityNames` ->
/// `entityname`, `repo_path` -> `repopath`).
#[must_use]
pub fn key(name: &str) -> String {
    words(name).iter().map(|w| singular(w)).collect()
}

/// Whether an input property named `input` takes values that a result returned under `output`:
/// the same key, or one ends with the other where the shorter is a handle word (`noteId` takes
/// an `id`, `id` takes a `noteId`, `entityNames` take a `name`).
#[must_use]
pub fn fits(input: &str, output: &str) -> bool {
    let (i, o) = (key(input), key(output));
    if i.is_empty() || o.is_empty() {
        return false;
    }
    if i == o {
        return HANDLE_WORDS.iter().any(|w| i.ends_with(w));
    }
    let (long, short) = if i.len() > o.len() { (&i, &o) } else { (&o, &i) };
    long.ends_with(short.as_str()) && HANDLE_WORDS.contains(&short.as_str())
}

/// A value some step returned: where in its result, under which property name.
#[derive(Debug, Clone, PartialEq)]
pub struct Returned {
    /// The step that returned it.
    pub step: usize,
    /// Its JSON Pointer in that step's result data ([`data`]).
    pub pointer: String,
    /// The property it was under.
    pub key: String,
    /// The value (a string or an integer).
    pub value: Value,
}

/// Deepest level of a result walked for handles.
const MAX_DEPTH: usize = 6;
/// Handles kept per result.
///
/// Why: a listing can return thousands of items; the first few are enough to chain calls on.
const PER_RESULT: usize = 16;
/// Longest string kept as a handle.
const MAX_HANDLE: usize = 200;

/// The data of a `tools/call` result: its `structuredContent`, else its first text block that
/// holds a JSON object or array.
#[must_use]
pub fn data(result: &Value) -> Option<Value> {
    if result.get("isError") == Some(&Value::Bool(true)) {
        return None;
    }
    if let Some(sc) = result.get("structuredContent").filter(|v| !v.is_null()) {
        return Some(sc.clone());
    }
    result.get("content")?.as_array()?.iter().find_map(|block| {
        let t = block.get("text")?.as_str()?.trim_start();
        (t.starts_with('{') || t.starts_with('[')).then(|| serde_json::from_str(t).ok()).flatten()
    })
}

/// The handles in one step's result data: scalar properties whose name is a handle word.
#[must_use]
pub fn handles(step: usize, data: &Value) -> Vec<Returned> {
    let mut out = Vec::new();
    walk(step, data, "", 0, &mut out);
    out
}

fn walk(step: usize, v: &Value, at: &str, depth: usize, out: &mut Vec<Returned>) {
    if depth > MAX_DEPTH || out.len() >= PER_RESULT {
        return;
    }
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let here = push(at, k);
                let handle_like = match x {
                    Value::String(s) => !s.is_empty() && s.chars().count() <= MAX_HANDLE,
                    Value::Number(n) => n.is_i64() || n.is_u64(),
                    _ => false,
                };
                let k_key = key(k);
                if handle_like && HANDLE_WORDS.iter().any(|w| k_key.ends_with(w)) {
                    out.push(Returned {
                        step,
                        pointer: here.clone(),
                        key: k.clone(),
                        value: x.clone(),
                    });
                }
                walk(step, x, &here, depth + 1, out);
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                walk(step, x, &push(at, &i.to_string()), depth + 1, out);
            }
        }
        _ => {}
    }
}

/// Where in a tool's arguments a value under `output` goes: every object member whose name fits
/// it, at any depth (a scalar is replaced, an array of scalars becomes `[value]`), else a
/// top-level property of `schema` that fits it. Returns the new arguments and the pointers set.
#[must_use]
pub fn bind(
    arguments: &Map<String, Value>,
    schema: &Value,
    output: &str,
    value: &Value,
) -> Option<(Map<String, Value>, Vec<String>)> {
    let mut args = Value::Object(arguments.clone());
    let mut set = Vec::new();
    place(&mut args, output, value, "", &mut set);
    let mut args = match args {
        Value::Object(m) => m,
        _ => return None,
    };
    if set.is_empty() {
        let props = schema.get("properties")?.as_object()?;
        let (name, sub) = props.iter().find(|(k, _)| fits(k, output))?;
        let array = sub.get("type").and_then(Value::as_str) == Some("array");
        args.insert(
            name.clone(),
            if array { Value::Array(vec![value.clone()]) } else { value.clone() },
        );
        let at = push("", name);
        set.push(if array { format!("{at}/0") } else { at });
    }
    Some((args, set))
}

fn place(v: &mut Value, output: &str, value: &Value, at: &str, set: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m.iter_mut() {
                let here = push(at, k);
                if fits(k, output) {
                    match x {
                        Value::Array(items) if items.iter().all(|i| !i.is_object()) => {
                            *items = vec![value.clone()];
                            set.push(format!("{here}/0"));
                        }
                        Value::Object(_) | Value::Array(_) => place(x, output, value, &here, set),
                        _ => {
                            *x = value.clone();
                            set.push(here);
                        }
                    }
                } else {
                    place(x, output, value, &here, set);
                }
            }
        }
        Value::Array(items) => {
            for (i, x) in items.iter_mut().enumerate() {
                place(x, output, value, &push(at, &i.to_string()), set);
            }
        }
        _ => {}
    }
}

/// A handle altered into one of the same shape that was not issued: in a hexadecimal handle (a
/// UUID, a hash) every hex digit becomes another; else every digit `d` becomes `9 - d`
/// (`fh-1` -> `fh-8`, `job-00001` -> `job-99998`); in a handle without digits every letter is
/// rotated by 13 (`Ann` -> `Naa`). A number becomes a far larger one. `None` when nothing in it
/// can change.
#[must_use]
pub fn altered(handle: &Value) -> Option<Value> {
    let flip = |c: char, lo: u8, hi: u8| char::from(hi - (c as u8 - lo));
    match handle {
        Value::String(s) => {
            let hex = s.len() >= 8
                && s.chars().all(|c| c.is_ascii_hexdigit() || c == '-')
                && s.chars().any(|c| c.is_ascii_alphabetic());
            let digits = s.chars().any(|c| c.is_ascii_digit());
            let t: String = s
                .chars()
                .map(|c| match c {
                    '0'..='9' if digits => flip(c, b'0', b'9'),
                    'a'..='f' if hex => flip(c, b'a', b'f'),
                    'A'..='F' if hex => flip(c, b'A', b'F'),
                    'a'..='z' if !digits => char::from(b'a' + (c as u8 - b'a' + 13) % 26),
                    'A'..='Z' if !digits => char::from(b'A' + (c as u8 - b'A' + 13) % 26),
                    other => other,
                })
                .collect();
            (t != *s).then_some(Value::String(t))
        }
        Value::Number(n) => {
            n.as_u64().map(|n| Value::from(n.saturating_mul(7).saturating_add(99_991)))
        }
        _ => None,
    }
}

/// [`altered`], but never a value that `taken` says was issued: a flipped handle can land on
/// one an earlier step returned (`fh-7` -> `fh-2`, which exists), and a call on it tests that
/// handle, not an unknown one. Then every run of digits is lengthened with leading nines
/// (`fh-2` -> `fh-92` -> `fh-992`), and a number moved further, a few times; `None` when each
/// try was taken.
#[must_use]
pub fn altered_unlike(handle: &Value, taken: impl Fn(&Value) -> bool) -> Option<Value> {
    let first = altered(handle)?;
    let tries = std::iter::successors(Some(first), |v| match v {
        Value::String(s) if s.chars().any(|c| c.is_ascii_digit()) => {
            let mut out = String::with_capacity(s.len() + 4);
            let mut in_run = false;
            for c in s.chars() {
                if c.is_ascii_digit() && !in_run {
                    out.push('9');
                }
                in_run = c.is_ascii_digit();
                out.push(c);
            }
            Some(Value::String(out))
        }
        Value::Number(n) => n.as_u64().map(|n| Value::from(n.saturating_add(99_991))),
        _ => None,
    });
    tries.take(4).find(|v| !taken(v))
}

/// Whether `value` occurs anywhere in `data` (as a member value or an item, at any depth).
#[must_use]
pub fn holds(data: &Value, value: &Value) -> bool {
    data == value
        || match data {
            Value::Object(m) => m.values().any(|v| holds(v, value)),
            Value::Array(items) => items.iter().any(|v| holds(v, value)),
            _ => false,
        }
}

/// Whether an error text says the thing asked for does not exist.
#[must_use]
pub fn says_not_found(text: &str) -> bool {
    let t = text.to_lowercase();
    [
        "not found",
        "no such",
        "does not exist",
        "doesn't exist",
        "not exist",
        "unknown",
        "cannot find",
        "can't find",
        "could not find",
        "couldn't find",
        "no record",
        "404",
    ]
    .iter()
    .any(|p| t.contains(p))
}

/// One value at `pointer` in `root`.
#[must_use]
pub fn at<'v>(root: &'v Value, pointer: &str) -> Option<&'v Value> {
    root.pointer(pointer)
}

/// Sets the value at `pointer` in `args` (the pointer must exist).
pub fn set(args: &mut Map<String, Value>, pointer: &str, value: Value) -> bool {
    let mut root = Value::Object(std::mem::take(args));
    let done = root.pointer_mut(pointer).map(|slot| *slot = value).is_some();
    if let Value::Object(m) = root {
        *args = m;
    }
    done
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_split_into_role_and_noun() {
        assert_eq!(
            name("delete_entities"),
            Named { role: Some(Role::Deletes), noun: "entity".into() }
        );
        assert_eq!(name("openFile"), Named { role: Some(Role::Creates), noun: "file".into() });
        assert_eq!(name("get-job"), Named { role: Some(Role::Reads), noun: "job".into() });
        assert_eq!(name("list_notes").role, Some(Role::Lists));
        assert_eq!(name("close_session").noun, "session");
        assert_eq!(name("echo"), Named { role: None, noun: String::new() });
        assert_eq!(name("sum_values").role, None);
        assert_eq!(singular("addresses"), "address");
        assert_eq!(singular("status"), "status");
        assert_eq!(singular("ids"), "id");
    }

    #[test]
    fn handles_fit_inputs_by_name() {
        assert!(fits("noteId", "id"));
        assert!(fits("id", "noteId"));
        assert!(fits("entityNames", "name"));
        assert!(fits("handle", "handle"));
        assert!(fits("repo_path", "path"));
        assert!(!fits("title", "name"));
        assert!(!fits("count", "amount"));
        assert!(!fits("text", "text"), "same name, but not a handle");
        assert!(!fits("name", "entityType"));
    }

    #[test]
    fn results_give_handles_with_their_place() {
        let result = json!({"content": [{"type": "text", "text": "{\"items\": [{\"jobId\": \"job-00001\", \"title\": \"x\"}], \"count\": 1}"}]});
        let d = data(&result).expect("JSON text");
        let h = handles(3, &d);
        assert_eq!(h.len(), 1, "{h:?}");
        assert_eq!(
            (h[0].step, h[0].pointer.as_str(), h[0].key.as_str()),
            (3, "/items/0/jobId", "jobId")
        );
        assert_eq!(h[0].value, json!("job-00001"));
        assert!(data(&json!({"isError": true, "structuredContent": {"id": 1}})).is_none());
        assert_eq!(
            data(&json!({"structuredContent": {"id": 1}, "content": []})),
            Some(json!({"id": 1}))
        );
    }

    #[test]
    fn values_bind_where_a_property_fits() {
        let schema = json!({"type": "object", "properties": {"entityNames": {"type": "array", "items": {"type": "string"}}}});
        let (args, at) = bind(&Map::new(), &schema, "name", &json!("Ann")).expect("binds");
        assert_eq!(Value::Object(args), json!({"entityNames": ["Ann"]}));
        assert_eq!(at, ["/entityNames/0"]);
        let nested = json!({"observations": [{"entityName": "x", "contents": ["a"]}]});
        let Value::Object(m) = nested else { unreachable!() };
        let (args, at) = bind(&m, &json!({}), "name", &json!("Ann")).expect("binds");
        assert_eq!(args["observations"][0]["entityName"], json!("Ann"));
        assert_eq!(at, ["/observations/0/entityName"]);
        assert!(
            bind(&Map::new(), &json!({"properties": {"title": {}}}), "id", &json!(1)).is_none()
        );
    }

    #[test]
    fn handles_are_altered_into_the_same_shape() {
        assert_eq!(altered(&json!("job-00001")), Some(json!("job-99998")));
        assert_eq!(altered(&json!("fh-1")), Some(json!("fh-8")));
        assert_eq!(altered(&json!("Ann")), Some(json!("Naa")));
        assert_eq!(
            altered(&json!("1b4e28ba-2fa1-11d2-883f-0016d3cca427")),
            Some(json!("8e5b71ef-7af8-88c7-116a-9983c6ddf572"))
        );
        assert_eq!(altered(&json!("--")), None);
        let issued = json!([{"handle": "fh-2"}, {"handle": "fh-92"}]);
        assert_eq!(altered_unlike(&json!("fh-7"), |v| holds(&issued, v)), Some(json!("fh-992")));
        assert_eq!(altered_unlike(&json!("fh-7"), |_| false), Some(json!("fh-2")));
        assert_eq!(altered_unlike(&json!("Ann"), |_| true), None);
        assert_eq!(altered(&json!(5)), Some(json!(100_026)));
        assert!(says_not_found("Note note-1 not found"));
        assert!(says_not_found("Error: no such handle"));
        assert!(!says_not_found("permission denied"));
    }
}
