//! Valid values: one strategy per location ([`Conj`]) and mode, cached, built from the merged
//! [`Shape`]: the JSON types it allows in generation order, strings, arrays and objects.

use super::numeric::{integer, number};
use super::{Builder, HARD_DEPTH, Mode, SOFT_DEPTH, Strat, TYPE_ORDER, extra_items, union, unsat};
use crate::schema::{NodeId, Types};
use crate::shape::{Conj, Shape};
use crate::value::{self, json_eq};
use crate::{SchemaError, SchemaErrorKind};
use proptest::prelude::*;
use serde_json::{Map, Value};
use std::sync::Arc;

impl Builder<'_> {
    /// The valid strategy for the values at a location.
    pub(crate) fn valid(
        &mut self,
        conj: &Conj,
        depth: u32,
        mode: Mode,
    ) -> Result<Strat, SchemaError> {
        let key = (conj.clone(), depth, mode, self.scale);
        if let Some(r) = self.cache.get(&key) {
            return r.clone();
        }
        let r = self.valid_uncached(conj, depth, mode);
        self.cache.insert(key, r.clone());
        r
    }

    pub(crate) fn valid_uncached(
        &mut self,
        conj: &Conj,
        depth: u32,
        mode: Mode,
    ) -> Result<Strat, SchemaError> {
        let shape = self.shape(conj);
        self.spend(&shape.ptr)?;
        if let Some(reason) = &shape.unsat {
            return Err(unsat(reason.clone(), &shape.ptr));
        }
        if depth > HARD_DEPTH {
            return Err(unsat(
                format!(
                    "values must nest deeper than {HARD_DEPTH} levels (a cycle of required properties or items)"
                ),
                &shape.ptr,
            ));
        }
        if let Some(group) = shape.groups.first() {
            let mut alts = Vec::new();
            let mut first_err = None;
            for branch in &group.branches {
                match self.valid(&conj.choose(group, branch), depth, mode) {
                    Ok(s) => alts.push(s),
                    Err(e) => first_err = first_err.or(Some(e)),
                }
            }
            return if alts.is_empty() {
                Err(first_err.unwrap_or_else(|| unsat("no branch is satisfiable", &shape.ptr)))
            } else {
                Ok(union(alts))
            };
        }
        if let Some(values) = &shape.enum_ {
            return Ok(if values.len() == 1 {
                Just(values[0].clone()).boxed()
            } else {
                proptest::sample::select(values.clone()).boxed()
            });
        }
        let mut alts = Vec::new();
        let mut errors = Vec::new();
        for bit in TYPE_ORDER {
            if !shape.gen_types.has(bit) {
                continue;
            }
            let r = self.of_type(bit, shape.gen_types.has(Types::FRAC), conj, &shape, depth, mode);
            match r {
                Ok(s) => alts.push(s),
                Err(e) => errors.push(e),
            }
        }
        if shape.gen_types.has(Types::FRAC) && !shape.gen_types.has(Types::INT) {
            // `type: number` with `not: {type: integer}`: fractional numbers only.
            match number(&shape) {
                Ok(s) => alts.push(
                    s.prop_filter("fractional", |v| v.as_f64().is_some_and(|f| f.fract() != 0.0))
                        .boxed(),
                ),
                Err(e) => errors.push(e),
            }
        }
        if alts.is_empty() && shape.gen_types != shape.types {
            // The keywords suggested a type that cannot be met (`contains: false`): values of the
            // other types satisfy the schema trivially.
            for bit in TYPE_ORDER {
                if shape.types.has(bit)
                    && !shape.gen_types.has(bit)
                    && let Ok(s) =
                        self.of_type(bit, shape.types.has(Types::FRAC), conj, &shape, depth, mode)
                {
                    alts.push(s);
                }
            }
        }
        if alts.is_empty() {
            return Err(errors
                .into_iter()
                .next()
                .unwrap_or_else(|| unsat("no type is satisfiable", &shape.ptr)));
        }
        let s = union(alts);
        if shape.excluded.is_empty() {
            Ok(s)
        } else {
            let excluded = shape.excluded.clone();
            Ok(s.prop_filter("excluded by `not`", move |v| !excluded.iter().any(|x| json_eq(x, v)))
                .boxed())
        }
    }

    /// Values of one JSON type (`bit`, a single bit of [`TYPE_ORDER`]); integers include
    /// fractional numbers when `fractions`.
    pub(crate) fn of_type(
        &mut self,
        bit: u8,
        fractions: bool,
        _conj: &Conj,
        shape: &Shape,
        depth: u32,
        mode: Mode,
    ) -> Result<Strat, SchemaError> {
        match bit {
            Types::NULL => Ok(Just(Value::Null).boxed()),
            Types::BOOL => Ok(any::<bool>().prop_map(Value::Bool).boxed()),
            Types::INT if fractions => number(shape),
            Types::INT => integer(shape),
            Types::STR => self.string(shape),
            Types::ARR => self.array(shape, depth, mode),
            Types::OBJ => self.object(shape, depth, mode),
            _ => unreachable!("TYPE_ORDER holds single type bits"),
        }
    }

    pub(crate) fn string(&mut self, shape: &Shape) -> Result<Strat, SchemaError> {
        Ok(self.string_raw(shape)?.prop_map(Value::String).boxed())
    }

    /// Valid strings of a shape, as `String`s (mutations derive from them).
    pub(crate) fn string_raw(
        &mut self,
        shape: &Shape,
    ) -> Result<BoxedStrategy<String>, SchemaError> {
        let min = shape.min_len;
        self.too_large(min, "minLength", &shape.ptr)?;
        if let Some(max) = shape.max_len
            && max < min
        {
            return Err(unsat(format!("maxLength {max} < minLength {min}"), &shape.ptr));
        }
        let max = shape.max_len;
        let length_ok = move |s: &str| {
            let n = s.chars().count() as u64;
            n >= min && max.is_none_or(|m| n <= m)
        };
        let format_hir = shape.formats.iter().find_map(|f| crate::format::hir_of(f));
        if format_hir.is_none() && shape.patterns.is_empty() {
            return Ok(plain_string(min, max));
        }
        let mut matchers = Vec::new();
        for (i, p) in shape.patterns.iter().enumerate() {
            match self.matcher(p) {
                Some(m) => matchers.push(m),
                // Without a format the first pattern is generated from, not matched.
                None if i == 0 && format_hir.is_none() => {}
                None => {
                    return Err(SchemaError::new(
                        SchemaErrorKind::Unsupported(format!("pattern `{p}` cannot be matched")),
                        &shape.ptr,
                    ));
                }
            }
        }
        // A format's own regex is preferred (its values are known good), unless it never meets
        // the patterns beside it (`format: uri` with `^https://github\.com/\w+`): then the
        // first pattern generates and the format is checked.
        if let Some(hir) = format_hir {
            let base = proptest::string::string_regex_parsed(&hir)
                .expect("format regexes generate")
                .boxed();
            if shape.patterns.is_empty() || meets(&base, &matchers) {
                return Ok(base
                    .prop_filter("length or pattern", move |s| {
                        length_ok(s) && matchers.iter().all(|m| m.is_match(s))
                    })
                    .boxed());
            }
        }
        let p = &shape.patterns[0];
        let hir = crate::pattern::generation_hir(p, max.or(Some(min + 8)).map(|m| m.max(min)))
            .map_err(|reason| SchemaError::new(SchemaErrorKind::Unsupported(reason), &shape.ptr))?;
        let base = proptest::string::string_regex_parsed(&hir).map_err(|e| {
            SchemaError::new(
                SchemaErrorKind::Unsupported(format!("pattern `{p}`: {e}")),
                &shape.ptr,
            )
        })?;
        // The generated pattern needs no matcher; the others and the formats are checked.
        let others: Vec<regex::Regex> =
            if matchers.len() == shape.patterns.len() { matchers.split_off(1) } else { matchers };
        let formats: Vec<jsonschema::Validator> =
            shape.formats.iter().filter_map(|f| crate::format::checker(f)).collect();
        Ok(base
            .prop_filter("length, pattern or format", move |s| {
                length_ok(s)
                    && others.iter().all(|m| m.is_match(s))
                    && formats.iter().all(|f| f.is_valid(&Value::String(s.clone())))
            })
            .boxed())
    }

    /// The conjunction of `nodes`, or `None` when one of them is the `false` schema (nothing
    /// may be there).
    fn satisfiable(&self, nodes: Vec<NodeId>) -> Option<Conj> {
        let conj = Conj { nodes, ..Conj::default() }.with_nodes(&[]);
        if conj.nodes.iter().any(|&n| self.plan.node(n).boolean == Some(false)) {
            None
        } else {
            Some(conj)
        }
    }

    /// The constraints of item `i` of an array at this shape.
    pub(crate) fn item_conj(&self, shape: &Shape, i: usize) -> Option<Conj> {
        let mut nodes = Vec::new();
        for &id in &shape.arr_nodes {
            let n = self.plan.node(id);
            if let Some(&p) = n.prefix_items.get(i) {
                nodes.push(p);
            } else if let Some(it) = n.items {
                nodes.push(it);
            }
        }
        self.satisfiable(nodes)
    }

    pub(crate) fn prefix_len(&self, shape: &Shape) -> usize {
        shape.arr_nodes.iter().map(|&id| self.plan.node(id).prefix_items.len()).max().unwrap_or(0)
    }

    pub(crate) fn array(
        &mut self,
        shape: &Shape,
        depth: u32,
        mode: Mode,
    ) -> Result<Strat, SchemaError> {
        let min = shape.min_items;
        self.too_large(min, "minItems", &shape.ptr)?;
        for &(_, cmin, _) in &shape.contains {
            self.too_large(cmin, "minContains", &shape.ptr)?;
        }
        let outer = self.scale;
        self.scale = outer.saturating_mul(min.max(1));
        let built = self.array_items(shape, depth, mode);
        self.scale = outer;
        built
    }

    /// [`Builder::array`] past the size checks, with `scale` counting this array's items: the
    /// prefix items, then the items that must satisfy `contains`, then the rest.
    pub(crate) fn array_items(
        &mut self,
        shape: &Shape,
        depth: u32,
        mode: Mode,
    ) -> Result<Strat, SchemaError> {
        let min = shape.min_items;
        let mut max = shape.max_items.unwrap_or(u64::MAX);
        if max < min {
            return Err(unsat(format!("maxItems {max} < minItems {min}"), &shape.ptr));
        }
        let p = self.prefix_len(shape);
        // Positions past the prefix: forbidden when some node has `items: false`.
        let rest_conj = self.item_conj(shape, p);
        if rest_conj.is_none() {
            max = max.min(p as u64);
            if max < min {
                return Err(unsat(
                    format!("minItems {min} needs items past the {p} allowed"),
                    &shape.ptr,
                ));
            }
        }
        let prefix = self.prefix_items(shape, p, max, depth, mode)?;
        let prefix_ok = prefix.len();
        let max = if prefix_ok < p { max.min(prefix_ok as u64) } else { max };
        if max < min {
            return Err(unsat(format!("minItems {min} cannot be met"), &shape.ptr));
        }
        let soft = depth >= SOFT_DEPTH;
        let need_rest = min.saturating_sub(prefix_ok as u64);
        let rest_room = max.saturating_sub(prefix_ok as u64);
        let rest_hi =
            need_rest.saturating_add(if soft { 0 } else { extra_items(depth) }).min(rest_room);
        let (contains, contains_n) =
            self.contains_items(shape, rest_conj.as_ref(), rest_room, depth, mode)?;
        // Prefix-only arrays get no forced `contains` items: the oracle decides whether a prefix
        // item satisfies `contains`.
        let rest_lo = need_rest.saturating_sub(contains_n);
        let rest_hi = rest_hi.saturating_sub(contains_n).max(rest_lo);
        let rest = self.rest_items(shape, rest_conj.as_ref(), rest_lo, rest_hi, depth, mode)?;
        // How many prefix items to keep: all of them when any rest item must follow.
        let keep_lo = if need_rest > 0 || contains_n > 0 {
            prefix_ok
        } else {
            usize::try_from(min).unwrap_or(0).min(prefix_ok)
        };
        let parts = ArrayParts { keep_lo, unique: shape.unique, keep_all: mode.all_optional };
        let s = (keep_lo..=prefix_ok, prefix, contains, rest).prop_map(
            move |(keep, prefix, contains, rest)| parts.join(keep, prefix, contains, rest),
        );
        let min_len = usize::try_from(min).unwrap_or(usize::MAX);
        let unique = shape.unique;
        if unique || min > 0 {
            Ok(s.prop_filter("minItems / uniqueItems", move |v| {
                v.as_array()
                    .is_some_and(|a| a.len() >= min_len && (!unique || value::all_unique(a)))
            })
            .boxed())
        } else {
            Ok(s.boxed())
        }
    }

    /// The strategies of the prefix items, up to the first that cannot be satisfied (an error
    /// when that one is needed to reach `minItems`) and at most `max` of them.
    fn prefix_items(
        &mut self,
        shape: &Shape,
        p: usize,
        max: u64,
        depth: u32,
        mode: Mode,
    ) -> Result<Vec<Strat>, SchemaError> {
        let mut prefix = Vec::new();
        for i in 0..p.min(usize::try_from(max).unwrap_or(usize::MAX)) {
            let Some(c) = self.item_conj(shape, i) else { break };
            match self.valid(&c, depth + 1, mode) {
                Ok(s) => prefix.push(s),
                Err(e) => {
                    if (i as u64) < shape.min_items {
                        return Err(e);
                    }
                    break;
                }
            }
        }
        Ok(prefix)
    }

    /// The items that must satisfy the first `contains`, placed first after the prefix, and how
    /// many: `minContains` of them, or none when no item may follow the prefix.
    fn contains_items(
        &mut self,
        shape: &Shape,
        rest_conj: Option<&Conj>,
        rest_room: u64,
        depth: u32,
        mode: Mode,
    ) -> Result<(Vec<Strat>, u64), SchemaError> {
        let (Some(&(c, cmin, _)), Some(rc)) = (shape.contains.first(), rest_conj) else {
            return Ok((Vec::new(), 0));
        };
        if cmin == 0 {
            return Ok((Vec::new(), 0));
        }
        if cmin > rest_room {
            return Err(unsat(
                format!("minContains {cmin} exceeds the room for items"),
                &shape.ptr,
            ));
        }
        let s = self.valid(&rc.with_nodes(&[c]), depth + 1, mode)?;
        Ok((vec![s; usize::try_from(cmin).unwrap_or(0)], cmin))
    }

    /// The items after the prefix and the `contains` items: between `rest_lo` and `rest_hi` of
    /// them, as one array value.
    fn rest_items(
        &mut self,
        shape: &Shape,
        rest_conj: Option<&Conj>,
        rest_lo: u64,
        rest_hi: u64,
        depth: u32,
        mode: Mode,
    ) -> Result<Strat, SchemaError> {
        match rest_conj {
            Some(rc) if rest_hi > 0 => {
                let item = match self.valid(rc, depth + 1, mode) {
                    Ok(s) => Some(s),
                    Err(e) if rest_lo > 0 => return Err(e),
                    Err(_) => None,
                };
                Ok(match item {
                    Some(item) => {
                        let lo = usize::try_from(rest_lo).unwrap_or(usize::MAX);
                        let hi = usize::try_from(rest_hi).unwrap_or(usize::MAX);
                        proptest::collection::vec(item, lo..=hi).prop_map(Value::Array).boxed()
                    }
                    None => Just(Value::Array(Vec::new())).boxed(),
                })
            }
            _ if rest_lo > 0 => Err(unsat("items are required but none is allowed", &shape.ptr)),
            _ => Ok(Just(Value::Array(Vec::new())).boxed()),
        }
    }

    /// The property names declared anywhere in the object nodes, in declaration order, then the
    /// required names that no `properties` declares.
    pub(crate) fn declared_names(&self, shape: &Shape) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for &id in &shape.obj_nodes {
            for (k, _) in &self.plan.node(id).properties {
                if !names.contains(k) {
                    names.push(k.clone());
                }
            }
        }
        let deps = shape.dep_required.iter().flat_map(|(k, d)| std::iter::once(k).chain(d));
        let dep_schemas = shape.dep_schemas.iter().map(|(k, _)| k);
        for r in shape.required.iter().chain(deps).chain(dep_schemas) {
            if !names.contains(r) {
                names.push(r.clone());
            }
        }
        names
    }

    /// The constraints on property `name`; `None` when the property is not allowed at all.
    pub(crate) fn prop_conj(&mut self, shape: &Shape, name: &str) -> Option<Conj> {
        if shape.forbidden.iter().any(|f| f == name) {
            return None;
        }
        let mut nodes = Vec::new();
        for &id in &shape.obj_nodes {
            let n = self.plan.node(id).clone();
            let mut matched = false;
            if let Some((_, p)) = n.properties.iter().find(|(k, _)| k == name) {
                nodes.push(*p);
                matched = true;
            }
            for (pat, p) in &n.pattern_properties {
                if self.matcher(pat).is_some_and(|m| m.is_match(name)) {
                    nodes.push(*p);
                    matched = true;
                }
            }
            if !matched && let Some(a) = n.additional_properties {
                nodes.push(a);
            }
        }

        self.satisfiable(nodes)
    }

    /// The constraints on a property no `properties` or `patternProperties` names; `None` when
    /// such properties are not allowed.
    pub(crate) fn extra_conj(&self, shape: &Shape) -> Option<Conj> {
        let nodes: Vec<NodeId> = shape
            .obj_nodes
            .iter()
            .filter_map(|&id| self.plan.node(id).additional_properties)
            .collect();
        self.satisfiable(nodes)
    }

    /// Whether a generated extra key would collide with declared or pattern properties.
    pub(crate) fn key_is_free(
        &mut self,
        shape: &Shape,
        declared: &[String],
    ) -> impl Fn(&String) -> bool + use<> {
        let declared = declared.to_vec();
        let patterns: Vec<regex::Regex> = shape
            .obj_nodes
            .iter()
            .flat_map(|&id| {
                self.plan
                    .node(id)
                    .pattern_properties
                    .iter()
                    .map(|(p, _)| p.clone())
                    .collect::<Vec<_>>()
            })
            .filter_map(|p| self.matcher(&p))
            .collect();
        move |k: &String| !declared.contains(k) && !patterns.iter().any(|m| m.is_match(k))
    }

    #[expect(
        clippy::too_many_lines,
        reason = "object generation is one recipe; splitting it scatters its invariants"
    )]
    pub(crate) fn object(
        &mut self,
        shape: &Shape,
        depth: u32,
        mode: Mode,
    ) -> Result<Strat, SchemaError> {
        if let Some(max) = shape.max_props
            && max < shape.min_props
        {
            return Err(unsat(
                format!("maxProperties {max} < minProperties {}", shape.min_props),
                &shape.ptr,
            ));
        }
        self.too_large(shape.min_props, "minProperties", &shape.ptr)?;
        let soft = depth >= SOFT_DEPTH;
        let names = self.declared_names(shape);
        let dep_targets: Vec<String> =
            shape.dep_required.iter().flat_map(|(_, d)| d.iter().cloned()).collect();
        let mut entries: Vec<(String, BoxedStrategy<Option<Value>>)> = Vec::new();
        let mut required_count = 0_u64;
        let mut optional_forced = 0_u64;
        let mut required_left = shape.required.len() as u64;
        let mut promote = shape.min_props.saturating_sub(shape.required.len() as u64);
        for name in &names {
            let required = shape.required.contains(name);
            let Some(pc) = self.prop_conj(shape, name) else {
                if required {
                    return Err(unsat(
                        format!("property `{name}` is required but not allowed"),
                        &shape.ptr,
                    ));
                }
                continue;
            };
            let s = match self.valid(&pc, depth + 1, mode) {
                Ok(s) => s,
                Err(e) if required => return Err(e),
                Err(_) => continue,
            };
            // "All properties" stops at `maxProperties`, leaving room for the required ones.
            let room = shape
                .max_props
                .is_none_or(|m| required_count + optional_forced < m.saturating_sub(required_left));
            let forced_all = mode.all_optional && !required && room;
            if forced_all {
                optional_forced += 1;
            } else if mode.all_optional && !required {
                continue;
            }
            if required {
                required_left = required_left.saturating_sub(1);
            }
            let always = required || forced_all || (promote > 0 && !soft);
            if always {
                if !required {
                    promote = promote.saturating_sub(1);
                }
                if required {
                    required_count += 1;
                }
                entries.push((name.clone(), s.prop_map(Some).boxed()));
            } else if soft && !dep_targets.contains(name) {
                // Past the soft depth only required properties are generated.
            } else {
                entries.push((name.clone(), proptest::option::weighted(0.5, s).boxed()));
            }
        }

        // Extra properties: for maps (`additionalProperties: {schema}`), pattern properties, and
        // open objects that declare nothing.
        let mut extras: Vec<BoxedStrategy<Vec<(String, Value)>>> = Vec::new();
        let explicit_additional = shape.obj_nodes.iter().any(|&id| {
            self.plan
                .node(id)
                .additional_properties
                .is_some_and(|a| self.plan.node(a).boolean.is_none())
        });
        let extra = self.extra_conj(shape);
        let free = self.key_is_free(shape, &names);
        let free = Arc::new(free);
        if !soft || promote > 0 {
            if let Some(ec) = extra.filter(|_| {
                let has_patterns = shape
                    .obj_nodes
                    .iter()
                    .any(|&id| !self.plan.node(id).pattern_properties.is_empty());
                explicit_additional || (names.is_empty() && !has_patterns) || promote > 0
            }) && let Ok(vs) = self.valid(&ec, depth + 1, mode)
            {
                let ks = self.key_strategy(shape, depth)?;
                let free = Arc::clone(&free);
                let lo = usize::try_from(promote).unwrap_or(usize::MAX);
                let hi = if soft { lo } else { lo + 3 };
                extras.push(
                    proptest::collection::vec(
                        (ks.prop_filter("free key", move |k| free(k)), vs),
                        lo..=hi,
                    )
                    .boxed(),
                );
            }
            if !soft {
                let pats: Vec<(String, NodeId)> = shape
                    .obj_nodes
                    .iter()
                    .flat_map(|&id| self.plan.node(id).pattern_properties.clone())
                    .collect();
                // Unanchored patterns overlap; a value satisfying every pattern schema fits any key.
                let all_pattern_nodes: Vec<NodeId> = pats.iter().map(|(_, n)| *n).collect();
                let all_patterns =
                    Conj { nodes: all_pattern_nodes, ..Conj::default() }.with_nodes(&[]);
                for (pat, node) in pats {
                    let Ok(hir) = crate::pattern::generation_hir(&pat, Some(12)) else { continue };
                    let Ok(ks) = proptest::string::string_regex_parsed(&hir) else { continue };
                    let Ok(vs) = self
                        .valid(&all_patterns, depth + 1, mode)
                        .or_else(|_| self.valid(&Conj::of(node), depth + 1, mode))
                    else {
                        continue;
                    };
                    let declared = names.clone();
                    let ks = ks.prop_filter("undeclared key", move |k| !declared.contains(k));
                    extras.push(proptest::collection::vec((ks, vs), 0..=1).boxed());
                }
            }
        }
        let names_in_order: Arc<Vec<String>> =
            Arc::new(entries.iter().map(|(n, _)| n.clone()).collect());
        let values: Vec<BoxedStrategy<Option<Value>>> =
            entries.into_iter().map(|(_, s)| s).collect();

        let forbidden = Arc::new(shape.forbidden.clone());
        let s = (values, extras).prop_map(move |(values, extras)| {
            let mut map = Map::new();
            for (name, v) in names_in_order.iter().zip(values) {
                if let Some(v) = v {
                    map.insert(name.clone(), v);
                }
            }
            for (k, v) in extras.into_iter().flatten() {
                if !forbidden.contains(&k) {
                    map.entry(k).or_insert(v);
                }
            }

            Value::Object(map)
        });
        let min = shape.min_props;
        let max = shape.max_props;
        let deps = shape.dep_required.clone();
        if min > 0 || max.is_some() || !deps.is_empty() {
            Ok(s.prop_filter("property count / dependencies", move |v| {
                let Some(o) = v.as_object() else { return false };
                let n = o.len() as u64;
                n >= min
                    && max.is_none_or(|m| n <= m)
                    && deps
                        .iter()
                        .all(|(p, ds)| !o.contains_key(p) || ds.iter().all(|d| o.contains_key(d)))
            })
            .boxed())
        } else {
            Ok(s.boxed())
        }
    }

    /// Keys for extra properties: from `propertyNames` when given, else short identifiers.
    pub(crate) fn key_strategy(
        &mut self,
        shape: &Shape,
        depth: u32,
    ) -> Result<BoxedStrategy<String>, SchemaError> {
        if !shape.prop_names.is_empty() {
            let conj = Conj { nodes: shape.prop_names.clone(), ..Conj::default() }.with_nodes(&[]);
            let s = self.valid(&conj, depth + 1, Mode { all_optional: false })?;
            return Ok(s.prop_filter_map("string key", |v| v.as_str().map(str::to_owned)).boxed());
        }
        Ok(proptest::string::string_regex("[a-z][a-z0-9_]{0,7}").expect("static regex").boxed())
    }
}

/// How [`Builder::array_items`] joins its parts into one array.
#[derive(Clone, Copy)]
struct ArrayParts {
    /// The fewest kept prefix items after which the `contains` items and the rest may follow.
    keep_lo: usize,
    /// Whether `uniqueItems` holds.
    unique: bool,
    /// Whether every prefix item is kept (the all-optional mode).
    keep_all: bool,
}

impl ArrayParts {
    /// The first `keep` prefix items, then, when the kept prefix is whole and long enough, the
    /// `contains` items and the rest; with `uniqueItems`, the repeats after the kept prefix are
    /// dropped.
    fn join(self, keep: usize, prefix: Vec<Value>, contains: Vec<Value>, rest: Value) -> Value {
        let keep = if self.keep_all { prefix.len() } else { keep };
        let mut out: Vec<Value> = prefix.into_iter().take(keep).collect();
        if keep == out.len() && keep >= self.keep_lo {
            out.extend(contains);
            if let Value::Array(rest) = rest {
                out.extend(rest);
            }
        }
        if self.unique {
            let fixed = keep;
            let mut deduped: Vec<Value> = Vec::with_capacity(out.len());
            for (i, v) in out.into_iter().enumerate() {
                if i < fixed || !deduped.iter().any(|x| json_eq(x, &v)) {
                    deduped.push(v);
                }
            }
            out = deduped;
        }
        Value::Array(out)
    }
}

/// Plain strings: mostly lowercase ASCII (readable, shrinks to `a`), some printable ASCII, some
/// arbitrary Unicode and a few hostile characters.
/// Draws a format's regex makes when checking that it meets the patterns beside it.
///
/// Why: a format regex that meets a pattern at all does so for a good share of its draws (the
/// corpus's date-time patterns accept nearly every generated date-time); 64 misses in a row
/// mean the filter would spend its whole rejection budget on most draws.
const FORMAT_PROBES: usize = 64;

/// Whether some of the first [`FORMAT_PROBES`] strings of `base` match every matcher.
fn meets(base: &BoxedStrategy<String>, matchers: &[regex::Regex]) -> bool {
    let mut runner = crate::probe_runner();
    (0..FORMAT_PROBES).any(|_| {
        base.new_tree(&mut runner).is_ok_and(|t| {
            let s = t.current();
            matchers.iter().all(|m| m.is_match(&s))
        })
    })
}

fn plain_string(min: u64, max: Option<u64>) -> BoxedStrategy<String> {
    let ch = prop_oneof![
        8 => proptest::char::range('a', 'z'),
        2 => proptest::char::range(' ', '~'),
        1 => any::<char>(),
        1 => proptest::sample::select(vec!['\u{0}', '\u{200f}', '\u{0301}', '\u{1F600}', '\u{FEFF}', '\n', '"', '\\']),
    ];
    let lo = usize::try_from(min).unwrap_or(usize::MAX);
    let hi = max.map_or(min + 12, |m| m.min(min + 12));
    let hi = usize::try_from(hi).unwrap_or(usize::MAX).max(lo);
    proptest::collection::vec(ch, lo..=hi).prop_map(|cs| cs.into_iter().collect()).boxed()
}
