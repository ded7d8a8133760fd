//! The numeric grids: the integers a shape allows (bounds and `multipleOf`, exact in `i128`) and
//! the numbers, as strategies.

use super::{Strat, unsat};
use crate::shape::Shape;
use crate::value;
use crate::{SchemaError, SchemaErrorKind};
use proptest::prelude::*;
use proptest::strategy::Union;

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
pub(crate) fn f_to_i(v: f64) -> i128 {
    v.clamp(-1.0e30, 1.0e30) as i128
}

pub(crate) fn div_floor(a: i128, b: i128) -> i128 {
    let d = a / b;
    if (a % b != 0) && ((a < 0) != (b < 0)) { d - 1 } else { d }
}

pub(crate) fn div_ceil(a: i128, b: i128) -> i128 {
    -div_floor(-a, b)
}

pub(crate) fn gcd(a: i128, b: i128) -> i128 {
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
pub(crate) fn int_step(ms: &[f64]) -> Option<i128> {
    let mut step: i128 = 1;
    for &m in ms {
        let (p, q) = ratio(m)?;
        // Integer x is a multiple of p/q iff (p / gcd(p, q)) divides x.
        let s = p / gcd(p, q);
        step = step.checked_mul(s / gcd(step, s))?;
    }
    Some(step)
}

pub(crate) fn integer(shape: &Shape) -> Result<Strat, SchemaError> {
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
pub(crate) fn k_range(klo: Option<i128>, khi: Option<i128>, step: i128) -> BoxedStrategy<i128> {
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

pub(crate) fn number(shape: &Shape) -> Result<Strat, SchemaError> {
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
