//! Completions: `completion/complete` for every prompt argument and template variable, with an
//! empty prefix, a partial one and odd ones; each result must hold at most 100 string values,
//! with `total` and `hasMore` consistent. The values of the first answers feed the prompts' and
//! templates' plausible arguments.

use super::listed::{Completed, Listed, Prompt, label};
use super::shape::Shape;
use super::{Intent, SurfaceCase, SurfacesRun};
use crate::report::{SurfaceKind, SurfaceRef};
use serde_json::{Value, json};

/// Arguments and variables completed, at most.
const MAX_TARGETS: usize = 50;

/// Prefixes sent for each argument: empty, partial, then odd.
fn prefixes() -> Vec<(String, Intent)> {
    vec![
        (String::new(), Intent::Valid),
        ("a".into(), Intent::Valid),
        ("%".into(), Intent::Odd),
        ("é🦀".into(), Intent::Odd),
        ("a".repeat(1_000), Intent::Odd),
    ]
}

/// Completes every prompt argument and template variable.
pub(super) async fn run(
    phase: &mut SurfacesRun<'_, '_>,
    prompts: &[Prompt],
    resources: Option<&Listed>,
) -> Completed {
    let mut targets: Vec<(SurfaceKind, String, String, Value)> = Vec::new();
    for p in prompts {
        for (arg, _) in &p.args {
            let reference = json!({"type": "ref/prompt", "name": p.name});
            targets.push((SurfaceKind::Prompt, p.name.clone(), arg.clone(), reference));
        }
    }
    for (text, t) in resources.map(|r| r.templates.as_slice()).unwrap_or_default() {
        for var in t.variables() {
            let reference = json!({"type": "ref/resource", "uri": text});
            targets.push((SurfaceKind::ResourceTemplate, text.clone(), var.to_owned(), reference));
        }
    }
    let mut completed = Completed::default();
    for (kind, name, arg, reference) in targets.into_iter().take(MAX_TARGETS) {
        let surface = SurfaceRef {
            kind: SurfaceKind::Completion,
            name: format!("{} {name}", reference["type"].as_str().unwrap_or_default()),
            argument: Some(arg.clone()),
        };
        let item = phase.item(SurfaceKind::Completion, &format!("{} {name}: {arg}", kind.as_str()));
        for (prefix, intent) in prefixes() {
            let probe = SurfaceCase {
                surface: surface.clone(),
                item,
                method: "completion/complete",
                params: json!({"ref": reference, "argument": {"name": arg, "value": prefix}}),
                shape: Shape::Complete,
                intent,
                label: format!("prefix {}", label(&prefix)),
                shrink: None,
            };
            let ok = phase.probe(probe).await.is_some_and(|o| o == crate::judge::Outcome::Ok);
            let values = phase
                .last_result
                .as_ref()
                .and_then(|r| r.pointer("/completion/values"))
                .and_then(Value::as_array)
                .map(|v| v.iter().filter_map(Value::as_str).map(str::to_owned).collect::<Vec<_>>());
            if let (true, Some(values)) = (ok, values) {
                let key = (kind, name.clone(), arg.clone());
                if !completed.values.contains_key(&key) && !values.is_empty() {
                    completed.values.insert(key, values);
                }
            }
        }
    }
    completed
}
