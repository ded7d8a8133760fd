//! Value hints: known-good values for places in a tool's arguments, or a regex or glob to draw
//! them from, so that valid calls can name what really exists (a repository the server allows,
//! a file under its sandbox) instead of a random string.
//!
//! A [`Hint`] names its places by property name (at any depth), by JSON pointer (`*` standing for
//! every item of an array) or by `format`. [`HintPlan::new`] finds the places of one schema (through
//! `properties`, `items`, local `$ref` and `allOf`/`anyOf`/`oneOf`) and picks the hint of each:
//! a pointer before a property name before a format, the first of each kind. [`HintPlan::apply`]
//! puts the hinted values into a valid value; whether the result is still valid is the
//! [`crate::Generator::is_valid`] oracle's to say.
//!
//! ```
//! use mcp_fuzz_generators::hint::{Hint, HintPlan, Source, Target};
//! use serde_json::json;
//!
//! let schema = json!({"type": "object", "properties": {"repo_path": {"type": "string"}}});
//! let hints = [Hint { target: Target::Property("repo_path".into()), source: Source::Values(vec![json!("./repo")]) }];
//! let plan = HintPlan::new(&schema, &hints).unwrap();
//! let (value, pointers) = plan.apply(&json!({"repo_path": "x"}), 0, 7, true).unwrap();
//! assert_eq!((value, pointers), (json!({"repo_path": "./repo"}), vec!["/repo_path".to_owned()]));
//! ```

use crate::pointer;
use proptest::strategy::{BoxedStrategy, Strategy, ValueTree};
use serde_json::{Map, Value};
use std::fmt;

/// Where a hint applies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// Every property of this name, at any depth.
    Property(String),
    /// One place, as a JSON pointer into the arguments (`/repo_path`, `/files/*/path`).
    Pointer(String),
    /// Every string of this `format` (`email`, `uri`...).
    Format(String),
}

/// What a hint's values come from.
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    /// Known-good values, used in turn.
    Values(Vec<Value>),
    /// Strings drawn from a regex (the whole string matches it).
    Regex(String),
    /// Strings drawn from a glob: `*` is a short run of letters, digits, `_` and `-`, `?` one
    /// of them, `**/` up to two directories, `[...]` a class.
    Glob(String),
}

/// A hint: a place and its values.
#[derive(Debug, Clone, PartialEq)]
pub struct Hint {
    /// Where.
    pub target: Target,
    /// What.
    pub source: Source,
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Property(name) => write!(f, "property `{name}`"),
            Self::Pointer(p) => write!(f, "pointer `{p}`"),
            Self::Format(name) => write!(f, "format `{name}`"),
        }
    }
}

/// Deepest schema level searched for places.
///
/// Why: tool arguments are shallow; the bound also ends `$ref` cycles.
const MAX_DEPTH: usize = 12;

/// The regex a glob draws from.
#[must_use]
pub fn glob_regex(glob: &str) -> String {
    const NAME: &str = "[A-Za-z0-9_-]";
    let chars: Vec<char> = glob.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '*' if chars.get(i + 1) == Some(&'*') => {
                if chars.get(i + 2) == Some(&'/') {
                    out.push_str(&format!("(?:{NAME}{{1,8}}/){{0,2}}"));
                    i += 1;
                } else {
                    out.push_str(&format!("(?:{NAME}{{1,8}}/?){{0,2}}"));
                }
                i += 1;
            }
            '*' => out.push_str(&format!("{NAME}{{0,8}}")),
            '?' => out.push_str(NAME),
            '[' => {
                // A class: `[!...]` negates; a `]` right after the opening is a member.
                let first = if chars.get(i + 1) == Some(&'!') { i + 2 } else { i + 1 };
                match (first + 1..chars.len()).find(|&j| chars[j] == ']') {
                    Some(close) => {
                        out.push('[');
                        if first == i + 2 {
                            out.push('^');
                        }
                        for &c in &chars[first..close] {
                            if matches!(c, '\\' | '[' | ']' | '^') {
                                out.push('\\');
                            }
                            out.push(c);
                        }
                        out.push(']');
                        i = close;
                    }
                    None => out.push_str(r"\["),
                }
            }
            c => out.push_str(&regex_syntax::escape(&c.to_string())),
        }
        i += 1;
    }
    out
}

/// Checks that strings can be drawn from a source: a regex that parses and has no anchors or
/// lookaround in the middle, a glob that becomes one, a non-empty list of values.
///
/// # Errors
/// What is wrong, in words.
pub fn check(source: &Source) -> Result<(), String> {
    strings(source).map(|_| ())
}

/// The string strategy of a regex or glob source (`None` for values).
fn strings(source: &Source) -> Result<Option<BoxedStrategy<String>>, String> {
    let regex = match source {
        Source::Values(v) if v.is_empty() => return Err("the list of values is empty".into()),
        Source::Values(_) => return Ok(None),
        Source::Regex(r) => r.clone(),
        Source::Glob(g) => glob_regex(g),
    };
    let hir = crate::pattern::generation_hir(&regex, None)?;
    proptest::string::string_regex_parsed(&hir)
        .map(|s| Some(s.boxed()))
        .map_err(|e| format!("no string can be drawn from `{regex}`: {e}"))
}

/// One step of a place: a property, or every item of an array.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Step {
    Key(String),
    Items,
}

/// A place in the arguments and what it gets.
struct Site {
    path: Vec<Step>,
    pointer: String,
    values: Vec<Value>,
    strings: Option<BoxedStrategy<String>>,
}

/// The hinted places of one schema, each with its hint.
pub struct HintPlan {
    sites: Vec<Site>,
}

impl fmt::Debug for HintPlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.sites.iter().map(|s| &s.pointer)).finish()
    }
}

impl HintPlan {
    /// Finds the places of `schema` that `hints` name.
    ///
    /// # Errors
    /// A hint whose regex or glob cannot be drawn from (see [`check`]).
    pub fn new(schema: &Value, hints: &[Hint]) -> Result<Self, String> {
        let mut places: Vec<(Vec<Step>, Vec<String>)> = Vec::new();
        walk(schema, schema, &mut Vec::new(), &mut places, 0);
        let mut sites = Vec::new();
        for (path, formats) in places {
            let pointer = path.iter().fold(String::new(), |p, s| match s {
                Step::Key(k) => pointer::push(&p, k),
                Step::Items => format!("{p}/*"),
            });
            let last = match path.last() {
                Some(Step::Key(k)) => Some(k.as_str()),
                _ => None,
            };
            let pick = |want: fn(&Target, &str, Option<&str>, &[String]) -> bool| {
                hints.iter().find(|h| want(&h.target, &pointer, last, &formats))
            };
            let hint = pick(|t, p, _, _| matches!(t, Target::Pointer(q) if q == p))
                .or_else(|| {
                    pick(|t, _, l, _| matches!(t, Target::Property(n) if Some(n.as_str()) == l))
                })
                .or_else(|| pick(|t, _, _, f| matches!(t, Target::Format(n) if f.contains(n))));
            let Some(hint) = hint else { continue };
            let strings = strings(&hint.source).map_err(|e| format!("{}: {e}", hint.target))?;
            let values = match &hint.source {
                Source::Values(v) => v.clone(),
                _ => Vec::new(),
            };
            sites.push(Site { path, pointer, values, strings });
        }
        Ok(Self { sites })
    }

    /// Whether no place of the schema is hinted.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.sites.is_empty()
    }

    /// The hinted places, as pointers (`*` for every item of an array).
    pub fn pointers(&self) -> impl Iterator<Item = &str> {
        self.sites.iter().map(|s| s.pointer.as_str())
    }

    /// The most values one place lists: the rounds it takes to use each value once.
    #[must_use]
    pub fn longest(&self) -> usize {
        self.sites.iter().map(|s| s.values.len()).max().unwrap_or(0)
    }

    /// `base` with the hinted values of round `round` put in: value `round` (in turn) of each
    /// list, a string drawn from each regex or glob (determined by `seed` and `round`). A place
    /// that `base` lacks is added when `insert` and its parent is there. Returns the value and the
    /// pointers of the places set, or `None` when no place could be set.
    #[must_use]
    pub fn apply(
        &self,
        base: &Value,
        round: u64,
        seed: u64,
        insert: bool,
    ) -> Option<(Value, Vec<String>)> {
        let mut out = base.clone();
        let mut set = Vec::new();
        for (k, site) in self.sites.iter().enumerate() {
            let value = match &site.strings {
                Some(strategy) => {
                    let mix = seed ^ round.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ ((k as u64) << 48);
                    let mut runner = crate::seeded_runner(mix);
                    Value::String(strategy.new_tree(&mut runner).ok()?.current())
                }
                None => {
                    let i = usize::try_from(round).unwrap_or(0) % site.values.len().max(1);
                    site.values.get(i)?.clone()
                }
            };
            if put(&mut out, &site.path, &value, insert) {
                set.push(site.pointer.clone());
            }
        }
        (!set.is_empty()).then_some((out, set))
    }
}

/// Puts `value` at every place `path` names in `at`; whether one was set.
fn put(at: &mut Value, path: &[Step], value: &Value, insert: bool) -> bool {
    let Some((step, rest)) = path.split_first() else {
        *at = value.clone();
        return true;
    };
    match (step, at) {
        (Step::Key(k), Value::Object(m)) => match m.get_mut(k) {
            Some(next) => put(next, rest, value, insert),
            None if insert && rest.is_empty() => {
                m.insert(k.clone(), value.clone());
                true
            }
            None => false,
        },
        (Step::Items, Value::Array(items)) => {
            items.iter_mut().fold(false, |any, item| put(item, rest, value, insert) | any)
        }
        _ => false,
    }
}

/// Collects the places of `node` (reached by `path`) with their formats.
fn walk(
    root: &Value,
    node: &Value,
    path: &mut Vec<Step>,
    places: &mut Vec<(Vec<Step>, Vec<String>)>,
    depth: usize,
) {
    let Some(schema) = node.as_object().filter(|_| depth <= MAX_DEPTH) else { return };
    if let Some(target) =
        schema.get("$ref").and_then(Value::as_str).and_then(|r| crate::refs::resolve_local(root, r))
    {
        walk(root, target, path, places, depth + 1);
    }
    if let (Some(format), false) = (schema.get("format").and_then(Value::as_str), path.is_empty()) {
        let formats = place(places, path);
        if !formats.iter().any(|f| f == format) {
            formats.push(format.to_owned());
        }
    }
    let mut into = |step: Step, sub: &Value, places: &mut Vec<(Vec<Step>, Vec<String>)>| {
        path.push(step);
        place(places, path);
        walk(root, sub, path, places, depth + 1);
        path.pop();
    };
    for (name, sub) in schema.get("properties").and_then(Value::as_object).unwrap_or(&Map::new()) {
        into(Step::Key(name.clone()), sub, places);
    }
    if let Some(items) = schema.get("items").filter(|i| i.is_object()) {
        into(Step::Items, items, places);
    }
    for keyword in ["allOf", "anyOf", "oneOf"] {
        for sub in schema.get(keyword).and_then(Value::as_array).into_iter().flatten() {
            walk(root, sub, path, places, depth + 1);
        }
    }
}

/// The formats of the place at `path`, registering it when new.
fn place<'p>(places: &'p mut Vec<(Vec<Step>, Vec<String>)>, path: &[Step]) -> &'p mut Vec<String> {
    let i = places.iter().position(|(p, _)| p == path).unwrap_or_else(|| {
        places.push((path.to_vec(), Vec::new()));
        places.len() - 1
    });
    &mut places[i].1
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn hint(target: Target, source: Source) -> Hint {
        Hint { target, source }
    }

    #[test]
    fn places_are_found_through_refs_items_and_combinators() {
        let schema = json!({
            "type": "object",
            "$defs": {"file": {"type": "object", "properties": {"path": {"type": "string"}}}},
            "properties": {
                "repo_path": {"type": "string"},
                "files": {"type": "array", "items": {"$ref": "#/$defs/file"}},
                "contact": {"allOf": [{"type": "string"}, {"format": "email"}]}
            }
        });
        let hints = [
            hint(Target::Format("email".into()), Source::Values(vec![json!("a@example.com")])),
            hint(Target::Property("path".into()), Source::Values(vec![json!("./a.txt")])),
            hint(Target::Pointer("/repo_path".into()), Source::Values(vec![json!("./repo")])),
            hint(Target::Property("repo_path".into()), Source::Values(vec![json!("never")])),
        ];
        let plan = HintPlan::new(&schema, &hints).expect("plans");
        assert_eq!(
            plan.pointers().collect::<Vec<_>>(),
            ["/repo_path", "/files/*/path", "/contact"]
        );
        let base = json!({"repo_path": "x", "files": [{"path": "a"}, {"path": "b"}, {}]});
        let (v, set) = plan.apply(&base, 0, 1, false).expect("applies");
        assert_eq!(
            v,
            json!({"repo_path": "./repo", "files": [{"path": "./a.txt"}, {"path": "./a.txt"}, {}]})
        );
        assert_eq!(set, ["/repo_path", "/files/*/path"], "absent places are left out");
        let (v, set) = plan.apply(&base, 0, 1, true).expect("applies");
        assert_eq!(v["contact"], "a@example.com");
        assert_eq!(v["files"][2]["path"], "./a.txt");
        assert_eq!(set.len(), 3);
    }

    #[test]
    fn values_are_used_in_turn_and_patterns_drawn_deterministically() {
        let schema = json!({"type": "object", "properties": {"id": {}, "name": {}}});
        let hints = [
            hint(Target::Property("id".into()), Source::Values(vec![json!(1), json!(2)])),
            hint(Target::Property("name".into()), Source::Regex("^user-[0-9]{3}$".into())),
        ];
        let plan = HintPlan::new(&schema, &hints).expect("plans");
        assert_eq!(plan.longest(), 2);
        let ids: Vec<Value> = (0..4)
            .map(|r| plan.apply(&json!({}), r, 5, true).expect("applies").0["id"].clone())
            .collect();
        assert_eq!(ids, [json!(1), json!(2), json!(1), json!(2)]);
        let name =
            |r, seed| plan.apply(&json!({}), r, seed, true).expect("applies").0["name"].clone();
        let re = regex::Regex::new("^user-[0-9]{3}$").expect("regex");
        for r in 0..20 {
            assert!(re.is_match(name(r, 9).as_str().expect("string")));
            assert_eq!(name(r, 9), name(r, 9), "the same seed and round draw the same string");
        }
        assert!(plan.apply(&json!({}), 0, 5, false).is_none(), "nothing to set without insert");
    }

    #[test]
    fn globs_draw_matching_paths_and_bad_sources_are_refused() {
        let re = glob_regex("./sandbox/**/*.txt");
        let schema = json!({"properties": {"path": {"type": "string"}}});
        let hints =
            [hint(Target::Property("path".into()), Source::Glob("./sandbox/**/*.txt".into()))];
        let plan = HintPlan::new(&schema, &hints).expect("plans");
        let m = regex::Regex::new(&format!("^{re}$")).expect("glob regex compiles");
        for r in 0..30 {
            let (v, _) = plan.apply(&json!({}), r, 3, true).expect("applies");
            let s = v["path"].as_str().expect("string");
            assert!(m.is_match(s) && s.starts_with("./sandbox/") && s.ends_with(".txt"), "{s}");
        }
        assert_eq!(glob_regex("a?[!x]"), "a[A-Za-z0-9_-][^x]");
        assert!(check(&Source::Regex("(unclosed".into())).is_err());
        assert!(check(&Source::Regex("(a)\\1".into())).is_err());
        assert!(check(&Source::Values(Vec::new())).is_err());
        assert!(check(&Source::Glob("[".into())).is_ok(), "an unclosed bracket is a literal");
        assert!(
            HintPlan::new(
                &schema,
                &[hint(Target::Property("path".into()), Source::Regex("(".into()))]
            )
            .is_err()
        );
    }

    #[test]
    fn cyclic_refs_end() {
        let schema = json!({"$ref": "#", "properties": {"next": {"$ref": "#"}}});
        let plan = HintPlan::new(
            &schema,
            &[hint(Target::Property("next".into()), Source::Values(vec![json!(null)]))],
        )
        .expect("plans");
        assert!(!plan.is_empty());
    }
}
