//! Merging the schemas that apply at one location (a [`Conj`]) into one [`Shape`]: `allOf` and
//! `$ref` are merged, not filtered; `anyOf`/`oneOf`/`if` become branch [`Group`]s that the
//! strategy builder expands one branch at a time.

use crate::schema::{Node, NodeId, Plan, Types};
use crate::value::json_eq;
use serde_json::Value;

/// The schemas that must all hold at one location.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub(crate) struct Conj {
    /// Nodes that apply (sorted, deduplicated).
    pub nodes: Vec<NodeId>,
    /// Branch groups already expanded: `(owner node, group kind)`.
    pub resolved: Vec<(NodeId, GroupKind)>,
    /// Nodes that must *not* hold (from the `else` side of `if`).
    pub negated: Vec<NodeId>,
}

impl Conj {
    pub fn of(node: NodeId) -> Self {
        Self { nodes: vec![node], ..Self::default() }
    }

    pub fn with_nodes(&self, extra: &[NodeId]) -> Self {
        let mut c = self.clone();
        c.nodes.extend_from_slice(extra);
        c.nodes.sort_unstable();
        c.nodes.dedup();
        c
    }

    /// Expands branch `branch` of `group`.
    pub fn choose(&self, group: &Group, branch: &Branch) -> Self {
        let mut c = self.with_nodes(&branch.add);
        c.resolved.push((group.owner, group.kind));
        c.resolved.sort_unstable();
        c.negated.extend_from_slice(&branch.negate);
        c.negated.sort_unstable();
        c.negated.dedup();
        c
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum GroupKind {
    AnyOf,
    OneOf,
    If,
}

/// One way to satisfy a group.
#[derive(Debug, Clone)]
pub(crate) struct Branch {
    pub add: Vec<NodeId>,
    pub negate: Vec<NodeId>,
}

/// A group of alternatives, of which the value must satisfy at least one (exactly one for
/// `oneOf`; for `if`, the `then` side together with `if`, or the `else` side).
#[derive(Debug, Clone)]
pub(crate) struct Group {
    pub owner: NodeId,
    pub kind: GroupKind,
    pub branches: Vec<Branch>,
}

/// A numeric bound: value and whether it is exclusive.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Bound {
    pub value: f64,
    pub exclusive: bool,
}

/// The merged constraints at one location.
#[derive(Debug, Clone)]
pub(crate) struct Shape {
    pub ptr: String,
    /// Why nothing can satisfy this location, if so.
    pub unsat: Option<String>,
    pub types: Types,
    /// Types to generate: `types`, narrowed to the families whose keywords appear when `type` is
    /// absent (an untyped `{"minLength": 1}` is generated as a string).
    pub gen_types: Types,
    pub enum_: Option<Vec<Value>>,
    pub enum_is_const: bool,
    /// Values excluded by `not: {enum/const}`.
    pub excluded: Vec<Value>,
    pub lo: Option<Bound>,
    pub hi: Option<Bound>,
    pub multiple_of: Vec<f64>,
    pub min_len: u64,
    pub max_len: Option<u64>,
    pub patterns: Vec<String>,
    pub formats: Vec<String>,
    pub arr_nodes: Vec<NodeId>,
    pub min_items: u64,
    pub max_items: Option<u64>,
    pub unique: bool,
    pub contains: Vec<(NodeId, u64, Option<u64>)>,
    pub obj_nodes: Vec<NodeId>,
    pub required: Vec<String>,
    /// Properties that must be absent (from `not: {required: [..]}`).
    pub forbidden: Vec<String>,
    pub min_props: u64,
    pub max_props: Option<u64>,
    pub dep_required: Vec<(String, Vec<String>)>,
    pub dep_schemas: Vec<(String, NodeId)>,
    pub prop_names: Vec<NodeId>,
    pub groups: Vec<Group>,
    /// `not` subschemas not folded into the constraints above (checked by the oracle).
    pub nots: Vec<NodeId>,
    pub defaults: Vec<Value>,
    pub examples: Vec<Value>,
    /// Keywords present that the builder does not model (the oracle enforces them).
    pub unmodelled: bool,
}

impl Shape {
    fn new(ptr: String) -> Self {
        Self {
            ptr,
            unsat: None,
            types: Types::ALL,
            gen_types: Types::ALL,
            enum_: None,
            enum_is_const: false,
            excluded: Vec::new(),
            lo: None,
            hi: None,
            multiple_of: Vec::new(),
            min_len: 0,
            max_len: None,
            patterns: Vec::new(),
            formats: Vec::new(),
            arr_nodes: Vec::new(),
            min_items: 0,
            max_items: None,
            unique: false,
            contains: Vec::new(),
            obj_nodes: Vec::new(),
            required: Vec::new(),
            forbidden: Vec::new(),
            min_props: 0,
            max_props: None,
            dep_required: Vec::new(),
            dep_schemas: Vec::new(),
            prop_names: Vec::new(),
            groups: Vec::new(),
            nots: Vec::new(),
            defaults: Vec::new(),
            examples: Vec::new(),
            unmodelled: false,
        }
    }

    /// Whether the shape accepts every JSON value as far as its own keywords go.
    pub fn is_unconstrained(&self) -> bool {
        self.unsat.is_none()
            && self.types == Types::ALL
            && self.enum_.is_none()
            && self.excluded.is_empty()
            && self.lo.is_none()
            && self.hi.is_none()
            && self.multiple_of.is_empty()
            && self.min_len == 0
            && self.max_len.is_none()
            && self.patterns.is_empty()
            && self.formats.iter().all(|f| !crate::format::is_asserted(f))
            && self.arr_nodes.is_empty()
            && self.contains.is_empty()
            && self.obj_nodes.is_empty()
            && self.forbidden.is_empty()
            && self.groups.is_empty()
            && self.nots.is_empty()
            && !self.unmodelled
    }
}

fn tighter_lo(cur: Option<Bound>, new: Bound) -> Option<Bound> {
    match cur {
        Some(c) if c.value > new.value || (c.value == new.value && c.exclusive) => Some(c),
        _ => Some(new),
    }
}

fn tighter_hi(cur: Option<Bound>, new: Bound) -> Option<Bound> {
    match cur {
        Some(c) if c.value < new.value || (c.value == new.value && c.exclusive) => Some(c),
        _ => Some(new),
    }
}

/// Merges the nodes of `conj` into one shape.
pub(crate) fn flatten(plan: &Plan, conj: &Conj) -> Shape {
    let ptr = conj.nodes.first().map(|&n| plan.node(n).ptr.clone()).unwrap_or_default();
    let mut s = Shape::new(ptr);
    let mut seen: Vec<NodeId> = Vec::new();
    let mut stack: Vec<NodeId> = conj.nodes.iter().rev().copied().collect();
    let mut declared_types = false;
    let mut families = 0_u8;
    while let Some(id) = stack.pop() {
        if seen.contains(&id) {
            continue;
        }
        seen.push(id);
        let n = plan.node(id);
        if let Some(b) = n.boolean {
            if !b {
                s.unsat = Some(format!("the schema at `{}` is `false`", n.ptr));
            }
            continue;
        }
        if let Some(r) = n.ref_ {
            stack.push(r);
        }
        for &a in n.all_of.iter().rev() {
            stack.push(a);
        }
        if let Some(t) = n.types {
            s.types = Types(s.types.0 & t.0);
            declared_types = true;
        }
        merge_enum(&mut s, n);
        families |= merge_numbers(&mut s, n);
        families |= merge_strings(&mut s, n);
        families |= merge_array(&mut s, id, n);
        families |= merge_object(&mut s, id, n);
        push_groups(&mut s, conj, id, n);
        merge_nots_and_annotations(&mut s, n);
    }
    s.nots.extend(conj.negated.iter().copied());
    fold_nots(plan, &mut s);
    if !declared_types && families != 0 && s.enum_.is_none() {
        s.gen_types = Types(s.types.0 & families);
    } else {
        s.gen_types = s.types;
    }
    check(&mut s);
    s
}

/// `enum` and `const`: the members common to every node.
fn merge_enum(s: &mut Shape, n: &Node) {
    if let Some(e) = &n.enum_ {
        s.enum_is_const |= n.is_const;
        s.enum_ = Some(match s.enum_.take() {
            None => e.clone(),
            Some(cur) => cur.into_iter().filter(|x| e.iter().any(|y| json_eq(x, y))).collect(),
        });
    }
}

/// The numeric bounds, `multipleOf` and `format` (whose integer formats bound the value too).
/// Returns the number families when the node has a numeric keyword, else no family.
fn merge_numbers(s: &mut Shape, n: &Node) -> u8 {
    if let Some(v) = n.minimum {
        s.lo = tighter_lo(s.lo, Bound { value: v, exclusive: false });
    }
    if let Some(v) = n.exclusive_minimum {
        s.lo = tighter_lo(s.lo, Bound { value: v, exclusive: true });
    }
    if let Some(v) = n.maximum {
        s.hi = tighter_hi(s.hi, Bound { value: v, exclusive: false });
    }
    if let Some(v) = n.exclusive_maximum {
        s.hi = tighter_hi(s.hi, Bound { value: v, exclusive: true });
    }
    if let Some(m) = n.multiple_of {
        s.multiple_of.push(m);
    }
    if let Some(f) = &n.format {
        if let Some((lo, hi)) = crate::format::int_range(f) {
            s.lo = tighter_lo(s.lo, Bound { value: lo, exclusive: false });
            s.hi = tighter_hi(s.hi, Bound { value: hi, exclusive: false });
        }
        if !s.formats.contains(f) {
            s.formats.push(f.clone());
        }
    }
    if n.minimum.is_some()
        || n.maximum.is_some()
        || n.exclusive_minimum.is_some()
        || n.exclusive_maximum.is_some()
        || n.multiple_of.is_some()
    {
        Types::INT | Types::FRAC
    } else {
        0
    }
}

/// The string lengths and patterns. Returns the string family when the node has one of them.
fn merge_strings(s: &mut Shape, n: &Node) -> u8 {
    if let Some(v) = n.min_length {
        s.min_len = s.min_len.max(v);
    }
    if let Some(v) = n.max_length {
        s.max_len = Some(s.max_len.map_or(v, |c| c.min(v)));
    }
    if let Some(p) = &n.pattern
        && !s.patterns.contains(p)
    {
        s.patterns.push(p.clone());
    }
    if n.min_length.is_some() || n.max_length.is_some() || n.pattern.is_some() {
        Types::STR
    } else {
        0
    }
}

/// The array keywords: the node joins the array nodes, its counts tighten the shape's. Returns
/// the array family when the node has an array keyword.
fn merge_array(s: &mut Shape, id: NodeId, n: &Node) -> u8 {
    if !n.has_array_keywords() {
        return 0;
    }
    s.arr_nodes.push(id);
    if let Some(v) = n.min_items {
        s.min_items = s.min_items.max(v);
    }
    if let Some(v) = n.max_items {
        s.max_items = Some(s.max_items.map_or(v, |c| c.min(v)));
    }
    s.unique |= n.unique_items;
    if let Some(c) = n.contains {
        let min = n.min_contains.unwrap_or(1);
        s.contains.push((c, min, n.max_contains));
    }
    Types::ARR
}

/// The object keywords: the node joins the object nodes, its requirements and counts add to the
/// shape's. Returns the object family when the node has an object keyword.
fn merge_object(s: &mut Shape, id: NodeId, n: &Node) -> u8 {
    if !n.has_object_keywords() {
        return 0;
    }
    s.obj_nodes.push(id);
    for r in &n.required {
        if !s.required.contains(r) {
            s.required.push(r.clone());
        }
    }
    if let Some(v) = n.min_properties {
        s.min_props = s.min_props.max(v);
    }
    if let Some(v) = n.max_properties {
        s.max_props = Some(s.max_props.map_or(v, |c| c.min(v)));
    }
    s.dep_required.extend(n.dependent_required.iter().cloned());
    s.dep_schemas.extend(n.dependent_schemas.iter().cloned());
    s.prop_names.extend(n.property_names);
    Types::OBJ
}

/// The node's `anyOf`, `oneOf` and `if` as branch groups, unless `conj` has already chosen a
/// branch of them.
fn push_groups(s: &mut Shape, conj: &Conj, id: NodeId, n: &Node) {
    let resolved = |k| conj.resolved.contains(&(id, k));
    if !n.any_of.is_empty() && !resolved(GroupKind::AnyOf) {
        let branches = n.any_of.iter().map(|&b| Branch { add: vec![b], negate: vec![] }).collect();
        s.groups.push(Group { owner: id, kind: GroupKind::AnyOf, branches });
    }
    if !n.one_of.is_empty() && !resolved(GroupKind::OneOf) {
        let branches = n.one_of.iter().map(|&b| Branch { add: vec![b], negate: vec![] }).collect();
        s.groups.push(Group { owner: id, kind: GroupKind::OneOf, branches });
    }
    if let Some(cond) = n.if_
        && (n.then_.is_some() || n.else_.is_some())
        && !resolved(GroupKind::If)
    {
        let then_side =
            Branch { add: [Some(cond), n.then_].into_iter().flatten().collect(), negate: vec![] };
        let else_side = Branch { add: n.else_.into_iter().collect(), negate: vec![cond] };
        s.groups.push(Group {
            owner: id,
            kind: GroupKind::If,
            branches: vec![then_side, else_side],
        });
    }
}

/// `not` (folded later), the defaults and examples, and whether unmodelled keywords are present.
fn merge_nots_and_annotations(s: &mut Shape, n: &Node) {
    if let Some(not) = n.not {
        s.nots.push(not);
    }
    if let Some(d) = &n.default {
        s.defaults.push(d.clone());
    }
    s.examples.extend(n.examples.iter().cloned());
    s.unmodelled |= !n.unmodelled.is_empty();
}

/// Folds simple `not` subschemas (only `type`, `enum`/`const` or `required`) into the shape.
fn fold_nots(plan: &Plan, s: &mut Shape) {
    let mut rest = Vec::new();
    for &id in &s.nots {
        let n = plan.node(id);
        let only_type = n.types.is_some()
            && n.enum_.is_none()
            && !n.has_object_keywords()
            && !n.has_array_keywords()
            && is_plain(n);
        let only_enum = n.enum_.is_some()
            && n.types.is_none()
            && !n.has_object_keywords()
            && !n.has_array_keywords()
            && is_plain(n);
        let only_required = n.types.is_none()
            && n.enum_.is_none()
            && n.required.len() == 1
            && n.properties.is_empty()
            && n.pattern_properties.is_empty()
            && n.additional_properties.is_none()
            && n.property_names.is_none()
            && n.min_properties.is_none()
            && n.max_properties.is_none()
            && n.dependent_required.is_empty()
            && n.dependent_schemas.is_empty()
            && !n.has_array_keywords()
            && is_plain(n);
        if n.boolean == Some(true) {
            s.unsat = Some(format!("`not: true` at `{}` rejects everything", n.ptr));
        } else if n.boolean == Some(false) {
            // `not: false` accepts everything.
        } else if only_type {
            s.types = Types(s.types.0 & !n.types.map_or(0, |t| t.0));
        } else if only_enum {
            s.excluded.extend(n.enum_.iter().flatten().cloned());
        } else if only_required {
            // An object must lack the property; non-objects satisfy `not` trivially.
            s.forbidden.push(n.required[0].clone());
        } else {
            rest.push(id);
        }
    }
    s.nots = rest;
}

/// No keywords besides the ones the `not` folding looks at.
fn is_plain(n: &crate::schema::Node) -> bool {
    n.ref_.is_none()
        && n.all_of.is_empty()
        && n.any_of.is_empty()
        && n.one_of.is_empty()
        && n.not.is_none()
        && n.if_.is_none()
        && n.minimum.is_none()
        && n.maximum.is_none()
        && n.exclusive_minimum.is_none()
        && n.exclusive_maximum.is_none()
        && n.multiple_of.is_none()
        && n.min_length.is_none()
        && n.max_length.is_none()
        && n.pattern.is_none()
        && n.format.is_none()
        && n.boolean.is_none()
}

fn check(s: &mut Shape) {
    if s.unsat.is_some() {
        return;
    }
    if let Some(e) = &mut s.enum_ {
        let types = s.types;
        let excluded = &s.excluded;
        e.retain(|v| types.has(Types::of(v)) && !excluded.iter().any(|x| json_eq(x, v)));
        if e.is_empty() {
            s.unsat = Some(format!(
                "no `enum`/`const` value at `{}` satisfies the other keywords",
                s.ptr
            ));
        }
        return;
    }
    if s.types.0 == 0 {
        s.unsat = Some(format!("the types allowed at `{}` have no overlap", s.ptr));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{compile, detect_dialect};
    use serde_json::json;

    fn shape(v: &Value) -> Shape {
        let mut notes = Vec::new();
        let d = detect_dialect(v, &mut notes);
        let plan = compile(v, d, notes).expect("compiles");
        flatten(&plan, &Conj::of(plan.root))
    }

    #[test]
    fn all_of_is_merged() {
        let s = shape(
            &json!({"allOf": [{"type": ["integer", "string"], "minimum": 1}, {"type": "integer", "maximum": 5, "exclusiveMinimum": 1}]}),
        );
        assert_eq!(s.types, Types(Types::INT));
        assert_eq!(s.lo, Some(Bound { value: 1.0, exclusive: true }));
        assert_eq!(s.hi, Some(Bound { value: 5.0, exclusive: false }));
    }

    #[test]
    fn contradictions_are_unsat() {
        assert!(
            shape(&json!({"allOf": [{"type": "string"}, {"type": "integer"}]})).unsat.is_some()
        );
        assert!(shape(&json!({"enum": [1, 2], "const": 3})).unsat.is_some());
        assert!(shape(&json!(false)).unsat.is_some());
        assert!(
            shape(&json!({"not": {}})).unsat.is_none(),
            "not {{}} is not folded, the oracle decides"
        );
    }

    #[test]
    fn untyped_keywords_narrow_generation() {
        let s = shape(&json!({"minLength": 2}));
        assert_eq!(s.types, Types::ALL);
        assert_eq!(s.gen_types, Types(Types::STR));
    }

    #[test]
    fn simple_nots_are_folded() {
        let s = shape(&json!({"type": ["string", "null"], "not": {"type": "null"}}));
        assert_eq!(s.types, Types(Types::STR));
        let s = shape(&json!({"enum": [1, 2, 3], "not": {"enum": [2]}}));
        assert_eq!(s.enum_, Some(vec![json!(1), json!(3)]));
    }
}
