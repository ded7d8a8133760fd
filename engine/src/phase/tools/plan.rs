//! The cases for one tool, in order: boundary/valid values (with `default` and `examples`), one
//! missing-required case per required property at every depth, one wrong-type case per location,
//! the other labelled mutations, random valid and invalid values, then the valid cases made with
//! the config file's value hints ([`hinted`]). Once a valid call worked, the mutations are
//! applied to its arguments too ([`on_worked`]), so a check behind the tool's first one is
//! reached.

use mcp_fuzz_generators::hash::Fnv1a;
use mcp_fuzz_generators::hint::HintPlan;
use mcp_fuzz_generators::{Generator, SchemaError, SchemaErrorKind, pointer};
use serde_json::Value;

pub use mcp_fuzz_model::case::{Case, CaseLabel, Mode};

/// Boundary values kept per tool.
///
/// Why: wide tools have thousands of boundary combinations; the first ones cover every property's
/// bounds once, and the random phase does the rest.
pub const MAX_BOUNDARY: usize = 200;

/// Mutations kept per tool, for the same reason.
pub const MAX_MUTATIONS: usize = 400;

/// A per-tool seed from the run seed and the tool name (FNV-1a), stable across machines.
#[must_use]
pub fn tool_seed(seed: u64, tool: &str) -> u64 {
    Fnv1a::with_seed(seed).write(tool.as_bytes()).finish()
}

/// Plans the cases of one tool.
///
/// # Errors
/// When the input schema cannot be compiled or no valid value can be generated.
pub fn plan(generator: &Generator, seed: u64, random: usize) -> Result<Vec<Case>, SchemaError> {
    let mut cases = Vec::new();
    // Arguments are always an object: values that are not one cannot be sent as `arguments`.
    let object = |v: Value| match v {
        Value::Object(m) => Some(m),
        _ => None,
    };
    for v in generator.boundary()?.into_iter().take(MAX_BOUNDARY) {
        if let Some(arguments) = object(v) {
            cases.push(Case { label: CaseLabel::of(Mode::Boundary), arguments, draw: None });
        }
    }
    let mutations = match generator.mutations() {
        Ok(m) => m,
        Err(SchemaError { kind: SchemaErrorKind::AcceptsEverything, .. }) => Vec::new(),
        Err(e) => return Err(e),
    };
    for m in mutations.into_iter().take(MAX_MUTATIONS) {
        if let Some(arguments) = object(m.value) {
            cases.push(Case { label: CaseLabel::invalid(m.label), arguments, draw: None });
        }
    }
    let mut sampler = generator.sampler(seed);
    let mut invalid_ok = true;
    for _ in 0..random {
        let draw = Some(sampler.draws());
        if let Some(arguments) = object(sampler.valid()?) {
            cases.push(Case { label: CaseLabel::of(Mode::Valid), arguments, draw });
        }
        if invalid_ok {
            let draw = Some(sampler.draws());
            match sampler.invalid() {
                Ok(inv) => {
                    if let Some(arguments) = object(inv.value) {
                        cases.push(Case { label: CaseLabel::invalid(inv.label), arguments, draw });
                    }
                }
                Err(_) => invalid_ok = false,
            }
        }
    }
    Ok(cases)
}

/// Hinted cases kept per tool.
///
/// Why: a hint list of thousands of ids should not turn one tool into thousands of calls; a
/// hundred reach the code behind the ids.
pub const MAX_HINTED: usize = 100;

/// The valid cases made with value hints: `random` of them, or as many as the longest list of
/// values (so each is used once), at most [`MAX_HINTED`]. Each is a planned valid case (spread
/// over the boundary and random ones) with the hinted places set (added when absent, if the
/// result is still valid); only cases the generator's oracle accepts are kept, each once.
#[must_use]
pub fn hinted(
    generator: &Generator,
    hints: &HintPlan,
    seed: u64,
    planned: &[Case],
    random: usize,
) -> Vec<Case> {
    let bases: Vec<&Case> = planned.iter().filter(|c| c.label.mode.is_valid()).collect();
    if hints.is_empty() || bases.is_empty() {
        return Vec::new();
    }
    let rounds = random.max(hints.longest()).min(MAX_HINTED);
    let mut out: Vec<Case> = Vec::new();
    for round in 0..rounds {
        let base = Value::Object(bases[round * bases.len() / rounds].arguments.clone());
        let made = [true, false].into_iter().find_map(|insert| {
            hints.apply(&base, round as u64, seed, insert).filter(|(v, _)| generator.is_valid(v))
        });
        if let Some((Value::Object(arguments), hinted)) = made
            && !out.iter().any(|c| c.arguments == arguments)
        {
            out.push(Case {
                label: CaseLabel { hinted, ..CaseLabel::of(Mode::Valid) },
                arguments,
                draw: None,
            });
        }
    }
    out
}

/// Cases built on a call that worked, kept per tool.
///
/// Why: one case per mutation of each property (missing, wrong type, null, bounds) of a
/// typical tool is 10-40; a wide tool's hundreds would double its run for little more depth.
pub const MAX_ON_WORKED: usize = 60;

/// The planned mutations applied to the arguments of a valid call that worked (`base`): each
/// mutation's change to one top-level property (removed, or given the mutated value) made to
/// `base` instead of the simplest value, so an argument that must name something real (a fed or
/// hinted id) stays real while another one is wrong. Properties that `base` got from an earlier
/// result or a hint are not mutated (the planned cases already do). Only values the oracle
/// rejects and that no planned case has are kept, labelled `on_worked`, each once.
#[must_use]
pub fn on_worked(generator: &Generator, base: &Case, planned: &[Case]) -> Vec<Case> {
    let Ok(mutations) = generator.mutations() else { return Vec::new() };
    let mut kept: Vec<String> = base.label.fed.iter().cloned().collect();
    kept.extend(base.label.hinted.iter().filter_map(|p| pointer::tokens(p).into_iter().next()));
    let mut out: Vec<Case> = Vec::new();
    for m in mutations {
        let Value::Object(mutated) = &m.value else { continue };
        let mut arguments = base.arguments.clone();
        match pointer::tokens(&m.label.pointer).into_iter().next() {
            Some(key) if kept.contains(&key) => continue,
            Some(key) => match mutated.get(&key) {
                Some(v) => {
                    arguments.insert(key, v.clone());
                }
                None => {
                    arguments.remove(&key);
                }
            },
            // A mutation of the whole object (an unexpected property, too many properties):
            // its extra keys.
            None => {
                for (k, v) in mutated {
                    if !arguments.contains_key(k) {
                        arguments.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        let fresh = !out.iter().any(|c| c.arguments == arguments)
            && !planned.iter().any(|c| c.arguments == arguments);
        if fresh && !generator.is_valid(&Value::Object(arguments.clone())) {
            let label = CaseLabel { on_worked: true, ..CaseLabel::invalid(m.label) };
            out.push(Case { label, arguments, draw: None });
            if out.len() == MAX_ON_WORKED {
                break;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn order_is_boundary_then_missing_then_wrong_type_then_random() {
        let g = Generator::compile(&json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}, "required": ["a"]}))
            .expect("compiles");
        let cases = plan(&g, 1, 3).expect("plans");
        let modes: Vec<Mode> = cases.iter().map(|c| c.label.mode).collect();
        let first_invalid = modes.iter().position(|m| *m == Mode::Invalid).expect("invalid cases");
        assert!(modes[..first_invalid].iter().all(|m| *m == Mode::Boundary));
        assert_eq!(cases[first_invalid].label.mutation.as_deref(), Some("missing-required"));
        assert_eq!(cases[first_invalid + 1].label.mutation.as_deref(), Some("wrong-type"));
        assert!(modes.contains(&Mode::Valid));
        assert!(
            cases.iter().all(|c| c.label.pointer.as_deref() != Some("")
                || c.label.mutation.as_deref() != Some("wrong-type")),
            "root wrong-type values are not objects and are never sent"
        );
    }

    #[test]
    fn hinted_cases_are_valid_labelled_and_use_every_value() {
        use mcp_fuzz_generators::hint::{Hint, Source, Target};
        let schema = json!({"type": "object", "properties": {
            "repo_path": {"type": "string"}, "max_count": {"type": "integer", "minimum": 1}},
            "required": ["repo_path"]});
        let g = Generator::compile(&schema).expect("compiles");
        let planned = plan(&g, 1, 4).expect("plans");
        let values = (0..12).map(|i| json!(format!("./repo{i}"))).collect();
        let hints = HintPlan::new(
            &schema,
            &[Hint {
                target: Target::Property("repo_path".into()),
                source: Source::Values(values),
            }],
        )
        .expect("hints");
        let cases = hinted(&g, &hints, 1, &planned, 4);
        assert_eq!(cases.len(), 12, "the longest list decides when it is longer than --cases");
        for (i, c) in cases.iter().enumerate() {
            assert!(g.is_valid(&Value::Object(c.arguments.clone())));
            assert_eq!(c.arguments["repo_path"], format!("./repo{i}"));
            assert_eq!(c.label.to_string(), "valid, hinted `/repo_path`");
        }
        let wrong = HintPlan::new(
            &schema,
            &[Hint {
                target: Target::Property("max_count".into()),
                source: Source::Values(vec![json!(0)]),
            }],
        )
        .expect("hints");
        assert!(hinted(&g, &wrong, 1, &planned, 4).is_empty(), "invalid hinted values are dropped");
    }

    #[test]
    fn tool_seeds_differ_by_name_and_are_stable() {
        assert_eq!(tool_seed(1, "a"), tool_seed(1, "a"));
        assert_ne!(tool_seed(1, "a"), tool_seed(1, "b"));
        assert_ne!(tool_seed(1, "a"), tool_seed(2, "a"));
    }

    #[test]
    fn mutations_on_a_call_that_worked_keep_its_real_values() {
        let schema = json!({"type": "object", "properties": {
            "id": {"type": "string"}, "count": {"type": "integer", "minimum": 1},
            "note": {"type": "string"}}, "required": ["id", "count"]});
        let g = Generator::compile(&schema).expect("compiles");
        let planned = plan(&g, 1, 2).expect("plans");
        let args = json!({"id": "rec-7", "count": 3, "note": "x"});
        let Value::Object(arguments) = args else { unreachable!() };
        let base = Case {
            label: CaseLabel { fed: Some("id".into()), ..CaseLabel::of(Mode::Valid) },
            arguments,
            draw: None,
        };
        let cases = on_worked(&g, &base, &planned);
        assert!(!cases.is_empty());
        for c in &cases {
            assert!(c.label.on_worked && c.label.mode == Mode::Invalid, "{}", c.label);
            assert_eq!(c.arguments["id"], "rec-7", "the fed id stays real: {:?}", c.arguments);
            assert!(!g.is_valid(&Value::Object(c.arguments.clone())));
        }
        let wrong_count = cases
            .iter()
            .find(|c| {
                c.label.mutation.as_deref() == Some("wrong-type")
                    && c.label.pointer.as_deref() == Some("/count")
            })
            .expect("a wrong type of the second argument");
        assert_eq!(wrong_count.arguments["note"], "x", "the rest of the call is kept");
        assert!(
            cases.iter().any(|c| c.label.mutation.as_deref() == Some("missing-required")
                && !c.arguments.contains_key("count")),
            "a missing second argument"
        );
        assert!(cases.iter().all(|c| c.label.pointer.as_deref() != Some("/id")));
        assert!(
            wrong_count.label.to_string().ends_with("on a call that worked"),
            "{}",
            wrong_count.label
        );
    }
}
