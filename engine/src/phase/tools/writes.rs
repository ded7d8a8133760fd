//! What a tool that writes does to what the server shows, against its hints (issue 32, items 2
//! and 3). Run on tools that are not read-only (called with `--include-destructive`) in a
//! sandbox, each try on a fresh process with the tree put back as it was before the tool:
//! - `destructiveHint: false`: nothing a reader showed or a file held before a call is gone
//!   after it ([`lost`]): the update is additive;
//! - `idempotentHint: true`: a second call with the same arguments leaves the readers and the
//!   files as the first call left them;
//! - round trips: a string written with a newline, a tab, quotes, non-ASCII text or a leading
//!   `#` or `-` reads back unchanged from the reader that shows it ([`Before::round_trip`]).
//!
//! Each is a warning: hints promise what a client may repeat or approve without asking again,
//! and a store that splits a written value on a newline hands a model a record it never wrote.
//!
//! See: issue 32; <https://modelcontextprotocol.io/specification/2025-11-25/schema#toolannotations>.

use super::annotations::{Before, claimed};
use super::readers::{Readers, difference, shown};
use super::shrink::candidates;
use super::start::Started;
use crate::finding::{FindingKind, Severity};
use crate::judge::Outcome;
use crate::report::Finding;
use crate::sandbox::tree::Snapshot;
use crate::server::{Instance, Keep};
use crate::transport::listing::Tool;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// The most of a tool's successful cases tried for a hint.
const MAX_TRIES: usize = 3;
/// The most string fields of a tool tried for a round trip.
const MAX_FIELDS: usize = 2;
/// The most shrinking tries for a write that does not read back.
const MAX_SHRINK_TRIES: usize = 32;
/// Lost pieces named in a finding.
const SHOWN: usize = 3;
/// Characters of a reader's answer quoted around a written value.
const QUOTED: usize = 120;

/// The written values of a round trip: what each holds, and the value with `{m}` standing for a
/// marker of the write.
const VARIANTS: [(&str, &str); 6] = [
    ("a newline", "{m}\nsecond line"),
    ("a tab", "{m}\tafter a tab"),
    ("quotes", "{m} \"double\" 'single'"),
    ("non-ASCII text", "{m} é ✓ 日本 🙂"),
    ("a leading #", "# {m}"),
    ("a leading -", "- {m}"),
];

/// What the write checks found: warnings, and a note for the tool's annotations line when a
/// hint was broken.
#[derive(Default)]
pub(crate) struct Writes {
    pub findings: Vec<Finding>,
    pub note: Option<String>,
}

/// What a call (and a second one like it) did on a fresh process.
struct Seen {
    /// What the call took away, as words (`tool recall no longer shows `first``).
    lost: Vec<String>,
    /// What a second identical call changed beyond the first, as words.
    again: Option<String>,
    /// How long the first call took.
    took: Duration,
}

impl Before {
    /// The hint checks and round trips of a tool that is not read-only (see the module), each
    /// on a process of its own; the tree is put back as it was before the tool afterwards.
    pub(crate) async fn writes(
        &self,
        started: &Started<'_>,
        slot: &mut Instance<'_>,
        readers: &Readers,
    ) -> Writes {
        let claimed = claimed(started.tool);
        if claimed.get("readOnlyHint") == Some(&true) {
            return Writes::default();
        }
        let additive = claimed.get("destructiveHint") == Some(&false);
        let idempotent = claimed.get("idempotentHint") == Some(&true);
        let order = successful(started);
        let mut out = Writes::default();
        if additive || idempotent {
            out = self.hints(started.tool, &order, slot, readers, (additive, idempotent)).await;
        }
        if let Some(f) = self.round_trip(started, &order, slot, readers).await {
            out.findings.push(f);
        }
        self.put_back(&self.snapshot);
        out
    }

    /// `destructiveHint: false` and `idempotentHint: true` (as `want` says which to check),
    /// tried on the first successful cases; a break is seen twice, each time on a fresh
    /// process, and not when no call is made.
    async fn hints(
        &self,
        tool: &Tool,
        order: &[&Map<String, Value>],
        slot: &mut Instance<'_>,
        readers: &Readers,
        want: (bool, bool),
    ) -> Writes {
        let (mut additive, mut idempotent) = want;
        let mut out = Writes::default();
        for arguments in order.iter().take(MAX_TRIES) {
            if !additive && !idempotent {
                break;
            }
            let Some(seen) = self.twice(tool, arguments, slot, readers, idempotent).await else {
                continue;
            };
            let lost = additive && !seen.lost.is_empty();
            let again = idempotent && seen.again.is_some();
            if !lost && !again {
                continue;
            }
            let Some(confirm) = self.twice(tool, arguments, slot, readers, again).await else {
                continue;
            };
            if readers.on_its_own(slot, seen.took).await {
                continue;
            }
            let warn = |message: String| Finding {
                arguments: Some((*arguments).clone()),
                ..Finding::general(
                    Some(tool.name.clone()),
                    FindingKind::AnnotationMismatch,
                    Severity::Warning,
                    message,
                )
            };
            if lost && !confirm.lost.is_empty() {
                additive = false;
                out.note = Some("destructiveHint: false, but removed data".into());
                out.findings.push(warn(format!(
                    "declares destructiveHint: false (its updates only add), but a call took \
                     away what was there: {}; declare destructiveHint: true, clients ask before \
                     destructive tools",
                    seen.lost.iter().take(SHOWN).cloned().collect::<Vec<_>>().join("; ")
                )));
            }
            if let (true, Some(what)) = (again, confirm.again.or(seen.again)) {
                idempotent = false;
                out.note = Some("idempotentHint, but a second call did more".into());
                out.findings.push(warn(format!(
                    "declares idempotentHint: true, but the same call made twice does more than \
                     once: {what}; declare idempotentHint: false, clients retry idempotent \
                     tools freely"
                )));
            }
        }
        out
    }

    /// On a fresh process, with the tree as it was before the tool: the readers (twice, else
    /// `None`: they change on their own), one call (it must succeed), the readers, and a second
    /// identical call and the readers again when `second`.
    async fn twice(
        &self,
        tool: &Tool,
        arguments: &Map<String, Value>,
        slot: &mut Instance<'_>,
        readers: &Readers,
        second: bool,
    ) -> Option<Seen> {
        slot.renew().await;
        slot.ready().await.ok()?;
        let tree = self.put_back(&self.snapshot);
        let first = readers.read(slot).await;
        if readers.changed(&first, &readers.read(slot).await).is_some() {
            return None;
        }
        let began = Instant::now();
        succeeds(slot, tool, arguments).await.then_some(())?;
        let took = began.elapsed();
        let once = readers.read(slot).await;
        let tree_once = Snapshot::take(&self.dirs, Some(&tree));
        let name = |p: &std::path::Path| self.sandbox.name(p);
        let mut lost = Vec::new();
        for i in readers.live() {
            if let (Some(a), Some(b)) = (&first[i], &once[i]) {
                let gone = lost_pieces(&atoms(a), &atoms(b));
                if !gone.is_empty() {
                    lost.push(format!("{} no longer shows {}", readers.name(i), quoted(&gone)));
                }
            }
        }
        let changes = tree.changes(&tree_once);
        lost.extend(changes.removed.iter().map(|p| format!("removed {}", name(p))));
        for path in &changes.changed {
            let text = |s| Snapshot::bytes(s, path).and_then(|b| std::str::from_utf8(b).ok());
            if let (Some(a), Some(b)) = (text(&tree), text(&tree_once)) {
                let gone = lost_pieces(&text_atoms(a), &text_atoms(b));
                if !gone.is_empty() {
                    lost.push(format!("{} no longer holds {}", name(path), quoted(&gone)));
                }
            }
        }
        let mut again = None;
        if second && succeeds(slot, tool, arguments).await {
            let twice = readers.read(slot).await;
            let tree_twice = Snapshot::take(&self.dirs, Some(&tree_once));
            again = readers
                .changed(&once, &twice)
                .map(|i| {
                    let (was, is) = difference(once[i].as_ref(), twice[i].as_ref());
                    format!(
                        "{} answers {is} after the second call, {was} after the first",
                        readers.name(i)
                    )
                })
                .or_else(|| {
                    let c = tree_once.changes(&tree_twice);
                    (!c.is_empty()).then(|| format!("the second call {}", c.words(name, SHOWN)))
                });
        }
        Some(Seen { lost, again, took })
    }

    /// The first write, among [`VARIANTS`] in a free string field of the smallest successful
    /// case, that a reader shows changed (it shows the write's marker, not the value written);
    /// the write shrunk as long as it still does not read back. On one
    /// process (its state is what the reader shows).
    async fn round_trip(
        &self,
        started: &Started<'_>,
        order: &[&Map<String, Value>],
        slot: &mut Instance<'_>,
        readers: &Readers,
    ) -> Option<Finding> {
        let base = *order.first()?;
        let tool = started.tool;
        let valid =
            |args: &Map<String, Value>| started.generator.is_valid(&Value::Object(args.clone()));
        let mut marks = Marks::default();
        for field in free_strings(tool.input()).into_iter().take(MAX_FIELDS) {
            // The reader that shows what this field holds.
            let plain = with(base, &field, &marks.next());
            if !valid(&plain) || !succeeds(slot, tool, &plain).await {
                continue;
            }
            let mark = plain[&field].as_str().unwrap_or_default().to_owned();
            let mut shows = None;
            for i in readers.live() {
                if readers
                    .read_one(i, slot)
                    .await
                    .is_some_and(|r| strings(&r).any(|s| s.contains(&mark)))
                {
                    shows = Some(i);
                    break;
                }
            }
            let Some(reader) = shows else { continue };
            for (what, template) in VARIANTS {
                let write = with(base, &field, &template.replace("{m}", &marks.next()));
                if !valid(&write) {
                    continue;
                }
                let Some(read) = back(slot, tool, &write, &field, readers, reader).await else {
                    continue;
                };
                let minimal = self
                    .smallest(started, &write, &field, template, slot, readers, reader, &mut marks)
                    .await;
                let value = write[&field].as_str().unwrap_or_default();
                return Some(Finding {
                    arguments: Some(write.clone()),
                    minimal_arguments: (minimal != write).then_some(minimal),
                    ..Finding::general(
                        Some(tool.name.clone()),
                        FindingKind::RoundTripMismatch,
                        Severity::Warning,
                        format!(
                            "a write with {what} in `{field}` does not read back as written: \
                             `{field}` was {value:?}, and {} then shows {read}; store and show \
                             written text as given (escape what the store's format gives a \
                             meaning)",
                            readers.name(reader)
                        ),
                    )
                });
            }
        }
        None
    }

    /// `write` with its other fields shrunk (each try with a fresh marker in `field`) while
    /// the reader still shows it changed.
    #[expect(clippy::too_many_arguments, reason = "one search, its state passed down")]
    async fn smallest(
        &self,
        started: &Started<'_>,
        write: &Map<String, Value>,
        field: &str,
        template: &str,
        slot: &mut Instance<'_>,
        readers: &Readers,
        reader: usize,
        marks: &mut Marks,
    ) -> Map<String, Value> {
        let mut best = write.clone();
        let mut tries = 0;
        'shrink: loop {
            let root = Value::Object(best.clone());
            for candidate in candidates(&root) {
                let Value::Object(smaller) = candidate else { continue };
                if smaller.get(field) != best.get(field) {
                    continue;
                }
                tries += 1;
                if tries > MAX_SHRINK_TRIES {
                    break 'shrink;
                }
                let smaller = with(&smaller, field, &template.replace("{m}", &marks.next()));
                if !started.generator.is_valid(&Value::Object(smaller.clone())) {
                    continue;
                }
                if back(slot, started.tool, &smaller, field, readers, reader).await.is_some() {
                    best = smaller;
                    continue 'shrink;
                }
            }
            break;
        }
        best
    }
}

/// Makes the write and reads `reader`: what it shows around the write's marker when it shows
/// the marker but not the value written (`None`: it reads back, or the write failed, or the
/// reader does not show it).
async fn back(
    slot: &mut Instance<'_>,
    tool: &Tool,
    write: &Map<String, Value>,
    field: &str,
    readers: &Readers,
    reader: usize,
) -> Option<String> {
    let value = write.get(field)?.as_str()?;
    let mark = marker_of(value)?;
    succeeds(slot, tool, write).await.then_some(())?;
    let read = readers.read_one(reader, slot).await?;
    if reads_back(&read, value) || !strings(&read).any(|s| s.contains(mark)) {
        return None;
    }
    // From the start of the line that holds the marker, escaped as a string literal.
    let text = shown(Some(&read));
    let text = text.strip_prefix('`').and_then(|t| t.strip_suffix('`')).unwrap_or(&text);
    let at = text.find(mark).unwrap_or(0);
    let from = text[..at].rfind('\n').map_or(0, |i| i + 1);
    Some(format!("{:?}", mcp_fuzz_generators::text::clip(&text[from..], QUOTED)))
}

/// Numbered markers, one per write: `mcpfuzz1`, `mcpfuzz2`...
#[derive(Default)]
struct Marks(u32);

impl Marks {
    fn next(&mut self) -> String {
        self.0 += 1;
        format!("mcpfuzz{}", self.0)
    }
}

/// The marker a written value holds.
fn marker_of(value: &str) -> Option<&str> {
    let at = value.find("mcpfuzz")?;
    let end =
        value[at + 7..].find(|c: char| !c.is_ascii_digit()).map_or(value.len(), |e| at + 7 + e);
    Some(&value[at..end])
}

/// Whether `read` holds `value` as written: verbatim, or escaped as JSON writes it (with or
/// without non-ASCII as `\u` escapes), in any string of it.
fn reads_back(read: &Value, value: &str) -> bool {
    let json = Value::String(value.to_owned()).to_string();
    let json = &json[1..json.len() - 1];
    let mut ascii = String::new();
    for c in json.chars() {
        if c.is_ascii() {
            ascii.push(c);
        } else {
            let mut units = [0u16; 2];
            for u in c.encode_utf16(&mut units) {
                ascii.push_str(&format!("\\u{u:04x}"));
            }
        }
    }
    strings(read).any(|s| {
        s.contains(value) || s.contains(json) || s.to_lowercase().contains(&ascii.to_lowercase())
    })
}

/// Every string in `v`, at any depth.
fn strings(v: &Value) -> impl Iterator<Item = &str> {
    let mut stack = vec![v];
    std::iter::from_fn(move || {
        while let Some(v) = stack.pop() {
            match v {
                Value::String(s) => return Some(s.as_str()),
                Value::Array(a) => stack.extend(a.iter().rev()),
                Value::Object(o) => stack.extend(o.values().rev()),
                _ => {}
            }
        }
        None
    })
}

/// `arguments` with `field` set to `value`.
fn with(arguments: &Map<String, Value>, field: &str, value: &str) -> Map<String, Value> {
    let mut out = arguments.clone();
    out.insert(field.to_owned(), Value::String(value.to_owned()));
    out
}

/// The top-level string properties any text fits (no enum, const, format or pattern), in
/// schema order, required first.
fn free_strings(schema: &Value) -> Vec<String> {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let mut out: Vec<(bool, String)> = props
        .iter()
        .filter(|(_, p)| {
            let string = match p.get("type") {
                Some(Value::String(t)) => t == "string",
                Some(Value::Array(ts)) => ts.iter().any(|t| t == "string"),
                _ => false,
            };
            string && ["enum", "const", "format", "pattern"].iter().all(|k| p.get(*k).is_none())
        })
        .map(|(k, _)| (!required.contains(&k.as_str()), k.clone()))
        .collect();
    out.sort_by_key(|(optional, _)| *optional);
    out.into_iter().map(|(_, k)| k).collect()
}

/// The arguments of the tool's successful cases, smallest first.
fn successful<'a>(started: &'a Started<'_>) -> Vec<&'a Map<String, Value>> {
    let mut out: Vec<&Map<String, Value>> = started
        .done
        .iter()
        .filter(|d| matches!(d.outcome, Outcome::Ok))
        .map(|d| &started.cases[d.index].arguments)
        .collect();
    out.sort_by_key(|a| (a.len(), Value::Object((*a).clone()).to_string().len()));
    out.dedup();
    out
}

/// Calls `tool` once; whether it succeeded.
async fn succeeds(slot: &mut Instance<'_>, tool: &Tool, arguments: &Map<String, Value>) -> bool {
    let _ = slot.ready().await;
    slot.call(&tool.name, arguments, None, Keep::default())
        .await
        .is_ok_and(|c| matches!(c.outcome, Outcome::Ok))
}

/// The pieces of a reader's answer an additive update keeps, counted: every string in it, a
/// text (a `text` field: a tool's content, a resource's contents) read as [`text_atoms`], and
/// no `type` or `mimeType`.
fn atoms(v: &Value) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    let mut stack = vec![(None, v)];
    while let Some((key, v)) = stack.pop() {
        match v {
            Value::String(s) if key == Some("text") => {
                for (k, n) in text_atoms(s) {
                    *out.entry(k).or_default() += n;
                }
            }
            // The shape of an answer (`"type": "text"`) is no piece of what it shows.
            Value::String(_) if matches!(key, Some("type" | "mimeType")) => {}
            Value::String(s) => *out.entry(s.clone()).or_default() += 1,
            Value::Array(a) => stack.extend(a.iter().map(|x| (None, x))),
            Value::Object(o) => stack.extend(o.iter().map(|(k, x)| (Some(k.as_str()), x))),
            _ => {}
        }
    }
    out
}

/// The pieces of a text, counted: the strings of its JSON when it is JSON (a whole document,
/// or one per line), else its non-blank lines trimmed, with digits read as `#` (a count that
/// grew is no loss).
fn text_atoms(text: &str) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    let mut add = |k: String| *out.entry(k).or_default() += 1;
    if let Ok(v @ (Value::Object(_) | Value::Array(_))) = serde_json::from_str::<Value>(text) {
        strings(&v).for_each(|s| add(s.to_owned()));
        return out;
    }
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        match serde_json::from_str::<Value>(line) {
            Ok(v @ (Value::Object(_) | Value::Array(_))) => {
                strings(&v).for_each(|s| add(s.to_owned()));
            }
            _ => add(line.chars().map(|c| if c.is_ascii_digit() { '#' } else { c }).collect()),
        }
    }
    out
}

/// What `before` held more of than `after` holds. A reader that showed a single piece before (a
/// "No notes yet" line) and more after lost nothing: an empty store's message is not data.
fn lost_pieces(before: &BTreeMap<String, usize>, after: &BTreeMap<String, usize>) -> Vec<String> {
    let count = |m: &BTreeMap<String, usize>| m.values().sum::<usize>();
    if count(before) <= 1 && count(after) > count(before) {
        return Vec::new();
    }
    before
        .iter()
        .filter(|(k, n)| after.get(*k).copied().unwrap_or(0) < **n)
        .map(|(k, _)| k.clone())
        .collect()
}

/// "`a`, `b` and 3 more".
fn quoted(pieces: &[String]) -> String {
    let shown: Vec<String> = pieces
        .iter()
        .take(SHOWN)
        .map(|p| format!("`{}`", mcp_fuzz_generators::text::clip(p, 60)))
        .collect();
    let more = pieces.len().saturating_sub(SHOWN);
    if more > 0 { format!("{} and {more} more", shown.join(", ")) } else { shown.join(", ") }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn text(t: &str) -> Value {
        json!({"content": [{"type": "text", "text": t}]})
    }

    #[test]
    fn an_update_that_only_adds_loses_nothing_and_a_removal_is_named() {
        let before = atoms(&text("- first\n- second\n- third"));
        assert!(
            lost_pieces(&before, &atoms(&text("- first\n- second\n- third\n- 4th"))).is_empty()
        );
        assert_eq!(lost_pieces(&before, &atoms(&text("- first\n- third"))), ["- second"]);
        // A count that grew, an empty store's message and JSON that gained a field lose nothing.
        assert!(lost_pieces(&atoms(&text("3 notes")), &atoms(&text("4 notes"))).is_empty());
        assert!(lost_pieces(&atoms(&text("No notes yet.")), &atoms(&text("- a\n- b"))).is_empty());
        let graph = |obs: Value| {
            text(&json!({"entities": [{"name": "a", "observations": obs}]}).to_string())
        };
        // A resource's text is read as text too: an empty graph, pretty-printed, then one entity.
        let resource = |t: &str| json!({"contents": [{"uri": "m://g", "text": t}]});
        let empty = resource("{\n  \"entities\": [],\n  \"relations\": []\n}");
        let one = resource(r#"{"entities": [{"name": "a"}], "relations": []}"#);
        assert!(lost_pieces(&atoms(&empty), &atoms(&one)).is_empty());
        assert!(
            lost_pieces(&atoms(&graph(json!(["x"]))), &atoms(&graph(json!(["x", "y"])))).is_empty()
        );
        assert_eq!(
            lost_pieces(&atoms(&graph(json!(["x", "y"]))), &atoms(&graph(json!(["y"])))),
            ["x"]
        );
        // Two records alike: one of them gone is a loss.
        assert_eq!(lost_pieces(&atoms(&text("- a\n- a\n- b")), &atoms(&text("- a\n- b"))), ["- a"]);
        assert_eq!(
            quoted(&["a".into(), "b".into(), "c".into(), "d".into()]),
            "`a`, `b`, `c` and 1 more"
        );
    }

    #[test]
    fn a_value_reads_back_verbatim_or_escaped_as_json_writes_it() {
        let v = "mcpfuzz3\nsecond line";
        assert!(reads_back(&text("- mcpfuzz3\nsecond line"), v));
        assert!(reads_back(&text(r#"{"notes": ["mcpfuzz3\nsecond line"]}"#), v));
        assert!(!reads_back(&text("- mcpfuzz3\n- second line"), v));
        let u = "mcpfuzz4 é ✓ 日本 🙂";
        assert!(reads_back(&text(r#"["mcpfuzz4 \u00e9 \u2713 \u65e5\u672c \ud83d\ude42"]"#), u));
        assert!(!reads_back(&text("mcpfuzz4 ? ? ?? ?"), u));
        assert_eq!(marker_of("# mcpfuzz12\tx"), Some("mcpfuzz12"));
        assert_eq!(marker_of("mcpfuzz7"), Some("mcpfuzz7"));
        assert_eq!(marker_of("plain"), None);
    }

    #[test]
    fn free_strings_are_plain_string_properties_required_first() {
        let schema = json!({"type": "object", "required": ["body"], "properties": {
            "title": {"type": "string"}, "body": {"type": "string"},
            "kind": {"type": "string", "enum": ["a"]}, "url": {"type": "string", "format": "uri"},
            "n": {"type": "integer"}, "tag": {"type": ["string", "null"]}}});
        assert_eq!(free_strings(&schema), ["body", "title", "tag"]);
        assert!(free_strings(&json!({"type": "object"})).is_empty());
    }
}
