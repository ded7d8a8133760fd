//! Building proptest strategies from the plan: valid values per [`Conj`], and labelled invalid
//! values composed from local mutations ([`crate::mutate`]) and invalid children.

use crate::mutate::{self, LocalMutation};
use crate::schema::{NodeId, Plan, Types};
use crate::shape::{Conj, Shape, flatten};
use crate::value::{self, json_eq, push_ptr};
use crate::{Invalid, Label, Mutation, SchemaError, SchemaErrorKind};
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::strategy::Union;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::Arc;

/// Container depth past which optional properties and extra items are no longer generated.
///
/// Why: recursive schemas (trees, linked lists) would otherwise grow values without bound; real
/// tool schemas nest at most 11 levels and keep their required parts at any depth.
pub(crate) const SOFT_DEPTH: u32 = 12;

/// Container depth at which a value that still *requires* more nesting is given up on.
///
/// Why: a cycle of required properties (`a` requires `a`) has no finite value.
pub(crate) const HARD_DEPTH: u32 = 40;

/// Strategy constructions allowed per schema.
///
/// Why: bounds compile time and memory for adversarial schemas (deep unions of unions); the
/// largest corpus schema needs a few thousand.
pub(crate) const BUILD_BUDGET: usize = 60_000;

/// How many extra array items (beyond `minItems`) to generate at a depth.
fn extra_items(depth: u32) -> u64 {
    match depth {
        0..=1 => 4,
        2..=3 => 3,
        4..=5 => 2,
        d if d < SOFT_DEPTH => 1,
        _ => 0,
    }
}

/// Largest `maxItems`/`maxLength` overshoot materialised by a "too long" mutation.
pub(crate) const MAX_MATERIALISED: u64 = 100_000;

/// Elements (characters, items, properties) the minimums of one value may add up to across
/// nesting: `minItems: 100000` of `minLength: 1000` strings would be 10^8 characters.
pub(crate) const MAX_TOTAL: u64 = 1_000_000;

pub(crate) type Strat = BoxedStrategy<Value>;
type InvStrat = BoxedStrategy<Invalid>;

/// Options of one strategy construction.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Mode {
    /// Every optional property present (for the "all properties" boundary value).
    pub all_optional: bool,
}

pub(crate) struct Builder<'p> {
    pub plan: &'p Plan,
    cache: HashMap<(Conj, u32, Mode, u64), Result<Strat, SchemaError>>,
    shapes: HashMap<Conj, Arc<Shape>>,
    regexes: HashMap<String, Option<regex::Regex>>,
    budget: usize,
    /// Copies of the current location one value must hold at least: the product of the
    /// minimum item counts of the arrays around it.
    scale: u64,
    /// Simplest values already computed, per location (see `deterministic`).
    pub simplest_cache: HashMap<(Conj, u32, bool), Option<Value>>,
}

fn unsat(reason: impl Into<String>, ptr: &str) -> SchemaError {
    SchemaError::new(SchemaErrorKind::Unsatisfiable(reason.into()), ptr)
}

fn union(mut alts: Vec<Strat>) -> Strat {
    if alts.len() == 1 { alts.pop().expect("one element") } else { Union::new(alts).boxed() }
}

/// The JSON types in generation order: simplest first, so that shrinking prefers them.
const TYPE_ORDER: [u8; 6] =
    [Types::NULL, Types::BOOL, Types::INT, Types::STR, Types::ARR, Types::OBJ];

impl<'p> Builder<'p> {
    pub fn new(plan: &'p Plan) -> Self {
        Self {
            plan,
            cache: HashMap::new(),
            shapes: HashMap::new(),
            regexes: HashMap::new(),
            budget: BUILD_BUDGET,
            scale: 1,
            simplest_cache: HashMap::new(),
        }
    }

    pub fn shape(&mut self, conj: &Conj) -> Arc<Shape> {
        if let Some(s) = self.shapes.get(conj) {
            return Arc::clone(s);
        }
        let s = Arc::new(flatten(self.plan, conj));
        self.shapes.insert(conj.clone(), Arc::clone(&s));
        s
    }

    pub fn matcher(&mut self, pattern: &str) -> Option<regex::Regex> {
        self.regexes
            .entry(pattern.to_owned())
            .or_insert_with(|| crate::pattern::matcher(pattern))
            .clone()
    }

    /// Refuses minimums that would have to be materialised beyond [`MAX_MATERIALISED`] in one
    /// place, or beyond [`MAX_TOTAL`] in one value counting the copies its arrays need.
    fn too_large(&self, min: u64, keyword: &str, ptr: &str) -> Result<(), SchemaError> {
        let message = if min > MAX_MATERIALISED {
            format!(
                "{keyword} {min} asks for more than the {MAX_MATERIALISED} elements the generator builds"
            )
        } else if self.scale.saturating_mul(min) > MAX_TOTAL {
            format!(
                "{keyword} {min}, inside arrays that need at least {} copies of it, asks for more than the {MAX_TOTAL} elements the generator builds in one value",
                self.scale
            )
        } else {
            return Ok(());
        };
        Err(SchemaError::new(SchemaErrorKind::TooLarge(message), ptr))
    }

    fn spend(&mut self, ptr: &str) -> Result<(), SchemaError> {
        if self.budget == 0 {
            return Err(SchemaError::new(
                SchemaErrorKind::TooLarge(format!(
                    "more than {BUILD_BUDGET} strategy constructions"
                )),
                ptr,
            ));
        }
        self.budget -= 1;
        Ok(())
    }

    /// The valid strategy for the values at a location.
    pub fn valid(&mut self, conj: &Conj, depth: u32, mode: Mode) -> Result<Strat, SchemaError> {
        let key = (conj.clone(), depth, mode, self.scale);
        if let Some(r) = self.cache.get(&key) {
            return r.clone();
        }
        let r = self.valid_uncached(conj, depth, mode);
        self.cache.insert(key, r.clone());
        r
    }

    fn valid_uncached(
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
    fn of_type(
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

    fn string(&mut self, shape: &Shape) -> Result<Strat, SchemaError> {
        Ok(self.string_raw(shape)?.prop_map(Value::String).boxed())
    }

    /// Valid strings of a shape, as `String`s (mutations derive from them).
    pub fn string_raw(&mut self, shape: &Shape) -> Result<BoxedStrategy<String>, SchemaError> {
        let min = shape.min_len;
        self.too_large(min, "minLength", &shape.ptr)?;
        if let Some(max) = shape.max_len
            && max < min
        {
            return Err(unsat(format!("maxLength {max} < minLength {min}"), &shape.ptr));
        }
        let max = shape.max_len;
        let (base, constrained): (BoxedStrategy<String>, bool) = if let Some(hir) =
            shape.formats.iter().find_map(|f| crate::format::hir_of(f))
        {
            (
                proptest::string::string_regex_parsed(&hir)
                    .expect("format regexes generate")
                    .boxed(),
                true,
            )
        } else if let Some(p) = shape.patterns.first() {
            let hir = crate::pattern::generation_hir(p, max.or(Some(min + 8)).map(|m| m.max(min)))
                .map_err(|reason| {
                    SchemaError::new(SchemaErrorKind::Unsupported(reason), &shape.ptr)
                })?;
            let s = proptest::string::string_regex_parsed(&hir).map_err(|e| {
                SchemaError::new(
                    SchemaErrorKind::Unsupported(format!("pattern `{p}`: {e}")),
                    &shape.ptr,
                )
            })?;
            (s.boxed(), true)
        } else {
            (plain_string(min, max), false)
        };
        if !constrained {
            return Ok(base);
        }
        let mut matchers = Vec::new();
        for p in shape
            .patterns
            .iter()
            .skip(usize::from(shape.formats.iter().all(|f| crate::format::hir_of(f).is_none())))
        {
            match self.matcher(p) {
                Some(m) => matchers.push(m),
                None => {
                    return Err(SchemaError::new(
                        SchemaErrorKind::Unsupported(format!("pattern `{p}` cannot be matched")),
                        &shape.ptr,
                    ));
                }
            }
        }
        Ok(base
            .prop_filter("length or pattern", move |s| {
                let n = s.chars().count() as u64;
                n >= min && max.is_none_or(|m| n <= m) && matchers.iter().all(|m| m.is_match(s))
            })
            .boxed())
    }

    /// The constraints of item `i` of an array at this shape.
    pub fn item_conj(&self, shape: &Shape, i: usize) -> Option<Conj> {
        let mut nodes = Vec::new();
        for &id in &shape.arr_nodes {
            let n = self.plan.node(id);
            if let Some(&p) = n.prefix_items.get(i) {
                nodes.push(p);
            } else if let Some(it) = n.items {
                nodes.push(it);
            }
        }
        let conj = Conj { nodes, ..Conj::default() }.with_nodes(&[]);
        if conj.nodes.iter().any(|&n| self.plan.node(n).boolean == Some(false)) {
            None
        } else {
            Some(conj)
        }
    }

    fn prefix_len(&self, shape: &Shape) -> usize {
        shape.arr_nodes.iter().map(|&id| self.plan.node(id).prefix_items.len()).max().unwrap_or(0)
    }

    fn array(&mut self, shape: &Shape, depth: u32, mode: Mode) -> Result<Strat, SchemaError> {
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

    /// [`Builder::array`] past the size checks, with `scale` counting this array's items.
    fn array_items(&mut self, shape: &Shape, depth: u32, mode: Mode) -> Result<Strat, SchemaError> {
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
        let mut prefix = Vec::new();
        let mut prefix_ok = 0_usize;
        for i in 0..p.min(usize::try_from(max).unwrap_or(usize::MAX)) {
            let Some(c) = self.item_conj(shape, i) else { break };
            match self.valid(&c, depth + 1, mode) {
                Ok(s) => {
                    prefix.push(s);
                    prefix_ok += 1;
                }
                Err(e) => {
                    if (i as u64) < min {
                        return Err(e);
                    }
                    break;
                }
            }
        }
        let max = if prefix_ok < p { max.min(prefix_ok as u64) } else { max };
        if max < min {
            return Err(unsat(format!("minItems {min} cannot be met"), &shape.ptr));
        }
        let soft = depth >= SOFT_DEPTH;
        let need_rest = min.saturating_sub(prefix_ok as u64);
        let rest_room = max.saturating_sub(prefix_ok as u64);
        let rest_hi =
            need_rest.saturating_add(if soft { 0 } else { extra_items(depth) }).min(rest_room);
        // Items that must satisfy `contains`, placed first after the prefix.
        let mut contains = Vec::new();
        let mut contains_n = 0;
        if let (Some(&(c, cmin, _)), Some(rc)) = (shape.contains.first(), rest_conj.as_ref())
            && cmin > 0
        {
            if cmin > rest_room {
                return Err(unsat(
                    format!("minContains {cmin} exceeds the room for items"),
                    &shape.ptr,
                ));
            }
            let s = self.valid(&rc.with_nodes(&[c]), depth + 1, mode)?;
            contains_n = cmin;
            contains = vec![s; usize::try_from(cmin).unwrap_or(0)];
        }
        // Prefix-only arrays get no forced `contains` items: the oracle decides whether a prefix
        // item satisfies `contains`.
        let rest_lo = need_rest.saturating_sub(contains_n);
        let rest_hi = rest_hi.saturating_sub(contains_n).max(rest_lo);
        let rest: Strat = match &rest_conj {
            Some(rc) if rest_hi > 0 => {
                let item = match self.valid(rc, depth + 1, mode) {
                    Ok(s) => Some(s),
                    Err(e) if rest_lo > 0 => return Err(e),
                    Err(_) => None,
                };
                match item {
                    Some(item) => {
                        let lo = usize::try_from(rest_lo).unwrap_or(usize::MAX);
                        let hi = usize::try_from(rest_hi).unwrap_or(usize::MAX);
                        proptest::collection::vec(item, lo..=hi).prop_map(Value::Array).boxed()
                    }
                    None => Just(Value::Array(Vec::new())).boxed(),
                }
            }
            _ if rest_lo > 0 => {
                return Err(unsat("items are required but none is allowed", &shape.ptr));
            }
            _ => Just(Value::Array(Vec::new())).boxed(),
        };
        // How many prefix items to keep: all of them when any rest item must follow.
        let keep_lo = if need_rest > 0 || contains_n > 0 {
            prefix_ok
        } else {
            usize::try_from(min).unwrap_or(0).min(prefix_ok)
        };
        let unique = shape.unique;
        let keep_all = mode.all_optional;
        let s = (keep_lo..=prefix_ok, prefix, contains, rest).prop_map(
            move |(keep, prefix, contains, rest)| {
                let keep = if keep_all { prefix.len() } else { keep };
                let mut out: Vec<Value> = prefix.into_iter().take(keep).collect();
                if keep == out.len() && keep >= keep_lo {
                    out.extend(contains);
                    if let Value::Array(rest) = rest {
                        out.extend(rest);
                    }
                }
                if unique {
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
            },
        );
        let min_len = usize::try_from(min).unwrap_or(usize::MAX);
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

    /// The property names declared anywhere in the object nodes, in declaration order, then the
    /// required names that no `properties` declares.
    pub fn declared_names(&self, shape: &Shape) -> Vec<String> {
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
    pub fn prop_conj(&mut self, shape: &Shape, name: &str) -> Option<Conj> {
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

        let conj = Conj { nodes, ..Conj::default() }.with_nodes(&[]);
        if conj.nodes.iter().any(|&n| self.plan.node(n).boolean == Some(false)) {
            None
        } else {
            Some(conj)
        }
    }

    /// The constraints on a property no `properties` or `patternProperties` names; `None` when
    /// such properties are not allowed.
    pub fn extra_conj(&self, shape: &Shape) -> Option<Conj> {
        let nodes: Vec<NodeId> = shape
            .obj_nodes
            .iter()
            .filter_map(|&id| self.plan.node(id).additional_properties)
            .collect();
        let conj = Conj { nodes, ..Conj::default() }.with_nodes(&[]);
        if conj.nodes.iter().any(|&n| self.plan.node(n).boolean == Some(false)) {
            None
        } else {
            Some(conj)
        }
    }

    /// Whether a generated extra key would collide with declared or pattern properties.
    fn key_is_free(
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
    fn object(&mut self, shape: &Shape, depth: u32, mode: Mode) -> Result<Strat, SchemaError> {
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
    fn key_strategy(
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

    /// Invalid values that come from the structure of the schema rather than from one keyword of
    /// one location: values matching `not`, matching two `oneOf` branches, meeting `if` but not
    /// `then`, bad property names, bad pattern-property values, forbidden properties and items.
    #[expect(clippy::too_many_lines, reason = "a flat list of independent recipes")]
    fn structural_invalid(
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
                let Some(key) = crate::deterministic::simplest(&ks.prop_map(Value::String).boxed())
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
                    let key = key.clone();
                    out.push(
                        (valid.clone(), child)
                            .prop_filter_map("object parent", move |(parent, mut inv)| {
                                let Value::Object(mut map) = parent else { return None };
                                map.insert(key.clone(), inv.value);
                                inv.value = Value::Object(map);
                                inv.label.pointer =
                                    format!("{}{}", push_ptr("", &key), inv.label.pointer);
                                Some(inv)
                            })
                            .boxed(),
                    );
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
    fn with_forbidden_key(
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
    pub fn accepts_everything(&mut self, conj: &Conj, depth: u32) -> bool {
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
    pub fn invalid(&mut self, conj: &Conj, depth: u32) -> Result<Vec<InvStrat>, SchemaError> {
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
        let mut out = Vec::new();
        let Ok(valid) = self.valid(conj, depth, Mode { all_optional: false }) else {
            return Ok(out);
        };
        // Local mutations of a valid value at this location.
        let statics = mutate::static_mutations(self, &shape);
        let local = Arc::new(mutate::LocalContext::new(self, &shape));
        if !statics.is_empty() {
            let statics: Vec<InvStrat> = statics
                .into_iter()
                .map(|m| {
                    Just(Invalid {
                        value: m.value,
                        label: Label {
                            mutation: m.mutation,
                            pointer: m.pointer,
                            keyword: m.keyword,
                        },
                    })
                    .boxed()
                })
                .collect();
            out.push(Union::new(statics).boxed());
        }
        if local.applicable() {
            let local = Arc::clone(&local);
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
                        let m = ms[i.index(ms.len())].clone();
                        Some(Invalid {
                            value: m.value,
                            label: Label {
                                mutation: m.mutation,
                                pointer: m.pointer,
                                keyword: m.keyword,
                            },
                        })
                    })
                    .boxed(),
            );
        }
        // Invalid children inside a valid container.
        if shape.gen_types.has(Types::OBJ) {
            for name in self.declared_names(&shape) {
                let Some(pc) = self.prop_conj(&shape, &name) else { continue };
                for child in self.invalid(&pc, depth + 1)? {
                    let name = name.clone();
                    out.push(
                        (valid.clone(), child)
                            .prop_filter_map("object parent", move |(parent, mut inv)| {
                                let Value::Object(mut map) = parent else { return None };
                                map.insert(name.clone(), inv.value);
                                inv.value = Value::Object(map);
                                inv.label.pointer =
                                    format!("{}{}", push_ptr("", &name), inv.label.pointer);
                                Some(inv)
                            })
                            .boxed(),
                    );
                }
            }
        }
        if shape.gen_types.has(Types::OBJ) {
            let declared = self.declared_names(&shape);
            let free = self.key_is_free(&shape, &declared);
            let key = ["extra_property", "x_extra", "zz_extra_0"]
                .into_iter()
                .find(|k| free(&(*k).to_owned()));
            if let (Some(ec), Some(key)) =
                (self.extra_conj(&shape).filter(|c| !c.nodes.is_empty()), key)
            {
                for child in self.invalid(&ec, depth + 1)? {
                    out.push(
                        (valid.clone(), child)
                            .prop_filter_map("object parent", move |(parent, mut inv)| {
                                let Value::Object(mut map) = parent else { return None };
                                map.insert(key.to_owned(), inv.value);
                                inv.value = Value::Object(map);
                                inv.label.pointer =
                                    format!("{}{}", push_ptr("", key), inv.label.pointer);
                                if inv.label.mutation == crate::Mutation::WrongType {
                                    inv.label.mutation = crate::Mutation::InvalidAdditionalProperty;
                                    inv.label.keyword = "additionalProperties";
                                }
                                Some(inv)
                            })
                            .boxed(),
                    );
                }
            }
        }
        out.extend(self.structural_invalid(conj, &shape, &valid, depth));
        if shape.gen_types.has(Types::ARR) {
            let p = self.prefix_len(&shape);
            for i in 0..=p {
                let Some(ic) = self.item_conj(&shape, i) else { continue };
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
        }
        Ok(out)
    }
}

/// Plain strings: mostly lowercase ASCII (readable, shrinks to `a`), some printable ASCII, some
/// arbitrary Unicode and a few hostile characters.
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

/// Integer range and step implied by a shape; `None` when empty.
pub(crate) fn int_grid(shape: &Shape) -> Result<(Option<i128>, Option<i128>, i128), String> {
    let step = int_step(&shape.multiple_of)
        .ok_or("multipleOf values have no common integer multiple that fits")?;
    let lo = shape.lo.map(|b| {
        let v = if b.exclusive { b.value.floor() + 1.0 } else { b.value.ceil() };
        f_to_i(v)
    });
    let hi = shape.hi.map(|b| {
        let v = if b.exclusive { b.value.ceil() - 1.0 } else { b.value.floor() };
        f_to_i(v)
    });
    let klo = lo.map(|l| div_ceil(l, step));
    let khi = hi.map(|h| div_floor(h, step));
    if let (Some(a), Some(b)) = (klo, khi)
        && a > b
    {
        return Err(format!(
            "no integer{} lies between the bounds",
            if step == 1 { String::new() } else { format!(" multiple of {step}") }
        ));
    }
    Ok((klo, khi, step))
}

#[expect(
    clippy::cast_possible_truncation,
    reason = "saturating float-to-int conversion is intended"
)]
fn f_to_i(v: f64) -> i128 {
    v.clamp(-1.0e30, 1.0e30) as i128
}

fn div_floor(a: i128, b: i128) -> i128 {
    let d = a / b;
    if (a % b != 0) && ((a < 0) != (b < 0)) { d - 1 } else { d }
}

fn div_ceil(a: i128, b: i128) -> i128 {
    -div_floor(-a, b)
}

fn gcd(a: i128, b: i128) -> i128 {
    if b == 0 { a.abs() } else { gcd(b, a % b) }
}

/// A rational `p/q` for a decimal float (`0.01` -> 1/100).
pub(crate) fn ratio(f: f64) -> Option<(i128, i128)> {
    let s = format!("{f}");
    let (int, frac) = s.split_once('.').unwrap_or((&s, ""));
    if s.contains('e') || frac.len() > 12 {
        return None;
    }
    let q = 10_i128.checked_pow(u32::try_from(frac.len()).ok()?)?;
    let p: i128 = format!("{int}{frac}").parse().ok()?;
    let g = gcd(p, q);
    Some((p / g, q / g))
}

/// The smallest positive integer step all `multipleOf`s divide; 1 when there are none.
fn int_step(ms: &[f64]) -> Option<i128> {
    let mut step: i128 = 1;
    for &m in ms {
        let (p, q) = ratio(m)?;
        // Integer x is a multiple of p/q iff (p / gcd(p, q)) divides x.
        let s = p / gcd(p, q);
        step = step.checked_mul(s / gcd(step, s))?;
    }
    Some(step)
}

fn integer(shape: &Shape) -> Result<Strat, SchemaError> {
    if int_step(&shape.multiple_of).is_none() {
        // 0 is a multiple of anything: the schema is satisfiable, the generator just cannot
        // represent the common multiple.
        return Err(SchemaError::new(
            SchemaErrorKind::Unsupported(
                "multipleOf values whose common integer multiple exceeds 128 bits".into(),
            ),
            &shape.ptr,
        ));
    }
    let (klo, khi, step) = int_grid(shape).map_err(|r| unsat(r, &shape.ptr))?;
    Ok(k_range(klo, khi, step).prop_map(move |k| value::int(k * step)).boxed())
}

/// Multipliers in range, biased towards small magnitudes.
fn k_range(klo: Option<i128>, khi: Option<i128>, step: i128) -> BoxedStrategy<i128> {
    // An open side reaches the 64-bit range, or 1000 steps past the other bound when that bound
    // lies beyond it (`minimum: 9223372036854775807` must not leave an empty range).
    let (dlo, dhi) = (i128::from(i64::MIN) / step.max(1), i128::from(i64::MAX) / step.max(1));
    let lo = klo.unwrap_or_else(|| khi.map_or(dlo, |h| dlo.min(h.saturating_sub(1000))));
    let hi = khi.unwrap_or_else(|| klo.map_or(dhi, |l| dhi.max(l.saturating_add(1000))));
    let clamp = |a: i128, b: i128| (a.max(lo), b.min(hi));
    let mut alts: Vec<(u32, BoxedStrategy<i128>)> = Vec::new();
    for (w, a, b) in [(6, -100, 100), (2, -100_000, 100_000), (1, lo, hi)] {
        let (a, b) = clamp(a, b);
        if a <= b {
            alts.push((w, (a..=b).boxed()));
        }
    }
    if alts.is_empty() {
        // Range entirely beyond ±100000: near the bounds.
        let (a, b) = (lo, lo.saturating_add(1000).min(hi));
        alts.push((3, (a..=b).boxed()));
        let (a, b) = (hi.saturating_sub(1000).max(lo), hi);
        alts.push((3, (a..=b).boxed()));
        alts.push((1, (lo..=hi).boxed()));
    }
    Union::new_weighted(alts).boxed()
}

fn number(shape: &Shape) -> Result<Strat, SchemaError> {
    if !shape.multiple_of.is_empty() {
        let (p, q) = shape
            .multiple_of
            .iter()
            .try_fold((1_i128, 1_i128), |(ap, aq), &m| {
                let (bp, bq) = ratio(m)?;
                // lcm(a/b, c/d) = lcm(a, c) / gcd(b, d) for reduced fractions.
                let g = gcd(ap, bp);
                let l = ap.checked_mul(bp / g)?;
                let first = aq == 1 && ap == 1;
                Some(if first { (bp, bq) } else { (l, gcd(aq, bq)) })
            })
            .ok_or_else(|| {
                SchemaError::new(
                    SchemaErrorKind::Unsupported(
                        "multipleOf is not a decimal the generator can represent".into(),
                    ),
                    &shape.ptr,
                )
            })?;
        #[expect(clippy::cast_precision_loss, reason = "decimal step, approximate by nature")]
        let step = p as f64 / q as f64;
        let decimals = format!("{}", 1.0 / q as f64).split('.').nth(1).map_or(0, str::len).min(12);
        let klo = shape.lo.map(|b| {
            let k = (b.value / step).ceil();
            if b.exclusive && (k * step - b.value).abs() < f64::EPSILON * b.value.abs().max(1.0) {
                k + 1.0
            } else {
                k
            }
        });
        let khi = shape.hi.map(|b| {
            let k = (b.value / step).floor();
            if b.exclusive && (k * step - b.value).abs() < f64::EPSILON * b.value.abs().max(1.0) {
                k - 1.0
            } else {
                k
            }
        });
        if let (Some(a), Some(b)) = (klo, khi)
            && a > b
        {
            return Err(unsat(
                format!("no multiple of {step} lies between the bounds"),
                &shape.ptr,
            ));
        }
        let factor = 10_f64.powi(i32::try_from(decimals).unwrap_or(0));
        return Ok(k_range(klo.map(f_to_i), khi.map(f_to_i), 1)
            .prop_map(move |k| {
                #[expect(clippy::cast_precision_loss, reason = "multipliers are small")]
                let v = ((k as f64) * step * factor).round() / factor;
                value::float(v)
            })
            .boxed());
    }
    let lo = shape.lo.map(|b| b.value);
    let hi = shape.hi.map(|b| b.value);
    if let (Some(a), Some(b)) = (lo, hi) {
        let both_excl =
            shape.lo.is_some_and(|x| x.exclusive) || shape.hi.is_some_and(|x| x.exclusive);
        if a > b || (a == b && both_excl) {
            return Err(unsat(format!("no number lies between {a} and {b}"), &shape.ptr));
        }
    }
    let (flo, fhi) = match (lo, hi) {
        (Some(a), Some(b)) => (a, b),
        (Some(a), None) => (a, a + 1000.0),
        (None, Some(b)) => (b - 1000.0, b),
        (None, None) => (-1000.0, 1000.0),
    };
    let lo_b = shape.lo;
    let hi_b = shape.hi;
    let in_range = move |v: f64| {
        lo_b.is_none_or(|b| if b.exclusive { v > b.value } else { v >= b.value })
            && hi_b.is_none_or(|b| if b.exclusive { v < b.value } else { v <= b.value })
    };
    let mut alts: Vec<(u32, Strat)> = Vec::new();
    if let Ok(ints) = integer(shape) {
        alts.push((3, ints));
    }
    let frac = if flo < fhi {
        (flo..fhi)
            .prop_map(|f| (f * 10_000.0).round() / 10_000.0)
            .prop_filter_map("in range", move |f| in_range(f).then(|| value::float(f)))
            .boxed()
    } else {
        Just(value::float(flo))
            .prop_filter("in range", move |v| v.as_f64().is_some_and(in_range))
            .boxed()
    };
    alts.push((2, frac));
    Ok(Union::new_weighted(alts).boxed())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn integer_steps_from_fractional_multiples() {
        assert_eq!(int_step(&[0.5]), Some(1));
        assert_eq!(int_step(&[1.5]), Some(3));
        assert_eq!(int_step(&[4.0, 6.0]), Some(12));
        assert_eq!(ratio(0.01), Some((1, 100)));
    }

    #[test]
    fn bounds_beyond_64_bits_give_values_not_panics() {
        for schema in [
            json!({"type": "integer", "minimum": 9_223_372_036_854_775_807_i64}),
            json!({"type": "integer", "exclusiveMinimum": 9_223_372_036_854_775_807_i64}),
            json!({"minimum": 9_223_372_036_854_775_807_i64}),
            json!({"type": "integer", "minimum": 18_446_744_073_709_551_615_u64}),
            json!({"type": "integer", "maximum": -9.3e18}),
            json!({"type": "integer", "minimum": 1e30}),
            json!({"type": "number", "minimum": 1e308}),
            json!({"type": "integer", "minimum": 5e18, "multipleOf": 3}),
        ] {
            let g = crate::Generator::compile(&schema).expect("compiles");
            let mut sampler = g.sampler(7);
            for _ in 0..20 {
                let v = sampler.valid().unwrap_or_else(|e| panic!("{schema}: {e}"));
                assert!(g.is_valid(&v), "{schema}: {v}");
            }
        }
    }

    #[test]
    fn nested_minimums_are_counted_together() {
        // Each minimum alone is allowed; together they would be 10^8 characters.
        let huge = json!({"type": "array", "minItems": 100_000,
                          "items": {"type": "string", "minLength": 1000}});
        let e = crate::Generator::compile(&huge)
            .and_then(|g| g.sampler(1).valid())
            .expect_err("too large");
        assert!(matches!(e.kind, SchemaErrorKind::TooLarge(_)), "{e}");
        assert_eq!(e.pointer, "/items");
        let fine = json!({"type": "array", "minItems": 100,
                          "items": {"type": "string", "minLength": 100}});
        let g = crate::Generator::compile(&fine).expect("compiles");
        let v = g.sampler(1).valid().expect("a value");
        assert!(g.is_valid(&v));
    }

    #[test]
    fn an_unrepresentable_multiple_of_is_unsupported_not_unsatisfiable() {
        let g = crate::Generator::compile(&json!({"type": "integer", "multipleOf": 1e300}))
            .expect("compiles");
        let e = g.sampler(1).valid().expect_err("unsupported");
        assert!(matches!(e.kind, SchemaErrorKind::Unsupported(_)), "{e}");
    }

    #[test]
    fn floor_and_ceil_division() {
        assert_eq!(div_floor(-7, 2), -4);
        assert_eq!(div_ceil(-7, 2), -3);
        assert_eq!(div_ceil(7, 2), 4);
    }
}
