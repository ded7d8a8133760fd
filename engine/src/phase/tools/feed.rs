//! Output feeding: values from earlier results become candidate inputs of later tools.
//!
//! A successful result's `structuredContent`, and any text block that is a JSON object or array,
//! is walked for scalar properties (`id`, `cursor`, `path`...). A later tool whose input has a
//! property of the same name (or `fooId` / `foo_id` for `id`) gets extra valid cases: its
//! simplest boundary case with that property set to each harvested value, kept only when the
//! generator's oracle accepts it. So a bug that needs a real id is reachable.

use crate::phase::tools::plan::{Case, CaseLabel, Mode};
use mcp_fuzz_generators::Generator;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// Values kept per property name.
///
/// Why: a listing can return thousands of ids; a few real ones are enough to reach the code
/// behind them.
const PER_NAME: usize = 8;
/// Fed cases per tool, for the same reason.
const PER_TOOL: usize = 16;
/// Fed values tried per input property.
const PER_PROPERTY: usize = 4;
/// Longest string value kept.
const MAX_STRING: usize = 200;
/// Deepest level walked in a result.
const MAX_DEPTH: usize = 8;

/// Values harvested so far, by lower-cased property name, in the order they were seen.
#[derive(Debug, Default)]
pub struct Pool {
    values: BTreeMap<String, Vec<Value>>,
}

impl Pool {
    /// Adds the scalar properties of one `tools/call` result.
    pub fn harvest(&mut self, result: &Value) {
        if result.get("isError") == Some(&Value::Bool(true)) {
            return;
        }
        if let Some(sc) = result.get("structuredContent") {
            self.walk(sc, 0);
        }
        for block in result.get("content").and_then(Value::as_array).into_iter().flatten() {
            let Some(text) = block.get("text").and_then(Value::as_str) else { continue };
            let t = text.trim_start();
            if (t.starts_with('{') || t.starts_with('['))
                && let Ok(v) = serde_json::from_str::<Value>(t)
            {
                self.walk(&v, 0);
            }
        }
    }

    fn walk(&mut self, v: &Value, depth: usize) {
        if depth > MAX_DEPTH {
            return;
        }
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    let keep = match x {
                        Value::String(s) => !s.is_empty() && s.chars().count() <= MAX_STRING,
                        Value::Number(n) => n.is_i64() || n.is_u64(),
                        _ => false,
                    };
                    if keep {
                        let list = self.values.entry(k.to_lowercase()).or_default();
                        if list.len() < PER_NAME && !list.contains(x) {
                            list.push(x.clone());
                        }
                    }
                    self.walk(x, depth + 1);
                }
            }
            Value::Array(a) => a.iter().for_each(|x| self.walk(x, depth + 1)),
            _ => {}
        }
    }

    /// The property names values were harvested under (lower-cased).
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.values.keys().map(String::as_str)
    }

    /// Whether nothing was harvested.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Extra valid cases for a tool with `schema`, built on its first boundary case.
    #[must_use]
    pub fn cases(&self, schema: &Value, generator: &Generator, planned: &[Case]) -> Vec<Case> {
        let mut out: Vec<Case> = Vec::new();
        let Some(props) = schema.get("properties").and_then(Value::as_object) else { return out };
        let Some(base) = planned.iter().find(|c| c.label.mode == Mode::Boundary) else {
            return out;
        };
        for name in props.keys() {
            let lower = name.to_lowercase();
            let mut keys = vec![lower.clone()];
            if lower != "id" && (lower.ends_with("_id") || lower.ends_with("id")) {
                keys.push("id".to_owned());
            }
            let values = keys.iter().filter_map(|k| self.values.get(k)).flatten();
            for v in values.take(PER_PROPERTY) {
                let mut arguments: Map<String, Value> = base.arguments.clone();
                arguments.insert(name.clone(), v.clone());
                let fresh = !out.iter().any(|c| c.arguments == arguments)
                    && !planned.iter().any(|c| c.arguments == arguments);
                if fresh && generator.is_valid(&Value::Object(arguments.clone())) {
                    out.push(Case {
                        label: CaseLabel { fed: Some(name.clone()), ..CaseLabel::of(Mode::Valid) },
                        arguments,
                        draw: None,
                    });
                    if out.len() == PER_TOOL {
                        return out;
                    }
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::phase::tools::plan::plan;
    use serde_json::json;

    #[test]
    fn ids_from_a_listing_feed_an_id_property() {
        let mut pool = Pool::default();
        pool.harvest(&json!({"content": [{"type": "text", "text": "{\"items\": [{\"id\": \"itm-1\"}, {\"id\": \"itm-2\"}]}"}]}));
        pool.harvest(&json!({"isError": true, "structuredContent": {"id": "nope"}}));
        let schema = json!({"type": "object", "properties": {"itemId": {"type": "string"}}, "required": ["itemId"]});
        let g = Generator::compile(&schema).expect("compiles");
        let planned = plan(&g, 1, 0).expect("plans");
        let fed = pool.cases(&schema, &g, &planned);
        let ids: Vec<&Value> = fed.iter().map(|c| &c.arguments["itemId"]).collect();
        assert_eq!(ids, [&json!("itm-1"), &json!("itm-2")]);
        assert!(fed.iter().all(|c| c.label.fed.as_deref() == Some("itemId")));
    }
}
