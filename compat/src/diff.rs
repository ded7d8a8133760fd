//! Comparing two tool surfaces: per tool and direction, a verdict with its evidence.

use crate::capture::{Capture, Tool};
use crate::dialect::to_2020_12;
use crate::prove::Prover;
use crate::rules::{self, Level};
use crate::witness::{self, Budget, Search};
use mcp_fuzz_generators::keywords::is_assertion;
use mcp_fuzz_generators::pointer::push;
use mcp_fuzz_generators::{Generator, SchemaError};
use serde_json::{Map, Value, json};
use std::time::{Duration, Instant};

/// The version of the JSON report, written as `diffVersion`.
pub const DIFF_VERSION: u64 = 1;

/// Default candidates per tool and direction.
///
/// Why: the targeted candidates (mutations of the target, boundary values of the source) come
/// first and are usually a few dozen; 300 leaves room for random values while 1,000 changed tools
/// still diff in well under a second.
pub const DEFAULT_MAX_CANDIDATES: usize = 300;

/// What a verdict says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Verdict {
    /// Proved: old clients keep working (or nothing changed).
    Compatible,
    /// A person should look (behaviour, descriptions, a removed output guarantee).
    Review,
    /// Neither proved nor shown broken within the bounds.
    Unknown,
    /// A witness (or a removed tool) shows old clients break.
    Breaking,
}

impl Verdict {
    /// `compatible`, `review`, `unknown` or `breaking`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Compatible => "compatible",
            Self::Review => "review",
            Self::Unknown => "unknown",
            Self::Breaking => "breaking",
        }
    }
}

/// What is compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Direction {
    /// The tool itself: presence, annotations, description, title.
    Tool,
    /// Old `inputSchema` ⊆ new `inputSchema`.
    Input,
    /// New `outputSchema` ⊆ old `outputSchema`.
    Output,
}

impl Direction {
    /// `tool`, `input` or `output`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Tool => "tool",
            Self::Input => "input",
            Self::Output => "output",
        }
    }
}

/// How witnesses that need undeclared properties count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenContent {
    /// As `review` (the default).
    Review,
    /// As `breaking`.
    Strict,
}

/// The bounds and policy of a diff.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Candidates per tool and direction.
    pub max_candidates: usize,
    /// Time for the whole diff; directions left when it runs out are `unknown`.
    pub time_budget: Duration,
    /// Seed of the random candidates.
    pub seed: u64,
    /// How open-content witnesses count.
    pub open_content: OpenContent,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            max_candidates: DEFAULT_MAX_CANDIDATES,
            time_budget: Duration::from_secs(10),
            seed: 0,
            open_content: OpenContent::Review,
        }
    }
}

/// One change found by comparing the schemas or the tools.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    /// The rule id (see [`rules::RULES`]).
    pub id: String,
    /// The rule's level.
    pub level: Level,
    /// Schema location (JSON pointer into the schema), empty for tool-level changes.
    pub pointer: String,
    /// What changed, in a few words.
    pub detail: String,
}

/// One tool and direction.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// The tool's name.
    pub tool: String,
    /// What is compared.
    pub direction: Direction,
    /// What was proved or shown for this tool and direction.
    pub verdict: Verdict,
    /// How the verdict counts for `--fail-on` (differs only for open-content witnesses).
    pub counted: Verdict,
    /// The changes seen.
    pub changes: Vec<Change>,
    /// Why the verdict (a proof note, the failed proof step, the exhausted bound...).
    pub reason: String,
    /// For a break: the shrunk witness.
    pub witness: Option<witness::Witness>,
    /// Candidates checked.
    pub candidates: usize,
}

/// The result of a diff.
#[derive(Debug, Clone, PartialEq)]
pub struct Diff {
    /// Every entry, by tool name then direction.
    pub entries: Vec<Entry>,
    /// Whether the time budget ran out.
    pub budget_exhausted: bool,
}

impl Diff {
    /// How many entries count as each verdict.
    #[must_use]
    pub fn counts(&self) -> [(Verdict, usize); 4] {
        [Verdict::Compatible, Verdict::Review, Verdict::Unknown, Verdict::Breaking]
            .map(|v| (v, self.entries.iter().filter(|e| e.counted == v).count()))
    }

    /// Whether no entry counts as one of `fail_on`.
    #[must_use]
    pub fn passes(&self, fail_on: &[Verdict]) -> bool {
        !self.entries.iter().any(|e| fail_on.contains(&e.counted))
    }
}

/// Compares two surfaces.
#[must_use]
pub fn diff(old: &Capture, new: &Capture, options: &Options) -> Diff {
    let deadline = Instant::now() + options.time_budget;
    let mut names: Vec<&str> =
        old.tools.iter().chain(&new.tools).map(|t| t.name.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    let mut entries = Vec::new();
    let mut budget_exhausted = false;
    for name in names {
        let (o, o_count) = first(old, name);
        let (n, n_count) = first(new, name);
        match (o, n) {
            (Some(_), None) => entries.push(tool_entry(
                name,
                Verdict::Breaking,
                vec![change("tool-removed", "", "the new surface does not list it")],
                "removed: old clients calling it fail",
            )),
            (None, Some(_)) => entries.push(tool_entry(
                name,
                Verdict::Compatible,
                vec![change("tool-added", "", "the old surface did not list it")],
                "added",
            )),
            (Some(o), Some(n)) => {
                let mut changes = tool_changes(o, n);
                if o_count > 1 || n_count > 1 {
                    changes.push(change("tool-duplicated", "", "listed more than once"));
                }
                if !changes.is_empty() {
                    let review = changes.iter().any(|c| c.level >= Level::Review);
                    let verdict = if review { Verdict::Review } else { Verdict::Compatible };
                    let reason = if review {
                        "behaviour or documentation changed"
                    } else {
                        "informational changes only"
                    };
                    entries.push(tool_entry(name, verdict, changes, reason));
                }
                let empty = json!({"type": "object"});
                let (oi, ni) = (
                    o.input_schema.as_ref().unwrap_or(&empty),
                    n.input_schema.as_ref().unwrap_or(&empty),
                );
                let input = judge(name, Direction::Input, oi, ni, options, deadline);
                budget_exhausted |= input.reason.contains("time budget");
                entries.push(input);
                let output = match (&o.output_schema, &n.output_schema) {
                    (None, None) => Entry {
                        reason: "no outputSchema in either version".into(),
                        ..blank(name, Direction::Output, Verdict::Compatible)
                    },
                    (None, Some(_)) => Entry {
                        changes: vec![change("output-schema-added", "", "a new output guarantee")],
                        reason: "an outputSchema was added".into(),
                        ..blank(name, Direction::Output, Verdict::Compatible)
                    },
                    (Some(_), None) => Entry {
                        changes: vec![change(
                            "output-schema-removed",
                            "",
                            "old clients may rely on the structure",
                        )],
                        reason: "the outputSchema was removed: a removed output guarantee".into(),
                        ..blank(name, Direction::Output, Verdict::Review)
                    },
                    (Some(os), Some(ns)) => {
                        judge(name, Direction::Output, ns, os, options, deadline)
                    }
                };
                budget_exhausted |= output.reason.contains("time budget");
                entries.push(output);
            }
            (None, None) => {}
        }
    }
    Diff { entries, budget_exhausted }
}

fn first<'c>(capture: &'c Capture, name: &str) -> (Option<&'c Tool>, usize) {
    let mut matching = capture.tools.iter().filter(|t| t.name == name);
    let first = matching.next();
    (first, usize::from(first.is_some()) + matching.count())
}

fn blank(tool: &str, direction: Direction, verdict: Verdict) -> Entry {
    Entry {
        tool: tool.to_owned(),
        direction,
        verdict,
        counted: verdict,
        changes: Vec::new(),
        reason: String::new(),
        witness: None,
        candidates: 0,
    }
}

fn tool_entry(tool: &str, verdict: Verdict, changes: Vec<Change>, reason: &str) -> Entry {
    Entry { changes, reason: reason.to_owned(), ..blank(tool, Direction::Tool, verdict) }
}

fn change(id: &str, pointer: &str, detail: &str) -> Change {
    let level = rules::rule(id).map_or(Level::Review, |r| r.level);
    Change { id: id.to_owned(), level, pointer: pointer.to_owned(), detail: detail.to_owned() }
}

/// Annotations, description and title.
fn tool_changes(old: &Tool, new: &Tool) -> Vec<Change> {
    let mut out = Vec::new();
    let hint = |t: &Tool, key: &str| {
        t.raw.get("annotations").and_then(|a| a.get(key)).and_then(Value::as_bool)
    };
    // (annotation, its default in the spec, the value whose loss is a behaviour change, id).
    let flips = [
        ("readOnlyHint", false, true, "annotation-readonly-dropped"),
        ("destructiveHint", true, false, "annotation-destructive-added"),
        ("idempotentHint", false, true, "annotation-idempotent-dropped"),
        ("openWorldHint", true, false, "annotation-openworld-added"),
    ];
    let shown = |v: Option<bool>, default: bool| match v {
        Some(b) => b.to_string(),
        None => format!("absent (= {default})"),
    };
    for (key, default, safe, id) in flips {
        let (o, n) = (hint(old, key), hint(new, key));
        let (eo, en) = (o.unwrap_or(default), n.unwrap_or(default));
        if eo == en {
            continue;
        }
        let detail = format!("{key}: {} -> {}", shown(o, default), shown(n, default));
        out.push(change(if eo == safe { id } else { "annotation-changed" }, "", &detail));
    }
    let text = |t: &Tool, key: &str| t.raw.get(key).and_then(Value::as_str).map(str::to_owned);
    if text(old, "description") != text(new, "description") {
        out.push(change("description-changed", "", "the description text differs"));
    }
    let title = |t: &Tool| {
        text(t, "title").or_else(|| {
            t.raw
                .get("annotations")
                .and_then(|a| a.get("title"))
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
    };
    if title(old) != title(new) {
        out.push(change("title-changed", "", "the title differs"));
    }
    out
}

/// Judges `source ⊆ target` for one tool and direction (for outputs the caller passes new as the
/// source and old as the target): a proof, else a witness search within the bounds.
fn judge(
    tool: &str,
    direction: Direction,
    source: &Value,
    target: &Value,
    options: &Options,
    deadline: Instant,
) -> Entry {
    let mut entry = blank(tool, direction, Verdict::Compatible);
    if source == target {
        entry.reason = "identical schemas".into();
        return entry;
    }
    let (sg, tg) = match (Generator::compile(source), Generator::compile(target)) {
        (Ok(s), Ok(t)) => (s, t),
        (Err(e), _) | (_, Err(e)) => return unreadable(entry, &e),
    };
    entry.changes = described_changes(direction, source, target, &sg, &tg);
    let not_proved = match proof(source, target, &sg, &tg) {
        Ok(()) => {
            entry.reason = "proved: every value the source allows, the target allows".into();
            return entry;
        }
        Err(reason) => reason,
    };
    if Instant::now() >= deadline {
        entry.verdict = Verdict::Unknown;
        entry.counted = Verdict::Unknown;
        entry.reason =
            format!("not proved ({not_proved}); time budget exhausted before a witness search");
        return entry;
    }
    let budget = Budget {
        max_candidates: options.max_candidates,
        deadline: Some(deadline),
        seed: options.seed ^ fnv(tool),
        objects_only: true,
    };
    match witness::search(&sg, &tg, &witness::declared_names(source), budget) {
        Search::Found(w, tried) => record_witness(&mut entry, w, tried, options.open_content),
        Search::NotFound { tried, timed_out } => {
            record_no_witness(&mut entry, tried, timed_out, &not_proved);
        }
    }
    entry
}

/// The entry of a direction whose schema cannot be compiled: `unknown`, with the reason.
fn unreadable(mut entry: Entry, e: &SchemaError) -> Entry {
    let which = if entry.direction == Direction::Output {
        "output-schema-unreadable"
    } else {
        "input-schema-unreadable"
    };
    entry.verdict = Verdict::Unknown;
    entry.changes.push(change(which, &e.pointer, &e.kind.to_string()));
    entry.reason = format!("a schema cannot be read: {e}");
    entry.counted = entry.verdict;
    entry
}

/// The descriptive changes of one direction, old to new, each schema in 2020-12 form by the
/// dialect its generator read.
fn described_changes(
    direction: Direction,
    source: &Value,
    target: &Value,
    sg: &Generator,
    tg: &Generator,
) -> Vec<Change> {
    let output = direction == Direction::Output;
    let (old, new) = if output { (target, source) } else { (source, target) };
    schema_changes(
        &to_2020_12(old, if output { tg.dialect() } else { sg.dialect() }),
        &to_2020_12(new, if output { sg.dialect() } else { tg.dialect() }),
        output,
    )
}

/// The structural proof of `source ⊆ target`, or why it failed; a `$ref` into a part the draft
/// rewrite moves is not proved at all.
fn proof(source: &Value, target: &Value, sg: &Generator, tg: &Generator) -> Result<(), String> {
    let moved = |schema: &Value, dialect| {
        crate::prove::refs(schema)
            .into_iter()
            .find(|r| crate::dialect::ref_may_have_moved(r, dialect))
            .map(str::to_owned)
    };
    match moved(source, sg.dialect()).or_else(|| moved(target, tg.dialect())) {
        Some(reference) => {
            Err(format!("`$ref` `{reference}` points into a part the draft rewrite moves"))
        }
        None => {
            let (ns, nt) = (to_2020_12(source, sg.dialect()), to_2020_12(target, tg.dialect()));
            // Arguments and structuredContent are JSON objects: only objects count at the root.
            Prover::new(&ns, &nt).objects_at_root().includes()
        }
    }
}

/// Records a witness: `breaking` (counted as `review` when it needs open content and the policy
/// says so), with the reason and, when nothing else was described, the keyword that rejected it.
fn record_witness(entry: &mut Entry, w: witness::Witness, tried: usize, open_content: OpenContent) {
    entry.candidates = tried;
    entry.verdict = Verdict::Breaking;
    entry.counted = if w.open_content && open_content == OpenContent::Review {
        Verdict::Review
    } else {
        Verdict::Breaking
    };
    let side = if entry.direction == Direction::Output {
        "the new outputSchema allows it, the old one"
    } else {
        "the old inputSchema accepts it, the new one"
    };
    entry.reason = format!(
        "witness: {side} rejects it at {} (`{}`){}",
        if w.pointer.is_empty() { "the root".to_owned() } else { format!("`{}`", w.pointer) },
        w.keyword,
        if w.open_content {
            "; it needs a property the source never declared (open content)"
        } else {
            ""
        }
    );
    if entry.changes.is_empty() {
        let prefix = entry.direction.as_str();
        entry.changes.push(change(
            &format!("{prefix}-keyword-changed"),
            "",
            &format!("rejected by `{}`", w.keyword),
        ));
    }
    entry.witness = Some(w);
}

/// Records a search that found no witness: `unknown`, with the failed proof step and the bound
/// that ended the search.
fn record_no_witness(entry: &mut Entry, tried: usize, timed_out: bool, not_proved: &str) {
    entry.candidates = tried;
    entry.verdict = Verdict::Unknown;
    entry.counted = Verdict::Unknown;
    entry.reason = if timed_out {
        format!(
            "not proved ({not_proved}); time budget exhausted after {tried} candidates without a witness"
        )
    } else {
        format!("not proved ({not_proved}); no witness among {tried} candidates")
    };
}

/// FNV-1a of a name: a per-tool seed that does not depend on the tool's position.
fn fnv(text: &str) -> u64 {
    mcp_fuzz_generators::hash::fnv1a(text.as_bytes())
}

/// The descriptive changes between two schemas (both in 2020-12 form), old to new.
#[must_use]
pub fn schema_changes(old: &Value, new: &Value, output: bool) -> Vec<Change> {
    let mut out = Vec::new();
    walk(old, new, "", 0, &mut Changes { out: &mut out, output });
    out
}

/// Where the changes of one walk go: ids and levels depend on the direction.
struct Changes<'a> {
    /// The changes found so far, in the order found.
    out: &'a mut Vec<Change>,
    /// Whether the schemas are output schemas (a narrowing is then harmless, a widening breaks).
    output: bool,
}

impl Changes<'_> {
    /// Adds the change `<direction>-<suffix>` at `pointer`.
    fn push(&mut self, suffix: &str, pointer: &str, detail: String) {
        let direction = if self.output { "output" } else { "input" };
        let id = format!("{direction}-{suffix}");
        let level = rules::level_of(rules::orientation(suffix), self.output);
        self.out.push(Change { id, level, pointer: pointer.to_owned(), detail });
    }
}

/// The old and the new schema object at one location.
#[derive(Clone, Copy)]
struct Pair<'a> {
    /// The old node's keywords (none for a non-object).
    old: &'a Map<String, Value>,
    /// The new node's keywords (none for a non-object).
    new: &'a Map<String, Value>,
    /// The location (a JSON pointer into the schemas).
    at: &'a str,
}

/// Compares the nodes at `at`, one keyword family after the other, then the subschemas both
/// sides have.
fn walk(old: &Value, new: &Value, at: &str, depth: usize, changes: &mut Changes) {
    if old == new || depth > 32 {
        return;
    }
    let empty = Map::new();
    let (o, n) = (as_object(old).unwrap_or(&empty), as_object(new).unwrap_or(&empty));
    if old.is_boolean() || new.is_boolean() {
        changes.push("keyword-changed", at, format!("{old} -> {new}"));
        return;
    }
    let pair = Pair { old: o, new: n, at };
    if combinator_added_or_removed(&pair, changes) {
        return;
    }
    type_changes(&pair, changes);
    member_changes(&pair, changes);
    required_changes(&pair, changes);
    property_changes(&pair, changes);
    bound_changes(&pair, changes);
    value_changes(&pair, changes);
    openness_changes(&pair, changes);
    combinator_changes(&pair, changes);
    other_assertion_changes(&pair, changes);
    descend(&pair, depth, changes);
}

/// A node that gained or lost a combinator (`anyOf` around the old object, a `$ref`...) is one
/// change: comparing its keywords with the other side's would only list noise. Returns whether
/// that is the case.
fn combinator_added_or_removed(pair: &Pair, changes: &mut Changes) -> bool {
    let Pair { old: o, new: n, at } = *pair;
    let shape =
        |m: &Map<String, Value>| ["anyOf", "oneOf", "allOf", "$ref"].map(|k| m.contains_key(k));
    if shape(o) == shape(n) {
        return false;
    }
    let key = ["anyOf", "oneOf", "allOf", "$ref"]
        .into_iter()
        .find(|k| o.contains_key(*k) != n.contains_key(*k))
        .expect("the shapes differ in some keyword");
    changes.push("combinator-changed", &ptr(at, key), format!("`{key}` added or removed"));
    true
}

/// The `type` keyword: narrowed, widened or both.
fn type_changes(pair: &Pair, changes: &mut Changes) {
    let Pair { old: o, new: n, at } = *pair;
    let (mut ot, nt) = (types(o), types(n));
    if at.is_empty() && ot.is_none() {
        // Arguments and structuredContent are always objects: an untyped root only sees objects.
        ot = Some(vec!["object".to_owned()]);
    }
    if ot == nt || (nt.is_none() && at.is_empty()) {
        return;
    }
    let all = ["null", "boolean", "object", "array", "number", "integer", "string"];
    if all.iter().any(|t| covers(&ot, t) && !covers(&nt, t)) {
        changes.push(
            "type-narrowed",
            &ptr(at, "type"),
            format!("{} -> {}", show_types(&ot), show_types(&nt)),
        );
    }
    if all.iter().any(|t| covers(&nt, t) && !covers(&ot, t)) {
        changes.push(
            "type-widened",
            &ptr(at, "type"),
            format!("{} -> {}", show_types(&ot), show_types(&nt)),
        );
    }
}

/// The declared types of a node, `None` when it declares none.
fn types(m: &Map<String, Value>) -> Option<Vec<String>> {
    match m.get("type") {
        Some(Value::String(t)) => Some(vec![t.clone()]),
        Some(Value::Array(ts)) => {
            Some(ts.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        }
        _ => None,
    }
}

/// Whether declared types (`None`: any) allow the type `t` (a `number` allows integers).
fn covers(set: &Option<Vec<String>>, t: &str) -> bool {
    set.as_ref().is_none_or(|s| s.iter().any(|x| x == t || (t == "integer" && x == "number")))
}

/// The `enum` and `const` keywords: members dropped, added or both.
fn member_changes(pair: &Pair, changes: &mut Changes) {
    let Pair { old: o, new: n, at } = *pair;
    let members = |m: &Map<String, Value>| -> Option<Vec<Value>> {
        m.get("const")
            .map(|c| vec![c.clone()])
            .or_else(|| m.get("enum").and_then(Value::as_array).cloned())
    };
    let (oe, ne) = (members(o), members(n));
    if oe == ne {
        return;
    }
    let dropped = match (&oe, &ne) {
        (Some(a), Some(b)) => a.iter().any(|v| !b.contains(v)),
        (None, Some(_)) => true,
        _ => false,
    };
    let added = match (&oe, &ne) {
        (Some(a), Some(b)) => b.iter().any(|v| !a.contains(v)),
        (Some(_), None) => true,
        _ => false,
    };
    let key = if n.contains_key("const") || o.contains_key("const") { "const" } else { "enum" };
    if dropped {
        changes.push("enum-narrowed", &ptr(at, key), "members dropped or restriction added".into());
    }
    if added {
        changes.push("enum-widened", &ptr(at, key), "members added or restriction removed".into());
    }
}

/// The `required` keyword: properties that became required (with a default or not) or optional.
fn required_changes(pair: &Pair, changes: &mut Changes) {
    let Pair { old: o, new: n, at } = *pair;
    let (or, nr) = (names(o, "required"), names(n, "required"));
    for name in nr.iter().filter(|x| !or.contains(x)) {
        let has_default = n
            .get("properties")
            .and_then(|p| p.get(name))
            .is_some_and(|p| p.get("default").is_some());
        let suffix = if has_default {
            "property-became-required-with-default"
        } else {
            "property-became-required"
        };
        changes.push(
            suffix,
            &ptr(&ptr(at, "properties"), name),
            format!("`{name}` is now required"),
        );
    }
    for name in or.iter().filter(|x| !nr.contains(x)) {
        changes.push(
            "property-became-optional",
            &ptr(&ptr(at, "properties"), name),
            format!("`{name}` is no longer required"),
        );
    }
}

/// The `properties` keyword: properties declared or no longer declared.
fn property_changes(pair: &Pair, changes: &mut Changes) {
    let Pair { old: o, new: n, at } = *pair;
    let (op, np) = (names(o, "properties"), names(n, "properties"));
    for name in np.iter().filter(|x| !op.contains(x)) {
        changes.push(
            "property-added",
            &ptr(&ptr(at, "properties"), name),
            format!("`{name}` declared"),
        );
    }
    for name in op.iter().filter(|x| !np.contains(x)) {
        changes.push(
            "property-removed",
            &ptr(&ptr(at, "properties"), name),
            format!("`{name}` no longer declared"),
        );
    }
}

/// The names a keyword lists (`required`) or declares (`properties`), in their order.
fn names(m: &Map<String, Value>, k: &str) -> Vec<String> {
    match m.get(k) {
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).map(str::to_owned).collect(),
        Some(Value::Object(p)) => p.keys().cloned().collect(),
        _ => Vec::new(),
    }
}

/// The numeric limits: `(keyword, whether it is a lower limit, the family its rule ids name)`.
const LIMITS: [(&str, bool, &str); 10] = [
    ("minimum", true, "bound"),
    ("exclusiveMinimum", true, "bound"),
    ("maximum", false, "bound"),
    ("exclusiveMaximum", false, "bound"),
    ("minLength", true, "length"),
    ("maxLength", false, "length"),
    ("minItems", true, "count"),
    ("maxItems", false, "count"),
    ("minProperties", true, "count"),
    ("maxProperties", false, "count"),
];

/// Bounds, lengths and counts: each limit tightened or relaxed.
fn bound_changes(pair: &Pair, changes: &mut Changes) {
    let Pair { old: o, new: n, at } = *pair;
    for (key, lower, suffix) in LIMITS {
        let (x, y) = (o.get(key).and_then(Value::as_f64), n.get(key).and_then(Value::as_f64));
        if x == y {
            continue;
        }
        let tightened = match (x, y) {
            (None, Some(_)) => true,
            (Some(_), None) => false,
            (Some(a), Some(b)) => {
                if lower {
                    b > a
                } else {
                    b < a
                }
            }
            (None, None) => continue,
        };
        let verb = if tightened { "tightened" } else { "relaxed" };
        changes.push(
            &format!("{suffix}-{verb}"),
            &ptr(at, key),
            format!("{key}: {} -> {}", show_num(x), show_num(y)),
        );
    }
}

/// `multipleOf`, `pattern` and `format`: changed, with both values.
fn value_changes(pair: &Pair, changes: &mut Changes) {
    let Pair { old: o, new: n, at } = *pair;
    for (key, suffix) in [
        ("multipleOf", "multipleof-changed"),
        ("pattern", "pattern-changed"),
        ("format", "format-changed"),
    ] {
        if o.get(key) != n.get(key) {
            changes.push(
                suffix,
                &ptr(at, key),
                format!("{key}: {} -> {}", show(o.get(key)), show(n.get(key))),
            );
        }
    }
}

/// `additionalProperties` closed or opened, `uniqueItems` added or removed: a keyword that
/// restricts or not, with the change it makes when it starts and when it stops restricting.
fn openness_changes(pair: &Pair, changes: &mut Changes) {
    let Pair { old: o, new: n, at } = *pair;
    let closed = |m: &Map<String, Value>| {
        m.get("additionalProperties").is_some_and(|a| !crate::prove::accepts_everything(a))
    };
    let unique = |m: &Map<String, Value>| m.get("uniqueItems") == Some(&Value::Bool(true));
    let switches = [
        (
            "additionalProperties",
            (closed(o), closed(n)),
            ("additional-properties-closed", "undeclared properties are now limited"),
            ("additional-properties-opened", "undeclared properties are now allowed"),
        ),
        (
            "uniqueItems",
            (unique(o), unique(n)),
            ("unique-items-added", "items must now be unique"),
            ("unique-items-removed", "items may now repeat"),
        ),
    ];
    for (key, restricts, (on, on_detail), (off, off_detail)) in switches {
        match restricts {
            (false, true) => changes.push(on, &ptr(at, key), on_detail.into()),
            (true, false) => changes.push(off, &ptr(at, key), off_detail.into()),
            _ => {}
        }
    }
}

/// The combinators and conditionals whose value differs.
fn combinator_changes(pair: &Pair, changes: &mut Changes) {
    let Pair { old: o, new: n, at } = *pair;
    for key in ["anyOf", "oneOf", "allOf", "not", "if", "then", "else", "$ref"] {
        if o.get(key) != n.get(key) {
            changes.push("combinator-changed", &ptr(at, key), format!("`{key}` differs"));
        }
    }
}

/// The keywords the walk describes (or descends into) by name; another assertion keyword that
/// differs is reported as `keyword-changed`.
const DESCRIBED: &[&str] = &[
    "type",
    "enum",
    "const",
    "required",
    "properties",
    "minimum",
    "exclusiveMinimum",
    "maximum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
    "multipleOf",
    "pattern",
    "format",
    "additionalProperties",
    "uniqueItems",
    "anyOf",
    "oneOf",
    "allOf",
    "not",
    "if",
    "then",
    "else",
    "$ref",
    "items",
    "prefixItems",
    "$defs",
    "definitions",
];

/// The first assertion keyword outside [`DESCRIBED`] whose value differs, as one
/// `keyword-changed`.
fn other_assertion_changes(pair: &Pair, changes: &mut Changes) {
    let Pair { old: o, new: n, at } = *pair;
    for key in o.keys().chain(n.keys()) {
        if !DESCRIBED.contains(&key.as_str()) && is_assertion(key) && o.get(key) != n.get(key) {
            changes.push("keyword-changed", &ptr(at, key), format!("`{key}` differs"));
            break;
        }
    }
}

/// Walks the subschemas both sides have: properties, `items` and `additionalProperties`,
/// `prefixItems` by position, and `$defs`/`definitions` by name.
fn descend(pair: &Pair, depth: usize, changes: &mut Changes) {
    let Pair { old: o, new: n, at } = *pair;
    let (op, np) = (names(o, "properties"), names(n, "properties"));
    for name in op.iter().filter(|x| np.contains(x)) {
        walk(
            &o["properties"][name.as_str()],
            &n["properties"][name.as_str()],
            &ptr(&ptr(at, "properties"), name),
            depth + 1,
            changes,
        );
    }
    for key in ["items", "additionalProperties"] {
        if let (Some(x), Some(y)) = (o.get(key), n.get(key))
            && (x.is_object() && y.is_object())
        {
            walk(x, y, &ptr(at, key), depth + 1, changes);
        }
    }
    if let (Some(Value::Array(x)), Some(Value::Array(y))) =
        (o.get("prefixItems"), n.get("prefixItems"))
    {
        for (index, (a, b)) in x.iter().zip(y).enumerate() {
            walk(a, b, &ptr(&ptr(at, "prefixItems"), &index.to_string()), depth + 1, changes);
        }
    }
    for defs in ["$defs", "definitions"] {
        if let (Some(Value::Object(x)), Some(Value::Object(y))) = (o.get(defs), n.get(defs)) {
            for (name, a) in x {
                if let Some(b) = y.get(name) {
                    walk(a, b, &ptr(&ptr(at, defs), name), depth + 1, changes);
                }
            }
        }
    }
}

fn as_object(v: &Value) -> Option<&Map<String, Value>> {
    v.as_object()
}

fn ptr(at: &str, segment: &str) -> String {
    push(at, segment)
}

fn show_types(t: &Option<Vec<String>>) -> String {
    t.as_ref().map_or("any".to_owned(), |t| t.join("|"))
}

fn show_num(x: Option<f64>) -> String {
    x.map_or("none".to_owned(), |x| x.to_string())
}

fn show(x: Option<&Value>) -> String {
    x.map_or("none".to_owned(), Value::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::parse_capture;

    fn one(input: &Value) -> Capture {
        parse_capture(&json!({"tools": [{"name": "t", "inputSchema": input}]}).to_string())
            .expect("capture")
    }

    fn input_entry(old: &Value, new: &Value, options: &Options) -> (Entry, bool) {
        let d = diff(&one(old), &one(new), options);
        let entry = d.entries.into_iter().find(|e| e.direction == Direction::Input).expect("input");
        (entry, d.budget_exhausted)
    }

    #[test]
    fn bounds_give_unknown_with_the_reason() {
        let old =
            json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]});
        let new = json!({"type": "object", "properties": {"n": {"type": "integer", "maximum": 5}}, "required": ["n"]});
        let (entry, _) = input_entry(&old, &new, &Options::default());
        assert_eq!(entry.verdict, Verdict::Breaking);
        let zero = Options { time_budget: Duration::ZERO, ..Options::default() };
        let (entry, exhausted) = input_entry(&old, &new, &zero);
        assert_eq!(entry.verdict, Verdict::Unknown);
        assert!(exhausted && entry.reason.contains("time budget"), "{}", entry.reason);
        assert!(
            entry.reason.contains("at `/n`: the target bounds numbers"),
            "the failed proof step is named: {}",
            entry.reason
        );
        let few = Options { max_candidates: 1, ..Options::default() };
        let (entry, exhausted) = input_entry(&old, &new, &few);
        assert_eq!(entry.verdict, Verdict::Unknown);
        assert!(
            !exhausted && entry.reason.contains("no witness among 1 candidates"),
            "{}",
            entry.reason
        );
    }

    #[test]
    fn the_same_seed_gives_the_same_witness() {
        let old = json!({"type": "object", "properties": {"s": {"type": "string", "pattern": "^[a-z]{3,9}$"}}, "required": ["s"]});
        let new = json!({"type": "object", "properties": {"s": {"type": "string", "pattern": "^[a-f]{3,9}$"}}, "required": ["s"]});
        let options = Options { seed: 42, ..Options::default() };
        let (a, _) = input_entry(&old, &new, &options);
        let (b, _) = input_entry(&old, &new, &options);
        assert_eq!(a.verdict, Verdict::Breaking);
        assert_eq!(a.witness, b.witness);
    }

    #[test]
    fn refs_into_rewritten_draft7_parts_are_not_proved() {
        let schema = json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
            "properties": {"p": {"type": "array", "items": [{"type": "string"}]},
                           "q": {"$ref": "#/properties/p/items/0"}}});
        let mut wider = schema.clone();
        wider["properties"]["p"]["description"] = json!("only a description changed");
        let (entry, _) = input_entry(&schema, &wider, &Options::default());
        assert_eq!(entry.verdict, Verdict::Unknown, "{}", entry.reason);
        assert!(entry.reason.contains("draft rewrite"), "{}", entry.reason);
    }

    #[test]
    fn duplicated_names_are_review_and_the_first_is_compared() {
        let tool = json!({"name": "t", "inputSchema": {"type": "object"}});
        let twice = parse_capture(&json!({"tools": [tool, {"name": "t", "inputSchema": {"type": "object", "required": ["x"]}}]}).to_string())
            .expect("capture");
        let once = parse_capture(&json!({"tools": [tool]}).to_string()).expect("capture");
        let d = diff(&once, &twice, &Options::default());
        let entry = d.entries.iter().find(|e| e.direction == Direction::Tool).expect("tool entry");
        assert_eq!(entry.verdict, Verdict::Review);
        assert!(entry.changes.iter().any(|c| c.id == "tool-duplicated"));
        let input = d.entries.iter().find(|e| e.direction == Direction::Input).expect("input");
        assert_eq!(input.verdict, Verdict::Compatible);
    }

    #[test]
    fn unreadable_schemas_are_unknown_not_errors() {
        let (entry, _) =
            input_entry(&json!({"type": "object"}), &json!({"type": 5}), &Options::default());
        assert_eq!(entry.verdict, Verdict::Unknown);
        assert!(entry.changes.iter().any(|c| c.id == "input-schema-unreadable"));
    }
}
