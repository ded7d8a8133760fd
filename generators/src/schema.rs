//! Compiling a schema document into an arena of [`Node`]s: one per schema location, keywords
//! parsed once, `$ref`s resolved to node ids (so recursive schemas are finite graphs).

use crate::pointer::escape;
use crate::refs::percent_decode;
use crate::{Dialect, SchemaError, SchemaErrorKind};
use serde_json::{Map, Value};
use std::collections::HashMap;

/// Index of a node in [`Plan::nodes`].
pub(crate) type NodeId = u32;

/// Deepest nesting of JSON values the compiler accepts.
///
/// Why: the validator and serde recurse; real tool schemas nest at most 11 levels (see the corpus
/// provenance), so 200 leaves ample room while keeping every recursion far from the stack limit.
pub(crate) const MAX_DEPTH: usize = 200;

/// Largest number of schema locations compiled.
///
/// Why: bounds compile time and memory for adversarial schemas; the largest corpus tool has a few
/// hundred locations.
pub(crate) const MAX_NODES: usize = 50_000;

/// Set of JSON types, as bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Types(pub u8);

impl Types {
    pub const NULL: u8 = 1;
    pub const BOOL: u8 = 2;
    pub const INT: u8 = 4;
    /// Numbers that are not integers.
    pub const FRAC: u8 = 8;
    pub const STR: u8 = 16;
    pub const ARR: u8 = 32;
    pub const OBJ: u8 = 64;
    pub const ALL: Types = Types(127);

    pub fn has(self, bits: u8) -> bool {
        self.0 & bits != 0
    }

    fn from_name(name: &str) -> Option<u8> {
        Some(match name {
            "null" => Self::NULL,
            "boolean" => Self::BOOL,
            "integer" => Self::INT,
            "number" => Self::INT | Self::FRAC,
            "string" => Self::STR,
            "array" => Self::ARR,
            "object" => Self::OBJ,
            _ => return None,
        })
    }

    /// The type bit of a value.
    pub fn of(value: &Value) -> u8 {
        match value {
            Value::Null => Self::NULL,
            Value::Bool(_) => Self::BOOL,
            Value::Number(n) => {
                if n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0) {
                    Self::INT
                } else {
                    Self::FRAC
                }
            }
            Value::String(_) => Self::STR,
            Value::Array(_) => Self::ARR,
            Value::Object(_) => Self::OBJ,
        }
    }
}

/// One schema location with its keywords parsed.
#[derive(Debug, Clone, Default)]
pub(crate) struct Node {
    /// JSON pointer of this location in the schema document.
    pub ptr: String,
    /// `Some(b)` for a boolean schema.
    pub boolean: Option<bool>,
    pub types: Option<Types>,
    pub enum_: Option<Vec<Value>>,
    /// Whether `enum_` came from `const`.
    pub is_const: bool,
    pub minimum: Option<f64>,
    pub maximum: Option<f64>,
    pub exclusive_minimum: Option<f64>,
    pub exclusive_maximum: Option<f64>,
    pub multiple_of: Option<f64>,
    pub min_length: Option<u64>,
    pub max_length: Option<u64>,
    pub pattern: Option<String>,
    pub format: Option<String>,
    pub prefix_items: Vec<NodeId>,
    pub items: Option<NodeId>,
    pub contains: Option<NodeId>,
    pub min_contains: Option<u64>,
    pub max_contains: Option<u64>,
    pub min_items: Option<u64>,
    pub max_items: Option<u64>,
    pub unique_items: bool,
    pub properties: Vec<(String, NodeId)>,
    pub pattern_properties: Vec<(String, NodeId)>,
    pub additional_properties: Option<NodeId>,
    pub property_names: Option<NodeId>,
    pub required: Vec<String>,
    pub min_properties: Option<u64>,
    pub max_properties: Option<u64>,
    pub dependent_required: Vec<(String, Vec<String>)>,
    pub dependent_schemas: Vec<(String, NodeId)>,
    pub all_of: Vec<NodeId>,
    pub any_of: Vec<NodeId>,
    pub one_of: Vec<NodeId>,
    pub not: Option<NodeId>,
    pub if_: Option<NodeId>,
    pub then_: Option<NodeId>,
    pub else_: Option<NodeId>,
    pub ref_: Option<NodeId>,
    pub default: Option<Value>,
    pub examples: Vec<Value>,
    /// Keywords seen that the generator does not model (the oracle still enforces them).
    pub unmodelled: Vec<&'static str>,
}

impl Node {
    /// Whether this node has any object keyword.
    pub fn has_object_keywords(&self) -> bool {
        !self.properties.is_empty()
            || !self.pattern_properties.is_empty()
            || self.additional_properties.is_some()
            || self.property_names.is_some()
            || !self.required.is_empty()
            || self.min_properties.is_some()
            || self.max_properties.is_some()
            || !self.dependent_required.is_empty()
            || !self.dependent_schemas.is_empty()
    }

    /// Whether this node has any array keyword.
    pub fn has_array_keywords(&self) -> bool {
        !self.prefix_items.is_empty()
            || self.items.is_some()
            || self.contains.is_some()
            || self.min_items.is_some()
            || self.max_items.is_some()
            || self.unique_items
    }
}

/// The compiled schema document.
pub(crate) struct Plan {
    pub nodes: Vec<Node>,
    pub root: NodeId,
    pub dialect: Dialect,
    pub notes: Vec<String>,
}

impl Plan {
    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id as usize]
    }
}

/// Picks the dialect from `$schema`; unknown URIs fall back to 2020-12 with a note.
pub(crate) fn detect_dialect(schema: &Value, notes: &mut Vec<String>) -> Dialect {
    let Some(uri) = schema.get("$schema").and_then(Value::as_str) else {
        return Dialect::Draft202012;
    };
    let trimmed = uri.trim_end_matches('#').trim_end_matches('/');
    let trimmed = trimmed
        .strip_prefix("https://")
        .or_else(|| trimmed.strip_prefix("http://"))
        .unwrap_or(trimmed);
    match trimmed {
        "json-schema.org/draft-04/schema" => Dialect::Draft4,
        "json-schema.org/draft-06/schema" => Dialect::Draft6,
        "json-schema.org/draft-07/schema" => Dialect::Draft7,
        "json-schema.org/draft/2019-09/schema" => Dialect::Draft201909,
        "json-schema.org/draft/2020-12/schema" => Dialect::Draft202012,
        _ => {
            notes.push(format!("unknown $schema `{uri}`: read as JSON Schema 2020-12"));
            Dialect::Draft202012
        }
    }
}

/// Measures nesting depth without recursion; `None` when it exceeds `limit`.
pub(crate) fn depth_within(value: &Value, limit: usize) -> bool {
    let mut stack: Vec<(&Value, usize)> = vec![(value, 1)];
    while let Some((v, d)) = stack.pop() {
        if d > limit {
            return false;
        }
        match v {
            Value::Array(a) => stack.extend(a.iter().map(|c| (c, d + 1))),
            Value::Object(o) => stack.extend(o.values().map(|c| (c, d + 1))),
            _ => {}
        }
    }
    true
}

/// Compiles the document into a [`Plan`].
pub(crate) fn compile(
    root: &Value,
    dialect: Dialect,
    notes: Vec<String>,
) -> Result<Plan, SchemaError> {
    let mut c =
        Compiler { root, dialect, nodes: Vec::new(), by_ptr: HashMap::new(), anchors: None, notes };
    let root_id = c.compile_at("", root)?;
    let Compiler { nodes, notes, .. } = c;
    Ok(Plan { nodes, root: root_id, dialect, notes })
}

struct Compiler<'a> {
    root: &'a Value,
    dialect: Dialect,
    nodes: Vec<Node>,
    by_ptr: HashMap<String, NodeId>,
    anchors: Option<HashMap<String, String>>,
    notes: Vec<String>,
}

fn malformed(msg: impl Into<String>, ptr: &str) -> SchemaError {
    SchemaError::new(SchemaErrorKind::Malformed(msg.into()), ptr)
}

fn as_u64(v: &Value, ptr: &str, kw: &str) -> Result<u64, SchemaError> {
    match v {
        Value::Number(n) => {
            if let Some(u) = n.as_u64() {
                Ok(u)
            } else if let Some(f) = n.as_f64().filter(|f| *f >= 0.0 && f.fract() == 0.0) {
                #[expect(
                    clippy::cast_possible_truncation,
                    clippy::cast_sign_loss,
                    reason = "checked non-negative integral; saturates"
                )]
                Ok(f as u64)
            } else {
                Err(malformed(format!("`{kw}` must be a non-negative integer"), ptr))
            }
        }
        _ => Err(malformed(format!("`{kw}` must be a non-negative integer"), ptr)),
    }
}

fn as_f64(v: &Value, ptr: &str, kw: &str) -> Result<f64, SchemaError> {
    v.as_f64()
        .filter(|f| f.is_finite())
        .ok_or_else(|| malformed(format!("`{kw}` must be a number"), ptr))
}

impl Compiler<'_> {
    fn alloc(&mut self, ptr: &str) -> Result<NodeId, SchemaError> {
        if self.nodes.len() >= MAX_NODES {
            return Err(SchemaError::new(
                SchemaErrorKind::TooLarge(format!("more than {MAX_NODES} subschemas")),
                ptr,
            ));
        }
        let id = NodeId::try_from(self.nodes.len()).expect("MAX_NODES fits in u32");
        self.nodes.push(Node { ptr: ptr.to_owned(), ..Node::default() });
        self.by_ptr.insert(ptr.to_owned(), id);
        Ok(id)
    }

    fn compile_at(&mut self, ptr: &str, schema: &Value) -> Result<NodeId, SchemaError> {
        if let Some(&id) = self.by_ptr.get(ptr) {
            return Ok(id);
        }
        let id = self.alloc(ptr)?;
        let node = match schema {
            Value::Bool(b) => Node { ptr: ptr.to_owned(), boolean: Some(*b), ..Node::default() },
            Value::Object(obj) => self.compile_object(ptr, obj)?,
            _ => return Err(malformed("a schema must be an object or a boolean", ptr)),
        };
        self.nodes[id as usize] = node;
        Ok(id)
    }

    fn child(&mut self, ptr: &str, kw: &str, v: &Value) -> Result<NodeId, SchemaError> {
        self.compile_at(&format!("{ptr}/{}", escape(kw)), v)
    }

    fn child_list(&mut self, ptr: &str, kw: &str, v: &Value) -> Result<Vec<NodeId>, SchemaError> {
        let arr = v
            .as_array()
            .ok_or_else(|| malformed(format!("`{kw}` must be an array of schemas"), ptr))?;
        arr.iter()
            .enumerate()
            .map(|(i, s)| self.compile_at(&format!("{ptr}/{kw}/{i}"), s))
            .collect()
    }

    fn child_map(
        &mut self,
        ptr: &str,
        kw: &str,
        v: &Value,
    ) -> Result<Vec<(String, NodeId)>, SchemaError> {
        let map = v
            .as_object()
            .ok_or_else(|| malformed(format!("`{kw}` must be an object of schemas"), ptr))?;
        map.iter()
            .map(|(k, s)| {
                Ok((k.clone(), self.compile_at(&format!("{ptr}/{kw}/{}", escape(k)), s)?))
            })
            .collect()
    }

    #[expect(clippy::too_many_lines, reason = "one arm per keyword reads best as a flat list")]
    fn compile_object(&mut self, ptr: &str, obj: &Map<String, Value>) -> Result<Node, SchemaError> {
        let mut n = Node { ptr: ptr.to_owned(), ..Node::default() };
        let d = self.dialect;
        let modern = matches!(d, Dialect::Draft201909 | Dialect::Draft202012);
        if let Some(r) = obj.get("$ref") {
            let r = r.as_str().ok_or_else(|| malformed("`$ref` must be a string", ptr))?;
            n.ref_ = Some(self.resolve_ref(ptr, r)?);
            if !modern {
                // Before 2019-09, keywords beside `$ref` are ignored.
                return Ok(n);
            }
        }
        for (kw, v) in obj {
            match kw.as_str() {
                "type" => {
                    let mut bits = 0;
                    let names: Vec<&Value> = match v {
                        Value::Array(a) => a.iter().collect(),
                        other => vec![other],
                    };
                    for name in names {
                        let name = name.as_str().ok_or_else(|| {
                            malformed("`type` must be a string or an array of strings", ptr)
                        })?;
                        bits |= Types::from_name(name)
                            .ok_or_else(|| malformed(format!("unknown type `{name}`"), ptr))?;
                    }
                    n.types = Some(Types(bits));
                }
                "enum" => {
                    let a =
                        v.as_array().ok_or_else(|| malformed("`enum` must be an array", ptr))?;
                    if n.enum_.is_none() {
                        n.enum_ = Some(a.clone());
                    } else if let Some(e) = &mut n.enum_ {
                        // `const` was seen first: keep the intersection.
                        e.retain(|x| a.iter().any(|y| crate::value::json_eq(x, y)));
                    }
                }
                "const" if d != Dialect::Draft4 => {
                    let keep = n
                        .enum_
                        .as_ref()
                        .is_none_or(|e| e.iter().any(|y| crate::value::json_eq(v, y)));
                    n.enum_ = Some(if keep { vec![v.clone()] } else { Vec::new() });
                    n.is_const = true;
                }
                "minimum" => n.minimum = Some(as_f64(v, ptr, kw)?),
                "maximum" => n.maximum = Some(as_f64(v, ptr, kw)?),
                "exclusiveMinimum" | "exclusiveMaximum" => {
                    if let Value::Bool(b) = v {
                        // Draft-04 form: a flag on `minimum` / `maximum`.
                        if *b {
                            let (bound, target) = if kw == "exclusiveMinimum" {
                                (obj.get("minimum"), &mut n.exclusive_minimum)
                            } else {
                                (obj.get("maximum"), &mut n.exclusive_maximum)
                            };
                            if let Some(bound) = bound {
                                *target = Some(as_f64(bound, ptr, kw)?);
                            }
                        }
                    } else if kw == "exclusiveMinimum" {
                        n.exclusive_minimum = Some(as_f64(v, ptr, kw)?);
                    } else {
                        n.exclusive_maximum = Some(as_f64(v, ptr, kw)?);
                    }
                }
                "multipleOf" => {
                    let m = as_f64(v, ptr, kw)?;
                    if m <= 0.0 {
                        return Err(malformed("`multipleOf` must be greater than 0", ptr));
                    }
                    n.multiple_of = Some(m);
                }
                "minLength" => n.min_length = Some(as_u64(v, ptr, kw)?),
                "maxLength" => n.max_length = Some(as_u64(v, ptr, kw)?),
                "pattern" => {
                    n.pattern = Some(
                        v.as_str()
                            .ok_or_else(|| malformed("`pattern` must be a string", ptr))?
                            .to_owned(),
                    )
                }
                "format" => n.format = v.as_str().map(str::to_owned),
                "prefixItems" if d == Dialect::Draft202012 => {
                    n.prefix_items = self.child_list(ptr, kw, v)?
                }
                "items" => {
                    if v.is_array() && d != Dialect::Draft202012 {
                        n.prefix_items = self.child_list(ptr, kw, v)?;
                        if let Some(add) = obj.get("additionalItems") {
                            n.items = Some(self.child(ptr, "additionalItems", add)?);
                        }
                    } else {
                        n.items = Some(self.child(ptr, kw, v)?);
                    }
                }
                "contains" if d != Dialect::Draft4 => n.contains = Some(self.child(ptr, kw, v)?),
                "minContains" if modern => n.min_contains = Some(as_u64(v, ptr, kw)?),
                "maxContains" if modern => n.max_contains = Some(as_u64(v, ptr, kw)?),
                "minItems" => n.min_items = Some(as_u64(v, ptr, kw)?),
                "maxItems" => n.max_items = Some(as_u64(v, ptr, kw)?),
                "uniqueItems" => n.unique_items = v.as_bool().unwrap_or(false),
                "properties" => n.properties = self.child_map(ptr, kw, v)?,
                "patternProperties" => n.pattern_properties = self.child_map(ptr, kw, v)?,
                "additionalProperties" => n.additional_properties = Some(self.child(ptr, kw, v)?),
                "propertyNames" if d != Dialect::Draft4 => {
                    n.property_names = Some(self.child(ptr, kw, v)?)
                }
                "required" => {
                    // Draft-03 style `required: true` inside a property is ignored, as validators do.
                    if let Some(a) = v.as_array() {
                        n.required =
                            a.iter().filter_map(|x| x.as_str().map(str::to_owned)).collect();
                        if n.required.len() != a.len() {
                            return Err(malformed("`required` must be an array of strings", ptr));
                        }
                    } else if !v.is_boolean() {
                        return Err(malformed("`required` must be an array of strings", ptr));
                    }
                }
                "minProperties" => n.min_properties = Some(as_u64(v, ptr, kw)?),
                "maxProperties" => n.max_properties = Some(as_u64(v, ptr, kw)?),
                "dependentRequired" if modern => {
                    n.dependent_required.extend(self.string_lists(ptr, kw, v)?)
                }
                "dependentSchemas" if modern => {
                    n.dependent_schemas.extend(self.child_map(ptr, kw, v)?)
                }
                "dependencies" if !modern => {
                    let map = v
                        .as_object()
                        .ok_or_else(|| malformed("`dependencies` must be an object", ptr))?;
                    for (k, dep) in map {
                        if let Some(list) = dep.as_array() {
                            let names =
                                list.iter().filter_map(|x| x.as_str().map(str::to_owned)).collect();
                            n.dependent_required.push((k.clone(), names));
                        } else {
                            let id =
                                self.compile_at(&format!("{ptr}/dependencies/{}", escape(k)), dep)?;
                            n.dependent_schemas.push((k.clone(), id));
                        }
                    }
                }
                "allOf" => n.all_of = self.child_list(ptr, kw, v)?,
                "anyOf" => n.any_of = self.child_list(ptr, kw, v)?,
                "oneOf" => n.one_of = self.child_list(ptr, kw, v)?,
                "not" => n.not = Some(self.child(ptr, kw, v)?),
                "if" if !matches!(d, Dialect::Draft4 | Dialect::Draft6) => {
                    n.if_ = Some(self.child(ptr, kw, v)?)
                }
                "then" if !matches!(d, Dialect::Draft4 | Dialect::Draft6) => {
                    n.then_ = Some(self.child(ptr, kw, v)?)
                }
                "else" if !matches!(d, Dialect::Draft4 | Dialect::Draft6) => {
                    n.else_ = Some(self.child(ptr, kw, v)?)
                }
                "default" => n.default = Some(v.clone()),
                "examples" => n.examples = v.as_array().cloned().unwrap_or_default(),
                "unevaluatedProperties" if modern => n.unmodelled.push("unevaluatedProperties"),
                "unevaluatedItems" if modern => n.unmodelled.push("unevaluatedItems"),
                "$dynamicRef" | "$recursiveRef" => n.unmodelled.push("$dynamicRef"),
                _ => {}
            }
        }
        Ok(n)
    }

    fn string_lists(
        &self,
        ptr: &str,
        kw: &str,
        v: &Value,
    ) -> Result<Vec<(String, Vec<String>)>, SchemaError> {
        let map =
            v.as_object().ok_or_else(|| malformed(format!("`{kw}` must be an object"), ptr))?;
        Ok(map
            .iter()
            .map(|(k, list)| {
                let names = list
                    .as_array()
                    .map(|a| a.iter().filter_map(|x| x.as_str().map(str::to_owned)).collect());
                (k.clone(), names.unwrap_or_default())
            })
            .collect())
    }

    fn resolve_ref(&mut self, ptr: &str, reference: &str) -> Result<NodeId, SchemaError> {
        let target_ptr = if let Some(fragment) = reference.strip_prefix('#') {
            let fragment = percent_decode(fragment);
            if fragment.is_empty() || fragment.starts_with('/') {
                fragment
            } else {
                self.anchor(&fragment).ok_or_else(|| {
                    malformed(format!("`$ref` anchor `{reference}` is not defined"), ptr)
                })?
            }
        } else if let Some(p) = self.id_target(reference) {
            p
        } else if reference.contains(':') || reference.starts_with("//") {
            return Err(SchemaError::new(SchemaErrorKind::RemoteRef(reference.to_owned()), ptr));
        } else {
            return Err(SchemaError::new(
                SchemaErrorKind::Unsupported(format!(
                    "relative `$ref` `{reference}` (only local `#...` references are followed)"
                )),
                ptr,
            ));
        };
        if let Some(&id) = self.by_ptr.get(&target_ptr) {
            return Ok(id);
        }
        let target = self
            .root
            .pointer(&target_ptr)
            .ok_or_else(|| malformed(format!("`$ref` `{reference}` points to nothing"), ptr))?;
        self.compile_at(&target_ptr, target)
    }

    /// A `$ref` equal to some subschema's `$id` (absolute or relative) resolves there.
    fn id_target(&self, reference: &str) -> Option<String> {
        let mut stack: Vec<(&Value, String)> = vec![(self.root, String::new())];
        while let Some((v, p)) = stack.pop() {
            if let Value::Object(o) = v {
                if let Some(id) = o.get("$id").or_else(|| o.get("id")).and_then(Value::as_str)
                    && !p.is_empty()
                    && (id == reference || id.ends_with(&format!("/{reference}")))
                {
                    return Some(p);
                }
                for (k, c) in o {
                    if matches!(k.as_str(), "enum" | "const" | "default" | "examples") {
                        continue;
                    }
                    stack.push((c, format!("{p}/{}", escape(k))));
                }
            } else if let Value::Array(a) = v {
                for (i, c) in a.iter().enumerate() {
                    stack.push((c, format!("{p}/{i}")));
                }
            }
        }
        None
    }

    fn anchor(&mut self, name: &str) -> Option<String> {
        if self.anchors.is_none() {
            let mut anchors = HashMap::new();
            let mut stack: Vec<(&Value, String)> = vec![(self.root, String::new())];
            while let Some((v, p)) = stack.pop() {
                match v {
                    Value::Object(o) => {
                        if let Some(a) = o.get("$anchor").and_then(Value::as_str) {
                            anchors.insert(a.to_owned(), p.clone());
                        }
                        if let Some(id) =
                            o.get("$id").or_else(|| o.get("id")).and_then(Value::as_str)
                            && let Some(a) = id.strip_prefix('#')
                        {
                            anchors.insert(a.to_owned(), p.clone());
                        }
                        for (k, c) in o {
                            if !matches!(k.as_str(), "enum" | "const" | "default" | "examples") {
                                stack.push((c, format!("{p}/{}", escape(k))));
                            }
                        }
                    }
                    Value::Array(a) => {
                        for (i, c) in a.iter().enumerate() {
                            stack.push((c, format!("{p}/{i}")));
                        }
                    }
                    _ => {}
                }
            }
            self.anchors = Some(anchors);
        }
        self.anchors.as_ref().and_then(|a| a.get(name).cloned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn plan(v: &Value) -> Plan {
        let mut notes = Vec::new();
        let d = detect_dialect(v, &mut notes);
        compile(v, d, notes).expect("compiles")
    }

    #[test]
    fn recursive_ref_is_a_finite_graph() {
        let s = json!({"$defs": {"n": {"type": "object", "properties": {"next": {"$ref": "#/$defs/n"}}}}, "$ref": "#/$defs/n"});
        let p = plan(&s);
        let root = p.node(p.root);
        let target = root.ref_.expect("ref");
        let next = p.node(target).properties[0].1;
        assert_eq!(p.node(next).ref_, Some(target));
    }

    #[test]
    fn draft4_exclusive_flag_and_draft7_items_array() {
        let p = plan(
            &json!({"$schema": "http://json-schema.org/draft-04/schema#", "minimum": 3, "exclusiveMinimum": true}),
        );
        assert_eq!(p.node(p.root).exclusive_minimum, Some(3.0));
        let p = plan(
            &json!({"$schema": "http://json-schema.org/draft-07/schema#", "items": [{"type": "string"}], "additionalItems": false}),
        );
        let root = p.node(p.root);
        assert_eq!(root.prefix_items.len(), 1);
        assert_eq!(p.node(root.items.expect("additionalItems")).boolean, Some(false));
    }

    #[test]
    fn unknown_dialect_falls_back_with_a_note() {
        let p = plan(&json!({"$schema": "https://example.com/my-dialect"}));
        assert_eq!(p.dialect, Dialect::Draft202012);
        assert_eq!(p.notes.len(), 1);
    }

    #[test]
    fn malformed_keywords_are_typed_errors() {
        for s in [
            json!({"properties": []}),
            json!({"required": "x"}),
            json!({"minLength": -1}),
            json!({"type": "strin"}),
        ] {
            let e = compile(&s, Dialect::Draft202012, Vec::new()).err().expect("error");
            assert!(matches!(e.kind, SchemaErrorKind::Malformed(_)), "{s}: {e}");
        }
        let e = compile(
            &json!({"$ref": "http://example.com/x.json"}),
            Dialect::Draft202012,
            Vec::new(),
        )
        .err()
        .expect("error");
        assert!(matches!(e.kind, SchemaErrorKind::RemoteRef(_)));
    }

    #[test]
    fn depth_check_is_iterative() {
        let mut v = json!(1);
        for _ in 0..300 {
            v = json!([v]);
        }
        assert!(!depth_within(&v, MAX_DEPTH));
        assert!(depth_within(&v, 400));
    }
}
