//! Prompts: every page of `prompts/list`, then for each prompt valid calls (required arguments
//! present, values from completions when the server gave some), missing required arguments, an
//! unknown argument, values of the wrong JSON type (the specification says strings), and huge
//! and odd strings.

use super::listed::{Completed, Prompt, label};
use super::shape::Shape;
use super::{Intent, SurfaceCase, SurfacesRun};
use crate::report::{SurfaceKind, SurfaceRef};
use mcp_fuzz_generators::uri_template::odd_values;
use serde_json::{Map, Value, json};

/// Reads every page of `prompts/list`; items that are not prompts are warnings.
pub(super) async fn list(phase: &mut SurfacesRun<'_, '_>) -> Vec<Prompt> {
    let items = phase.list_all("prompts/list", "prompts").await;
    items
        .iter()
        .enumerate()
        .filter_map(|(i, v)| phase.usable(i, "prompts/list", parse(v)))
        .collect()
}

fn parse(v: &Value) -> Result<Prompt, String> {
    let name = v.get("name").and_then(Value::as_str).ok_or("it has no string `name`")?;
    let mut args = Vec::new();
    if let Some(list) = v.get("arguments").filter(|a| !a.is_null()) {
        let list = list.as_array().ok_or("`arguments` is not an array")?;
        for a in list {
            let n =
                a.get("name").and_then(Value::as_str).ok_or("an argument has no string `name`")?;
            let required = a.get("required").and_then(Value::as_bool).unwrap_or(false);
            args.push((n.to_owned(), required));
        }
    }
    Ok(Prompt { name: name.to_owned(), args })
}

/// Values of the wrong JSON type for a prompt argument.
fn wrong_types() -> [(&'static str, Value); 5] {
    [
        ("a number", json!(1)),
        ("a boolean", json!(true)),
        ("null", Value::Null),
        ("an object", json!({"a": 1})),
        ("an array", json!(["a"])),
    ]
}

/// Characters of the huge string.
const HUGE: usize = 100_000;

/// Calls each prompt with its cases.
pub(super) async fn run(
    phase: &mut SurfacesRun<'_, '_>,
    prompts: &[Prompt],
    completed: &Completed,
) {
    for p in prompts {
        let item = phase.item(SurfaceKind::Prompt, &p.name);
        let plausible = |arg: &str| {
            completed.first(SurfaceKind::Prompt, &p.name, arg).unwrap_or_else(|| "test".into())
        };
        let with = |args: &[&(String, bool)]| -> Map<String, Value> {
            args.iter().map(|(n, _)| (n.clone(), Value::String(plausible(n)))).collect()
        };
        let required: Vec<&(String, bool)> = p.args.iter().filter(|a| a.1).collect();
        let all: Vec<&(String, bool)> = p.args.iter().collect();
        let base = with(&required);
        let mut cases: Vec<(Map<String, Value>, Intent, String)> =
            vec![(base.clone(), Intent::Valid, "required arguments".into())];
        if all.len() > required.len() {
            cases.push((with(&all), Intent::Valid, "every argument".into()));
        }
        for (name, _) in &required {
            let mut m = with(&all);
            m.remove(name);
            cases.push((m, Intent::Invalid, format!("missing {name}")));
        }
        let mut unknown = base.clone();
        unknown.insert("mcp_fuzz_unknown".into(), json!("x"));
        cases.push((unknown, Intent::Odd, "an unknown argument".into()));
        for (name, _) in &all {
            for (what, v) in wrong_types() {
                let mut m = base.clone();
                m.insert(name.clone(), v);
                cases.push((m, Intent::Odd, format!("{name} as {what}")));
            }
            let mut odd: Vec<(String, String)> =
                odd_values().into_iter().map(|v| (format!("{name} = {}", label(&v)), v)).collect();
            odd.push((format!("{name} = a {HUGE}-character string"), "A".repeat(HUGE)));
            for (what, v) in odd {
                let mut m = base.clone();
                m.insert(name.clone(), Value::String(v));
                cases.push((m, Intent::Odd, what));
            }
        }
        let surface =
            SurfaceRef { kind: SurfaceKind::Prompt, name: p.name.clone(), argument: None };
        if !required.is_empty() {
            // No `arguments` member at all.
            let probe = SurfaceCase {
                surface: surface.clone(),
                item,
                method: "prompts/get",
                params: json!({"name": p.name}),
                shape: Shape::Prompt,
                intent: Intent::Invalid,
                label: "no arguments".into(),
                shrink: None,
            };
            phase.probe(probe).await;
        }
        for (args, intent, label) in cases {
            let probe = SurfaceCase {
                surface: surface.clone(),
                item,
                method: "prompts/get",
                params: json!({"name": p.name, "arguments": args}),
                shape: Shape::Prompt,
                intent,
                label,
                shrink: Some((args, params)),
            };
            phase.probe(probe).await;
        }
    }
}

/// The params of `prompts/get` with `args`.
fn params(probe: &SurfaceCase, args: &Map<String, Value>) -> Value {
    json!({"name": probe.surface.name, "arguments": args})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prompt_parses_with_its_arguments_and_a_bad_one_says_why() {
        let p = parse(&json!({"name": "greet", "arguments": [
            {"name": "name", "required": true}, {"name": "style"}
        ]}))
        .expect("prompt");
        assert_eq!(p.args, [("name".to_owned(), true), ("style".to_owned(), false)]);
        assert!(parse(&json!({"arguments": []})).expect_err("no name").contains("name"));
        assert!(parse(&json!({"name": "x", "arguments": {}})).expect_err("bad").contains("array"));
    }
}
