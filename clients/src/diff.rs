//! Rendered-vs-advertised comparison: every way the schema a client sends to the model differs
//! from the one the server advertised.
//!
//! The walk follows both schemas side by side through `properties`, `items`, `prefixItems`,
//! `anyOf`/`oneOf` branches, `allOf` and `additionalProperties`, resolving local `$ref`s on each
//! side. It is bounded ([`MAX_DEPTH`]) and cuts `$ref` cycles; every place where it stopped is
//! reported in [`Comparison::stopped`].

use crate::canary::Direction;
use crate::walk::{self, types_of};
use crate::{Rendering, Tool};
use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::BTreeSet;

/// Why: a hostile or generated schema can nest arbitrarily; past this depth the comparison stops
/// and says where.
pub const MAX_DEPTH: usize = 32;

/// The kind of a difference.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum DriftKind {
    /// The client rejects the tool: the model cannot call it at all.
    ToolMissing,
    /// A property the server accepts is not in the rendering.
    PropertyMissing,
    /// The rendering lost the property's `type`.
    Untyped,
    /// The rendering changed the type (including "now also accepts null").
    Retyped,
    /// A required property is optional in the rendering.
    RequiredDropped,
    /// An optional property is required in the rendering.
    RequiredAdded,
    /// A `description` is gone.
    DescriptionLost,
    /// A constraint keyword is gone.
    ConstraintDropped,
    /// A constraint keyword has another value.
    ConstraintChanged,
    /// A closed object is opened (or its extra-property schema dropped): more is accepted.
    ObjectOpened,
    /// An open object is closed: the model cannot send other properties.
    ObjectClosed,
    /// A nested union (`anyOf`/`oneOf`) is gone or has other branches.
    UnionLost,
    /// A root union is ignored.
    RootUnionIgnored,
    /// The server declares an output schema the client does not keep.
    OutputSchemaNotSent,
}

/// Which schema of the tool a drift is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Part {
    /// `inputSchema`.
    Input,
    /// `outputSchema`.
    Output,
}

/// One difference.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Drift {
    /// What changed.
    pub kind: DriftKind,
    /// In which schema.
    pub schema: Part,
    /// JSON pointer into the advertised tool (`/inputSchema/properties/q/minLength`).
    pub pointer: String,
    /// What changed, with the values on both sides where there are any.
    pub detail: String,
}

/// The result of one comparison.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Comparison {
    /// Every difference, in schema order.
    pub drifts: Vec<Drift>,
    /// Where the walk stopped early (depth limit, `$ref` cycle, unresolvable `$ref`).
    pub stopped: Vec<String>,
}

impl Comparison {
    /// Whether the rendering differs from the advertised schema at all.
    #[must_use]
    pub fn drifts(&self) -> bool {
        !self.drifts.is_empty()
    }

    /// The canary directions the drifts make possible: a loosened rendering may allow what the
    /// server rejects, a tightened one may reject what the server allows. A direction no drift
    /// supports cannot have a witness, so the search skips it.
    #[must_use]
    pub fn canary_directions(&self) -> Vec<Direction> {
        let loosens = self.drifts.iter().any(|d| d.schema == Part::Input && d.kind.loosens());
        let tightens = self.drifts.iter().any(|d| d.schema == Part::Input && d.kind.tightens());
        let mut out = Vec::new();
        if loosens {
            out.push(Direction::RenderedAllowsServerRejects);
        }
        if tightens {
            out.push(Direction::ServerAllowsRenderedRejects);
        }
        out
    }
}

impl DriftKind {
    /// Whether the rendering may accept more than the server.
    #[must_use]
    pub fn loosens(self) -> bool {
        matches!(
            self,
            Self::Untyped
                | Self::Retyped
                | Self::RequiredDropped
                | Self::ConstraintDropped
                | Self::ConstraintChanged
                | Self::ObjectOpened
                | Self::UnionLost
                | Self::RootUnionIgnored
        )
    }

    /// Whether the rendering may accept less than the server.
    #[must_use]
    pub fn tightens(self) -> bool {
        matches!(
            self,
            Self::PropertyMissing
                | Self::Retyped
                | Self::RequiredAdded
                | Self::ConstraintChanged
                | Self::ObjectClosed
                | Self::UnionLost
        )
    }
}

/// Constraint keywords compared by presence and value.
const CONSTRAINTS: &[&str] = &[
    "enum",
    "const",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
    "propertyNames",
    "patternProperties",
    "contains",
    "minContains",
    "maxContains",
    "dependentRequired",
    "dependentSchemas",
    "not",
    "if",
    "then",
    "else",
    "unevaluatedProperties",
    "unevaluatedItems",
];

/// Compares a tool with one adapter's rendering of it.
#[must_use]
pub fn compare(tool: &Tool, rendering: &Rendering) -> Comparison {
    compare_schemas(tool, rendering.input.as_ref(), rendering.output.as_ref())
}

/// Compares a tool with the schemas a client sends for it: `input` is `None` when the client
/// does not show the tool at all, `output` when it keeps no output schema. What a real client
/// captured is compared through this.
#[must_use]
pub fn compare_schemas(tool: &Tool, input: Option<&Value>, output: Option<&Value>) -> Comparison {
    let mut walker = Walker { out: Comparison::default(), part: Part::Input, path: Vec::new() };
    let Some(input) = input else {
        walker.push(
            DriftKind::ToolMissing,
            "",
            "the client rejects the tool; the model cannot call it".into(),
        );
        return walker.out;
    };
    walker.node(tool.input(), tool.input(), input, input, "/inputSchema", 0);
    if let Some(advertised) = &tool.output_schema {
        walker.part = Part::Output;
        match output {
            None => walker.push(
                DriftKind::OutputSchemaNotSent,
                "/outputSchema",
                "the client keeps no output schema: results are not checked against it".into(),
            ),
            Some(rendered) => {
                walker.node(advertised, advertised, rendered, rendered, "/outputSchema", 0);
            }
        }
    }
    walker.out
}

struct Walker {
    out: Comparison,
    part: Part,
    /// The `(advertised, rendered)` node addresses on the current path, for cycle detection.
    path: Vec<(usize, usize)>,
}

/// A schema object with its local `$ref` resolved and the `$ref`'s siblings merged in.
fn resolved(root: &Value, node: &Value) -> Result<Value, String> {
    let mut current = node.clone();
    for _ in 0..16 {
        let Some(object) = current.as_object() else { return Ok(current) };
        let Some(reference) = object.get("$ref").and_then(Value::as_str) else {
            return Ok(current);
        };
        let Some(target) = walk::resolve(root, reference) else {
            return Err(format!("`$ref` {reference} does not resolve locally"));
        };
        let mut merged: Map<String, Value> = match target {
            Value::Object(t) => t.clone(),
            Value::Bool(true) => Map::new(),
            other => return Ok(other.clone()),
        };
        for (k, v) in object {
            if k != "$ref" {
                merged.insert(k.clone(), v.clone());
            }
        }
        current = Value::Object(merged);
    }
    Err("`$ref` chain longer than 16 hops".into())
}

fn names(v: Option<&Value>) -> BTreeSet<String> {
    v.and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        .unwrap_or_default()
}

fn is_null_branch(v: &Value) -> bool {
    v.get("type").and_then(Value::as_str) == Some("null")
        && v.as_object().is_some_and(|o| o.len() == 1)
}

impl Walker {
    fn push(&mut self, kind: DriftKind, pointer: &str, detail: String) {
        self.out.drifts.push(Drift {
            kind,
            schema: self.part,
            pointer: pointer.to_owned(),
            detail,
        });
    }

    fn node(
        &mut self,
        a_root: &Value,
        a: &Value,
        r_root: &Value,
        r: &Value,
        ptr: &str,
        depth: usize,
    ) {
        if depth > MAX_DEPTH {
            self.out.stopped.push(format!("{ptr}: depth limit ({MAX_DEPTH}) reached"));
            return;
        }
        let key = (std::ptr::from_ref(a) as usize, std::ptr::from_ref(r) as usize);
        if self.path.contains(&key) {
            self.out.stopped.push(format!("{ptr}: `$ref` cycle, already compared on this path"));
            return;
        }
        let (a_val, r_val) = match (resolved(a_root, a), resolved(r_root, r)) {
            (Ok(a), Ok(r)) => (a, r),
            (Err(e), _) | (_, Err(e)) => {
                self.out.stopped.push(format!("{ptr}: {e}"));
                return;
            }
        };
        // Resolution clones; the cycle key must come from the original nodes, so resolve the
        // targets by address once more when they are refs.
        let a_node = target_node(a_root, a);
        let r_node = target_node(r_root, r);
        let key = (std::ptr::from_ref(a_node) as usize, std::ptr::from_ref(r_node) as usize);
        if self.path.contains(&key) {
            self.out.stopped.push(format!("{ptr}: `$ref` cycle, already compared on this path"));
            return;
        }
        self.path.push(key);
        self.keywords(a_root, &a_val, r_root, &r_val, ptr, depth);
        self.path.pop();
    }

    #[expect(clippy::too_many_lines, reason = "one pass over the keyword families, in order")]
    fn keywords(
        &mut self,
        a_root: &Value,
        a: &Value,
        r_root: &Value,
        r: &Value,
        ptr: &str,
        depth: usize,
    ) {
        let Some(a_obj) = a.as_object() else { return };
        let empty = Map::new();
        let mut r_obj = match r {
            Value::Object(o) => o,
            Value::Bool(true) => &empty,
            _ => return,
        };
        // The strict conversion's nullable wrapper: compare with the wrapped branch.
        let unwrapped;
        if !a_obj.contains_key("anyOf")
            && !walk::allows_null(a)
            && let Some(Value::Array(branches)) = r_obj.get("anyOf")
            && branches.len() == 2
            && let Some(i) = branches.iter().position(is_null_branch)
            && let Ok(Value::Object(inner)) = resolved(r_root, &branches[1 - i])
        {
            self.push(DriftKind::Retyped, ptr, "now also accepts null".into());
            unwrapped = inner;
            r_obj = &unwrapped;
        }
        let r_val = Value::Object(r_obj.clone());
        match (types_of(a), types_of(&r_val).or_else(|| branch_types(r_root, r_obj))) {
            (Some(ta), None) => self.push(
                DriftKind::Untyped,
                ptr,
                format!("`type` {} is gone: any value is accepted", join(&ta)),
            ),
            (Some(ta), Some(tr)) if ta != tr => {
                let added: Vec<_> = tr.difference(&ta).cloned().collect();
                let detail = if added == ["null"] && ta.is_subset(&tr) {
                    "now also accepts null".to_owned()
                } else {
                    format!("`type` {} became {}", join(&ta), join(&tr))
                };
                if !self.out.drifts.last().is_some_and(|d| d.pointer == ptr && d.detail == detail) {
                    self.push(DriftKind::Retyped, ptr, detail);
                }
            }
            _ => {}
        }
        if a_obj.get("description").is_some_and(Value::is_string)
            && !r_obj.contains_key("description")
        {
            self.push(
                DriftKind::DescriptionLost,
                &walk::push(ptr, "description"),
                "the description is not sent".into(),
            );
        }
        for keyword in CONSTRAINTS {
            let Some(av) = a_obj.get(*keyword) else { continue };
            let at = walk::push(ptr, keyword);
            match r_obj.get(*keyword) {
                None => self.push(
                    DriftKind::ConstraintDropped,
                    &at,
                    format!("`{keyword}` {} is dropped", short(av)),
                ),
                Some(rv) if rv != av => {
                    let widened_by_null = *keyword == "enum"
                        && rv.as_array().zip(av.as_array()).is_some_and(|(rv, av)| {
                            rv.iter()
                                .filter(|v| !v.is_null())
                                .eq(av.iter().filter(|v| !v.is_null()))
                        });
                    if !widened_by_null {
                        self.push(
                            DriftKind::ConstraintChanged,
                            &at,
                            format!("`{keyword}` {} became {}", short(av), short(rv)),
                        );
                    }
                }
                Some(_) => {}
            }
        }
        match (a_obj.get("additionalProperties"), r_obj.get("additionalProperties")) {
            (Some(Value::Bool(false)), r) if r != Some(&Value::Bool(false)) => self.push(
                DriftKind::ObjectOpened,
                &walk::push(ptr, "additionalProperties"),
                "the closed object is opened: extra properties are accepted".into(),
            ),
            (None | Some(Value::Bool(true)), Some(Value::Bool(false)))
                if walk::is_object_schema(a_obj) =>
            {
                self.push(
                    DriftKind::ObjectClosed,
                    &walk::push(ptr, "additionalProperties"),
                    "the open object is closed: the model cannot send other properties".into(),
                )
            }
            (Some(av @ Value::Object(_)), Some(rv @ Value::Object(_))) => {
                self.node(
                    a_root,
                    av,
                    r_root,
                    rv,
                    &walk::push(ptr, "additionalProperties"),
                    depth + 1,
                );
            }
            (Some(av @ Value::Object(_)), _) => self.push(
                DriftKind::ObjectOpened,
                &walk::push(ptr, "additionalProperties"),
                format!("the value schema {} of extra properties is dropped", short(av)),
            ),
            _ => {}
        }
        let (ra, rr) = (names(a_obj.get("required")), names(r_obj.get("required")));
        for name in ra.difference(&rr) {
            self.push(
                DriftKind::RequiredDropped,
                &walk::push(&walk::push(ptr, "properties"), name),
                format!("`{name}` is no longer required"),
            );
        }
        let a_props = a_obj.get("properties").and_then(Value::as_object);
        let r_props = r_obj.get("properties").and_then(Value::as_object);
        for name in rr.difference(&ra) {
            if r_props.is_some_and(|p| p.contains_key(name)) {
                self.push(
                    DriftKind::RequiredAdded,
                    &walk::push(&walk::push(ptr, "properties"), name),
                    format!("`{name}` becomes required"),
                );
            }
        }
        if let Some(a_props) = a_props {
            for (name, a_child) in a_props {
                let at = walk::push(&walk::push(ptr, "properties"), name);
                match r_props.and_then(|p| p.get(name)) {
                    Some(r_child) => self.node(a_root, a_child, r_root, r_child, &at, depth + 1),
                    None => self.push(
                        DriftKind::PropertyMissing,
                        &at,
                        format!("property `{name}` is not in the rendering"),
                    ),
                }
            }
        }
        match (a_obj.get("items"), r_obj.get("items")) {
            (Some(ai @ Value::Object(_)), Some(ri)) => {
                self.node(a_root, ai, r_root, ri, &walk::push(ptr, "items"), depth + 1)
            }
            (Some(Value::Array(ai)), Some(Value::Array(ri))) => {
                for (i, (ac, rc)) in ai.iter().zip(ri).enumerate() {
                    self.node(a_root, ac, r_root, rc, &format!("{ptr}/items/{i}"), depth + 1);
                }
            }
            (Some(ai), None) if ai.as_object().is_some_and(|o| !o.is_empty()) || ai.is_array() => {
                self.push(
                    DriftKind::ConstraintDropped,
                    &walk::push(ptr, "items"),
                    format!("the item schema {} is dropped", short(ai)),
                )
            }
            _ => {}
        }
        if let (Some(Value::Array(ap)), Some(Value::Array(rp))) =
            (a_obj.get("prefixItems"), r_obj.get("prefixItems"))
        {
            for (i, (ac, rc)) in ap.iter().zip(rp).enumerate() {
                self.node(a_root, ac, r_root, rc, &format!("{ptr}/prefixItems/{i}"), depth + 1);
            }
        }
        if let Some(Value::Array(a_all)) = a_obj.get("allOf") {
            match r_obj.get("allOf") {
                Some(Value::Array(r_all)) if r_all.len() == a_all.len() => {
                    for (i, (ac, rc)) in a_all.iter().zip(r_all).enumerate() {
                        self.node(a_root, ac, r_root, rc, &format!("{ptr}/allOf/{i}"), depth + 1);
                    }
                }
                _ => self.push(
                    DriftKind::ConstraintDropped,
                    &walk::push(ptr, "allOf"),
                    format!("`allOf` with {} branches is dropped", a_all.len()),
                ),
            }
        }
        self.unions(a_root, a_obj, r_root, r_obj, ptr, depth);
    }

    fn unions(
        &mut self,
        a_root: &Value,
        a_obj: &Map<String, Value>,
        r_root: &Value,
        r_obj: &Map<String, Value>,
        ptr: &str,
        depth: usize,
    ) {
        let Some((keyword, Value::Array(a_branches))) =
            ["anyOf", "oneOf"].into_iter().find_map(|k| a_obj.get(k).map(|v| (k, v)))
        else {
            return;
        };
        let r_branches =
            ["anyOf", "oneOf"].into_iter().find_map(|k| r_obj.get(k)).and_then(Value::as_array);
        let at = walk::push(ptr, keyword);
        match r_branches {
            Some(r_branches) if r_branches.len() == a_branches.len() => {
                for (i, (ac, rc)) in a_branches.iter().zip(r_branches).enumerate() {
                    self.node(a_root, ac, r_root, rc, &format!("{at}/{i}"), depth + 1);
                }
                return;
            }
            Some(r_branches) => self.push(
                DriftKind::UnionLost,
                &at,
                format!(
                    "`{keyword}` has {} branches, the rendering {}",
                    a_branches.len(),
                    r_branches.len()
                ),
            ),
            None if ptr == "/inputSchema" || ptr == "/outputSchema" => self.push(
                DriftKind::RootUnionIgnored,
                &at,
                format!("the root `{keyword}` with {} branches is ignored", a_branches.len()),
            ),
            None => self.push(
                DriftKind::UnionLost,
                &at,
                format!("`{keyword}` with {} branches is gone", a_branches.len()),
            ),
        }
        // Branch-only properties: reachable on the server, absent from the rendering.
        let r_props = r_obj.get("properties").and_then(Value::as_object);
        for (i, branch) in a_branches.iter().enumerate() {
            let Ok(Value::Object(branch)) = resolved(a_root, branch) else { continue };
            if let Some(Value::Object(props)) = branch.get("properties") {
                for name in props.keys() {
                    if !r_props.is_some_and(|p| p.contains_key(name)) {
                        self.push(
                            DriftKind::PropertyMissing,
                            &walk::push(&format!("{at}/{i}/properties"), name),
                            format!("branch-only property `{name}` is not in the rendering"),
                        );
                    }
                }
            }
        }
    }
}

/// The node a `$ref` chain ends at (for cycle keys), or the node itself.
fn target_node<'a>(root: &'a Value, node: &'a Value) -> &'a Value {
    let mut current = node;
    for _ in 0..16 {
        match current.get("$ref").and_then(Value::as_str).and_then(|r| walk::resolve(root, r)) {
            Some(next) => current = next,
            None => break,
        }
    }
    current
}

/// The types of an `anyOf` whose every branch declares its types (a rendered type array).
fn branch_types(root: &Value, object: &Map<String, Value>) -> Option<BTreeSet<String>> {
    let branches = object.get("anyOf")?.as_array()?;
    let mut all = BTreeSet::new();
    for branch in branches {
        all.extend(types_of(&resolved(root, branch).ok()?)?);
    }
    Some(all)
}

fn join(types: &BTreeSet<String>) -> String {
    types.iter().map(String::as_str).collect::<Vec<_>>().join("|")
}

fn short(v: &Value) -> String {
    crate::adapters::excerpt(v)
}
