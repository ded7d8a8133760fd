//! Do the tools do what their annotations say? What a tool claims ([`claimed`], and keys that
//! clients ignore because they are misspelled: [`misnamed`]), and what its calls did to the
//! sandbox: the tree is hashed before and after the tool's cases ([`Before`]); a change is put
//! on the call that makes it again (each case replayed on a tree put back as it was), shrunk,
//! and judged against the hints ([`Before::judge`]).
//!
//! Where this is silent it takes the view of a client that auto-approves read-only tools:
//! anything a read-only tool changes is a failure, and a change no call of the tool repeats is
//! not blamed on it.
//!
//! See: issue 32; <https://modelcontextprotocol.io/specification/2025-11-25/server/tools#tool-annotations>.

use super::readers::{Readers, Reading};
use super::shrink::candidates;
use super::start::Started;
use crate::config::RunConfig;
use crate::finding::{FindingKind, Severity};
use crate::judge::{Outcome, looks_like_upstream};
use crate::report::{AnnotationCheck, AnnotationVerdict, Finding};
use crate::sandbox::tree::{Changes, Snapshot};
use crate::server::{Instance, Keep};
use crate::transport::listing::{Listing, Tool};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// The hints clients read, by their exact names.
pub const HINTS: [&str; 4] = ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"];

/// The most cases replayed to find the call that changed files.
///
/// Why: the first calls that succeed are tried first, and a tool that writes does so on most
/// of its successful calls; a change that 24 replays do not repeat is not the tool's.
const MAX_REPLAYS: usize = 24;
/// The most shrinking tries for the call that changed files.
const MAX_SHRINK_TRIES: usize = 64;
/// The longest the search for the call may take, past which what was found is reported.
const SEARCH_TIME: Duration = Duration::from_secs(20);
/// Paths named in a finding's message.
const PATHS_SHOWN: usize = 5;

/// The hints `tool` declares, as booleans.
#[must_use]
pub fn claimed(tool: &Tool) -> BTreeMap<String, bool> {
    let Some(a) = tool.raw.get("annotations").and_then(Value::as_object) else {
        return BTreeMap::new();
    };
    HINTS
        .iter()
        .filter_map(|h| a.get(*h).and_then(Value::as_bool).map(|b| ((*h).to_owned(), b)))
        .collect()
}

/// The annotation keys of `tool` that are a hint misspelled (case, `_` or `-`, a missing
/// `Hint`): one warning each, naming the hint that was meant.
#[must_use]
pub fn misnamed(tool: &Tool) -> Vec<Finding> {
    let Some(a) = tool.raw.get("annotations").and_then(Value::as_object) else {
        return Vec::new();
    };
    let squash = |k: &str| -> String {
        k.chars().filter(|c| *c != '_' && *c != '-').flat_map(char::to_lowercase).collect()
    };
    a.iter()
        .filter(|(key, _)| !HINTS.contains(&key.as_str()))
        .filter_map(|(key, value)| {
            let k = squash(key);
            let meant = HINTS.iter().find(|h| {
                let h = squash(h);
                k == h || Some(k.as_str()) == h.strip_suffix("hint")
            })?;
            let ignored = if a.contains_key(*meant) {
                format!("; the tool also declares `{meant}`, which is what clients read")
            } else {
                format!("; clients read `{meant}` as absent")
            };
            Some(Finding::general(
                Some(tool.name.clone()),
                FindingKind::MisnamedAnnotation,
                Severity::Warning,
                format!(
                    "annotation `{key}: {value}` is not a hint clients read: rename it `{meant}`{ignored}"
                ),
            ))
        })
        .collect()
}

/// What the sandbox check made of a tool: its annotations section, and a finding when they
/// disagree.
pub(crate) type Effects = (AnnotationCheck, Vec<Finding>);

/// The readers of the server's state a sandboxed run reads around each read-only tool
/// (none without a sandbox).
pub(crate) async fn readers(
    cfg: &RunConfig,
    listing: &Listing,
    slot: &mut Instance<'_>,
) -> Readers {
    if cfg.server.connect.sandbox.is_none() {
        return Readers::default();
    }
    let capabilities = slot.connection().map(|c| c.capabilities.clone()).unwrap_or_default();
    let mut own = Instance::new(&cfg.server, None);
    let readers = Readers::pick(listing, &capabilities, &mut own).await;
    own.close().await;
    readers
}

/// [`Before::judge`], the readers' verdict on a read-only tool whose files said nothing, and
/// [`reaches_out`], when the run has a sandbox.
pub(crate) async fn judged(
    before: Option<Before>,
    started: &Started<'_>,
    slot: &mut Instance<'_>,
    readers: &Readers,
) -> Option<Effects> {
    let before = before?;
    let reading = before.reading.clone();
    let (mut check, mut finding) = before.judge(started, slot).await;
    if let (None, Some(reading)) = (&finding, reading) {
        finding = readers.judge(&reading, started, slot).await;
        if finding.is_some() {
            check.verdict = AnnotationVerdict::Mismatch;
            check.note = Some("readOnlyHint, but the server's state changed".into());
        }
    }
    // On a process of its own: the writes must not change the state the cases built, which
    // values fed to later tools come from.
    let mut own = slot.sibling();
    let writes = before.writes(started, &mut own, readers).await;
    own.close().await;
    if let Some(note) = writes.note {
        check.verdict = AnnotationVerdict::Mismatch;
        check.note = Some(note);
    }
    let all = finding.into_iter().chain(writes.findings).chain(reaches_out(started));
    Some((check, all.collect()))
}

/// A warning for a tool that declares `openWorldHint: false` and whose calls show network
/// attempts (a connection or DNS error in an answer, read as the upstream detection reads
/// them), with the first such answer.
#[must_use]
pub(crate) fn reaches_out(started: &Started<'_>) -> Option<Finding> {
    let tool = started.tool;
    if claimed(tool).get("openWorldHint") != Some(&false) {
        return None;
    }
    // The tool's own words only: a transport's failure (an HTTP 502 page) is not the tool's.
    let (done, evidence) = started.done.iter().find_map(|d| match &d.outcome {
        Outcome::UpstreamTimeout { evidence } => Some((d, evidence.as_str())),
        Outcome::ToolError { text: m, .. }
        | Outcome::UnflaggedError { text: m }
        | Outcome::HandlerException { text: m }
        | Outcome::InternalError { message: m, .. }
        | Outcome::RpcError { message: m, .. } => looks_like_upstream(m).then_some((d, m.as_str())),
        _ => None,
    })?;
    let evidence = mcp_fuzz_generators::text::clip(evidence.lines().next().unwrap_or(""), 200);
    Some(Finding {
        arguments: Some(started.cases[done.index].arguments.clone()),
        ..Finding::general(
            Some(tool.name.clone()),
            FindingKind::AnnotationMismatch,
            Severity::Warning,
            format!(
                "declares a closed world (openWorldHint: false) but reaches out: a call was \
                 answered `{evidence}`; declare openWorldHint: true if it talks to the network"
            ),
        )
    })
}

/// The sandbox as it was before a tool's cases.
pub(crate) struct Before {
    pub(super) snapshot: Snapshot,
    pub(super) dirs: Vec<PathBuf>,
    pub(super) sandbox: std::sync::Arc<crate::sandbox::Sandbox>,
    /// What the readers answered, for a read-only tool.
    reading: Option<Reading>,
}

impl Before {
    /// The watched tree now, when the run has a sandbox: its working directory and `HOME`
    /// (`TMPDIR` is the server's to use), and the declared roots; and, for a read-only tool,
    /// what the readers answer.
    pub(crate) async fn take(
        cfg: &RunConfig,
        tool: &Tool,
        readers: &Readers,
        slot: &mut Instance<'_>,
    ) -> Option<Self> {
        let sandbox = std::sync::Arc::clone(cfg.server.connect.sandbox.as_ref()?);
        let mut dirs = sandbox.watched();
        let root = sandbox.root();
        dirs.extend(cfg.server.connect.roots.iter().filter(|r| !r.starts_with(root)).cloned());
        let read_only = claimed(tool).get("readOnlyHint") == Some(&true);
        let reading = if read_only && !readers.none_for(&tool.name) {
            Some(readers.read(slot).await)
        } else {
            None
        };
        Some(Self { snapshot: Snapshot::take(&dirs, None), dirs, sandbox, reading })
    }

    /// What the tool's cases did, judged against its hints: the annotations section of its
    /// line, and a finding when they disagree. A change is put on the call that makes it again
    /// on `slot`, with the tree put back as it was before each try.
    pub(crate) async fn judge(
        &self,
        started: &Started<'_>,
        slot: &mut Instance<'_>,
    ) -> (AnnotationCheck, Option<Finding>) {
        let tool = started.tool;
        let claimed = claimed(tool);
        let check = |verdict, files: Vec<String>, note: Option<String>| AnnotationCheck {
            claimed: claimed.clone(),
            files,
            verdict,
            note,
        };
        let name = |p: &std::path::Path| self.sandbox.name(p);
        let after = Snapshot::take(&self.dirs, Some(&self.snapshot));
        if let Some(why) = after.over.as_ref().or(self.snapshot.over.as_ref()) {
            let note = format!("the sandbox holds {why}: not compared");
            return (check(AnnotationVerdict::Unchecked, Vec::new(), Some(note)), None);
        }
        let changes = self.snapshot.changes(&after);
        if changes.is_empty() {
            return (check(AnnotationVerdict::Consistent, Vec::new(), None), None);
        }
        let read_only = claimed.get("readOnlyHint") == Some(&true);
        let unannotated = tool.raw.get("annotations").is_none_or(Value::is_null);
        if !read_only {
            let files = changes.paths(name);
            if !unannotated {
                return (check(AnnotationVerdict::Consistent, files, None), None);
            }
            let finding = Finding::general(
                Some(tool.name.clone()),
                FindingKind::AnnotationMismatch,
                Severity::Info,
                format!(
                    "its calls {} and it declares no annotations: annotate it (readOnlyHint: \
                     false, and destructiveHint as it is) so clients know it writes",
                    changes.words(name, PATHS_SHOWN)
                ),
            );
            return (check(AnnotationVerdict::Unannotated, files, None), Some(finding));
        }
        let found = self.culprit(started, slot, &after).await;
        let Some(Culprit { arguments, minimal, changes: by_call }) = found else {
            let note = format!(
                "{} while its cases ran, but no call of it did so again",
                changes.words(name, PATHS_SHOWN)
            );
            return (check(AnnotationVerdict::Unexplained, changes.paths(name), Some(note)), None);
        };
        let files = changes.paths(name);
        let escapes = self.escapes(&after, &changes);
        let finding = Finding {
            arguments: Some(arguments),
            minimal_arguments: minimal,
            ..Finding::general(
                Some(tool.name.clone()),
                FindingKind::AnnotationMismatch,
                Severity::Failure,
                format!(
                    "declares readOnlyHint: true, but a call {} in its sandbox{escapes}; clients \
                     run read-only tools without asking",
                    by_call.words(name, PATHS_SHOWN)
                ),
            )
        };
        (check(AnnotationVerdict::Mismatch, files, None), Some(finding))
    }

    /// " (links out of the sandbox, not followed: a -> /etc)" for the links of `tree` among
    /// `changes` that point out of the sandbox, else nothing.
    fn escapes(&self, tree: &Snapshot, changes: &Changes) -> String {
        let out: Vec<String> = tree
            .escapes(self.sandbox.root())
            .into_iter()
            .filter(|(link, _)| changes.created.contains(link) || changes.changed.contains(link))
            .map(|(link, to)| format!("{} -> {}", self.sandbox.name(&link), to.display()))
            .collect();
        if out.is_empty() {
            String::new()
        } else {
            format!(" (links out of the sandbox, not followed: {})", out.join(", "))
        }
    }

    /// The first of the tool's cases that changes the tree again, replayed on a tree put back
    /// as it was (successful calls first), then shrunk while it still does. The tree is left as
    /// it was before the tool.
    async fn culprit(
        &self,
        started: &Started<'_>,
        slot: &mut Instance<'_>,
        after: &Snapshot,
    ) -> Option<Culprit> {
        let until = Instant::now() + SEARCH_TIME;
        let mut now = after.clone();
        let mut order: Vec<&super::worker::Done> = started.done.iter().collect();
        order.sort_by_key(|d| (!matches!(d.outcome, Outcome::Ok), d.index));
        let mut found = None;
        for d in order.into_iter().take(MAX_REPLAYS) {
            if Instant::now() >= until {
                break;
            }
            let arguments = &started.cases[d.index].arguments;
            let (changes, tree) = self.try_call(started.tool, arguments, slot, &now).await;
            now = tree;
            if changes.is_empty() {
                continue;
            }
            // Twice, so that a spare starting meanwhile is not taken for the call.
            let (again, tree) = self.try_call(started.tool, arguments, slot, &now).await;
            now = tree;
            if !again.is_empty() {
                found = Some(Culprit { arguments: arguments.clone(), minimal: None, changes });
                break;
            }
        }
        let mut culprit = found?;
        let mut best = culprit.arguments.clone();
        let mut tries = 0;
        'shrink: while self.snapshot.restorable() && Instant::now() < until {
            let root = Value::Object(best.clone());
            for candidate in candidates(&root) {
                let Value::Object(smaller) = candidate else { continue };
                tries += 1;
                if tries > MAX_SHRINK_TRIES || Instant::now() >= until {
                    break 'shrink;
                }
                let (changes, tree) = self.try_call(started.tool, &smaller, slot, &now).await;
                now = tree;
                if !changes.is_empty() {
                    best = smaller;
                    culprit.changes = changes;
                    continue 'shrink;
                }
            }
            break;
        }
        if best != culprit.arguments {
            culprit.minimal = Some(best);
        }
        if self.snapshot.restorable() {
            let _ = self.snapshot.restore(&now);
        }
        Some(culprit)
    }

    /// Puts the tree back as it was before the tool (when it can), calls the tool once on a
    /// process already started (what a start writes is not the call's) and says what the call
    /// changed, with the tree after it.
    async fn try_call(
        &self,
        tool: &Tool,
        arguments: &Map<String, Value>,
        slot: &mut Instance<'_>,
        now: &Snapshot,
    ) -> (Changes, Snapshot) {
        let _ = slot.ready().await;
        let from = self.put_back(now);
        let _ = slot.call(&tool.name, arguments, None, Keep::default()).await;
        let tree = Snapshot::take(&self.dirs, Some(&from));
        (from.changes(&tree), tree)
    }
}

impl Before {
    /// Puts the tree back as it was before the tool, when it can, given it was last seen as
    /// `last` (whose hashes are reused); the tree as it is then.
    pub(super) fn put_back(&self, last: &Snapshot) -> Snapshot {
        let now = Snapshot::take(&self.dirs, Some(last));
        if self.snapshot.restorable() && self.snapshot.restore(&now).is_ok() {
            return self.snapshot.clone();
        }
        now
    }
}

/// The call that changed files, and what it changed.
struct Culprit {
    arguments: Map<String, Value>,
    minimal: Option<Map<String, Value>>,
    changes: Changes,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(annotations: Value) -> Tool {
        Tool::parse_listed(&json!({"name": "t", "inputSchema": {}, "annotations": annotations}))
            .expect("a tool")
    }

    #[test]
    fn misspelled_hints_are_named_with_the_hint_meant() {
        let t = tool(json!({"readonlyHint": true, "read_only_hint": true, "destructive": false,
            "title": "T", "openWorldHint": false}));
        let words: Vec<String> = misnamed(&t).into_iter().map(|f| f.message).collect();
        assert_eq!(words.len(), 3, "{words:?}");
        assert!(words.iter().all(|w| w.contains("rename it")), "{words:?}");
        assert!(
            words
                .iter()
                .any(|w| w.contains("`destructive: false`") && w.contains("`destructiveHint`"))
        );
        assert!(
            words.iter().any(|w| w.contains("`readonlyHint: true`") && w.contains("as absent"))
        );
        assert!(misnamed(&tool(json!({"readOnlyHint": true, "title": "x"}))).is_empty());
        assert_eq!(claimed(&t), BTreeMap::from([("openWorldHint".to_owned(), false)]));
    }
}
