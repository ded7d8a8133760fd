//! Ties the pieces together: the oracle, the plan, and the strategies built from it (once, on
//! first use).

use crate::build::{Builder, Mode};
use crate::schema::{self, MAX_DEPTH, Plan};
use crate::shape::Conj;
use crate::{Dialect, Invalid, SchemaError, SchemaErrorKind};
use proptest::prelude::*;
use proptest::strategy::Union;
use serde_json::Value;
use std::sync::{Arc, OnceLock};

/// Draws per invalid alternative when probing it.
///
/// Why: an alternative whose labelled mutation holds at all does so for most draws; four draws
/// with a tight rejection budget tell the dead ones apart in microseconds.
const PROBES: usize = 4;

pub(crate) struct Compiled {
    plan: Plan,
    oracle: Arc<jsonschema::Validator>,
    valid: OnceLock<Result<BoxedStrategy<Value>, SchemaError>>,
    invalid: OnceLock<Result<BoxedStrategy<Invalid>, SchemaError>>,
}

fn draft_of(d: Dialect) -> jsonschema::Draft {
    match d {
        Dialect::Draft4 => jsonschema::Draft::Draft4,
        Dialect::Draft6 => jsonschema::Draft::Draft6,
        Dialect::Draft7 => jsonschema::Draft::Draft7,
        Dialect::Draft201909 => jsonschema::Draft::Draft201909,
        Dialect::Draft202012 => jsonschema::Draft::Draft202012,
    }
}

/// Builds the `jsonschema` validator used as the oracle: formats asserted, nothing fetched.
pub(crate) fn build_oracle(
    schema: &Value,
    dialect: Dialect,
) -> Result<jsonschema::Validator, String> {
    jsonschema::options()
        .with_draft(draft_of(dialect))
        .should_validate_formats(true)
        .build(schema)
        .map_err(|e| {
            let at = e.instance_path().to_string();
            if at.is_empty() { e.to_string() } else { format!("{e} (at `{at}`)") }
        })
}

/// The first `$ref` that does not start with `#`, for a clearer error than the validator's.
fn first_non_local_ref(v: &Value, ptr: &str) -> Option<(String, String)> {
    match v {
        Value::Object(o) => {
            if let Some(r) = o.get("$ref").and_then(Value::as_str)
                && !r.starts_with('#')
            {
                return Some((r.to_owned(), ptr.to_owned()));
            }
            o.iter()
                .filter(|(k, _)| !matches!(k.as_str(), "enum" | "const" | "default" | "examples"))
                .find_map(|(k, c)| first_non_local_ref(c, &crate::pointer::push(ptr, k)))
        }
        Value::Array(a) => {
            a.iter().enumerate().find_map(|(i, c)| first_non_local_ref(c, &format!("{ptr}/{i}")))
        }
        _ => None,
    }
}

impl Compiled {
    pub(crate) fn new(schema: &Value) -> Result<Self, SchemaError> {
        if !schema::depth_within(schema, MAX_DEPTH) {
            return Err(SchemaError::new(SchemaErrorKind::TooDeep { limit: MAX_DEPTH }, ""));
        }
        if !schema.is_object() && !schema.is_boolean() {
            return Err(SchemaError::new(
                SchemaErrorKind::Malformed("a schema must be an object or a boolean".into()),
                "",
            ));
        }
        let mut notes = Vec::new();
        let dialect = schema::detect_dialect(schema, &mut notes);
        let oracle = match build_oracle(schema, dialect) {
            Ok(v) => v,
            Err(msg) => {
                if let Some((r, ptr)) = first_non_local_ref(schema, "") {
                    return Err(SchemaError::new(SchemaErrorKind::RemoteRef(r), ptr));
                }
                // Our own compiler names the pointer of a bad `$ref` or keyword best.
                schema::compile(schema, dialect, notes)?;
                return Err(SchemaError::new(SchemaErrorKind::Malformed(msg), ""));
            }
        };
        let plan = schema::compile(schema, dialect, notes)?;
        Ok(Self {
            plan,
            oracle: Arc::new(oracle),
            valid: OnceLock::new(),
            invalid: OnceLock::new(),
        })
    }

    pub(crate) fn dialect(&self) -> Dialect {
        self.plan.dialect
    }

    pub(crate) fn notes(&self) -> &[String] {
        &self.plan.notes
    }

    pub(crate) fn is_valid(&self, v: &Value) -> bool {
        self.oracle.is_valid(v)
    }

    pub(crate) fn violations(&self, v: &Value) -> Vec<(String, String)> {
        self.oracle
            .iter_errors(v)
            .map(|e| (e.instance_path().to_string(), e.kind().keyword().to_owned()))
            .collect()
    }

    fn root(&self) -> Conj {
        Conj::of(self.plan.root)
    }

    pub(crate) fn valid_strategy(&self) -> Result<BoxedStrategy<Value>, SchemaError> {
        self.valid
            .get_or_init(|| {
                let mut b = Builder::new(&self.plan);
                let s = b.valid(&self.root(), 0, Mode { all_optional: false })?;
                let oracle = Arc::clone(&self.oracle);
                Ok(s.prop_filter("the oracle rejected a generated value", move |v| {
                    oracle.is_valid(v)
                })
                .boxed())
            })
            .clone()
    }

    pub(crate) fn invalid_strategy(&self) -> Result<BoxedStrategy<Invalid>, SchemaError> {
        self.invalid
            .get_or_init(|| {
                let mut b = Builder::new(&self.plan);
                let root = self.root();
                if b.accepts_everything(&root, 0) {
                    return Err(SchemaError::new(SchemaErrorKind::AcceptsEverything, ""));
                }
                let alts: Vec<BoxedStrategy<Invalid>> = b
                    .invalid(&root, 0)?
                    .into_iter()
                    .filter(|alt| self.produces_invalid(alt))
                    .collect();
                if alts.is_empty() {
                    // The valid strategy explains why (unsatisfiable, unsupported); if it is
                    // fine, every value we could mutate was accepted.
                    let _ = b.valid(&root, 0, Mode { all_optional: false })?;
                    return Err(SchemaError::new(
                        SchemaErrorKind::Unsupported(
                            "no labelled mutation applies to this schema".into(),
                        ),
                        "",
                    ));
                }
                let oracle = Arc::clone(&self.oracle);
                Ok(Union::new(alts)
                    .prop_filter("the oracle accepted a mutated value", move |inv| {
                        !oracle.is_valid(&inv.value)
                    })
                    .boxed())
            })
            .clone()
    }

    /// Whether an alternative yields oracle-confirmed invalid values at a useful rate.
    ///
    /// Some recipes cannot apply to a schema (an array parent that is always empty, a mutation
    /// another branch accepts); probing them once here keeps every draw cheap and never lets a
    /// dead alternative exhaust the runner's rejection budget.
    fn produces_invalid(&self, alt: &BoxedStrategy<Invalid>) -> bool {
        let mut runner = crate::probe_runner();
        (0..PROBES).any(|_| {
            alt.new_tree(&mut runner).is_ok_and(|t| !self.oracle.is_valid(&t.current().value))
        })
    }

    pub(crate) fn boundary(&self) -> Result<Vec<Value>, SchemaError> {
        let strategy = self.valid_strategy()?;
        let mut b = Builder::new(&self.plan);
        Ok(crate::deterministic::boundary(&mut b, &self.root(), &strategy, &self.oracle))
    }

    pub(crate) fn mutations(&self) -> Result<Vec<Invalid>, SchemaError> {
        let _ = self.valid_strategy()?;
        let mut b = Builder::new(&self.plan);
        let root = self.root();
        if b.accepts_everything(&root, 0) {
            return Err(SchemaError::new(SchemaErrorKind::AcceptsEverything, ""));
        }
        Ok(crate::deterministic::mutations(&mut b, &root, &self.oracle))
    }
}
