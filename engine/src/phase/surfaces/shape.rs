//! The shapes of the results the surfaces phase asks for (MCP 2025-11-25 schema): a reply that
//! breaks one is a protocol violation, told with what is wrong.

use serde_json::Value;

/// Which result a request must get.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    /// `GetPromptResult`.
    Prompt,
    /// `ReadResourceResult`.
    Read,
    /// `CompleteResult`.
    Complete,
}

/// What is wrong with a result, and whether it is only an inconsistency (a warning) rather than
/// a breach of a MUST (a failure).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Breach {
    pub detail: String,
    pub minor: bool,
}

fn breach(detail: impl Into<String>) -> Option<Breach> {
    Some(Breach { detail: detail.into(), minor: false })
}

/// Checks `result` against `shape`.
pub(crate) fn check(shape: Shape, result: &Value) -> Option<Breach> {
    match shape {
        Shape::Prompt => prompt(result),
        Shape::Read => read(result),
        Shape::Complete => complete(result),
    }
}

fn prompt(r: &Value) -> Option<Breach> {
    let Some(messages) = r.get("messages").and_then(Value::as_array) else {
        return breach("a GetPromptResult needs a `messages` array");
    };
    if let Some(d) = r.get("description").filter(|d| !d.is_string() && !d.is_null()) {
        return breach(format!("`description` must be a string, not {d}"));
    }
    for (i, m) in messages.iter().enumerate() {
        let role = m.get("role").and_then(Value::as_str);
        if !matches!(role, Some("user" | "assistant")) {
            return breach(format!("messages[{i}].role must be \"user\" or \"assistant\""));
        }
        if let Some(why) = m.get("content").map_or(Some("is missing".into()), content) {
            return breach(format!("messages[{i}].content {why}"));
        }
    }
    None
}

/// What is wrong with a content block, if anything.
fn content(c: &Value) -> Option<String> {
    let needs = |key: &str| c.get(key).and_then(Value::as_str).is_none();
    match c.get("type").and_then(Value::as_str) {
        Some("text") if needs("text") => Some("of type text needs a string `text`".into()),
        Some("image" | "audio") if needs("data") || needs("mimeType") => {
            Some("of type image or audio needs string `data` and `mimeType`".into())
        }
        Some("resource") if c.get("resource").and_then(|r| contents(r).err()).is_some() => {
            Some("of type resource needs a valid `resource`".into())
        }
        Some("resource_link") if needs("uri") || needs("name") => {
            Some("of type resource_link needs string `uri` and `name`".into())
        }
        Some("text" | "image" | "audio" | "resource" | "resource_link") => None,
        Some(other) => Some(format!("has an unknown type {other:?}")),
        None => Some("needs a string `type`".into()),
    }
}

/// One entry of `contents`: a `uri` and exactly one of `text` and `blob`, each a string.
fn contents(c: &Value) -> Result<(), String> {
    if c.get("uri").and_then(Value::as_str).is_none() {
        return Err("needs a string `uri`".into());
    }
    match (c.get("text"), c.get("blob")) {
        (Some(t), None) if t.is_string() => Ok(()),
        (None, Some(b)) if b.is_string() => Ok(()),
        (Some(_), Some(_)) => Err("has both `text` and `blob`".into()),
        (None, None) => Err("needs a string `text` or `blob`".into()),
        _ => Err("`text` and `blob` must be strings".into()),
    }
}

fn read(r: &Value) -> Option<Breach> {
    let Some(list) = r.get("contents").and_then(Value::as_array) else {
        return breach("a ReadResourceResult needs a `contents` array");
    };
    list.iter()
        .enumerate()
        .find_map(|(i, c)| contents(c).err().map(|why| format!("contents[{i}] {why}")))
        .and_then(breach)
}

/// Most completion values a result may hold (MCP: "Must not exceed 100 items").
pub(crate) const MAX_COMPLETION_VALUES: usize = 100;

fn complete(r: &Value) -> Option<Breach> {
    let Some(c) = r.get("completion") else {
        return breach("a CompleteResult needs a `completion` object");
    };
    let Some(values) = c.get("values").and_then(Value::as_array) else {
        return breach("completion.values must be an array of strings");
    };
    if values.iter().any(|v| !v.is_string()) {
        return breach("completion.values must be an array of strings");
    }
    if values.len() > MAX_COMPLETION_VALUES {
        return breach(format!(
            "completion.values holds {} values; the specification allows at most {MAX_COMPLETION_VALUES}",
            values.len()
        ));
    }
    let n = values.len() as u64;
    let total = c.get("total");
    let has_more = c.get("hasMore");
    if total.is_some_and(|t| !t.is_u64()) || has_more.is_some_and(|h| !h.is_boolean()) {
        return breach("completion.total must be a non-negative integer and hasMore a boolean");
    }
    let minor = |d: String| Some(Breach { detail: d, minor: true });
    match (total.and_then(Value::as_u64), has_more.and_then(Value::as_bool)) {
        (Some(t), _) if t < n => {
            minor(format!("completion.total is {t}, fewer than the {n} values sent"))
        }
        (Some(t), Some(false)) if t > n => {
            minor(format!("completion.total is {t} with {n} values sent, yet hasMore is false"))
        }
        (Some(t), Some(true)) if t == n => minor(format!(
            "completion.hasMore is true, yet total ({t}) is the number of values sent"
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn prompt_results_need_messages_with_roles_and_content() {
        let ok = json!({"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}]});
        assert_eq!(check(Shape::Prompt, &ok), None);
        assert!(check(Shape::Prompt, &json!({})).is_some());
        let bad_role =
            json!({"messages": [{"role": "system", "content": {"type": "text", "text": "x"}}]});
        assert!(check(Shape::Prompt, &bad_role).expect("breach").detail.contains("role"));
        let no_text = json!({"messages": [{"role": "user", "content": {"type": "text"}}]});
        assert!(check(Shape::Prompt, &no_text).expect("breach").detail.contains("text"));
    }

    #[test]
    fn read_results_need_contents_with_uri_and_one_of_text_or_blob() {
        assert_eq!(check(Shape::Read, &json!({"contents": [{"uri": "a://b", "text": "x"}]})), None);
        assert_eq!(
            check(Shape::Read, &json!({"contents": [{"uri": "a://b", "blob": "eA=="}]})),
            None
        );
        let both = json!({"contents": [{"uri": "a://b", "text": "x", "blob": "eA=="}]});
        assert!(check(Shape::Read, &both).expect("breach").detail.contains("both"));
        assert!(check(Shape::Read, &json!({"contents": [{"text": "x"}]})).is_some());
    }

    #[test]
    fn completions_hold_at_most_100_values_and_a_consistent_total() {
        let of = |n: usize, extra: Value| {
            let mut c = json!({"values": (0..n).map(|i| i.to_string()).collect::<Vec<_>>()});
            c.as_object_mut().expect("object").extend(extra.as_object().expect("object").clone());
            json!({"completion": c})
        };
        assert_eq!(check(Shape::Complete, &of(100, json!({}))), None);
        let over = check(Shape::Complete, &of(101, json!({}))).expect("breach");
        assert!(!over.minor && over.detail.contains("101"), "{over:?}");
        assert_eq!(check(Shape::Complete, &of(3, json!({"total": 10, "hasMore": true}))), None);
        let lie =
            check(Shape::Complete, &of(3, json!({"total": 10, "hasMore": false}))).expect("breach");
        assert!(lie.minor, "an inconsistency is a warning");
        assert!(check(Shape::Complete, &of(3, json!({"total": 2}))).expect("breach").minor);
    }
}
