//! The server's own readers, read before and after a read-only tool's cases: what it lists
//! and shows of its state (read-only tools with no required input, `resources/list` and the
//! first listed resources, `prompts/list`). A read-only tool after whose calls a reader answers
//! differently, in a way a fresh process repeats (read, read again unchanged, call, read), is
//! an `annotation-mismatch` failure with the reader, what it said before and after, and the
//! call.
//!
//! Readers whose answer changes on its own (a clock, a counter) are found when the run picks
//! them (each is read twice) and left out; so is every reader that fails or is slow.
//!
//! See: issue 32 item 2 (an in-memory list that a "read-only" tool appends to).

use super::start::Started;
use crate::finding::{FindingKind, Severity};
use crate::judge::Outcome;
use crate::report::Finding;
use crate::server::Instance;
use crate::server::Keep;
use crate::transport::Reply;
use crate::transport::listing::Listing;
use serde_json::{Map, Value, json};

/// The most reader tools read (the first, in listing order).
const MAX_TOOLS: usize = 4;
/// The most resources read (the first listed; `resources/list` shows the rest).
const MAX_RESOURCES: usize = 1;
/// The most of a tool's successful cases tried on a fresh process to find the call.
const MAX_TRIES: usize = 3;
/// How long a reader may take when the run picks it.
///
/// Why: it is read twice around every read-only tool; a slow one would cost the run more than
/// it tells.
const QUICK: std::time::Duration = std::time::Duration::from_millis(1500);
/// The least time between a run's two readings of each candidate reader.
///
/// Why: clocks shown to the second are common (`created at 2:31:34 AM`); two readings a few
/// milliseconds apart do not tell them, and a reader that changes on its own costs a search on
/// fresh processes later.
const TICK: std::time::Duration = std::time::Duration::from_millis(1100);
/// Characters of a reader's answer quoted in a finding.
const QUOTED: usize = 160;

/// One reader: a request that shows some of the server's state.
#[derive(Debug, Clone)]
struct Reader {
    /// `tool recall`, `resources/list`, `resources/read memo://a`, `prompts/list`.
    name: String,
    /// The tool, for a tool that reads (called with `{}`).
    tool: Option<String>,
    method: &'static str,
    params: Value,
}

/// The readers a run reads around each read-only tool, and what they answered last.
#[derive(Debug, Default)]
pub(crate) struct Readers {
    readers: Vec<Reader>,
    /// Readers left out since: one changed around a tool's cases and no call of the tool
    /// changed it again (it changes with time, or with a restart).
    dropped: std::sync::Mutex<Vec<bool>>,
}

/// What every reader answered at one moment (`None`: no answer it could compare).
pub(crate) type Reading = Vec<Option<Value>>;

impl Readers {
    /// Picks the readers of `listing` and the server's capabilities, each read twice on
    /// `slot` (a process of its own: the reads are calls the campaign's processes do not
    /// count), [`TICK`] apart: only those that answered the same both times are kept.
    pub(crate) async fn pick(
        listing: &Listing,
        capabilities: &Value,
        slot: &mut Instance<'_>,
    ) -> Self {
        let mut candidates: Vec<Reader> = listing
            .tools
            .iter()
            .filter(|t| t.read_only_hint() == Some(true) && no_required_input(t.input()))
            .filter(|t| reads(&t.name))
            .take(MAX_TOOLS)
            .map(|t| Reader {
                name: format!("tool {}", t.name),
                tool: Some(t.name.clone()),
                method: "tools/call",
                params: Value::Null,
            })
            .collect();
        let has = |c: &str| capabilities.get(c).is_some_and(|v| !v.is_null());
        if has("resources") {
            let list = Reader {
                name: "resources/list".into(),
                tool: None,
                method: "resources/list",
                params: json!({}),
            };
            if let Some(Value::Object(r)) = read(&list, slot).await {
                let uris = r.get("resources").and_then(Value::as_array).into_iter().flatten();
                candidates.extend(
                    uris.filter_map(|x| x.get("uri")?.as_str()).take(MAX_RESOURCES).map(|uri| {
                        Reader {
                            name: format!("resources/read {uri}"),
                            tool: None,
                            method: "resources/read",
                            params: json!({"uri": uri}),
                        }
                    }),
                );
            }
            candidates.push(list);
        }
        if has("prompts") {
            candidates.push(Reader {
                name: "prompts/list".into(),
                tool: None,
                method: "prompts/list",
                params: json!({}),
            });
        }
        // Every candidate read, then read again a clock's tick later: an answer that holds the
        // time to the second (a resource "created at 2:31:34 AM") is no reader.
        let began = std::time::Instant::now();
        let mut first = Vec::with_capacity(candidates.len());
        for reader in &candidates {
            first.push(quickly(read(reader, slot)).await.flatten());
        }
        if first.iter().any(Option::is_some) {
            tokio::time::sleep(TICK.saturating_sub(began.elapsed())).await;
        }
        let mut readers = Vec::new();
        for (reader, first) in candidates.into_iter().zip(first) {
            if first.is_some() && first == quickly(read(&reader, slot)).await.flatten() {
                readers.push(reader);
            }
        }
        let dropped = std::sync::Mutex::new(vec![false; readers.len()]);
        Self { readers, dropped }
    }

    fn is_dropped(&self, i: usize) -> bool {
        self.dropped.lock().map_or(true, |d| d.get(i).copied().unwrap_or(true))
    }

    fn drop_reader(&self, i: usize) {
        if let Ok(mut d) = self.dropped.lock()
            && let Some(flag) = d.get_mut(i)
        {
            *flag = true;
        }
    }

    /// Whether there is nothing to read around `tool`'s cases: no readers left, or `tool` is
    /// the only one (its own answers were stable when picked).
    pub(crate) fn none_for(&self, tool: &str) -> bool {
        self.readers
            .iter()
            .enumerate()
            .all(|(i, r)| self.is_dropped(i) || r.tool.as_deref() == Some(tool))
    }

    /// The readers still read, by index.
    pub(super) fn live(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.readers.len()).filter(|&i| !self.is_dropped(i))
    }

    /// The name of reader `i` (`tool recall`, `resources/list`).
    pub(super) fn name(&self, i: usize) -> &str {
        self.readers.get(i).map_or("", |r| r.name.as_str())
    }

    /// What reader `i` answers now.
    pub(super) async fn read_one(&self, i: usize, slot: &mut Instance<'_>) -> Option<Value> {
        read(self.readers.get(i)?, slot).await
    }

    /// What every reader answers now.
    pub(crate) async fn read(&self, slot: &mut Instance<'_>) -> Reading {
        let mut out = Vec::with_capacity(self.readers.len());
        for reader in &self.readers {
            out.push(read(reader, slot).await);
        }
        out
    }

    /// The first reader still read that answered in both readings and differently.
    pub(super) fn changed(&self, before: &Reading, after: &Reading) -> Option<usize> {
        (0..self.readers.len()).find(|&i| {
            !self.is_dropped(i) && matches!((&before[i], &after[i]), (Some(a), Some(b)) if a != b)
        })
    }

    /// Judges a read-only tool's cases by the readers: `before` was read before them; a
    /// reader that answers differently now is put on a call of the tool that changes it again
    /// on a fresh process (read, read again unchanged, call, read).
    pub(crate) async fn judge(
        &self,
        before: &Reading,
        started: &Started<'_>,
        slot: &mut Instance<'_>,
    ) -> Option<Finding> {
        let after = self.read(slot).await;
        let moved = self.changed(before, &after)?;
        let tool = started.tool;
        let mut order: Vec<&super::worker::Done> =
            started.done.iter().filter(|d| matches!(d.outcome, Outcome::Ok)).collect();
        // The smallest first: the finding shows the call, which is not shrunk.
        let size = |d: &&super::worker::Done| {
            let args = &started.cases[d.index].arguments;
            (args.len(), Value::Object(args.clone()).to_string().len(), d.index)
        };
        order.sort_by_key(size);
        for d in order.into_iter().take(MAX_TRIES) {
            let arguments = &started.cases[d.index].arguments;
            // Twice with the call, and once without it for as long as the call took: a reader
            // that changes with time alone (a clock of a coarse tick) is not put on the call.
            let Some((i, first, then, took)) = self.with_call(tool, arguments, slot).await else {
                continue;
            };
            if self.with_call(tool, arguments, slot).await.is_none()
                || self.on_its_own(slot, took).await
            {
                continue;
            }
            let (was, is) = difference(first[i].as_ref(), then[i].as_ref());
            return Some(Finding {
                arguments: Some(arguments.clone()),
                ..Finding::general(
                    Some(tool.name.clone()),
                    FindingKind::AnnotationMismatch,
                    Severity::Failure,
                    format!(
                        "declares readOnlyHint: true, but after a call the server's {} \
                         answers differently (before: {was}; after: {is}); clients run \
                         read-only tools without asking",
                        self.readers[i].name,
                    ),
                )
            });
        }
        // No call of the tool changed it again: it changes on its own, and is read no more.
        self.drop_reader(moved);
        None
    }
}

/// `read` within [`QUICK`], else `None` (the request is dropped).
async fn quickly<T>(read: impl std::future::Future<Output = T>) -> Option<T> {
    tokio::time::timeout(QUICK, read).await.ok()
}

/// Whether a tool's name starts with a verb of reading (`list_notes`, `getStatus`, `recall`):
/// a tool without required input may still be one that works for a while when called with
/// nothing (`trigger-long-running-operation`), which is no reader.
fn reads(name: &str) -> bool {
    let first: String = name.chars().take_while(|c| c.is_ascii_lowercase()).collect();
    READING_VERBS.contains(&first.as_str())
}

/// The verbs [`reads`] knows.
const READING_VERBS: &[&str] = &[
    "list", "get", "read", "show", "view", "search", "find", "count", "recall", "describe",
    "status", "info", "whoami", "current", "query", "lookup",
];

impl Readers {
    /// On a fresh process: read, read again (unchanged), call `tool`, read. The first reader
    /// the call changed, the readings before and after, and how long the call took.
    async fn with_call(
        &self,
        tool: &crate::transport::listing::Tool,
        arguments: &Map<String, Value>,
        slot: &mut Instance<'_>,
    ) -> Option<(usize, Reading, Reading, std::time::Duration)> {
        slot.renew().await;
        let _ = slot.ready().await;
        let first = self.read(slot).await;
        if self.changed(&first, &self.read(slot).await).is_some() {
            return None; // it changes on its own here: nothing to put on the call
        }
        let began = std::time::Instant::now();
        let _ = slot.call(&tool.name, arguments, None, Keep::default()).await;
        let took = began.elapsed();
        let then = self.read(slot).await;
        let i = self.changed(&first, &then)?;
        Some((i, first, then, took))
    }

    /// Whether a reader changes on a fresh process with no call, over `took` (and a little
    /// more).
    pub(super) async fn on_its_own(
        &self,
        slot: &mut Instance<'_>,
        took: std::time::Duration,
    ) -> bool {
        slot.renew().await;
        let _ = slot.ready().await;
        let first = self.read(slot).await;
        tokio::time::sleep(took + std::time::Duration::from_millis(50)).await;
        self.changed(&first, &self.read(slot).await).is_some()
    }
}

/// Where two readings differ, as a short excerpt of each: a tool's text when the texts differ,
/// else the JSON from a little before the first difference.
pub(super) fn difference(a: Option<&Value>, b: Option<&Value>) -> (String, String) {
    let (ta, tb) = (shown(a), shown(b));
    let (ta, tb) = if ta == tb {
        let (ja, jb) = (
            a.map_or_else(String::new, Value::to_string),
            b.map_or_else(String::new, Value::to_string),
        );
        let at =
            ja.char_indices().zip(jb.chars()).find(|((_, x), y)| x != y).map_or(0, |((i, _), _)| i);
        let mut from = at.saturating_sub(40);
        while !ja.is_char_boundary(from) {
            from -= 1;
        }
        let cut = |j: &str| format!("…{}", j.get(from..).unwrap_or(j));
        (cut(&ja), cut(&jb))
    } else {
        (ta, tb)
    };
    let clip = |t: &str| mcp_fuzz_generators::text::clip(t, QUOTED);
    (clip(&ta), clip(&tb))
}

/// Whether a tool can be called with `{}`: its schema requires nothing at the top.
fn no_required_input(schema: &Value) -> bool {
    schema.get("required").and_then(Value::as_array).is_none_or(Vec::is_empty)
}

/// One reading of `reader`: its result without `_meta` (and a list's cursor), or `None` when
/// it did not answer with a result (an error, a timeout, a tool error).
async fn read(reader: &Reader, slot: &mut Instance<'_>) -> Option<Value> {
    let reply = if let Some(tool) = &reader.tool {
        // A call like any other: counted on its process and kept in its history.
        let keep = Keep { result: true, ..Keep::default() };
        let called = slot.call(tool, &Map::new(), None, keep).await.ok()?;
        match called.outcome {
            Outcome::Ok => Reply::Result(called.result?),
            _ => return None,
        }
    } else {
        slot.request(reader.method, reader.params.clone()).await.ok()?.0
    };
    let Reply::Result(Value::Object(mut result)) = reply else { return None };
    if result.get("isError") == Some(&Value::Bool(true)) {
        return None;
    }
    result.remove("_meta");
    result.remove("nextCursor");
    Some(Value::Object(result))
}

/// A reader's answer in a finding: a tool's text, else the JSON.
pub(super) fn shown(v: Option<&Value>) -> String {
    let Some(v) = v else { return "no answer".into() };
    let texts: Vec<&str> = v
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|c| c.get("text")?.as_str())
        .collect();
    if texts.is_empty() { v.to_string() } else { format!("`{}`", texts.join(" ")) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reader_is_a_tool_without_required_input_and_its_text_is_quoted() {
        assert!(reads("list_notes") && reads("getStatus") && reads("recall") && reads("get-env"));
        assert!(!reads("trigger-long-running-operation") && !reads("Delete") && !reads("add"));
        assert!(no_required_input(&json!({"type": "object"})));
        assert!(no_required_input(&json!({"type": "object", "required": []})));
        assert!(!no_required_input(&json!({"type": "object", "required": ["id"]})));
        let r = json!({"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]});
        assert_eq!(shown(Some(&r)), "`a b`");
        assert_eq!(shown(Some(&json!({"prompts": []}))), r#"{"prompts":[]}"#);
        assert_eq!(shown(None), "no answer");
        let a = json!({"content": [{"type": "text", "text": "same"}], "n": 1});
        let b = json!({"content": [{"type": "text", "text": "same"}], "n": 2});
        let (was, is) = difference(Some(&a), Some(&b));
        assert!(was.ends_with("\"n\":1}") && is.ends_with("\"n\":2}"), "{was} / {is}");
    }
}
