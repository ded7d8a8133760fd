//! Local mutations: the ways one location's value can be made invalid, each labelled with the
//! mutation kind, the keyword it violates and the pointer (relative to the location).
//!
//! Static mutations do not depend on the valid value (wrong type, outside the enum, past a
//! bound); base mutations edit a valid value (truncate a string, drop a required property).
//! The oracle confirms every one before it is emitted as invalid.

use super::numeric::int_grid;
use super::{Builder, MAX_MATERIALISED, Mode, simplest};
use crate::Mutation;
use crate::pointer::push as push_ptr;
use crate::schema::Types;
use crate::shape::Shape;
use crate::value;
use serde_json::{Value, json};

/// A mutated value with its label; `pointer` is relative to the mutated location.
#[derive(Debug, Clone)]
pub(crate) struct LocalMutation {
    pub mutation: Mutation,
    pub keyword: &'static str,
    pub pointer: String,
    pub value: Value,
}

fn m(mutation: Mutation, keyword: &'static str, value: Value) -> LocalMutation {
    LocalMutation { mutation, keyword, pointer: String::new(), value }
}

/// Values of the other JSON types, the most telling first (a number where a string is expected,
/// a string where a number is).
pub(crate) fn wrong_types(types: Types) -> Vec<LocalMutation> {
    let primary: &[u8] = if types.has(Types::STR) && !types.has(Types::INT) {
        &[Types::INT, Types::BOOL, Types::ARR, Types::OBJ, Types::NULL]
    } else if types.has(Types::INT) && !types.has(Types::STR) {
        &[Types::STR, Types::BOOL, Types::ARR, Types::OBJ, Types::NULL, Types::FRAC]
    } else if types.has(Types::BOOL) && !types.has(Types::STR) {
        &[Types::STR, Types::INT, Types::ARR, Types::OBJ, Types::NULL]
    } else if types.has(Types::OBJ) && !types.has(Types::STR) {
        &[Types::STR, Types::ARR, Types::INT, Types::BOOL, Types::NULL]
    } else {
        &[Types::OBJ, Types::STR, Types::ARR, Types::INT, Types::BOOL, Types::NULL, Types::FRAC]
    };
    primary
        .iter()
        .filter(|&&bit| !types.has(bit))
        .map(|&bit| match bit {
            Types::NULL => m(Mutation::UnexpectedNull, "type", Value::Null),
            Types::BOOL => m(Mutation::WrongType, "type", json!(true)),
            Types::INT => m(Mutation::WrongType, "type", json!(0)),
            Types::FRAC => m(Mutation::WrongType, "type", json!(0.5)),
            Types::STR => m(Mutation::WrongType, "type", json!("0")),
            Types::ARR => m(Mutation::WrongType, "type", json!([])),
            _ => m(Mutation::WrongType, "type", json!({})),
        })
        .collect()
}

/// Mutations that do not depend on the valid value.
pub(crate) fn static_mutations(b: &mut Builder<'_>, s: &Shape) -> Vec<LocalMutation> {
    let mut out = wrong_types(s.types);
    if let Some(values) = &s.enum_ {
        let (mutation, keyword) = if s.enum_is_const {
            (Mutation::NotConst, "const")
        } else {
            (Mutation::NotInEnum, "enum")
        };
        // Values of the allowed types only: other types are wrong-type mutations already.
        let outside = outside_enum(values);
        let typed: Vec<Value> =
            outside.iter().filter(|v| s.types.has(Types::of(v))).cloned().collect();
        let chosen = if typed.is_empty() { outside } else { typed };
        out.extend(chosen.into_iter().map(|v| m(mutation, keyword, v)));
        return out;
    }
    let numeric = s.gen_types.has(Types::INT) || s.gen_types.has(Types::FRAC);
    let int_only = !s.types.has(Types::FRAC);
    if numeric {
        if let Some(lo) = s.lo {
            let v = if lo.exclusive {
                lo.value
            } else if int_only {
                lo.value.ceil() - 1.0
            } else {
                lo.value - 1.0
            };
            if v.is_finite() && v.abs() < 1.0e300 {
                let kw = if lo.exclusive { "exclusiveMinimum" } else { "minimum" };
                out.push(m(Mutation::BelowMinimum, kw, value::float(v)));
            }
        }
        if let Some(hi) = s.hi {
            let v = if hi.exclusive {
                hi.value
            } else if int_only {
                hi.value.floor() + 1.0
            } else {
                hi.value + 1.0
            };
            if v.is_finite() && v.abs() < 1.0e300 {
                let kw = if hi.exclusive { "exclusiveMaximum" } else { "maximum" };
                out.push(m(Mutation::AboveMaximum, kw, value::float(v)));
            }
        }
        if let Some(&step) = s.multiple_of.first()
            && let Ok((klo, _, _)) = int_grid(&Shape { multiple_of: Vec::new(), ..s.clone() })
        {
            #[expect(clippy::cast_precision_loss, reason = "a small integer")]
            let base = klo.unwrap_or(0).max(0) as f64;
            let candidate = if int_only && step > 1.0 { base + 1.0 } else { base + step / 2.0 };
            let candidate =
                if (candidate / step).fract() == 0.0 { candidate + step / 3.0 } else { candidate };
            out.push(m(Mutation::NotMultipleOf, "multipleOf", value::float(candidate)));
        }
    }
    if s.gen_types.has(Types::ARR)
        && let Some(&(c, cmin, cmax)) = s.contains.first()
    {
        if cmin > 0 && s.min_items == 0 {
            out.push(m(Mutation::MissingContains, "contains", json!([])));
        }
        let item = b.valid(&crate::shape::Conj::of(c), 1, Mode { all_optional: false }).ok();
        if let Some(item) = item.as_ref().and_then(simplest) {
            if cmin > 1 && cmin < 10_000 {
                let few = vec![item.clone(); usize::try_from(cmin - 1).unwrap_or(0)];
                out.push(m(Mutation::MissingContains, "minContains", Value::Array(few)));
            }
            if let Some(max) = cmax.filter(|&x| x < 1_000) {
                let many = vec![item; usize::try_from(max + 1).unwrap_or(0)];
                out.push(m(Mutation::TooManyContains, "maxContains", Value::Array(many)));
            }
        }
    }
    if s.gen_types.has(Types::STR) {
        if !s.patterns.is_empty() {
            let matchers: Vec<regex::Regex> =
                s.patterns.iter().filter_map(|p| b.matcher(p)).collect();
            let candidates = [
                "",
                "!",
                " ",
                "0",
                "a",
                "A",
                "~",
                "-",
                "\u{0}",
                "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
            ];
            let mut found = 0;
            for c in candidates {
                if !matchers.is_empty() && matchers.iter().any(|mt| !mt.is_match(c)) {
                    // Keep lengths legal so that only the pattern is violated, where possible.
                    let n = c.chars().count() as u64;
                    if n >= s.min_len && s.max_len.is_none_or(|x| n <= x) {
                        out.push(m(Mutation::PatternMismatch, "pattern", json!(c)));
                        found += 1;
                        if found == 2 {
                            break;
                        }
                    }
                }
            }
        }
        for f in &s.formats {
            for bad in crate::format::invalid_examples(f).iter().take(1) {
                out.push(m(Mutation::FormatMismatch, "format", json!(bad)));
            }
        }
    }
    out
}

/// Integers just past the machine widths, upwards (see `deterministic::WIDE_UP`): one past
/// `i32`, one past exact doubles, the largest `i64`.
const PAST_WIDTHS: [i128; 3] = [2_147_483_648, 9_007_199_254_740_993, 9_223_372_036_854_775_807];

/// The deterministic pass's sharper mutations of bounds and lengths, beyond the one per bound
/// of [`static_mutations`]: outside each bound at several distances (the nearest multiple of the
/// step or the next representable number, `-1`, the first machine width past it and the 64-bit
/// extreme), and strings one code point past a length limit that UTF-16, grapheme or C-string
/// counting would pass. Only for locations without `enum`; strings only without `pattern` or
/// `format`, so that the length alone is violated.
pub(crate) fn sharp_mutations(s: &Shape) -> Vec<LocalMutation> {
    let mut out = Vec::new();
    if s.enum_.is_some() {
        return out;
    }
    let numeric = s.gen_types.has(Types::INT) || s.gen_types.has(Types::FRAC);
    if numeric {
        sharp_numbers(s, &mut out);
    }
    if s.gen_types.has(Types::STR) && s.patterns.is_empty() && s.formats.is_empty() {
        // One astral character fewer than `minLength` code points: at least `minLength` UTF-16
        // units, so a JavaScript `length` check passes what the schema refuses.
        if (2..=MAX_MATERIALISED).contains(&s.min_len) {
            let n = usize::try_from(s.min_len - 1).unwrap_or(0);
            out.push(m(Mutation::TooShort, "minLength", Value::String("\u{1F600}".repeat(n))));
        }
        if let Some(max) = s.max_len.filter(|&x| (1..MAX_MATERIALISED).contains(&x)) {
            let n = usize::try_from(max + 1).unwrap_or(0);
            // Letters with combining marks: about half as many graphemes as code points.
            let marks: String = ['e', '\u{301}'].iter().copied().cycle().take(n).collect();
            out.push(m(Mutation::TooLong, "maxLength", Value::String(marks)));
            // A NUL second: a C string of one character.
            let nul: String = "a\u{0}".chars().chain(std::iter::repeat('a')).take(n).collect();
            out.push(m(Mutation::TooLong, "maxLength", Value::String(nul)));
        }
    }
    out
}

#[expect(
    clippy::cast_precision_loss,
    reason = "widths compared with f64 bounds, approximate by nature"
)]
fn sharp_numbers(s: &Shape, out: &mut Vec<LocalMutation>) {
    let int_only = !s.gen_types.has(Types::FRAC);
    let grid = int_grid(&Shape { lo: None, hi: None, ..s.clone() }).ok();
    let step = grid.map_or(1, |(_, _, step)| step);
    // Multiples of the step only, so that the bound alone is violated.
    let on_grid = |v: i128, down: bool| {
        let k = if down {
            super::numeric::div_floor(v, step)
        } else {
            -super::numeric::div_floor(-v, step)
        };
        k.checked_mul(step)
    };
    if let Some(lo) = s.lo {
        let kw = if lo.exclusive { "exclusiveMinimum" } else { "minimum" };
        let below = |v: f64| if lo.exclusive { v <= lo.value } else { v < lo.value };
        let mut vs: Vec<Value> = Vec::new();
        let lo_i = super::numeric::f_to_i(lo.value.ceil());
        // The nearest multiple below (at the bound when it is exclusive and a multiple).
        let first = if lo.exclusive {
            on_grid(super::numeric::f_to_i(lo.value.floor()), true)
        } else {
            on_grid(lo_i - 1, true)
        };
        vs.extend(first.map(value::int));
        if !int_only && s.multiple_of.is_empty() {
            vs.push(value::float(if lo.exclusive { lo.value } else { lo.value.next_down() }));
        }
        vs.extend(on_grid(-1, true).map(value::int));
        let past = PAST_WIDTHS.iter().map(|w| -w).find(|&w| below(w as f64));
        // Past the width, and the extreme within 64 bits, on the grid.
        vs.extend(past.and_then(|w| on_grid(w, true)).map(value::int));
        vs.extend(on_grid(i128::from(i64::MIN), false).map(value::int));
        for v in vs {
            if v.as_f64().is_some_and(below) {
                out.push(m(Mutation::BelowMinimum, kw, v));
            }
        }
    }
    if let Some(hi) = s.hi {
        let kw = if hi.exclusive { "exclusiveMaximum" } else { "maximum" };
        let above = |v: f64| if hi.exclusive { v >= hi.value } else { v > hi.value };
        let mut vs: Vec<Value> = Vec::new();
        let hi_i = super::numeric::f_to_i(hi.value.floor());
        let first = if hi.exclusive {
            on_grid(super::numeric::f_to_i(hi.value.ceil()), false)
        } else {
            on_grid(hi_i + 1, false)
        };
        vs.extend(first.map(value::int));
        if !int_only && s.multiple_of.is_empty() {
            vs.push(value::float(if hi.exclusive { hi.value } else { hi.value.next_up() }));
        }
        let past = PAST_WIDTHS.iter().copied().find(|&w| above(w as f64));
        vs.extend(past.and_then(|w| on_grid(w, false)).map(value::int));
        vs.extend(on_grid(i128::from(i64::MAX), true).map(value::int));
        for v in vs {
            if v.as_f64().is_some_and(above) {
                out.push(m(Mutation::AboveMaximum, kw, v));
            }
        }
    }
}

/// Values outside an enum, of the enum's own types where possible.
fn outside_enum(values: &[Value]) -> Vec<Value> {
    let mut out = Vec::new();
    if let Some(Value::String(first)) = values.iter().find(|v| v.is_string()) {
        let mut cand = format!("{first}_not_in_enum");
        while values.iter().any(|v| v.as_str() == Some(cand.as_str())) {
            cand.push('_');
        }
        out.push(Value::String(cand));
    }
    let ints: Vec<i128> = values
        .iter()
        .filter_map(|v| v.as_i64().map(i128::from).or_else(|| v.as_u64().map(i128::from)))
        .collect();
    let floats: Vec<f64> = values.iter().filter(|v| v.is_f64()).filter_map(Value::as_f64).collect();
    if let Some(max) = ints.iter().max() {
        out.push(value::int(max + 1));
    } else if !floats.is_empty() {
        let max = floats.iter().copied().fold(f64::MIN, f64::max);
        out.push(value::float(max.floor() + 1.0));
    }
    if values.iter().any(Value::is_boolean) && values.iter().filter(|v| v.is_boolean()).count() == 1
    {
        let b = values.iter().find_map(Value::as_bool).unwrap_or(false);
        out.push(Value::Bool(!b));
    }
    for other in [json!("not_in_enum"), Value::Null, json!({})] {
        if !values.iter().any(|v| crate::value::json_eq(v, &other)) {
            out.push(other);
        }
    }
    out
}

/// What the base-dependent mutations of one location need, detached from the builder so that
/// strategies can own it.
pub(crate) struct LocalContext {
    types: Types,
    min_len: u64,
    max_len: Option<u64>,
    min_items: u64,
    max_items: Option<u64>,
    unique: bool,
    required: Vec<String>,
    min_props: u64,
    max_props: Option<u64>,
    dep_required: Vec<(String, Vec<String>)>,
    /// A key no `properties`/`patternProperties` allows, when `additionalProperties` forbids extras.
    unexpected_key: Option<String>,
    /// Whether extra keys with any value are allowed (for "too many properties").
    open: bool,
}

impl LocalContext {
    pub fn new(b: &mut Builder<'_>, s: &Shape) -> Self {
        let declared = b.declared_names(s);
        let extra = b.extra_conj(s);
        let closed = extra.is_none();
        let open = extra.is_some_and(|c| c.nodes.is_empty());
        let unexpected_key = if closed && s.gen_types.has(Types::OBJ) {
            ["unexpected_property", "x_unexpected", "zz_unexpected_0"]
                .into_iter()
                .find(|k| !declared.iter().any(|d| d == k) && b.prop_conj(s, k).is_none())
                .map(str::to_owned)
        } else {
            None
        };
        Self {
            types: s.gen_types,
            min_len: s.min_len,
            max_len: s.max_len,
            min_items: s.min_items,
            max_items: s.max_items,
            unique: s.unique,
            required: s.required.clone(),
            min_props: s.min_props,
            max_props: s.max_props,
            dep_required: s.dep_required.clone(),
            unexpected_key,
            open,
        }
    }

    /// Whether [`LocalContext::mutations_of`] can apply to most valid values (so that a strategy
    /// drawing from it rarely has to reject).
    pub fn applicable(&self) -> bool {
        (self.types.has(Types::STR)
            && (self.min_len > 0 || self.max_len.is_some_and(|x| x < MAX_MATERIALISED)))
            || (self.types.has(Types::ARR)
                && (self.min_items > 0
                    || self.unique
                    || self.max_items.is_some_and(|x| x < 10_000)))
            || (self.types.has(Types::OBJ)
                && (!self.required.is_empty()
                    || !self.dep_required.is_empty()
                    || self.unexpected_key.is_some()
                    || self.max_props.is_some_and(|x| x < 1_000 && self.open)
                    || self.min_props > 0))
    }

    /// Mutations that edit the valid value `base`.
    pub fn mutations_of(&self, base: &Value) -> Vec<LocalMutation> {
        let mut out = Vec::new();
        match base {
            Value::String(s) if self.types.has(Types::STR) => {
                let n = s.chars().count() as u64;
                if self.min_len > 0 && n >= self.min_len {
                    let short: String =
                        s.chars().take(usize::try_from(self.min_len - 1).unwrap_or(0)).collect();
                    out.push(m(Mutation::TooShort, "minLength", Value::String(short)));
                }
                if let Some(max) = self.max_len.filter(|&x| x < MAX_MATERIALISED) {
                    let pad = s.chars().last().unwrap_or('a');
                    let mut long = s.clone();
                    long.extend(std::iter::repeat_n(
                        pad,
                        usize::try_from(max + 1 - n.min(max + 1)).unwrap_or(0),
                    ));
                    out.push(m(Mutation::TooLong, "maxLength", Value::String(long)));
                }
            }
            Value::Array(a) if self.types.has(Types::ARR) => {
                let n = a.len() as u64;
                if self.min_items > 0 && n >= self.min_items {
                    let short = a[..usize::try_from(self.min_items - 1).unwrap_or(0)].to_vec();
                    out.push(m(Mutation::TooFewItems, "minItems", Value::Array(short)));
                }
                if let (Some(max), Some(last)) = (self.max_items.filter(|&x| x < 10_000), a.last())
                {
                    let mut long = a.clone();
                    while (long.len() as u64) <= max {
                        long.push(last.clone());
                    }
                    out.push(m(Mutation::TooManyItems, "maxItems", Value::Array(long)));
                }
                if self.unique && !a.is_empty() {
                    let mut dup = a.clone();
                    if self.max_items.is_none_or(|x| n < x) {
                        dup.push(a[0].clone());
                    } else if a.len() >= 2 {
                        dup[1] = a[0].clone();
                    }
                    if dup.len() >= 2 {
                        out.push(m(Mutation::DuplicateItems, "uniqueItems", Value::Array(dup)));
                    }
                }
            }
            Value::Object(o) if self.types.has(Types::OBJ) => {
                for r in &self.required {
                    if o.contains_key(r) {
                        let mut less = o.clone();
                        less.shift_remove(r);
                        out.push(LocalMutation {
                            mutation: Mutation::MissingRequired,
                            keyword: "required",
                            pointer: push_ptr("", r),
                            value: Value::Object(less),
                        });
                    }
                }
                if let Some(k) = &self.unexpected_key {
                    let mut more = o.clone();
                    more.insert(k.clone(), json!("unexpected"));
                    out.push(LocalMutation {
                        mutation: Mutation::UnexpectedProperty,
                        keyword: "additionalProperties",
                        pointer: push_ptr("", k),
                        value: Value::Object(more),
                    });
                }
                if let Some(max) = self.max_props.filter(|&x| x < 1_000 && self.open) {
                    let mut more = o.clone();
                    let mut i = 0;
                    while (more.len() as u64) <= max {
                        more.insert(format!("extra_{i}"), Value::Null);
                        i += 1;
                    }
                    out.push(m(Mutation::TooManyProperties, "maxProperties", Value::Object(more)));
                }
                if self.min_props > 0 && o.len() as u64 >= self.min_props {
                    let mut less = o.clone();
                    let removable: Vec<String> =
                        less.keys().filter(|k| !self.required.contains(k)).cloned().collect();
                    for k in removable {
                        if (less.len() as u64) < self.min_props {
                            break;
                        }
                        less.shift_remove(&k);
                    }
                    if (less.len() as u64) < self.min_props {
                        out.push(m(
                            Mutation::TooFewProperties,
                            "minProperties",
                            Value::Object(less),
                        ));
                    }
                }
                for (p, deps) in &self.dep_required {
                    if !o.contains_key(p) {
                        continue;
                    }
                    if let Some(d) =
                        deps.iter().find(|d| o.contains_key(*d) && !self.required.contains(d))
                    {
                        let mut less = o.clone();
                        less.shift_remove(d);
                        out.push(LocalMutation {
                            mutation: Mutation::MissingDependency,
                            keyword: "dependentRequired",
                            pointer: push_ptr("", d),
                            value: Value::Object(less),
                        });
                    }
                }
            }
            _ => {}
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrong_type_puts_the_telling_type_first() {
        let ms = wrong_types(Types(Types::STR));
        assert_eq!(ms[0].value, json!(0));
        assert!(ms.iter().any(|x| x.mutation == Mutation::UnexpectedNull));
        let ms = wrong_types(Types(Types::INT | Types::FRAC));
        assert_eq!(ms[0].value, json!("0"));
        assert!(wrong_types(Types::ALL).is_empty());
    }

    #[test]
    fn outside_enum_avoids_members() {
        let vals = vec![json!("a"), json!("a_not_in_enum")];
        assert_eq!(outside_enum(&vals)[0], json!("a_not_in_enum_"));
        assert_eq!(outside_enum(&[json!(1), json!(7)])[0], json!(8));
    }
}
