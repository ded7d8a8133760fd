//! The catalogue of change ids, in the oasdiff style: a stable id, a level and one line.
//!
//! Schema changes come in pairs, one per direction: `input-*` ids judge the change from the
//! point of view of arguments old clients send, `output-*` ids from the point of view of the
//! `structuredContent` old clients read. A narrowing breaks inputs and is harmless on outputs;
//! a widening is the reverse.

use std::sync::LazyLock;

/// How much a change matters on its own. The verdict of a tool and direction comes from a proof
/// or a witness; the level says what the change usually means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// Informational: usually harmless.
    Info,
    /// A person should look.
    Review,
    /// Usually breaks old clients.
    Breaking,
}

impl Level {
    /// `info`, `review` or `breaking`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Info => "info",
            Self::Review => "review",
            Self::Breaking => "breaking",
        }
    }
}

/// Which way a schema change moves the set of allowed values (new compared with old).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Orientation {
    /// Fewer values allowed.
    Narrows,
    /// More values allowed.
    Widens,
    /// Neither is clear.
    Changes,
}

/// One schema change kind: the id suffix, its orientation and what it means.
struct Kind {
    suffix: &'static str,
    orientation: Orientation,
    what: &'static str,
}

const KINDS: &[Kind] = &[
    Kind {
        suffix: "type-narrowed",
        orientation: Orientation::Narrows,
        what: "a type the old schema allowed is no longer allowed",
    },
    Kind {
        suffix: "type-widened",
        orientation: Orientation::Widens,
        what: "the new schema allows a type the old one did not",
    },
    Kind {
        suffix: "enum-narrowed",
        orientation: Orientation::Narrows,
        what: "an `enum`/`const` member was dropped, or an `enum`/`const` was added",
    },
    Kind {
        suffix: "enum-widened",
        orientation: Orientation::Widens,
        what: "an `enum` member was added, or the `enum`/`const` was removed",
    },
    Kind {
        suffix: "property-became-required",
        orientation: Orientation::Narrows,
        what: "a property is now required",
    },
    Kind {
        suffix: "property-became-required-with-default",
        orientation: Orientation::Narrows,
        what: "a property with a `default` is now required; validators do not fill defaults in",
    },
    Kind {
        suffix: "property-became-optional",
        orientation: Orientation::Widens,
        what: "a property is no longer required",
    },
    Kind {
        suffix: "property-added",
        orientation: Orientation::Changes,
        what: "a property was declared",
    },
    Kind {
        suffix: "property-removed",
        orientation: Orientation::Changes,
        what: "a property is no longer declared",
    },
    Kind {
        suffix: "bound-tightened",
        orientation: Orientation::Narrows,
        what: "a numeric bound (`minimum`, `maximum`, exclusive forms) was tightened or added",
    },
    Kind {
        suffix: "bound-relaxed",
        orientation: Orientation::Widens,
        what: "a numeric bound was relaxed or removed",
    },
    Kind {
        suffix: "multipleof-changed",
        orientation: Orientation::Changes,
        what: "`multipleOf` changed",
    },
    Kind {
        suffix: "length-tightened",
        orientation: Orientation::Narrows,
        what: "`minLength`/`maxLength` was tightened or added",
    },
    Kind {
        suffix: "length-relaxed",
        orientation: Orientation::Widens,
        what: "`minLength`/`maxLength` was relaxed or removed",
    },
    Kind {
        suffix: "count-tightened",
        orientation: Orientation::Narrows,
        what: "an item or property count bound was tightened or added",
    },
    Kind {
        suffix: "count-relaxed",
        orientation: Orientation::Widens,
        what: "an item or property count bound was relaxed or removed",
    },
    Kind {
        suffix: "pattern-changed",
        orientation: Orientation::Changes,
        what: "`pattern` changed",
    },
    Kind { suffix: "format-changed", orientation: Orientation::Changes, what: "`format` changed" },
    Kind {
        suffix: "additional-properties-closed",
        orientation: Orientation::Narrows,
        what: "`additionalProperties: false` (or a schema) now limits undeclared properties",
    },
    Kind {
        suffix: "additional-properties-opened",
        orientation: Orientation::Widens,
        what: "undeclared properties are allowed now",
    },
    Kind {
        suffix: "unique-items-added",
        orientation: Orientation::Narrows,
        what: "`uniqueItems: true` was added",
    },
    Kind {
        suffix: "unique-items-removed",
        orientation: Orientation::Widens,
        what: "`uniqueItems: true` was removed",
    },
    Kind {
        suffix: "combinator-changed",
        orientation: Orientation::Changes,
        what: "`anyOf`/`oneOf`/`allOf`/`not`/`if`/`$ref` changed",
    },
    Kind {
        suffix: "keyword-changed",
        orientation: Orientation::Changes,
        what: "another assertion keyword changed",
    },
];

/// One catalogue entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    /// The stable id, e.g. `input-enum-narrowed`.
    pub id: String,
    /// How much it usually matters.
    pub level: Level,
    /// One line.
    pub explanation: String,
}

const TOOL_RULES: &[(&str, Level, &str)] = &[
    (
        "tool-removed",
        Level::Breaking,
        "a tool old clients call is gone (a rename is a removal plus an addition)",
    ),
    ("tool-added", Level::Info, "a new tool"),
    (
        "tool-duplicated",
        Level::Review,
        "the listing names a tool more than once; only the first is compared",
    ),
    (
        "annotation-readonly-dropped",
        Level::Review,
        "`readOnlyHint` was true and is not any more: the tool may now change state",
    ),
    (
        "annotation-destructive-added",
        Level::Review,
        "`destructiveHint` was false and is not any more: the tool may now destroy data",
    ),
    (
        "annotation-idempotent-dropped",
        Level::Review,
        "`idempotentHint` was true and is not any more: repeating a call may now differ",
    ),
    (
        "annotation-openworld-added",
        Level::Review,
        "`openWorldHint` was false and is not any more: the tool may now reach outside systems",
    ),
    ("annotation-changed", Level::Info, "another annotation changed"),
    (
        "description-changed",
        Level::Review,
        "the tool's description changed: models choose tools by it",
    ),
    ("title-changed", Level::Review, "the tool's title changed"),
    (
        "output-schema-removed",
        Level::Review,
        "the `outputSchema` is gone: a removed output guarantee",
    ),
    ("output-schema-added", Level::Info, "an `outputSchema` was added: a new output guarantee"),
    (
        "input-schema-unreadable",
        Level::Review,
        "an `inputSchema` cannot be compiled, so nothing was proved",
    ),
    (
        "output-schema-unreadable",
        Level::Review,
        "an `outputSchema` cannot be compiled, so nothing was proved",
    ),
];

/// The level of a schema change in a direction.
#[must_use]
pub fn level_of(orientation: Orientation, output: bool) -> Level {
    match (orientation, output) {
        (Orientation::Changes, _) => Level::Review,
        (Orientation::Narrows, false) | (Orientation::Widens, true) => Level::Breaking,
        (Orientation::Narrows, true) | (Orientation::Widens, false) => Level::Info,
    }
}

/// Every rule, tool-level first, then the `input-*` and `output-*` schema rules.
pub static RULES: LazyLock<Vec<Rule>> = LazyLock::new(|| {
    let mut rules: Vec<Rule> = TOOL_RULES
        .iter()
        .map(|(id, level, what)| Rule {
            id: (*id).to_owned(),
            level: *level,
            explanation: (*what).to_owned(),
        })
        .collect();
    for (direction, output, whose) in [
        ("input", false, "inputSchema: old clients' arguments"),
        ("output", true, "outputSchema: what old clients read"),
    ] {
        for kind in KINDS {
            let level = level_of(kind.orientation, output);
            let effect = match level {
                Level::Breaking if output => {
                    "old clients may receive values they were not written for"
                }
                Level::Breaking => "arguments old clients send may now be rejected",
                Level::Info => "old clients keep working",
                Level::Review => "may or may not affect old clients; the verdict says",
            };
            rules.push(Rule {
                id: format!("{direction}-{}", kind.suffix),
                level,
                explanation: format!("{} ({whose}); {effect}", kind.what),
            });
        }
    }
    rules
});

/// The rule with this id.
#[must_use]
pub fn rule(id: &str) -> Option<&'static Rule> {
    RULES.iter().find(|r| r.id == id)
}

/// The orientation of a schema-change suffix.
#[must_use]
pub fn orientation(suffix: &str) -> Orientation {
    KINDS.iter().find(|k| k.suffix == suffix).map_or(Orientation::Changes, |k| k.orientation)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_levels_follow_the_direction() {
        let mut ids: Vec<&str> = RULES.iter().map(|r| r.id.as_str()).collect();
        let before = ids.len();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), before);
        assert_eq!(rule("input-enum-narrowed").map(|r| r.level), Some(Level::Breaking));
        assert_eq!(rule("output-enum-narrowed").map(|r| r.level), Some(Level::Info));
        assert_eq!(rule("output-type-widened").map(|r| r.level), Some(Level::Breaking));
        assert_eq!(rule("tool-removed").map(|r| r.level), Some(Level::Breaking));
    }
}
