//! The driver's choices: which tool a walk calls next and with which arguments. Arguments draw
//! first on the handles earlier steps returned (bound by property name, so they are bound again
//! on every replay), then on the generator. Now and then a walk plays one of the classic
//! patterns on a family: create then read (the read must find it), create, delete then use (a
//! tool error, never a crash), create then use an altered handle (the same).
//!
//! Every choice comes from the walk's seed and the results of its own earlier steps, so a server
//! that answers the same way walks the same way, whatever else runs beside it.

use super::exec::{Binding, SeqStep, StepCheck, StepRun};
use super::model::{self, Named, Returned, Role};
use crate::judge::Outcome;
use mcp_fuzz_generators::Generator;
use serde_json::{Map, Value};

/// A tool a walk may call.
pub struct SeqTool {
    /// Its name.
    pub name: String,
    /// Its `inputSchema`.
    pub schema: Value,
    /// Its generator (the oracle for bound arguments too).
    pub generator: Generator,
    /// Its simplest valid arguments (the first boundary case).
    pub simplest: Option<Map<String, Value>>,
    /// What its name says it does.
    pub named: Named,
    /// Its `outputSchema`, and its validator.
    pub output_schema: Option<Value>,
    /// See `output_schema`.
    pub output: Option<jsonschema::Validator>,
}

impl SeqTool {
    /// A tool a walk may call, from its listing entry; `None` when its `inputSchema` cannot be
    /// fuzzed.
    #[must_use]
    pub fn new(tool: &crate::transport::listing::Tool) -> Option<Self> {
        let generator = Generator::compile(tool.input()).ok()?;
        let simplest = generator.boundary().ok()?.into_iter().find_map(|v| match v {
            Value::Object(m) => Some(m),
            _ => None,
        });
        // A tool annotated read-only makes, changes and ends nothing, whatever its name says
        // (server-memory's `open_nodes` reads them).
        let mut named = model::name(&tool.name);
        if tool.read_only_hint() == Some(true) {
            named.role = match named.role {
                Some(Role::Creates) => Some(Role::Reads),
                Some(Role::Updates | Role::Deletes) => None,
                other => other,
            };
        }
        Some(Self {
            name: tool.name.clone(),
            schema: tool.input().clone(),
            generator,
            simplest,
            named,
            output_schema: tool.output_schema.clone(),
            output: crate::server::output_validator(tool.output_schema.as_ref()),
        })
    }

    fn takes(&self, key: &str) -> bool {
        model::bind(&Map::new(), &self.schema, key, &Value::Null).is_some()
            || self
                .simplest
                .as_ref()
                .and_then(|a| model::bind(a, &self.schema, key, &Value::Null))
                .is_some()
    }
}

/// The check a step's bound handles call for, whatever made the walk take it: a handle that an
/// earlier delete of the walk took with success is used after delete; one that a create of the
/// same family returned, and is read, must be found.
#[must_use]
pub fn infer(step: &SeqStep, steps: &[SeqStep], runs: &[StepRun]) -> Option<StepCheck> {
    let named = model::name(&step.tool);
    let mut check = None;
    for b in &step.bindings {
        if b.altered {
            return Some(StepCheck::UnknownHandle);
        }
        let deleted = steps.iter().zip(runs).any(|(s, r)| {
            r.outcome == Outcome::Ok
                && model::name(&s.tool).role == Some(Role::Deletes)
                && s.bindings.iter().any(|d| d.step == b.step && d.from == b.from && !d.altered)
        });
        if deleted {
            return Some(StepCheck::AfterDelete);
        }
        let producer = steps.get(b.step).map(|p| model::name(&p.tool));
        if named.role == Some(Role::Reads)
            && producer.is_some_and(|p| p.role == Some(Role::Creates) && p.noun == named.noun)
        {
            check = Some(StepCheck::AfterCreate);
        }
    }
    check
}

/// A small deterministic generator (splitmix64): walks need only a few numbers.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    #[must_use]
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    /// The next number.
    pub fn draw(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number below `n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.draw() % n as u64).expect("below n")
    }

    /// `true` `percent` times in a hundred.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.draw() % 100 < percent
    }
}

/// A classic pattern in progress.
#[derive(Debug, Clone)]
enum Pattern {
    /// A create ran: read what it made.
    ReadCreated { noun: String },
    /// A create ran: delete what it made, then use it.
    DeleteCreated { noun: String },
    /// The delete of this handle ran: use it.
    UseDeleted { noun: String, handle: Returned },
    /// A create or list ran: use an altered handle.
    UseAltered { noun: String },
}

/// One walk.
pub struct Walker<'t> {
    tools: &'t [SeqTool],
    rng: Rng,
    length: usize,
    pending: Option<Pattern>,
}

impl<'t> Walker<'t> {
    /// A walk of at most `length` steps over `tools`, from `seed`.
    #[must_use]
    pub fn new(tools: &'t [SeqTool], seed: u64, length: usize) -> Self {
        Self { tools, rng: Rng::new(seed), length, pending: None }
    }

    /// The next step after `steps` (which ran as `runs`), or `None` when the walk is over.
    pub fn next(&mut self, steps: &[SeqStep], runs: &[StepRun]) -> Option<SeqStep> {
        if steps.len() >= self.length || self.tools.is_empty() {
            return None;
        }
        if let Some(p) = self.pending.take()
            && let Some(step) = self.follow(p, steps, runs)
        {
            return Some(step);
        }
        if self.rng.chance(45)
            && let Some(step) = self.start_pattern()
        {
            return Some(step);
        }
        let i = self.rng.below(self.tools.len());
        let mut step = self.random_step(i, runs);
        step.check = infer(&step, steps, runs);
        Some(step)
    }

    /// A producer step that starts a pattern, if some tool makes or lists things.
    fn start_pattern(&mut self) -> Option<SeqStep> {
        let creators: Vec<usize> = self.with_role(&[Role::Creates], None);
        let listers: Vec<usize> = self.with_role(&[Role::Lists], None);
        let (i, pattern) = match (creators.is_empty(), listers.is_empty(), self.rng.below(3)) {
            (false, _, 0) => {
                let i = creators[self.rng.below(creators.len())];
                (i, Pattern::ReadCreated { noun: self.tools[i].named.noun.clone() })
            }
            (false, _, 1) => {
                let i = creators[self.rng.below(creators.len())];
                (i, Pattern::DeleteCreated { noun: self.tools[i].named.noun.clone() })
            }
            (false, _, _) => {
                let i = creators[self.rng.below(creators.len())];
                (i, Pattern::UseAltered { noun: self.tools[i].named.noun.clone() })
            }
            (true, false, _) => {
                let i = listers[self.rng.below(listers.len())];
                (i, Pattern::UseAltered { noun: self.tools[i].named.noun.clone() })
            }
            (true, true, _) => return None,
        };
        self.pending = Some(pattern);
        Some(self.plain_step(i, None))
    }

    /// The step a pattern takes after the last step, if the last step gave what it needs.
    fn follow(&mut self, p: Pattern, steps: &[SeqStep], runs: &[StepRun]) -> Option<SeqStep> {
        let last = runs.len().checked_sub(1)?;
        let ran = &runs[last];
        match p {
            Pattern::UseDeleted { noun, handle } => {
                // The delete must have worked for the use to be "after delete".
                if ran.outcome != Outcome::Ok {
                    return None;
                }
                let users =
                    self.users(&handle.key, &noun, &[Role::Reads, Role::Updates, Role::Deletes]);
                let i = *users.first()?;
                self.bound_step(i, &handle, false, Some(StepCheck::AfterDelete))
            }
            p => {
                if ran.outcome != Outcome::Ok {
                    return None;
                }
                let handles = model::handles(last, ran.data.as_ref()?);
                let (noun, roles, check, altered): (&str, &[Role], Option<StepCheck>, bool) =
                    match &p {
                        Pattern::ReadCreated { noun } => {
                            (noun, &[Role::Reads], Some(StepCheck::AfterCreate), false)
                        }
                        Pattern::DeleteCreated { noun } => (noun, &[Role::Deletes], None, false),
                        Pattern::UseAltered { noun } => (
                            noun,
                            &[Role::Reads, Role::Updates, Role::Deletes],
                            Some(StepCheck::UnknownHandle),
                            true,
                        ),
                        Pattern::UseDeleted { .. } => unreachable!("matched above"),
                    };
                for h in &handles {
                    let users = self.users(&h.key, noun, roles);
                    let Some(&i) = users.first() else { continue };
                    let Some(step) = self.bound_step(i, h, altered, check) else { continue };
                    if let Pattern::DeleteCreated { noun } = &p {
                        self.pending =
                            Some(Pattern::UseDeleted { noun: noun.clone(), handle: h.clone() });
                    }
                    // A delete of what was just made is a step of its own; the use follows.
                    let _ = steps;
                    return Some(step);
                }
                None
            }
        }
    }

    /// The tools with one of `roles` (of family `noun` when given), in listing order.
    fn with_role(&self, roles: &[Role], noun: Option<&str>) -> Vec<usize> {
        (0..self.tools.len())
            .filter(|&i| {
                let n = &self.tools[i].named;
                n.role.is_some_and(|r| roles.contains(&r)) && noun.is_none_or(|x| n.noun == x)
            })
            .collect()
    }

    /// The tools with one of `roles` that take a value returned under `key`: those of family
    /// `noun` first.
    fn users(&self, key: &str, noun: &str, roles: &[Role]) -> Vec<usize> {
        let mut same = self.with_role(roles, Some(noun));
        let mut other = self.with_role(roles, None);
        other.retain(|i| !same.contains(i));
        same.extend(other);
        same.retain(|&i| self.tools[i].takes(key));
        same
    }

    /// Tool `i` with `handle` bound where its input fits it (altered when asked), and `check`.
    fn bound_step(
        &mut self,
        i: usize,
        handle: &Returned,
        altered: bool,
        check: Option<StepCheck>,
    ) -> Option<SeqStep> {
        let tool = &self.tools[i];
        let base = tool.simplest.clone().unwrap_or_default();
        let value = if altered { model::altered(&handle.value)? } else { handle.value.clone() };
        let (arguments, pointers) = model::bind(&base, &tool.schema, &handle.key, &value)?;
        if !tool.generator.is_valid(&Value::Object(arguments.clone())) {
            return None;
        }
        let bindings = pointers
            .into_iter()
            .map(|pointer| Binding {
                pointer,
                step: handle.step,
                from: handle.pointer.clone(),
                altered,
            })
            .collect();
        Some(SeqStep { tool: tool.name.clone(), arguments, bindings, check, outcome: None })
    }

    /// Tool `i` with generated arguments, and handles from earlier steps bound where they fit.
    fn random_step(&mut self, i: usize, runs: &[StepRun]) -> SeqStep {
        let pool: Vec<Returned> = runs
            .iter()
            .enumerate()
            .rev()
            .filter(|(_, r)| r.outcome == Outcome::Ok)
            .filter_map(|(j, r)| r.data.as_ref().map(|d| model::handles(j, d)))
            .flatten()
            .collect();
        let mut step = self.plain_step(i, None);
        let tool = &self.tools[i];
        for h in pool {
            if !self.rng.chance(60) {
                continue;
            }
            let Some((arguments, pointers)) =
                model::bind(&step.arguments, &tool.schema, &h.key, &h.value)
            else {
                continue;
            };
            // Pointers bound already stay with their first value.
            if pointers.iter().any(|p| step.bindings.iter().any(|b| b.pointer == *p)) {
                continue;
            }
            if tool.generator.is_valid(&Value::Object(arguments.clone())) {
                step.arguments = arguments;
                step.bindings.extend(pointers.into_iter().map(|pointer| Binding {
                    pointer,
                    step: h.step,
                    from: h.pointer.clone(),
                    altered: false,
                }));
            }
        }
        step
    }

    /// Tool `i` with its simplest arguments or a random valid value.
    fn plain_step(&mut self, i: usize, check: Option<StepCheck>) -> SeqStep {
        let tool = &self.tools[i];
        let drawn = if self.rng.chance(50) {
            None
        } else {
            match tool.generator.sampler(self.rng.draw()).valid() {
                Ok(Value::Object(m)) => Some(m),
                _ => None,
            }
        };
        let arguments = drawn.or_else(|| tool.simplest.clone()).unwrap_or_default();
        SeqStep { tool: tool.name.clone(), arguments, bindings: Vec::new(), check, outcome: None }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(name: &str, schema: Value) -> SeqTool {
        let generator = Generator::compile(&schema).expect("compiles");
        let simplest = generator.boundary().ok().and_then(|b| match b.into_iter().next() {
            Some(Value::Object(m)) => Some(m),
            _ => None,
        });
        SeqTool {
            name: name.into(),
            schema,
            generator,
            simplest,
            named: model::name(name),
            output_schema: None,
            output: None,
        }
    }

    fn by_handle(key: &str) -> Value {
        json!({"type": "object", "properties": {key: {"type": "string"}}, "required": [key]})
    }

    #[test]
    fn walks_are_the_same_for_a_seed_and_chain_created_handles() {
        let tools = vec![
            tool(
                "open_file",
                json!({"type": "object", "properties": {"path": {"type": "string", "minLength": 1}}, "required": ["path"]}),
            ),
            tool("read_file", by_handle("handle")),
            tool("close_file", by_handle("handle")),
        ];
        let run = |seed: u64| {
            let mut w = Walker::new(&tools, seed, 12);
            let (mut steps, mut runs) = (Vec::new(), Vec::<StepRun>::new());
            while let Some(s) = w.next(&steps, &runs) {
                let n = steps.len();
                let data = (s.tool == "open_file").then(|| json!({"handle": format!("fh-{n}")}));
                runs.push(StepRun { arguments: s.arguments.clone(), outcome: Outcome::Ok, data });
                steps.push(s);
            }
            steps
        };
        assert_eq!(run(7), run(7), "same seed, same answers: same walk");
        let steps: Vec<SeqStep> = (0..20).flat_map(run).collect();
        let checks: Vec<StepCheck> = steps.iter().filter_map(|s| s.check).collect();
        for c in [StepCheck::AfterCreate, StepCheck::AfterDelete, StepCheck::UnknownHandle] {
            assert!(checks.contains(&c), "{c:?} never played in 20 walks");
        }
        for s in steps.iter().filter(|s| s.check.is_some()) {
            assert!(!s.bindings.is_empty(), "a check step uses a returned handle: {s:?}");
            assert_ne!(s.tool, "open_file");
        }
        let after_delete =
            steps.iter().position(|s| s.check == Some(StepCheck::AfterDelete)).expect("one");
        assert!(
            steps[..after_delete].iter().rev().any(|s| s.tool == "close_file"),
            "a delete comes before the use"
        );
    }
}
