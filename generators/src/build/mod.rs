//! Building proptest strategies from the plan. [`Builder`] holds what every construction shares
//! (the plan, caches, the construction budget, navigation from a location to its children);
//! the strategies are split by concern: [`valid`] values per [`Conj`], labelled [`invalid`]
//! values composed from local [`mutate`] recipes and invalid children, and the [`numeric`]
//! grids of integers and numbers.

pub(crate) mod invalid;
pub(crate) mod mutate;
pub(crate) mod numeric;
pub(crate) mod valid;

use crate::schema::{Plan, Types};
use crate::shape::{Conj, Shape, flatten};
use crate::{Invalid, SchemaError, SchemaErrorKind};
use proptest::prelude::*;
use proptest::strategy::Union;
use serde_json::Value;
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
pub(crate) fn extra_items(depth: u32) -> u64 {
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
pub(crate) type InvStrat = BoxedStrategy<Invalid>;

/// Options of one strategy construction.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Mode {
    /// Every optional property present (for the "all properties" boundary value).
    pub all_optional: bool,
}

pub(crate) struct Builder<'p> {
    pub plan: &'p Plan,
    pub(crate) cache: HashMap<(Conj, u32, Mode, u64), Result<Strat, SchemaError>>,
    shapes: HashMap<Conj, Arc<Shape>>,
    regexes: HashMap<String, Option<regex::Regex>>,
    budget: usize,
    /// Copies of the current location one value must hold at least: the product of the
    /// minimum item counts of the arrays around it.
    pub(crate) scale: u64,
    /// Simplest values already computed, per location (see `deterministic`).
    pub simplest_cache: HashMap<(Conj, u32, bool), Option<Value>>,
}

pub(crate) fn unsat(reason: impl Into<String>, ptr: &str) -> SchemaError {
    SchemaError::new(SchemaErrorKind::Unsatisfiable(reason.into()), ptr)
}

pub(crate) fn union(mut alts: Vec<Strat>) -> Strat {
    if alts.len() == 1 { alts.pop().expect("one element") } else { Union::new(alts).boxed() }
}

/// The JSON types in generation order: simplest first, so that shrinking prefers them.
pub(crate) const TYPE_ORDER: [u8; 6] =
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
    pub(crate) fn too_large(&self, min: u64, keyword: &str, ptr: &str) -> Result<(), SchemaError> {
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

    pub(crate) fn spend(&mut self, ptr: &str) -> Result<(), SchemaError> {
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
}

/// Simplification steps taken to reach a strategy's simplest value.
const MAX_SIMPLIFY: usize = 1_000;

/// JSON nodes materialised, summed over the simplification steps of one value.
const SIMPLIFY_WORK: usize = 200_000;

/// JSON nodes in a value.
fn json_nodes(v: &Value) -> usize {
    match v {
        Value::Array(a) => 1 + a.iter().map(json_nodes).sum::<usize>(),
        Value::Object(o) => 1 + o.values().map(json_nodes).sum::<usize>(),
        _ => 1,
    }
}

/// The simplest value a strategy produces: a seeded draw, simplified until it cannot be.
pub(crate) fn simplest(s: &Strat) -> Option<Value> {
    let mut runner = crate::seeded_runner(0);
    let mut tree = s.new_tree(&mut runner).ok()?;
    // Each step re-materialises the value: bound the total work, not just the steps.
    let steps = (SIMPLIFY_WORK / json_nodes(&tree.current()).max(1)).clamp(1, MAX_SIMPLIFY);
    for _ in 0..steps {
        if !tree.simplify() {
            break;
        }
    }
    Some(tree.current())
}
