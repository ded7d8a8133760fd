//! Reading `tools/list` raw: every page (with a repeated-cursor guard and a page cap), and each
//! tool on its own so that one malformed tool is a finding, never the end of the run.

use crate::client::{Connection, Reply, excerpt};
use serde_json::{Value, json};
use std::time::Duration;

/// A tool as listed, with the parts the run needs.
#[derive(Debug, Clone)]
pub struct Tool {
    /// `name`.
    pub name: String,
    /// `inputSchema`.
    pub input_schema: Value,
    /// `outputSchema`, when declared.
    pub output_schema: Option<Value>,
    /// `annotations.readOnlyHint`.
    pub read_only: Option<bool>,
    /// `annotations.destructiveHint`.
    pub destructive: Option<bool>,
}

/// A listed item that is not a usable tool.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ListingProblem {
    /// Position in the concatenated pages.
    pub index: usize,
    /// The name, if it had one.
    pub name: Option<String>,
    /// What is wrong.
    pub reason: String,
}

/// Everything `tools/list` gave.
#[derive(Debug, Clone, Default)]
pub struct Listing {
    /// The usable tools.
    pub tools: Vec<Tool>,
    /// The JSON of each usable tool as listed, parallel to `tools` (for snapshots).
    pub items: Vec<Value>,
    /// Items that are not usable tools.
    pub problems: Vec<ListingProblem>,
    /// Why listing stopped early, if it did.
    pub truncated: Option<String>,
    /// Pages read.
    pub pages: usize,
}

/// Parses one listed item.
///
/// # Errors
/// A reason naming the bad field.
pub fn parse_tool(item: &Value) -> Result<Tool, String> {
    let obj = item.as_object().ok_or("the tool is not a JSON object")?;
    let name =
        obj.get("name").and_then(Value::as_str).ok_or("`name` is missing or not a string")?;
    let input_schema = match obj.get("inputSchema") {
        Some(v @ Value::Object(_)) => v.clone(),
        Some(other) => {
            return Err(format!("`inputSchema` must be an object, got {}", excerpt(other)));
        }
        None => return Err("`inputSchema` is missing".into()),
    };
    let output_schema = match obj.get("outputSchema") {
        None | Some(Value::Null) => None,
        Some(v @ Value::Object(_)) => Some(v.clone()),
        Some(other) => {
            return Err(format!("`outputSchema` must be an object, got {}", excerpt(other)));
        }
    };
    let hint = |key: &str| -> Result<Option<bool>, String> {
        match obj.get("annotations").and_then(|a| a.get(key)) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(other) => {
                Err(format!("`annotations.{key}` must be a boolean, got {}", excerpt(other)))
            }
        }
    };
    if let Some(a) = obj.get("annotations")
        && !a.is_object()
        && !a.is_null()
    {
        return Err(format!("`annotations` must be an object, got {}", excerpt(a)));
    }
    Ok(Tool {
        name: name.to_owned(),
        input_schema,
        output_schema,
        read_only: hint("readOnlyHint")?,
        destructive: hint("destructiveHint")?,
    })
}

/// Reads every page of `tools/list`.
///
/// # Errors
/// A message when the first page cannot be had at all.
pub async fn list_all(
    conn: &Connection,
    max_pages: usize,
    timeout: Duration,
) -> Result<Listing, String> {
    let mut listing = Listing::default();
    let mut cursor: Option<String> = None;
    let mut seen: Vec<String> = Vec::new();
    let mut index = 0;
    loop {
        let params = cursor.as_ref().map(|c| json!({ "cursor": c }));
        let page = match conn.request("tools/list", params, timeout).await {
            Reply::Result(v) => v,
            other => {
                let what = describe(&other);
                if listing.pages == 0 {
                    return Err(format!("`tools/list` failed: {what}"));
                }
                listing.truncated =
                    Some(format!("page {} of `tools/list` failed: {what}", listing.pages + 1));
                return Ok(listing);
            }
        };
        listing.pages += 1;
        let Some(items) = page.get("tools").and_then(Value::as_array) else {
            let msg = format!("a `tools/list` page has no `tools` array: {}", excerpt(&page));
            if listing.pages == 1 {
                return Err(msg);
            }
            listing.truncated = Some(msg);
            return Ok(listing);
        };
        for item in items {
            match parse_tool(item) {
                Ok(t) => {
                    listing.tools.push(t);
                    listing.items.push(item.clone());
                }
                Err(reason) => listing.problems.push(ListingProblem {
                    index,
                    name: item.get("name").and_then(Value::as_str).map(str::to_owned),
                    reason,
                }),
            }
            index += 1;
        }
        match page.get("nextCursor").and_then(Value::as_str) {
            None => return Ok(listing),
            Some(next) if seen.iter().any(|c| c == next) => {
                listing.truncated = Some(format!(
                    "`tools/list` repeated the cursor `{next}`: stopped after {} pages",
                    listing.pages
                ));
                return Ok(listing);
            }
            Some(_) if listing.pages >= max_pages => {
                listing.truncated =
                    Some(format!("`tools/list` still had more pages after {max_pages}: stopped"));
                return Ok(listing);
            }
            Some(next) => {
                seen.push(next.to_owned());
                cursor = Some(next.to_owned());
            }
        }
    }
}

/// A one-line description of a non-result reply.
#[must_use]
pub fn describe(reply: &Reply) -> String {
    match reply {
        Reply::Result(v) => format!("result {}", excerpt(v)),
        Reply::RpcError { code, message } => format!("JSON-RPC error {code}: {message}"),
        Reply::Timeout => "no answer in time".into(),
        Reply::Exited(info) => format!("the server died ({info})"),
        Reply::Oversize(n) => format!("a response of {n} bytes, over the limit"),
        Reply::Protocol(p) => format!("protocol violation: {p}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malformed_tools_name_the_bad_field() {
        assert!(parse_tool(&json!({"name": "a", "inputSchema": {"type": "object"}})).is_ok());
        let e = parse_tool(&json!({"name": "a", "inputSchema": "nope"})).expect_err("bad schema");
        assert!(e.contains("inputSchema"), "{e}");
        let e = parse_tool(
            &json!({"name": "a", "inputSchema": {}, "annotations": {"readOnlyHint": "yes"}}),
        )
        .expect_err("bad hint");
        assert!(e.contains("readOnlyHint"), "{e}");
        assert!(parse_tool(&json!({"inputSchema": {}})).is_err());
    }
}
