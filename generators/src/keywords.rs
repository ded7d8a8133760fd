//! The JSON Schema keyword catalogue the crates share: which keywords hold subschemas (and in
//! what shape), which assert, and which only annotate.
//!
//! See: <https://json-schema.org/draft/2020-12/json-schema-core> and
//! <https://json-schema.org/draft/2020-12/json-schema-validation>.

/// Keywords whose value is a map from names to subschemas.
pub const SCHEMA_MAPS: &[&str] =
    &["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"];

/// Keywords whose value is an array of subschemas (`items` may be one too, before 2020-12).
pub const SCHEMA_ARRAYS: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems"];

/// Keywords whose value is one subschema (`items` is one too, from 2020-12 on).
pub const SCHEMA_VALUES: &[&str] = &[
    "not",
    "if",
    "then",
    "else",
    "additionalProperties",
    "propertyNames",
    "contains",
    "unevaluatedItems",
    "unevaluatedProperties",
    "additionalItems",
];

/// Assertion keywords of 2020-12 (with `format` asserted, as the oracle does) and the
/// applicators whose subschemas assert. Everything else annotates or is unknown, and validates
/// every value.
pub const ASSERTIONS: &[&str] = &[
    "type",
    "enum",
    "const",
    "multipleOf",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "uniqueItems",
    "maxContains",
    "minContains",
    "contains",
    "maxProperties",
    "minProperties",
    "required",
    "dependentRequired",
    "properties",
    "patternProperties",
    "additionalProperties",
    "propertyNames",
    "items",
    "prefixItems",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "if",
    "then",
    "else",
    "dependentSchemas",
    "unevaluatedItems",
    "unevaluatedProperties",
    "$ref",
    "$dynamicRef",
    "$recursiveRef",
    "format",
];

/// Keywords that only annotate (or identify): dropping them changes no value's validity.
pub const ANNOTATIONS: &[&str] = &[
    "title",
    "description",
    "default",
    "examples",
    "example",
    "$comment",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$schema",
    "$id",
    "$anchor",
    "contentMediaType",
    "contentEncoding",
];

/// Whether `keyword` asserts (see [`ASSERTIONS`]).
#[must_use]
pub fn is_assertion(keyword: &str) -> bool {
    ASSERTIONS.contains(&keyword)
}
