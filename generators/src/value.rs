//! Small helpers over `serde_json::Value`.

use serde_json::{Number, Value};

/// JSON equality as JSON Schema defines it: `1` equals `1.0`.
pub(crate) fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => num_eq(x, y),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_eq(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}

fn num_eq(x: &Number, y: &Number) -> bool {
    if let (Some(a), Some(b)) = (x.as_i64(), y.as_i64()) {
        return a == b;
    }
    if let (Some(a), Some(b)) = (x.as_u64(), y.as_u64()) {
        return a == b;
    }
    x.as_f64() == y.as_f64()
}

/// A JSON number for an integer.
pub(crate) fn int(v: i128) -> Value {
    if let Ok(i) = i64::try_from(v) {
        Value::from(i)
    } else if let Ok(u) = u64::try_from(v) {
        Value::from(u)
    } else {
        #[expect(
            clippy::cast_precision_loss,
            reason = "beyond 64 bits only an approximation exists"
        )]
        float(v as f64)
    }
}

/// A JSON number for a float; integral floats become integers so `1.0` prints as `1`.
/// Non-finite input (which is never produced by callers) becomes `0`: NaN is not JSON.
pub(crate) fn float(f: f64) -> Value {
    if !f.is_finite() {
        return Value::from(0);
    }
    #[expect(clippy::cast_possible_truncation, reason = "guarded by the range check")]
    if f.fract() == 0.0 && f.abs() < 9.0e15 {
        return Value::from(f as i64);
    }
    Number::from_f64(f).map_or(Value::from(0), Value::Number)
}

/// Whether all items of an array are distinct under [`json_eq`].
pub(crate) fn all_unique(items: &[Value]) -> bool {
    items.iter().enumerate().all(|(i, a)| items[..i].iter().all(|b| !json_eq(a, b)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_compare_by_value() {
        assert!(json_eq(&json!(1), &json!(1.0)));
        assert!(json_eq(&json!({"a": [1]}), &json!({"a": [1.0]})));
        assert!(!json_eq(&json!(1), &json!("1")));
    }

    #[test]
    fn float_never_emits_non_json() {
        assert_eq!(float(f64::NAN), json!(0));
        assert_eq!(float(2.0), json!(2));
        assert_eq!(float(2.5), json!(2.5));
    }
}
