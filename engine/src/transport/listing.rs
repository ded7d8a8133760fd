//! Reading `tools/list` raw: every page (with a repeated-cursor guard and a page cap), and each
//! tool on its own so that one malformed tool is a finding, never the end of the run.

use crate::transport::{Connection, Reply};
pub use mcp_fuzz_compat::capture::Tool;
use mcp_fuzz_compat::capture::excerpt;
use serde_json::{Value, json};
use std::time::Duration;

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
    /// The usable tools (each keeps its JSON as listed, for snapshots).
    pub tools: Vec<Tool>,
    /// Items that are not usable tools.
    pub problems: Vec<ListingProblem>,
    /// Why listing stopped early, if it did.
    pub truncated: Option<String>,
    /// Pages read.
    pub pages: usize,
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
            match Tool::parse_listed(item) {
                Ok(t) => listing.tools.push(t),
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

/// The size of a response over the limit: exact, or (`at_least`, over HTTP) a lower bound.
#[must_use]
pub fn response_size(bytes: u64, at_least: bool) -> String {
    if at_least {
        format!("a response of more than {} bytes", bytes.saturating_sub(1))
    } else {
        format!("a {bytes}-byte response")
    }
}

/// An HTTP status where a JSON-RPC answer was due, with the start of its body.
#[must_use]
pub fn http_error(status: u16, detail: &str) -> String {
    let reason = http::StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .map_or_else(String::new, |r| format!(" {r}"));
    let said = if detail.is_empty() {
        String::new()
    } else {
        format!(": {}", detail.lines().next().unwrap_or_default())
    };
    format!("HTTP {status}{reason} instead of a JSON-RPC answer{said}")
}

/// A one-line description of a non-result reply.
#[must_use]
pub fn describe(reply: &Reply) -> String {
    match reply {
        Reply::Result(v) => format!("result {}", excerpt(v)),
        Reply::RpcError { code, message, .. } => format!("JSON-RPC error {code}: {message}"),
        Reply::Timeout(_) => "no answer in time".into(),
        Reply::Slow(why) => format!("too slow: {why}"),
        Reply::Exited(info) => format!("the server died ({info})"),
        Reply::Oversize { bytes, at_least } => {
            format!("{}, over the limit", response_size(*bytes, *at_least))
        }
        Reply::Http { status, detail } => http_error(*status, detail),
        Reply::Protocol(p) => format!("protocol violation: {p}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malformed_tools_name_the_bad_field() {
        let ok = Tool::parse_listed(&json!({"name": "a", "inputSchema": {"type": "object"},
            "annotations": {"readOnlyHint": true}}))
        .expect("a usable tool");
        assert_eq!(ok.read_only_hint(), Some(true));
        let e = Tool::parse_listed(&json!({"name": "a", "inputSchema": "nope"}))
            .expect_err("bad schema");
        assert!(e.contains("inputSchema"), "{e}");
        let e = Tool::parse_listed(
            &json!({"name": "a", "inputSchema": {}, "annotations": {"readOnlyHint": "yes"}}),
        )
        .expect_err("bad hint");
        assert!(e.contains("readOnlyHint"), "{e}");
        assert!(Tool::parse_listed(&json!({"inputSchema": {}})).is_err());
        assert!(
            Tool::parse_listed(&json!({"name": "a", "inputSchema": {}, "outputSchema": []}))
                .is_err()
        );
    }
}
