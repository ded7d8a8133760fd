//! Canaries: concrete values on which the rendered and the advertised schema disagree.
//!
//! - [`Direction::RenderedAllowsServerRejects`]: a value a model constrained by the client may
//!   send and the server will refuse (a `minLength` dropped gives `""`).
//! - [`Direction::ServerAllowsRenderedRejects`]: a value the server accepts that the client can
//!   no longer express (a dropped optional property, a lost union branch).
//!
//! Each direction is an inclusion question, answered with the compatibility engine
//! (`mcp-fuzz-compat`): first a structural proof that the allowing schema is included in the
//! rejecting one (then no canary exists, and the note says so), otherwise its witness search
//! (generator values of the allowing schema and mutations of the rejecting one, shrunk). Every
//! witness is then checked once more with the `jsonschema` crate (formats asserted) against both
//! schemas before it is reported.

use mcp_fuzz_compat::dialect::to_2020_12;
use mcp_fuzz_compat::prove::Prover;
use mcp_fuzz_compat::witness::{self, Budget, Search};
use mcp_fuzz_generators::Generator;
use serde::Serialize;
use serde_json::Value;

/// Why: candidates per direction; the compatibility engine's default for one tool and direction,
/// enough to reach optional branches and every mutation of a typical tool schema.
pub const MAX_CANDIDATES: usize = 300;

/// Which way the schemas disagree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Direction {
    /// The rendered schema allows it; the server's schema rejects it.
    RenderedAllowsServerRejects,
    /// The server's schema allows it; the rendered schema rejects it.
    ServerAllowsRenderedRejects,
}

impl Direction {
    /// `rendered-allows-server-rejects` or `server-allows-rendered-rejects`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::RenderedAllowsServerRejects => "rendered-allows-server-rejects",
            Self::ServerAllowsRenderedRejects => "server-allows-rendered-rejects",
        }
    }
}

/// One witness value.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Canary {
    /// Which way the schemas disagree on it.
    pub direction: Direction,
    /// The witness: arguments one schema accepts and the other rejects.
    pub value: Value,
    /// Why the rejecting schema rejects it (`/q: "" is shorter than 1 character`).
    pub detail: String,
    /// The keyword of the rejecting schema that rejects it, as a JSON pointer into that schema
    /// (`/properties/q/minLength`); empty when the validator names none.
    pub pointer: String,
    /// The value needs a property the allowing schema never declares (an open object).
    pub open_content: bool,
}

/// The canaries of one comparison and what the search concluded where it found none.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Canaries {
    /// At most one per direction.
    pub canaries: Vec<Canary>,
    /// Per direction without a canary: proved impossible, not found within the budget, or why
    /// the search could not run.
    pub notes: Vec<String>,
}

/// A `jsonschema` validator with formats asserted and nothing fetched; the dialect comes from
/// `$schema` (2020-12 when it is missing or unknown).
///
/// # Errors
/// The validator's message when the schema does not compile.
pub fn validator(schema: &Value) -> Result<jsonschema::Validator, String> {
    let build = |draft: Option<jsonschema::Draft>| {
        let mut options = jsonschema::options().should_validate_formats(true);
        if let Some(draft) = draft {
            options = options.with_draft(draft);
        }
        options.build(schema)
    };
    build(None).or_else(|_| build(Some(jsonschema::Draft::Draft202012))).map_err(|e| e.to_string())
}

/// Searches both directions for witnesses where `advertised` and `rendered` disagree.
#[must_use]
pub fn find(advertised: &Value, rendered: &Value, seed: u64) -> Canaries {
    find_in(
        advertised,
        rendered,
        seed,
        &[Direction::RenderedAllowsServerRejects, Direction::ServerAllowsRenderedRejects],
    )
}

/// Searches only the given directions (see [`crate::diff::Comparison::canary_directions`]).
#[must_use]
pub fn find_in(advertised: &Value, rendered: &Value, seed: u64, wanted: &[Direction]) -> Canaries {
    let mut out = Canaries::default();
    let compiled = (
        validator(advertised),
        validator(rendered),
        Generator::compile(advertised),
        Generator::compile(rendered),
    );
    let (server, client, server_gen, client_gen) = match compiled {
        (Ok(s), Ok(c), Ok(sg), Ok(cg)) => (s, c, sg, cg),
        (Err(e), ..) => {
            out.notes.push(format!("the advertised schema does not compile: {e}"));
            return out;
        }
        (_, Err(e), ..) => {
            out.notes.push(format!("the rendered schema does not compile: {e}"));
            return out;
        }
        (_, _, Err(e), _) | (_, _, _, Err(e)) => {
            out.notes.push(format!("no values can be generated: {e}"));
            return out;
        }
    };
    let directions = [
        (
            Direction::RenderedAllowsServerRejects,
            (rendered, &client_gen, &client),
            (advertised, &server_gen, &server),
        ),
        (
            Direction::ServerAllowsRenderedRejects,
            (advertised, &server_gen, &server),
            (rendered, &client_gen, &client),
        ),
    ];
    for (direction, (source, source_gen, accepts), (target, target_gen, refuses)) in directions {
        if !wanted.contains(&direction) {
            continue;
        }
        let (s, t) =
            (to_2020_12(source, source_gen.dialect()), to_2020_12(target, target_gen.dialect()));
        if Prover::new(&s, &t).objects_at_root().includes().is_ok() {
            out.notes.push(format!("{}: proved impossible", direction.as_str()));
            continue;
        }
        let budget =
            Budget { max_candidates: MAX_CANDIDATES, deadline: None, seed, objects_only: true };
        match witness::search(source_gen, target_gen, &witness::declared_names(source), budget) {
            Search::Found(w, _) if accepts.is_valid(&w.value) && !refuses.is_valid(&w.value) => {
                let (detail, pointer) = refuses
                    .iter_errors(&w.value)
                    .next()
                    .map(|e| {
                        (
                            format!("{}: {e}", display_path(&e.instance_path().to_string())),
                            e.schema_path().to_string(),
                        )
                    })
                    .unwrap_or_default();
                out.canaries.push(Canary {
                    direction,
                    value: w.value,
                    detail,
                    pointer,
                    open_content: w.open_content,
                });
            }
            Search::Found(w, _) => out.notes.push(format!(
                "{}: the witness {} did not hold against the report's validators",
                direction.as_str(),
                w.value
            )),
            Search::NotFound { tried, .. } => {
                out.notes.push(format!("{}: none among {tried} candidates", direction.as_str()));
            }
        }
    }
    out
}

fn display_path(path: &str) -> &str {
    if path.is_empty() { "(root)" } else { path }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn dropped_min_length_gives_the_empty_string() {
        let server = json!({"type": "object", "properties": {"q": {"type": "string", "minLength": 1}}, "required": ["q"]});
        let client =
            json!({"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]});
        let found = find(&server, &client, 0);
        let c = found
            .canaries
            .iter()
            .find(|c| c.direction == Direction::RenderedAllowsServerRejects)
            .expect("a canary");
        assert_eq!(c.value, json!({"q": ""}));
        assert!(c.detail.starts_with("/q"), "{}", c.detail);
        assert_eq!(c.pointer, "/properties/q/minLength");
    }

    #[test]
    fn identical_schemas_have_no_canary_and_say_it_is_proved() {
        let s = json!({"type": "object", "properties": {"n": {"type": "integer", "maximum": 3}}});
        let found = find(&s, &s, 0);
        assert!(found.canaries.is_empty());
        assert_eq!(
            found.notes,
            [
                "rendered-allows-server-rejects: proved impossible",
                "server-allows-rendered-rejects: proved impossible"
            ]
        );
    }

    #[test]
    fn a_closed_rendering_rejects_an_undeclared_property_as_open_content() {
        let server = json!({"type": "object", "properties": {"q": {"type": "string"}}});
        let client = json!({"type": "object", "properties": {"q": {"type": "string"}}, "additionalProperties": false});
        let found = find_in(&server, &client, 0, &[Direction::ServerAllowsRenderedRejects]);
        assert_eq!(found.canaries.len(), 1, "{found:?}");
        assert!(found.canaries[0].open_content);
        assert_eq!(found.canaries[0].value.as_object().map(|o| o.len()), Some(1));
    }
}
