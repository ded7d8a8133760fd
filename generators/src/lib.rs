//! # mcp-fuzz-generators
//!
//! Turns a JSON Schema (a tool's `inputSchema` or `outputSchema`) into
//! [proptest](https://docs.rs/proptest) strategies for **valid** values, labelled **invalid** values
//! and deterministic **boundary** values.
//!
//! A schema is compiled once into a [`Generator`]; strategies are built from that plan and can be
//! drawn from many times. Every value this crate labels valid validates against the schema with the
//! `jsonschema` crate (formats asserted), and every value labelled invalid fails it: the oracle is
//! part of the contract, see [`Generator::is_valid`].
//!
//! ```
//! use mcp_fuzz_generators::Generator;
//! use serde_json::json;
//!
//! let schema = json!({
//!     "type": "object",
//!     "properties": { "name": { "type": "string", "minLength": 1 } },
//!     "required": ["name"],
//!     "additionalProperties": false
//! });
//! let generator = Generator::compile(&schema).unwrap();
//! let mut sampler = generator.sampler(7);
//! let value = sampler.valid().unwrap();
//! assert!(generator.is_valid(&value));
//! let bad = sampler.invalid().unwrap();
//! assert!(!generator.is_valid(&bad.value));
//! ```
#![deny(missing_docs)]

mod build;
mod compiled;
mod deterministic;
mod error;
mod format;
pub mod hash;
pub mod hint;
pub mod keywords;
mod pattern;
pub mod pointer;
pub mod refs;
mod schema;
mod shape;
pub mod text;
pub mod uri_template;
mod value;

pub use error::{SchemaError, SchemaErrorKind};

use proptest::strategy::{BoxedStrategy, Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use serde_json::Value;
use std::fmt;

/// The JSON Schema dialect a schema is read in, chosen by its `$schema`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Dialect {
    /// Draft 4 (`exclusiveMinimum` is a boolean, `definitions`, `dependencies`).
    Draft4,
    /// Draft 6.
    Draft6,
    /// Draft 7 (`items` array form, `additionalItems`, `if`/`then`/`else`).
    Draft7,
    /// Draft 2019-09.
    Draft201909,
    /// Draft 2020-12, the default.
    Draft202012,
}

impl Dialect {
    /// The dialect's short name (`draft-07`, `2020-12`, ...).
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Draft4 => "draft-04",
            Self::Draft6 => "draft-06",
            Self::Draft7 => "draft-07",
            Self::Draft201909 => "2019-09",
            Self::Draft202012 => "2020-12",
        }
    }
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The kind of change that turned a valid value into an invalid one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Mutation {
    /// A required property was removed.
    MissingRequired,
    /// A value was replaced by one of a type the schema does not allow.
    WrongType,
    /// `null` where the schema does not allow it.
    UnexpectedNull,
    /// A number below `minimum` / at or below `exclusiveMinimum`.
    BelowMinimum,
    /// A number above `maximum` / at or above `exclusiveMaximum`.
    AboveMaximum,
    /// A number that is not a multiple of `multipleOf`.
    NotMultipleOf,
    /// A string shorter than `minLength`.
    TooShort,
    /// A string longer than `maxLength`.
    TooLong,
    /// A string that does not match `pattern`.
    PatternMismatch,
    /// A string that is not of the declared `format`.
    FormatMismatch,
    /// A value outside `enum`.
    NotInEnum,
    /// A value other than `const`.
    NotConst,
    /// A property not allowed by `additionalProperties: false` (or a `false` property schema).
    UnexpectedProperty,
    /// An object with fewer properties than `minProperties`.
    TooFewProperties,
    /// An object with more properties than `maxProperties`.
    TooManyProperties,
    /// An array with fewer items than `minItems`.
    TooFewItems,
    /// An array with more items than `maxItems`.
    TooManyItems,
    /// An array with a repeated item under `uniqueItems`.
    DuplicateItems,
    /// A property present without the properties `dependentRequired` asks for.
    MissingDependency,
    /// An array with no item that satisfies `contains` (or fewer than `minContains`).
    MissingContains,
    /// An array with more items satisfying `contains` than `maxContains` allows.
    TooManyContains,
    /// A property whose value violates `additionalProperties` / `patternProperties`.
    InvalidAdditionalProperty,
    /// A property name that `propertyNames` rejects.
    InvalidPropertyName,
    /// A value that satisfies a `not` subschema.
    MatchesNot,
    /// A value that satisfies more than one `oneOf` branch.
    MultipleOneOf,
    /// A value that satisfies `if` but not `then` (or neither `if` nor `else`).
    ConditionalViolated,
    /// An array with more items than `items: false` / `additionalItems: false` allow.
    ExtraItems,
}

impl Mutation {
    /// Every mutation, in declaration order.
    pub const ALL: [Self; 27] = [
        Self::MissingRequired,
        Self::WrongType,
        Self::UnexpectedNull,
        Self::BelowMinimum,
        Self::AboveMaximum,
        Self::NotMultipleOf,
        Self::TooShort,
        Self::TooLong,
        Self::PatternMismatch,
        Self::FormatMismatch,
        Self::NotInEnum,
        Self::NotConst,
        Self::UnexpectedProperty,
        Self::TooFewProperties,
        Self::TooManyProperties,
        Self::TooFewItems,
        Self::TooManyItems,
        Self::DuplicateItems,
        Self::MissingDependency,
        Self::MissingContains,
        Self::TooManyContains,
        Self::InvalidAdditionalProperty,
        Self::InvalidPropertyName,
        Self::MatchesNot,
        Self::MultipleOneOf,
        Self::ConditionalViolated,
        Self::ExtraItems,
    ];

    /// The mutation named `name` (its [`Mutation::as_str`]), if any.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.as_str() == name)
    }

    /// The family of rules the mutation breaks: a tool that skips one check of a family
    /// usually skips them all, so a report names the family once.
    #[must_use]
    pub fn family(self) -> RuleFamily {
        match self {
            Self::MissingRequired
            | Self::WrongType
            | Self::UnexpectedNull
            | Self::MissingDependency => RuleFamily::RequiredAndType,
            Self::BelowMinimum
            | Self::AboveMaximum
            | Self::NotMultipleOf
            | Self::TooShort
            | Self::TooLong
            | Self::TooFewProperties
            | Self::TooManyProperties
            | Self::TooFewItems
            | Self::TooManyItems
            | Self::DuplicateItems
            | Self::MissingContains
            | Self::TooManyContains
            | Self::ExtraItems => RuleFamily::Bounds,
            Self::PatternMismatch | Self::FormatMismatch | Self::NotInEnum | Self::NotConst => {
                RuleFamily::AllowedValues
            }
            Self::UnexpectedProperty
            | Self::InvalidAdditionalProperty
            | Self::InvalidPropertyName => RuleFamily::UnknownProperties,
            Self::MatchesNot | Self::MultipleOneOf | Self::ConditionalViolated => {
                RuleFamily::Combined
            }
        }
    }

    /// Stable kebab-case name of the mutation.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::MissingRequired => "missing-required",
            Self::WrongType => "wrong-type",
            Self::UnexpectedNull => "unexpected-null",
            Self::BelowMinimum => "below-minimum",
            Self::AboveMaximum => "above-maximum",
            Self::NotMultipleOf => "not-multiple-of",
            Self::TooShort => "too-short",
            Self::TooLong => "too-long",
            Self::PatternMismatch => "pattern-mismatch",
            Self::FormatMismatch => "format-mismatch",
            Self::NotInEnum => "not-in-enum",
            Self::NotConst => "not-const",
            Self::UnexpectedProperty => "unexpected-property",
            Self::TooFewProperties => "too-few-properties",
            Self::TooManyProperties => "too-many-properties",
            Self::TooFewItems => "too-few-items",
            Self::TooManyItems => "too-many-items",
            Self::DuplicateItems => "duplicate-items",
            Self::MissingDependency => "missing-dependency",
            Self::MissingContains => "missing-contains",
            Self::TooManyContains => "too-many-contains",
            Self::InvalidAdditionalProperty => "invalid-additional-property",
            Self::InvalidPropertyName => "invalid-property-name",
            Self::MatchesNot => "matches-not",
            Self::MultipleOneOf => "multiple-one-of",
            Self::ConditionalViolated => "conditional-violated",
            Self::ExtraItems => "extra-items",
        }
    }
}

impl fmt::Display for Mutation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A family of schema rules that validation code checks together.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RuleFamily {
    /// `required` and `type` (with `null`) and `dependentRequired`: the shape of the value.
    RequiredAndType,
    /// Ranges and sizes: `minimum` to `maxItems`, `multipleOf`, `uniqueItems`, `contains`.
    Bounds,
    /// `pattern`, `format`, `enum` and `const`.
    AllowedValues,
    /// `additionalProperties`, `patternProperties` and `propertyNames`.
    UnknownProperties,
    /// `not`, `oneOf` and `if`/`then`/`else`.
    Combined,
}

impl RuleFamily {
    /// Stable kebab-case name.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::RequiredAndType => "required-and-type",
            Self::Bounds => "bounds",
            Self::AllowedValues => "allowed-values",
            Self::UnknownProperties => "unknown-properties",
            Self::Combined => "combined",
        }
    }

    /// The rules, in words: "required and type", "bounds (minimum, maxLength, ...)".
    #[must_use]
    pub fn words(self) -> &'static str {
        match self {
            Self::RequiredAndType => "required and type",
            Self::Bounds => "bounds (minimum, maximum, lengths, item counts)",
            Self::AllowedValues => "allowed values (pattern, format, enum, const)",
            Self::UnknownProperties => "unknown properties (additionalProperties, propertyNames)",
            Self::Combined => "combined rules (not, oneOf, if/then)",
        }
    }
}

/// Where and how an invalid value was made invalid.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Label {
    /// The kind of mutation.
    pub mutation: Mutation,
    /// JSON pointer (RFC 6901) of the mutated location in the *value*; `""` is the whole value.
    pub pointer: String,
    /// The schema keyword the mutation violates (`required`, `type`, `maxLength`, ...).
    pub keyword: &'static str,
}

/// An invalid value with the label of the mutation that made it.
#[derive(Debug, Clone, PartialEq)]
pub struct Invalid {
    /// The value; it fails the schema.
    pub value: Value,
    /// How it was made.
    pub label: Label,
}

/// A TestRunner whose every draw is determined by `seed`, on every machine.
///
/// It reads no environment variables and persists nothing.
#[must_use]
pub fn seeded_runner(seed: u64) -> TestRunner {
    let mut bytes = [0_u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    bytes[8..16]
        .copy_from_slice(&seed.rotate_left(29).wrapping_mul(0x9E37_79B9_7F4A_7C15).to_le_bytes());
    let config = Config {
        failure_persistence: None,
        cases: 256,
        max_local_rejects: 10_000,
        max_global_rejects: 10_000,
        // Pinned so that `PROPTEST_*` variables cannot change what a seed draws.
        max_flat_map_regens: 1_000_000,
        max_shrink_iters: 0,
        max_default_size_range: 100,
        ..Config::with_cases(256)
    };
    TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &bytes))
}

/// A runner with a tight rejection budget, for probing strategies.
pub(crate) fn probe_runner() -> TestRunner {
    let config = Config {
        failure_persistence: None,
        max_local_rejects: 64,
        max_global_rejects: 64,
        ..Config::with_cases(1)
    };
    TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &[7; 32]))
}

/// A runner for one draw, its randomness forked from `parent`.
///
/// proptest counts filter rejections per runner for the runner's whole life, so a long-lived
/// runner would eventually refuse every draw of a strategy with an occasional rejection; a fresh
/// runner per draw gives each draw the full budget and stays deterministic.
#[must_use]
pub fn draw_runner(parent: &mut TestRunner) -> TestRunner {
    TestRunner::new_with_rng(parent.config().clone(), parent.new_rng())
}

/// Draws values from a [`Generator`] with a seeded runner.
pub struct Sampler<'g> {
    generator: &'g Generator,
    runner: TestRunner,
    valid: Option<Result<BoxedStrategy<Value>, SchemaError>>,
    invalid: Option<Result<BoxedStrategy<Invalid>, SchemaError>>,
    draws: u64,
}

impl Sampler<'_> {
    /// Draws one valid value.
    ///
    /// # Errors
    /// When the schema cannot be honoured (unsatisfiable, unsupported construct).
    pub fn valid(&mut self) -> Result<Value, SchemaError> {
        let generator = self.generator;
        let strategy = self.valid.get_or_insert_with(|| generator.valid_strategy());
        draw(strategy, &mut self.runner, &mut self.draws)
    }

    /// Draws one labelled invalid value.
    ///
    /// # Errors
    /// When no invalid value can be made (the schema accepts everything) or generation fails.
    pub fn invalid(&mut self) -> Result<Invalid, SchemaError> {
        let generator = self.generator;
        let strategy = self.invalid.get_or_insert_with(|| generator.invalid_strategy());
        draw(strategy, &mut self.runner, &mut self.draws)
    }

    /// How many draws this sampler has made (or skipped): the index the next draw will have.
    #[must_use]
    pub fn draws(&self) -> u64 {
        self.draws
    }

    /// The runner, for drawing value trees (e.g. to shrink).
    pub fn runner(&mut self) -> &mut TestRunner {
        &mut self.runner
    }

    /// Skips `draws` draws: afterwards the sampler is where it would be after `draws` calls of
    /// [`Sampler::valid`] or [`Sampler::invalid`] (each draw takes exactly one fork of the
    /// runner's randomness, whichever kind it is). With [`Sampler::valid_tree`] this regenerates
    /// the value tree of any earlier draw from the seed and its index, to shrink it.
    pub fn skip(&mut self, draws: u64) {
        for _ in 0..draws {
            let _ = self.runner.new_rng();
        }
        self.draws += draws;
    }

    /// Draws one valid value as a value tree: `current()` is what [`Sampler::valid`] would have
    /// returned, and `simplify`/`complicate` shrink it while keeping it valid.
    ///
    /// # Errors
    /// As [`Sampler::valid`].
    pub fn valid_tree(&mut self) -> Result<Box<dyn ValueTree<Value = Value>>, SchemaError> {
        let generator = self.generator;
        let strategy = self.valid.get_or_insert_with(|| generator.valid_strategy());
        draw_tree(strategy, &mut self.runner, &mut self.draws)
    }

    /// Draws one labelled invalid value as a value tree (see [`Sampler::valid_tree`]); every
    /// value of the tree is invalid, though shrinking may change its label.
    ///
    /// # Errors
    /// As [`Sampler::invalid`].
    pub fn invalid_tree(&mut self) -> Result<Box<dyn ValueTree<Value = Invalid>>, SchemaError> {
        let generator = self.generator;
        let strategy = self.invalid.get_or_insert_with(|| generator.invalid_strategy());
        draw_tree(strategy, &mut self.runner, &mut self.draws)
    }
}

fn draw<T: fmt::Debug>(
    strategy: &Result<BoxedStrategy<T>, SchemaError>,
    runner: &mut TestRunner,
    draws: &mut u64,
) -> Result<T, SchemaError> {
    draw_tree(strategy, runner, draws).map(|tree| tree.current())
}

fn draw_tree<T: fmt::Debug>(
    strategy: &Result<BoxedStrategy<T>, SchemaError>,
    runner: &mut TestRunner,
    draws: &mut u64,
) -> Result<Box<dyn ValueTree<Value = T>>, SchemaError> {
    let strategy = strategy.as_ref().map_err(Clone::clone)?;
    let mut fresh = draw_runner(runner);
    *draws += 1;
    strategy.new_tree(&mut fresh).map_err(|reason| {
        SchemaError::new(
            SchemaErrorKind::Unsupported(format!(
                "too many generated values were rejected: {reason}"
            )),
            "",
        )
    })
}

/// A compiled schema: the plan that strategies, boundary values and mutations are drawn from.
pub struct Generator {
    inner: compiled::Compiled,
}

impl Generator {
    /// Compiles a schema (a `serde_json::Value`: an object or a boolean).
    ///
    /// # Errors
    /// A [`SchemaError`] naming the pointer when the schema is malformed, refers to a remote
    /// resource, nests too deep or is too large. An unsatisfiable schema still compiles: it is
    /// [`Generator::valid_strategy`] that reports it.
    pub fn compile(schema: &Value) -> Result<Self, SchemaError> {
        compiled::Compiled::new(schema).map(|inner| Self { inner })
    }

    /// The dialect the schema was read in.
    #[must_use]
    pub fn dialect(&self) -> Dialect {
        self.inner.dialect()
    }

    /// Notes about how the schema was read (an unknown `$schema`, ignored keywords...).
    #[must_use]
    pub fn notes(&self) -> &[String] {
        self.inner.notes()
    }

    /// The oracle: whether `value` validates against the schema (formats asserted).
    #[must_use]
    pub fn is_valid(&self, value: &Value) -> bool {
        self.inner.is_valid(value)
    }

    /// The validation errors of `value` as `(instance pointer, keyword)` pairs; empty when valid.
    #[must_use]
    pub fn violations(&self, value: &Value) -> Vec<(String, String)> {
        self.inner.violations(value)
    }

    /// A strategy for valid values; they shrink towards small, simple values.
    ///
    /// # Errors
    /// When the schema cannot be honoured: unsatisfiable, or a construct the generator cannot
    /// generate for. The error names the pointer.
    pub fn valid_strategy(&self) -> Result<BoxedStrategy<Value>, SchemaError> {
        self.inner.valid_strategy()
    }

    /// A strategy for labelled invalid values: each is a valid value with one labelled mutation.
    ///
    /// # Errors
    /// [`SchemaErrorKind::AcceptsEverything`] when no value is invalid; otherwise as
    /// [`Generator::valid_strategy`].
    pub fn invalid_strategy(&self) -> Result<BoxedStrategy<Invalid>, SchemaError> {
        self.inner.invalid_strategy()
    }

    /// Deterministic boundary (coverage) values, all valid: the simplest value, only-required and
    /// all-properties objects, each bound and its neighbours, each enum member, empty and
    /// maximal containers, hostile-but-valid strings, tricky members of each `format` (a `+tag`
    /// email, a URI with userinfo, port and IPv6 literal, a leap-day date-time with an offset),
    /// `default` and `examples`.
    ///
    /// # Errors
    /// As [`Generator::valid_strategy`].
    pub fn boundary(&self) -> Result<Vec<Value>, SchemaError> {
        self.inner.boundary()
    }

    /// Deterministic labelled invalid values: one missing-required case per required property at
    /// every depth, one wrong-type case per property at every depth, then the other mutations
    /// (bounds, lengths, pattern, format, enum, unexpected property, item counts, duplicates, null).
    ///
    /// # Errors
    /// As [`Generator::invalid_strategy`].
    pub fn mutations(&self) -> Result<Vec<Invalid>, SchemaError> {
        self.inner.mutations()
    }

    /// A sampler whose draws are determined by `seed`.
    #[must_use]
    pub fn sampler(&self, seed: u64) -> Sampler<'_> {
        Sampler {
            generator: self,
            runner: seeded_runner(seed),
            valid: None,
            invalid: None,
            draws: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_mutation_is_named_once_and_read_back() {
        let mut names: Vec<&str> = Mutation::ALL.iter().map(|m| m.as_str()).collect();
        for m in Mutation::ALL {
            assert_eq!(Mutation::from_name(m.as_str()), Some(m));
        }
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Mutation::ALL.len(), "a name is used twice");
        assert_eq!(Mutation::from_name("no-such-mutation"), None);
        assert_eq!(Mutation::UnexpectedNull.family(), RuleFamily::RequiredAndType);
        assert_eq!(Mutation::TooLong.family(), RuleFamily::Bounds);
        assert_eq!(Mutation::NotInEnum.family(), RuleFamily::AllowedValues);
    }

    #[test]
    fn skip_and_trees_regenerate_any_earlier_draw() {
        let g = Generator::compile(&json!({
            "type": "object",
            "properties": {"a": {"type": "string"}, "b": {"type": "integer", "minimum": 3}},
            "required": ["b"]
        }))
        .expect("compiles");
        let mut s = g.sampler(11);
        let draws: Vec<Value> = (0..6)
            .map(|i| {
                if i % 2 == 0 {
                    s.valid().expect("valid")
                } else {
                    s.invalid().expect("invalid").value
                }
            })
            .collect();
        for (i, expected) in draws.iter().enumerate() {
            let mut again = g.sampler(11);
            again.skip(i as u64);
            let current = if i % 2 == 0 {
                again.valid_tree().expect("tree").current()
            } else {
                again.invalid_tree().expect("tree").current().value
            };
            assert_eq!(&current, expected, "draw {i}");
        }
        let mut again = g.sampler(11);
        let mut tree = again.valid_tree().expect("tree");
        while tree.simplify() {
            assert!(g.is_valid(&tree.current()), "a simplified valid value stays valid");
        }
    }
}
