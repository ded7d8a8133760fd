//! Deterministic values: boundary (coverage) values and the systematic list of labelled
//! mutations, composed location by location from the simplest values, then confirmed by the
//! oracle at the root.

use crate::build::mutate::{
    LocalContext, LocalMutation, sharp_mutations, static_mutations, wrong_types,
};
use crate::build::numeric::int_grid;
use crate::build::{Builder, Mode, Strat, simplest};
use crate::pointer::push as push_ptr;
use crate::schema::Types;
use crate::shape::Conj;
use crate::value::{self, json_eq};
use crate::{Invalid, Label, Mutation};
use serde_json::{Value, json};

/// Candidate values kept per location.
///
/// Why: a location's candidates are multiplied into its parent's; 24 covers every bound, its
/// neighbours, the hostile strings and a handful of enum members without blowing up wide objects.
const PER_LOCATION: usize = 24;

/// Deterministic values emitted per schema at most.
///
/// Why: the corpus's widest tools have ~50 properties; 2000 keeps a boundary pass quick while
/// still covering every property's candidates.
const MAX_VALUES: usize = 2_000;

/// Arrays with more required items than this get no per-item boundary variants.
///
/// Why: each variant copies the array; a `minItems: 10000` schema would otherwise build
/// thousands of ten-thousand-item arrays.
const MAX_VARIANT_ITEMS: u64 = 64;

/// Deepest location the deterministic walkers descend to.
const MAX_WALK_DEPTH: u32 = 8;

fn simplest_at(b: &mut Builder<'_>, conj: &Conj, depth: u32, all_optional: bool) -> Option<Value> {
    let key = (conj.clone(), depth, all_optional);
    if let Some(v) = b.simplest_cache.get(&key) {
        return v.clone();
    }
    let v = b.valid(conj, depth, Mode { all_optional }).ok().and_then(|s| simplest(&s));
    b.simplest_cache.insert(key, v.clone());
    v
}

fn push_unique(out: &mut Vec<Value>, v: Value) {
    if !out.iter().any(|x| json_eq(x, &v)) {
        out.push(v);
    }
}

/// Hostile but ordinary strings: emoji, right-to-left text, combining marks, NUL, quotes,
/// zero-width characters, and the line breaks that are not `\n` (a CR LF pair, U+2028 and
/// U+0085, which Python's `str.splitlines` and JavaScript's line terminators split on, and a
/// line-based store or log does not expect inside one value).
///
/// Lone surrogates (U+D800..U+DFFF alone), the other classic, cannot be held in a Rust `String`
/// nor so in a `serde_json::Value`: they are left out.
const HOSTILE: &[&str] = &[
    "\u{1F600}",
    "\u{202E}abc",
    "e\u{301}",
    "a\u{0}b",
    "\"'<>&\\",
    " ",
    "\u{FEFF}",
    "a\u{200B}\u{200D}b",
    "a\r\nb",
    "a\u{2028}b",
    "a\u{85}b",
];

/// The characters of the length-limit strings, cycled: an astral character (one code point, two
/// UTF-16 units), a letter and its combining mark (two code points, one grapheme), NUL,
/// zero-width space, a right-to-left override and zero-width joiner.
const AT_LIMIT: &[char] =
    &['\u{1F600}', 'e', '\u{301}', '\u{0}', '\u{200B}', '\u{202E}', '\u{200D}', 'x'];

/// Strings of exactly `n` code points (what `minLength`/`maxLength` count), made to be counted
/// differently by a server: all astral (`n` code points, `2n` UTF-16 units, what a JavaScript
/// `length` sees), and the [`AT_LIMIT`] mix (fewer graphemes, invisible and control characters).
fn at_length(n: usize) -> [String; 2] {
    ["\u{1F600}".repeat(n), AT_LIMIT.iter().copied().cycle().take(n).collect()]
}

/// Candidate values for one location, each valid for it as far as its own keywords go.
fn candidates(b: &mut Builder<'_>, conj: &Conj, depth: u32) -> Vec<Value> {
    let shape = b.shape(conj);
    let mut out = Vec::new();
    if shape.unsat.is_some() || depth > MAX_WALK_DEPTH {
        return out;
    }
    if let Some(group) = shape.groups.first() {
        for branch in &group.branches {
            for v in candidates(b, &conj.choose(group, branch), depth) {
                push_unique(&mut out, v);
            }
        }
        out.truncate(PER_LOCATION * 2);
        return out;
    }
    for v in shape.defaults.iter().chain(&shape.examples) {
        push_unique(&mut out, v.clone());
    }
    if let Some(values) = &shape.enum_ {
        for v in values.iter().take(PER_LOCATION) {
            push_unique(&mut out, v.clone());
        }
        return out;
    }
    let t = shape.gen_types;
    if t.has(Types::INT) || t.has(Types::FRAC) {
        numbers(&shape, &mut out);
    }
    if t.has(Types::STR) {
        if let Some(v) = simplest_at(b, conj, depth, false).filter(Value::is_string) {
            push_unique(&mut out, v);
        }
        let plain = shape.patterns.is_empty()
            && shape.formats.iter().all(|f| crate::format::example(f).is_none());
        let fits = |n: u64| n >= shape.min_len && shape.max_len.is_none_or(|m| n <= m);
        if let Some(ex) = shape.formats.iter().find_map(|f| crate::format::example(f)) {
            push_unique(&mut out, json!(ex));
        }
        // The tricky members of each format that the other keywords here allow.
        let matchers: Vec<regex::Regex> =
            shape.patterns.iter().filter_map(|p| b.matcher(p)).collect();
        for f in &shape.formats {
            for t in crate::format::tricky_examples(f) {
                if fits(t.chars().count() as u64) && matchers.iter().all(|m| m.is_match(t)) {
                    push_unique(&mut out, json!(t));
                }
            }
        }
        if plain {
            let min = usize::try_from(shape.min_len).unwrap_or(usize::MAX);
            if min <= 10_000 {
                push_unique(&mut out, Value::String("a".repeat(min)));
            }
            if let Some(max) = shape.max_len.filter(|&m| m <= 10_000) {
                push_unique(&mut out, Value::String("z".repeat(usize::try_from(max).unwrap_or(0))));
            }
            // Each limit again in characters that code points, UTF-16 and graphemes count apart.
            for n in [Some(shape.min_len), shape.max_len].into_iter().flatten() {
                if (1..=10_000).contains(&n) {
                    for v in at_length(usize::try_from(n).unwrap_or(0)) {
                        push_unique(&mut out, Value::String(v));
                    }
                }
            }
            for h in HOSTILE {
                let n = h.chars().count() as u64;
                if fits(n) {
                    push_unique(&mut out, json!(h));
                } else if n < shape.min_len && shape.min_len <= 10_000 {
                    let padded: String =
                        h.chars().chain(std::iter::repeat('a')).take(min).collect();
                    push_unique(&mut out, Value::String(padded));
                }
            }
            if fits(10_000) {
                push_unique(&mut out, Value::String("x".repeat(10_000)));
            }
        }
    }
    if t.has(Types::BOOL) {
        push_unique(&mut out, json!(false));
        push_unique(&mut out, json!(true));
    }
    if t.has(Types::ARR) {
        arrays(b, conj, depth, &mut out);
    }
    if t.has(Types::OBJ) {
        objects(b, conj, depth, &mut out);
    }
    if t.has(Types::NULL) {
        push_unique(&mut out, Value::Null);
    }
    out.retain(|v| !shape.excluded.iter().any(|x| json_eq(x, v)));
    out.truncate(PER_LOCATION.max(out.len().min(MAX_VALUES)));
    out
}

/// Integers at and just past the machine widths a server may parse into, upwards: the largest
/// `i32`, one past it, one past the integers a double holds exactly (2^53 + 1 rounds to 2^53),
/// and the largest `i64`.
const WIDE_UP: [i128; 4] =
    [2_147_483_647, 2_147_483_648, 9_007_199_254_740_993, 9_223_372_036_854_775_807];

/// The same widths downwards.
const WIDE_DOWN: [i128; 4] =
    [-2_147_483_648, -2_147_483_649, -9_007_199_254_740_993, -9_223_372_036_854_775_808];

fn numbers(shape: &crate::shape::Shape, out: &mut Vec<Value>) {
    let int_only = !shape.gen_types.has(Types::FRAC);
    if let Ok((klo, khi, step)) = int_grid(shape) {
        let mut ks: Vec<i128> = Vec::new();
        if let Some(a) = klo {
            ks.extend([a, a + 1]);
        }
        if let Some(z) = khi {
            ks.extend([z, z - 1]);
        }
        ks.extend([0, 1, -1]);
        // The widths inside the range, as multiples of the step (towards zero); the `i32`
        // extremes themselves only when no bound is nearer.
        let open = klo.is_none() && khi.is_none();
        let skip = usize::from(!open);
        let widths = WIDE_UP.iter().skip(skip).chain(WIDE_DOWN.iter().skip(skip));
        ks.extend(widths.map(|w| w / step));
        for k in ks {
            if klo.is_none_or(|a| k >= a) && khi.is_none_or(|z| k <= z) {
                push_unique(out, value::int(k * step));
            }
        }
    }
    if !int_only && shape.multiple_of.is_empty() {
        let in_range = |v: f64| {
            shape.lo.is_none_or(|b| if b.exclusive { v > b.value } else { v >= b.value })
                && shape.hi.is_none_or(|b| if b.exclusive { v < b.value } else { v <= b.value })
        };
        // Beside the halves, the edges hypothesis' `floats()` tries: the smallest subnormal,
        // the largest finite doubles, and numbers a printer writes in exponent form (Python
        // writes 1e-07 and 1e+16), each kept only inside the range.
        let mut fs = vec![0.5, -0.5, 1.5, 5e-324, f64::MAX, f64::MIN, 1e-7, 1e16];
        // Each bound, the next representable number on either side (only the inner one is
        // kept), and one unit inside.
        for bound in [shape.lo, shape.hi].into_iter().flatten() {
            let v = bound.value;
            fs.extend([v, v.next_up(), v.next_down(), v + 1.0, v - 1.0]);
        }
        for f in fs {
            if f.is_finite() && in_range(f) {
                push_unique(out, value::float(f));
            }
        }
    }
}

fn arrays(b: &mut Builder<'_>, conj: &Conj, depth: u32, out: &mut Vec<Value>) {
    let shape = b.shape(conj);
    let Some(base) = simplest_at(b, conj, depth, false).filter(Value::is_array) else { return };
    push_unique(out, base.clone());
    if let Some(all) = simplest_at(b, conj, depth, true).filter(Value::is_array) {
        push_unique(out, all);
    }
    let Value::Array(items) = base else { return };
    if shape.min_items > MAX_VARIANT_ITEMS {
        return;
    }
    let max = shape.max_items.unwrap_or(u64::MAX);
    let rest_at =
        shape.arr_nodes.iter().map(|&id| b.plan.node(id).prefix_items.len()).max().unwrap_or(0);
    let Some(ic) = b.item_conj(&shape, items.len().min(rest_at)) else { return };
    let item_candidates = candidates(b, &ic, depth + 1);
    // One array per item candidate: the base with that item appended (or in place of the last).
    for v in item_candidates.iter().take(PER_LOCATION) {
        let mut a = items.clone();
        if (a.len() as u64) < max && a.len() >= rest_at {
            a.push(v.clone());
        } else if let Some(last) = a.last_mut() {
            *last = v.clone();
        } else {
            continue;
        }
        push_unique(out, Value::Array(a));
    }
    // The largest allowed array of distinct candidates, when small.
    if max <= 64 && max > items.len() as u64 {
        let mut a = items.clone();
        for v in item_candidates.iter().cycle().take(usize::try_from(max).unwrap_or(0) * 2) {
            if a.len() as u64 >= max {
                break;
            }
            if !shape.unique || !a.iter().any(|x| json_eq(x, v)) {
                a.push(v.clone());
            }
        }
        push_unique(out, Value::Array(a));
    }
}

fn objects(b: &mut Builder<'_>, conj: &Conj, depth: u32, out: &mut Vec<Value>) {
    let shape = b.shape(conj);
    let Some(min) = simplest_at(b, conj, depth, false).filter(Value::is_object) else { return };
    push_unique(out, min.clone());
    let all = simplest_at(b, conj, depth, true).filter(Value::is_object).unwrap_or(min);
    push_unique(out, all.clone());
    let Value::Object(base) = all else { return };
    for name in b.declared_names(&shape) {
        let Some(pc) = b.prop_conj(&shape, &name) else { continue };
        for v in candidates(b, &pc, depth + 1).into_iter().take(PER_LOCATION) {
            let mut o = base.clone();
            o.insert(name.clone(), v);
            push_unique(out, Value::Object(o));
            if out.len() >= MAX_VALUES {
                return;
            }
        }
    }
}

/// Boundary values of the whole schema, all confirmed valid by the oracle.
pub(crate) fn boundary(
    b: &mut Builder<'_>,
    root: &Conj,
    strategy: &Strat,
    oracle: &jsonschema::Validator,
) -> Vec<Value> {
    let mut out = Vec::new();
    if let Some(v) = simplest(strategy) {
        push_unique(&mut out, v);
    }
    for v in candidates(b, root, 0) {
        if out.len() >= MAX_VALUES {
            break;
        }
        push_unique(&mut out, v);
    }
    out.retain(|v| oracle.is_valid(v));
    out
}

/// Systematic mutations at one location; pointers relative to it.
fn mutations_at(b: &mut Builder<'_>, conj: &Conj, depth: u32) -> Vec<LocalMutation> {
    let shape = b.shape(conj);
    let mut out = Vec::new();
    if shape.unsat.is_some() || depth > MAX_WALK_DEPTH {
        return out;
    }
    if let Some(group) = shape.groups.first() {
        for branch in &group.branches {
            out.extend(mutations_at(b, &conj.choose(group, branch), depth));
        }
        return out;
    }
    // One wrong-type case per location (the most telling type), one null case, then the rest.
    let wrong = wrong_types(shape.types);
    out.extend(wrong.iter().find(|m| m.mutation == Mutation::WrongType).cloned());
    out.extend(wrong.iter().find(|m| m.mutation == Mutation::UnexpectedNull).cloned());
    out.extend(
        static_mutations(b, &shape).into_iter().filter(|m| {
            m.mutation != Mutation::WrongType && m.mutation != Mutation::UnexpectedNull
        }),
    );
    out.extend(sharp_mutations(&shape));
    let Some(base) = simplest_at(b, conj, depth, true) else { return out };
    let local = LocalContext::new(b, &shape);
    out.extend(local.mutations_of(&base));
    if let (true, Value::Object(o)) = (shape.gen_types.has(Types::OBJ), &base) {
        for name in b.declared_names(&shape) {
            let Some(pc) = b.prop_conj(&shape, &name) else { continue };
            for mut child in mutations_at(b, &pc, depth + 1) {
                let mut parent = o.clone();
                parent.insert(name.clone(), child.value);
                child.value = Value::Object(parent);
                child.pointer = format!("{}{}", push_ptr("", &name), child.pointer);
                out.push(child);
            }
        }
    }
    if let (true, Value::Array(items)) = (shape.gen_types.has(Types::ARR), &base) {
        let rest_at =
            shape.arr_nodes.iter().map(|&id| b.plan.node(id).prefix_items.len()).max().unwrap_or(0);
        for i in 0..=rest_at {
            let Some(ic) = b.item_conj(&shape, i) else { continue };
            let mut arr = items.clone();
            if arr.len() <= i {
                if i != arr.len() || shape.max_items.is_some_and(|m| m <= i as u64) {
                    continue;
                }
                let Some(item) = simplest_at(b, &ic, depth + 1, true) else { continue };
                arr.push(item);
            }
            for mut child in mutations_at(b, &ic, depth + 1) {
                let mut parent = arr.clone();
                parent[i] = child.value;
                child.value = Value::Array(parent);
                child.pointer = format!("/{i}{}", child.pointer);
                out.push(child);
            }
        }
    }
    out
}

/// The systematic labelled mutations of the whole schema, all confirmed invalid by the oracle:
/// missing-required cases first, then wrong-type cases, then the rest.
pub(crate) fn mutations(
    b: &mut Builder<'_>,
    root: &Conj,
    oracle: &jsonschema::Validator,
) -> Vec<Invalid> {
    let mut all = mutations_at(b, root, 0);
    all.retain(|m| !oracle.is_valid(&m.value));
    let rank = |m: &LocalMutation| match m.mutation {
        Mutation::MissingRequired => 0,
        Mutation::WrongType => 1,
        _ => 2,
    };
    all.sort_by_key(rank);
    let mut out: Vec<Invalid> = Vec::new();
    for m in all {
        if out.len() >= MAX_VALUES {
            break;
        }
        if out.iter().any(|x| {
            x.label.pointer == m.pointer && x.label.mutation == m.mutation && x.value == m.value
        }) {
            continue;
        }
        out.push(Invalid {
            value: m.value,
            label: Label { mutation: m.mutation, pointer: m.pointer, keyword: m.keyword },
        });
    }
    out
}
