//! Labelled invalid values: local mutations of one location ([`super::mutate`]) composed with
//! invalid children at every depth, and the structural recipes (matching `not`, two `oneOf`
//! branches, `if` without `then`, bad property names, forbidden properties and items).

use super::mutate::{self, LocalMutation};
use super::{Builder, InvStrat, Mode, SOFT_DEPTH, Strat};
use crate::pointer::push as push_ptr;
use crate::schema::{NodeId, Types};
use crate::shape::{Conj, Shape};
use crate::{Invalid, Label, Mutation, SchemaError};
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::strategy::Union;
use serde_json::Value;
use std::sync::Arc;

impl Builder<'_> {
    /// Invalid values that come from the structure of the schema rather than from one keyword of
    /// one location: values matching `not`, matching two `oneOf` branches, meeting `if` but not
    /// `then`, bad property names, bad pattern-property values, forbidden properties and items.
    #[expect(clippy::too_many_lines, reason = "a flat list of independent recipes")]
    pub(crate) fn structural_invalid(
        &mut self,
        conj: &Conj,
        shape: &Shape,
        valid: &Strat,
        depth: u32,
    ) -> Vec<InvStrat> {
        let label = |mutation: Mutation, keyword: &'static str| Label {
            mutation,
            pointer: String::new(),
            keyword,
        };
        let mut out: Vec<InvStrat> = Vec::new();
        let normal = Mode { all_optional: false };
        // The whole `conj`'s nodes, to find `not`, `oneOf` and `if` anywhere in it.
        let mut nodes: Vec<NodeId> = conj.nodes.clone();
        let mut i = 0;
        while i < nodes.len() && nodes.len() < 256 {
            let n = self.plan.node(nodes[i]);
            let more: Vec<NodeId> = n.ref_.into_iter().chain(n.all_of.iter().copied()).collect();
            for m in more {
                if !nodes.contains(&m) {
                    nodes.push(m);
                }
            }
            i += 1;
        }
        for &id in &nodes {
            let n = self.plan.node(id).clone();
            if let Some(not) = n.not
                && let Ok(s) = self.valid(&Conj::of(not), depth, normal)
            {
                let l = label(Mutation::MatchesNot, "not");
                out.push(s.prop_map(move |value| Invalid { value, label: l.clone() }).boxed());
            }
            for (a, &x) in n.one_of.iter().enumerate() {
                for &y in n.one_of.iter().skip(a + 1).take(4) {
                    let both = Conj { nodes: vec![x, y], ..Conj::default() }.with_nodes(&[]);
                    if let Ok(s) = self.valid(&both, depth, normal) {
                        let l = label(Mutation::MultipleOneOf, "oneOf");
                        out.push(
                            s.prop_map(move |value| Invalid { value, label: l.clone() }).boxed(),
                        );
                    }
                }
            }
            if let Some(cond) = n.if_
                && let Ok(s) = self.valid(&Conj::of(cond), depth, normal)
            {
                let l = label(Mutation::ConditionalViolated, "then");
                out.push(s.prop_map(move |value| Invalid { value, label: l.clone() }).boxed());
            }
            for (k, dep) in &n.dependent_schemas {
                let key = k.clone();
                if self.plan.node(*dep).boolean == Some(false) {
                    out.push(self.with_forbidden_key(
                        valid,
                        key.clone(),
                        Mutation::MissingDependency,
                        "dependentSchemas",
                    ));
                }
                for child in self.invalid(&Conj::of(*dep), depth).unwrap_or_default() {
                    let key = key.clone();
                    out.push(
                        (valid.clone(), child)
                            .prop_filter_map(
                                "object with the dependency",
                                move |(parent, mut inv)| {
                                    let (Value::Object(parent), Value::Object(mut o)) =
                                        (parent, inv.value)
                                    else {
                                        return None;
                                    };
                                    let v = parent.get(&key).cloned().unwrap_or(Value::Null);
                                    o.entry(key.clone()).or_insert(v);
                                    inv.value = Value::Object(o);
                                    inv.label.keyword = "dependentSchemas";
                                    Some(inv)
                                },
                            )
                            .boxed(),
                    );
                }
            }
        }
        if shape.gen_types.has(Types::OBJ) {
            let declared = self.declared_names(shape);
            // Declared but forbidden properties (`"bar": false`, `not: {required: [..]}`).
            for name in &declared {
                if self.prop_conj(shape, name).is_none() && !shape.required.contains(name) {
                    let name = name.clone();
                    out.push(
                        valid
                            .clone()
                            .prop_filter_map("object parent", move |parent| {
                                let Value::Object(mut map) = parent else { return None };
                                map.insert(name.clone(), Value::Null);
                                Some(Invalid {
                                    value: Value::Object(map),
                                    label: Label {
                                        mutation: Mutation::UnexpectedProperty,
                                        pointer: push_ptr("", &name),
                                        keyword: "properties",
                                    },
                                })
                            })
                            .boxed(),
                    );
                }
            }
            // Property names that `propertyNames` rejects.
            if !shape.prop_names.is_empty() {
                let pn =
                    Conj { nodes: shape.prop_names.clone(), ..Conj::default() }.with_nodes(&[]);
                if self.shape(&pn).unsat.is_some() {
                    out.push(self.with_forbidden_key(
                        valid,
                        "a".to_owned(),
                        Mutation::InvalidPropertyName,
                        "propertyNames",
                    ));
                }
                for child in self.invalid(&pn, depth + 1).unwrap_or_default() {
                    out.push(
                        (valid.clone(), child)
                            .prop_filter_map("string key", |(parent, inv)| {
                                let (Value::Object(mut map), Value::String(k)) =
                                    (parent, inv.value)
                                else {
                                    return None;
                                };
                                let pointer = push_ptr("", &k);
                                map.insert(k, Value::Null);
                                Some(Invalid {
                                    value: Value::Object(map),
                                    label: Label {
                                        mutation: Mutation::InvalidPropertyName,
                                        pointer,
                                        keyword: "propertyNames",
                                    },
                                })
                            })
                            .boxed(),
                    );
                }
            }
            // Invalid values under pattern-matched keys.
            let pats: Vec<(String, NodeId)> = shape
                .obj_nodes
                .iter()
                .flat_map(|&id| self.plan.node(id).pattern_properties.clone())
                .collect();
            for (pat, _) in pats {
                let Ok(hir) = crate::pattern::generation_hir(&pat, Some(12)) else { continue };
                let Ok(ks) = proptest::string::string_regex_parsed(&hir) else { continue };
                let Some(key) = super::simplest(&ks.prop_map(Value::String).boxed())
                    .and_then(|k| k.as_str().map(str::to_owned))
                    .filter(|k| !declared.contains(k))
                else {
                    continue;
                };
                let Some(kc) = self.prop_conj(shape, &key) else {
                    out.push(self.with_forbidden_key(
                        valid,
                        key,
                        Mutation::UnexpectedProperty,
                        "patternProperties",
                    ));
                    continue;
                };
                for child in self.invalid(&kc, depth + 1).unwrap_or_default() {
                    out.push(child_in_object(valid, key.clone(), child));
                }
            }
        }
        if shape.gen_types.has(Types::ARR) {
            let last = self.prefix_len(shape);
            if let Some(p) = (0..=last).find(|&i| self.item_conj(shape, i).is_none())
                && let Ok(all) = self.valid(conj, depth, Mode { all_optional: true })
            {
                out.push(
                    all.prop_filter_map("a full prefix", move |v| {
                        let Value::Array(mut items) = v else { return None };
                        if items.len() != p {
                            return None;
                        }
                        items.push(Value::Null);
                        Some(Invalid {
                            value: Value::Array(items),
                            label: Label {
                                mutation: Mutation::ExtraItems,
                                pointer: format!("/{p}"),
                                keyword: "items",
                            },
                        })
                    })
                    .boxed(),
                );
            }
        }
        out
    }

    /// A valid object with `key` added (its value `null`): for keys no value makes valid.
    pub(crate) fn with_forbidden_key(
        &self,
        valid: &Strat,
        key: String,
        mutation: Mutation,
        keyword: &'static str,
    ) -> InvStrat {
        valid
            .clone()
            .prop_filter_map("object parent", move |parent| {
                let Value::Object(mut map) = parent else { return None };
                map.insert(key.clone(), Value::Null);
                Some(Invalid {
                    value: Value::Object(map),
                    label: Label { mutation, pointer: push_ptr("", &key), keyword },
                })
            })
            .boxed()
    }

    /// Whether every JSON value satisfies the location (so that no invalid value exists).
    ///
    /// Conservative: `false` when unsure.
    pub(crate) fn accepts_everything(&mut self, conj: &Conj, depth: u32) -> bool {
        if depth > 8 {
            return false;
        }
        let shape = self.shape(conj);
        let trivially = Shape {
            arr_nodes: Vec::new(),
            obj_nodes: Vec::new(),
            groups: Vec::new(),
            contains: Vec::new(),
            ..(*shape).clone()
        };
        if !trivially.is_unconstrained()
            || shape.min_items > 0
            || shape.max_items.is_some()
            || shape.unique
        {
            return false;
        }
        if shape.contains.iter().any(|&(_, min, max)| min > 0 || max.is_some())
            || !shape.required.is_empty()
            || shape.min_props > 0
            || shape.max_props.is_some()
        {
            return false;
        }
        if shape.dep_required.iter().any(|(_, d)| !d.is_empty()) || !shape.dep_schemas.is_empty() {
            return false;
        }
        for group in &shape.groups {
            if group.kind == crate::shape::GroupKind::OneOf {
                // Exactly one branch that accepts everything, the others `false`.
                let falses = group
                    .branches
                    .iter()
                    .filter(|b| b.add.iter().any(|&n| self.plan.node(n).boolean == Some(false)))
                    .count();
                if falses + 1 != group.branches.len() {
                    return false;
                }
            } else if group.kind != crate::shape::GroupKind::AnyOf {
                return false;
            }
            let branch_all = group.branches.iter().any(|b| {
                b.add.iter().all(|&n| self.plan.node(n).boolean != Some(false))
                    && b.add.iter().all(|&n| {
                        let c = Conj::of(n);
                        self.accepts_everything(&c, depth + 1)
                    })
            });
            if !branch_all {
                return false;
            }
        }
        let mut children: Vec<NodeId> = Vec::new();
        for &id in shape.arr_nodes.iter().chain(&shape.obj_nodes) {
            let n = self.plan.node(id);
            children.extend(n.prefix_items.iter().copied());
            children.extend(n.items);
            children.extend(n.properties.iter().map(|(_, c)| *c));
            children.extend(n.pattern_properties.iter().map(|(_, c)| *c));
            children.extend(n.additional_properties);
            children.extend(n.property_names);
        }
        children.into_iter().all(|c| self.accepts_everything(&Conj::of(c), depth + 1))
    }

    /// Labelled invalid values at a location; pointers are relative to it.
    pub(crate) fn invalid(
        &mut self,
        conj: &Conj,
        depth: u32,
    ) -> Result<Vec<InvStrat>, SchemaError> {
        let shape = self.shape(conj);
        self.spend(&shape.ptr)?;
        if shape.unsat.is_some() || depth > SOFT_DEPTH {
            return Ok(Vec::new());
        }
        if let Some(group) = shape.groups.first() {
            let mut out = Vec::new();
            for branch in &group.branches {
                out.extend(self.invalid(&conj.choose(group, branch), depth)?);
            }
            return Ok(out);
        }
        let Ok(valid) = self.valid(conj, depth, Mode { all_optional: false }) else {
            return Ok(Vec::new());
        };
        let location = Location { shape: &shape, valid: &valid, depth };
        let mut out = self.local_invalid(conj, location);
        // Invalid children inside a valid container.
        if shape.gen_types.has(Types::OBJ) {
            out.extend(self.invalid_properties(location)?);
            out.extend(self.invalid_extra_property(location)?);
        }
        out.extend(self.structural_invalid(conj, &shape, &valid, depth));
        if shape.gen_types.has(Types::ARR) {
            out.extend(self.invalid_items(location)?);
        }
        Ok(out)
    }

    /// Local mutations of a valid value at this location: those that need no base value, then
    /// those that act on a drawn one.
    fn local_invalid(&mut self, conj: &Conj, location: Location<'_>) -> Vec<InvStrat> {
        let Location { shape, valid, depth } = location;
        let mut out = Vec::new();
        let statics = mutate::static_mutations(self, shape);
        let local = Arc::new(mutate::LocalContext::new(self, shape));
        if !statics.is_empty() {
            let statics: Vec<InvStrat> =
                statics.into_iter().map(|m| Just(labelled(m)).boxed()).collect();
            out.push(Union::new(statics).boxed());
        }
        if local.applicable() {
            // Draw the base from both the plain and the all-properties strategies, so that
            // mutations of optional properties (dependencies) have something to act on.
            let base = match self.valid(conj, depth, Mode { all_optional: true }) {
                Ok(all) => prop_oneof![valid.clone(), all].boxed(),
                Err(_) => valid.clone(),
            };
            out.push(
                (base, any::<Index>())
                    .prop_filter_map("no base-dependent mutation applies", move |(v, i)| {
                        let ms: Vec<LocalMutation> = local.mutations_of(&v);
                        if ms.is_empty() {
                            return None;
                        }
                        Some(labelled(ms[i.index(ms.len())].clone()))
                    })
                    .boxed(),
            );
        }
        out
    }

    /// Each declared property, invalid, inside a valid object.
    fn invalid_properties(&mut self, location: Location<'_>) -> Result<Vec<InvStrat>, SchemaError> {
        let Location { shape, valid, depth } = location;
        let mut out = Vec::new();
        for name in self.declared_names(shape) {
            let Some(pc) = self.prop_conj(shape, &name) else { continue };
            for child in self.invalid(&pc, depth + 1)? {
                out.push(child_in_object(valid, name.clone(), child));
            }
        }
        Ok(out)
    }

    /// An undeclared property, invalid against `additionalProperties`, inside a valid object
    /// (under the first candidate key that no declared or pattern property claims).
    fn invalid_extra_property(
        &mut self,
        location: Location<'_>,
    ) -> Result<Vec<InvStrat>, SchemaError> {
        let Location { shape, valid, depth } = location;
        let declared = self.declared_names(shape);
        let free = self.key_is_free(shape, &declared);
        let key = ["extra_property", "x_extra", "zz_extra_0"]
            .into_iter()
            .find(|k| free(&(*k).to_owned()));
        let (Some(ec), Some(key)) = (self.extra_conj(shape).filter(|c| !c.nodes.is_empty()), key)
        else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        for child in self.invalid(&ec, depth + 1)? {
            out.push(
                (valid.clone(), child)
                    .prop_filter_map("object parent", move |(parent, inv)| {
                        let mut inv = in_object(parent, key, inv)?;
                        if inv.label.mutation == crate::Mutation::WrongType {
                            inv.label.mutation = crate::Mutation::InvalidAdditionalProperty;
                            inv.label.keyword = "additionalProperties";
                        }
                        Some(inv)
                    })
                    .boxed(),
            );
        }
        Ok(out)
    }

    /// Each item position (the prefix ones, then the rest), invalid, inside a valid array.
    fn invalid_items(&mut self, location: Location<'_>) -> Result<Vec<InvStrat>, SchemaError> {
        let Location { shape, valid, depth } = location;
        let mut out = Vec::new();
        let p = self.prefix_len(shape);
        for i in 0..=p {
            let Some(ic) = self.item_conj(shape, i) else { continue };
            let is_rest = i == p;
            for child in self.invalid(&ic, depth + 1)? {
                let max = shape.max_items.unwrap_or(u64::MAX);
                out.push(
                    (valid.clone(), child, any::<Index>())
                        .prop_filter_map("array parent", move |(parent, mut inv, idx)| {
                            let Value::Array(mut items) = parent else { return None };
                            let at = if is_rest {
                                if items.len() > p {
                                    p + idx.index(items.len() - p)
                                } else if (items.len() as u64) < max && items.len() == p {
                                    items.push(Value::Null);
                                    p
                                } else {
                                    return None;
                                }
                            } else if i < items.len() {
                                i
                            } else {
                                return None;
                            };
                            items[at] = inv.value;
                            inv.value = Value::Array(items);
                            inv.label.pointer = format!("/{at}{}", inv.label.pointer);
                            Some(inv)
                        })
                        .boxed(),
                );
            }
        }
        Ok(out)
    }
}

/// The location being made invalid: its merged shape, the strategy of its valid values (what
/// local mutations start from and invalid children are put in) and its depth.
#[derive(Clone, Copy)]
struct Location<'a> {
    shape: &'a Shape,
    valid: &'a Strat,
    depth: u32,
}

/// A local mutation as a labelled invalid value.
fn labelled(m: LocalMutation) -> Invalid {
    Invalid {
        value: m.value,
        label: Label { mutation: m.mutation, pointer: m.pointer, keyword: m.keyword },
    }
}

/// Valid objects with an invalid value of `child` under `key`.
fn child_in_object(valid: &Strat, key: String, child: InvStrat) -> InvStrat {
    (valid.clone(), child)
        .prop_filter_map("object parent", move |(parent, inv)| in_object(parent, &key, inv))
        .boxed()
}

/// The invalid value `inv` placed under `key` in the valid object `parent`, its pointer now
/// starting at that key; `None` when the parent is not an object.
fn in_object(parent: Value, key: &str, mut inv: Invalid) -> Option<Invalid> {
    let Value::Object(mut map) = parent else { return None };
    map.insert(key.to_owned(), inv.value);
    inv.value = Value::Object(map);
    inv.label.pointer = format!("{}{}", push_ptr("", key), inv.label.pointer);
    Some(inv)
}
