//! The rule catalogue: one static, ordered table.
//!
//! Every rule names the document it rests on and paraphrases it in our own words. Where the
//! documents we could read do not settle a case, the rule is marked `ambiguous`: its findings are
//! reported but never change the verdict.

use crate::real::RealClient;
use crate::{Adapter, AnyAdapter, Rule, Severity, Source};

const OPENAI: &str = "https://platform.openai.com/docs/guides/structured-outputs#supported-schemas";
const OPENAI_SUBSET: Source = Source {
    url: OPENAI,
    summary: "Strict mode accepts only a documented subset of JSON Schema: an object root that is \
              not anyOf, every object closed with additionalProperties false, every property \
              listed in required, and a listed set of keywords per type.",
};
const ANTHROPIC_ROOT: Source = Source {
    url: "https://github.com/anthropics/claude-code/issues/27337",
    summary: "The Messages API answers 400 invalid_request_error when a tool's input_schema has \
              oneOf, allOf or anyOf at its top level, which fails the whole request.",
};
const ANTHROPIC_STRICT: &str = "https://platform.claude.com/docs/en/build-with-claude/structured-outputs#json-schema-limitations";
const GEMINI: &str =
    "https://cloud.google.com/vertex-ai/generative-ai/docs/reference/rest/v1/Schema";
const GEMINI_UNKNOWN: &str = "https://github.com/nanbingxyz/5ire/issues/42";
const MCPO: &str = "https://github.com/open-webui/mcpo/blob/main/src/mcpo/utils/main.py";
const MCPO_SOURCE: Source = Source {
    url: MCPO,
    summary: "mcpo builds a pydantic model per tool from the root properties and required list, \
              keeping only each property's type, description, default, nested properties, array \
              items and anyOf branches.",
};
const TS_SDK: &str = "https://www.npmjs.com/package/@modelcontextprotocol/sdk/v/1.32.2";

const fn entry(
    id: &'static str,
    adapter: Adapter,
    severity: Severity,
    ambiguous: bool,
    title: &'static str,
    source: Source,
    fix: &'static str,
) -> Rule {
    Rule { id, adapter: AnyAdapter::Modelled(adapter), severity, ambiguous, title, source, fix }
}

use Adapter::{Anthropic, AnthropicStrict, AnthropicStrictApi, Gemini, Mcp, OpenaiStrict, Openapi};
use Severity::{Fail, Info, Warn};

/// Every rule, grouped by adapter, in report order.
pub static RULES: &[Rule] = &[
    // openai-strict
    entry(
        "openai-strict/root-not-object",
        OpenaiStrict,
        Fail,
        false,
        "the root of the parameters schema is not `type: object`",
        OPENAI_SUBSET,
        "declare the input schema as `{\"type\": \"object\", \"properties\": {...}}`",
    ),
    entry(
        "openai-strict/root-union",
        OpenaiStrict,
        Fail,
        false,
        "the root uses `anyOf`/`oneOf`",
        OPENAI_SUBSET,
        "move the alternatives into a property, or merge them into one object with optional fields",
    ),
    entry(
        "openai-strict/open-object",
        OpenaiStrict,
        Fail,
        false,
        "an object allows additional properties (`true` or a schema), which strict mode cannot express",
        OPENAI_SUBSET,
        "replace the open map with an array of `{key, value}` objects, or list the keys as properties",
    ),
    entry(
        "openai-strict/unsupported-keyword",
        OpenaiStrict,
        Fail,
        false,
        "a keyword the documents list as unsupported (`allOf`, `not`, `if`/`then`/`else`, `dependentRequired`, `dependentSchemas`)",
        Source {
            url: OPENAI,
            summary: "The supported-schemas section names the composition keywords allOf, not, \
                      dependentRequired, dependentSchemas and if/then/else as not supported.",
        },
        "inline `allOf` branches into one object and express conditions in the description",
    ),
    entry(
        "openai-strict/undocumented-keyword",
        OpenaiStrict,
        Warn,
        true,
        "a validation keyword outside the documented subset (e.g. `minLength`, `oneOf`, `uniqueItems`); whether it is dropped or rejected is not documented",
        Source {
            url: OPENAI,
            summary: "The supported-schemas section lists the keywords kept per type (pattern, \
                      format, numeric bounds, minItems, maxItems); it does not say what happens \
                      to the others.",
        },
        "validate the value on the server and restate the constraint in the description",
    ),
    entry(
        "openai-strict/optional-made-nullable",
        OpenaiStrict,
        Warn,
        false,
        "an optional property is made required and nullable by the strict conversion: the model sends `null` instead of leaving it out",
        Source {
            url: OPENAI,
            summary: "Strict mode requires every property to be listed in required and tells \
                      callers to emulate an optional field with a union that includes null.",
        },
        "accept `null` for every optional property (treat it as absent), or make it required",
    ),
    entry(
        "openai-strict/closed-object",
        OpenaiStrict,
        Info,
        false,
        "an object without `additionalProperties` is closed by the strict conversion",
        OPENAI_SUBSET,
        "set `additionalProperties: false` yourself so the schema says what the model sees",
    ),
    entry(
        "openai-strict/limits",
        OpenaiStrict,
        Fail,
        false,
        "the schema exceeds a documented size limit (10 nesting levels, 5000 properties, 1000 enum values)",
        Source {
            url: OPENAI,
            summary: "A strict schema may nest objects at most 10 levels deep, have at most 5000 \
                      object properties in total and at most 1000 enum values across the schema.",
        },
        "split the tool, or flatten deeply nested configuration objects",
    ),
    // anthropic
    entry(
        "anthropic/root-combinator",
        Anthropic,
        Fail,
        false,
        "`oneOf`/`allOf`/`anyOf` at the root of `input_schema` fails the whole request",
        ANTHROPIC_ROOT,
        "drop the root combinator (check the alternatives in the handler) or move it into a property",
    ),
    entry(
        "anthropic/root-not-object",
        Anthropic,
        Fail,
        true,
        "the root of `input_schema` is not `type: object`",
        Source {
            url: "https://github.com/dearlordylord/huly-mcp/issues/66",
            summary: "Reports from users say the Messages API expects input_schema to be an \
                      object schema at the root; we found no Anthropic document that states it.",
        },
        "declare the input schema as `{\"type\": \"object\", ...}`",
    ),
    // anthropic-strict
    entry(
        "anthropic-strict/open-object",
        AnthropicStrict,
        Fail,
        false,
        "`additionalProperties` is set to something other than `false`",
        Source {
            url: ANTHROPIC_STRICT,
            summary: "Strict tool use supports additionalProperties only when it is false.",
        },
        "replace the open map with an array of `{key, value}` objects, or list the keys as properties",
    ),
    entry(
        "anthropic-strict/closed-object",
        AnthropicStrict,
        Info,
        true,
        "an object without `additionalProperties` is treated as closed",
        Source {
            url: ANTHROPIC_STRICT,
            summary: "The limitations section supports additionalProperties false; whether an \
                      object that omits it is closed or refused is not spelled out.",
        },
        "set `additionalProperties: false` on every object",
    ),
    entry(
        "anthropic-strict/numeric-constraint",
        AnthropicStrict,
        Warn,
        false,
        "a numeric constraint (`minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`, `multipleOf`) is not enforced and is stripped",
        Source {
            url: ANTHROPIC_STRICT,
            summary: "Numeric constraints are listed as unsupported in strict mode, and the \
                      official SDKs remove unsupported constraints from the schema (moving them \
                      into the description) before sending it.",
        },
        "check the bound in the handler and answer out-of-range values with a tool error",
    ),
    entry(
        "anthropic-strict/string-length",
        AnthropicStrict,
        Warn,
        false,
        "`minLength`/`maxLength` is not enforced and is stripped",
        Source {
            url: ANTHROPIC_STRICT,
            summary: "String length constraints are listed as unsupported in strict mode, and the \
                      SDKs strip them before sending the schema.",
        },
        "check the length in the handler and answer with a tool error",
    ),
    entry(
        "anthropic-strict/array-constraint",
        AnthropicStrict,
        Warn,
        false,
        "an array constraint beyond `minItems` 0 or 1 (`maxItems`, `uniqueItems`, `contains`, larger `minItems`) is stripped",
        Source {
            url: ANTHROPIC_STRICT,
            summary: "For arrays only minItems of 0 or 1 is supported; other array constraints \
                      are unsupported and stripped by the SDKs.",
        },
        "check the item count in the handler",
    ),
    entry(
        "anthropic-strict/format",
        AnthropicStrict,
        Warn,
        true,
        "a string `format` outside the supported list is dropped",
        Source {
            url: ANTHROPIC_STRICT,
            summary: "Strict mode supports a listed set of string formats (date-time, time, date, \
                      duration, email, hostname, uri, ipv4, ipv6, uuid); others are not covered.",
        },
        "validate the format in the handler, or use a supported format",
    ),
    entry(
        "anthropic-strict/recursive-ref",
        AnthropicStrict,
        Fail,
        false,
        "the schema is recursive through `$ref`",
        Source {
            url: ANTHROPIC_STRICT,
            summary: "Recursive schemas are listed as not supported in strict mode.",
        },
        "bound the recursion: unroll a fixed number of levels",
    ),
    entry(
        "anthropic-strict/external-ref",
        AnthropicStrict,
        Fail,
        false,
        "a `$ref` points outside the schema",
        Source {
            url: ANTHROPIC_STRICT,
            summary: "Only local $ref (to $defs or definitions in the same schema) is supported; \
                      external references are not.",
        },
        "inline the referenced schema under `$defs`",
    ),
    entry(
        "anthropic-strict/complex-enum",
        AnthropicStrict,
        Fail,
        false,
        "an `enum` member is an object or an array",
        Source {
            url: ANTHROPIC_STRICT,
            summary: "Enums may contain only primitive values (strings, numbers, booleans, null).",
        },
        "use primitive enum members, or an `anyOf` of `const` objects",
    ),
    entry(
        "anthropic-strict/undocumented-keyword",
        AnthropicStrict,
        Warn,
        true,
        "a validation keyword the limitations section does not cover (e.g. `oneOf`, `not`, `patternProperties`)",
        Source {
            url: ANTHROPIC_STRICT,
            summary: "The limitations section lists supported and unsupported features; keywords \
                      it does not mention are unsettled.",
        },
        "prefer `anyOf` and plain properties; validate the rest in the handler",
    ),
    entry(
        "anthropic-strict/request-complexity",
        AnthropicStrict,
        Info,
        true,
        "how many strict tools, optional parameters and union-typed parameters one request would carry",
        Source {
            url: ANTHROPIC_STRICT,
            summary: "Strict mode caps how many strict tools, optional parameters and union-typed \
                      parameters one request may carry; the numbers were not in the documents we \
                      could read, so the counts are reported without a verdict.",
        },
        "keep strict tools few and small; mark only the tools that need it `strict`",
    ),
    // anthropic-strict-api (every other strict rule is shared with anthropic-strict)
    entry(
        "anthropic-strict-api/numeric-constraint",
        AnthropicStrictApi,
        Fail,
        false,
        "a numeric constraint (`minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`, `multipleOf`) in a strict tool sent to the API directly: the request is refused",
        ANTHROPIC_STRICT_API_SOURCE,
        "drop the bound from the schema (check it in the handler), or send the tool through an SDK that strips it",
    ),
    entry(
        "anthropic-strict-api/string-length",
        AnthropicStrictApi,
        Fail,
        false,
        "`minLength`/`maxLength` in a strict tool sent to the API directly: the request is refused",
        ANTHROPIC_STRICT_API_SOURCE,
        "drop the length bound from the schema and check it in the handler",
    ),
    entry(
        "anthropic-strict-api/array-constraint",
        AnthropicStrictApi,
        Fail,
        false,
        "an array constraint beyond `minItems` 0 or 1 (`maxItems`, `uniqueItems`, `contains`, larger `minItems`) in a strict tool sent to the API directly: the request is refused",
        ANTHROPIC_STRICT_API_SOURCE,
        "drop the item-count constraint from the schema and check it in the handler",
    ),
    // gemini
    entry(
        "gemini/ref",
        Gemini,
        Fail,
        false,
        "`$ref`/`$defs`/`definitions` are not fields of the function-declaration schema",
        Source {
            url: GEMINI,
            summary: "Function parameters use a select subset of the OpenAPI 3.0 schema object \
                      whose fields are listed; references and definitions are not among them.",
        },
        "inline the referenced definitions (the client or the server must dereference)",
    ),
    entry(
        "gemini/combinator",
        Gemini,
        Fail,
        false,
        "`oneOf`/`allOf`/`not` are not fields of the schema subset (only `anyOf` is)",
        Source {
            url: GEMINI,
            summary: "The schema subset lists anyOf but not oneOf, allOf or not.",
        },
        "use `anyOf`, or merge `allOf` branches into one object",
    ),
    entry(
        "gemini/additional-properties",
        Gemini,
        Fail,
        false,
        "`additionalProperties` is not a field of the schema subset",
        Source {
            url: GEMINI_UNKNOWN,
            summary: "The API rejects a function declaration carrying additionalProperties with \
                      400 'Invalid JSON payload received. Unknown name \"additionalProperties\"'.",
        },
        "strip `additionalProperties` before sending (the server must still validate)",
    ),
    entry(
        "gemini/type-array",
        Gemini,
        Fail,
        false,
        "`type` is an array (OpenAPI 3.0 takes one type plus `nullable`)",
        Source {
            url: "https://github.com/zed-industries/zed/issues/53919",
            summary: "A type array makes the API answer 400 because the type field is not \
                      repeated ('Proto field is not repeating, cannot start list').",
        },
        "use one `type` with `nullable: true`, or `anyOf` of single-typed schemas",
    ),
    entry(
        "gemini/unknown-field",
        Gemini,
        Fail,
        false,
        "a keyword outside the schema subset (`$schema`, `const`, `exclusiveMinimum`, `patternProperties`, a boolean schema, ...)",
        Source {
            url: "https://github.com/openswarm-ai/openswarm/issues/24",
            summary: "The API refuses unknown schema fields such as $schema, const and \
                      exclusiveMinimum with 400 'Unknown name ... Cannot find field'.",
        },
        "strip the keyword before sending; keep the check on the server",
    ),
    entry(
        "gemini/format",
        Gemini,
        Fail,
        true,
        "a string `format` other than `enum` and `date-time`",
        Source {
            url: "https://firebase.google.com/docs/reference/js/ai.schemashared",
            summary: "For the Gemini Developer API a string format must be enum or date-time or \
                      the request fails; the Vertex AI reference lists more formats, so the case \
                      depends on the backend.",
        },
        "drop the `format` and describe it in the description",
    ),
    entry(
        "gemini/enum-not-strings",
        Gemini,
        Fail,
        true,
        "an `enum` with non-string members (the subset types `enum` as a list of strings)",
        Source {
            url: GEMINI,
            summary: "The enum field is a list of strings; integer enums are written as strings \
                      with format enum.",
        },
        "use string enum members",
    ),
    // openapi (mcpo)
    entry(
        "openapi/constraint-dropped",
        Openapi,
        Warn,
        false,
        "a constraint (`enum`, `const`, bounds, lengths, `pattern`, `format`, item counts, `additionalProperties`...) is not carried into the OpenAPI model",
        MCPO_SOURCE,
        "validate the constraint in the handler and restate it in the description",
    ),
    entry(
        "openapi/untyped",
        Openapi,
        Warn,
        false,
        "a schema without a usable `type` (`oneOf`, `allOf`, `const`-only, no type) becomes `Any`",
        MCPO_SOURCE,
        "give the property a `type`, and prefer `anyOf` to `oneOf`/`allOf`",
    ),
    entry(
        "openapi/root-union-ignored",
        Openapi,
        Warn,
        false,
        "a root `anyOf`/`oneOf`/`allOf` is ignored: only the root `properties` and `required` are read",
        MCPO_SOURCE,
        "declare every argument under the root `properties`",
    ),
    entry(
        "openapi/unresolved-ref",
        Openapi,
        Fail,
        false,
        "a `$ref` whose last segment is not a key of the root `$defs` (e.g. `#/definitions/X`) fails an assertion while the endpoint is built",
        MCPO_SOURCE,
        "put definitions under the root `$defs`",
    ),
    entry(
        "openapi/recursive-ref",
        Openapi,
        Fail,
        false,
        "a recursive `$ref` through `$defs` is expanded without end while the model is built",
        MCPO_SOURCE,
        "bound the recursion: unroll a fixed number of levels",
    ),
    entry(
        "openapi/boolean-schema",
        Openapi,
        Fail,
        false,
        "a boolean subschema (`true`/`false`) where a property schema is read: the `'$ref' in schema` test raises a TypeError while the endpoint is built",
        MCPO_SOURCE,
        "write `{}` instead of `true`",
    ),
    // mcp
    entry(
        "mcp/input-root-type",
        Mcp,
        Fail,
        false,
        "`inputSchema` is not an object schema with `type: \"object\"`: TypeScript SDK clients reject the whole `tools/list`",
        Source {
            url: TS_SDK,
            summary: "The TypeScript SDK (1.32, ListToolsResultSchema in dist/esm/types.js) parses \
                      every listed tool with a schema whose inputSchema must have type exactly \
                      \"object\"; one tool that fails makes the whole tools/list result fail to \
                      parse.",
        },
        "declare `\"type\": \"object\"` at the root of `inputSchema`",
    ),
    entry(
        "mcp/output-root-type",
        Mcp,
        Fail,
        false,
        "`outputSchema` is not an object schema with `type: \"object\"`: TypeScript SDK clients reject the whole `tools/list`",
        Source {
            url: TS_SDK,
            summary: "The TypeScript SDK requires outputSchema, when present, to have type exactly \
                      \"object\", and validates the tools/list result as a whole.",
        },
        "wrap the output in an object (`{\"type\": \"object\", \"properties\": {\"result\": ...}}`)",
    ),
    entry(
        "mcp/required-not-strings",
        Mcp,
        Fail,
        false,
        "the root `required` of `inputSchema`/`outputSchema` is not an array of strings",
        Source {
            url: TS_SDK,
            summary: "The TypeScript SDK types the root required as an optional array of strings.",
        },
        "list required property names as strings",
    ),
    entry(
        "mcp/boolean-property-schema",
        Mcp,
        Fail,
        false,
        "a root property schema of `inputSchema`/`outputSchema` is a boolean (`true`/`false`): TypeScript SDK 1.x clients (and Python SDK clients on 2025-11-25 models) reject the whole `tools/list`",
        Source {
            url: TS_SDK,
            summary: "The TypeScript SDK 1.32 types each root property of inputSchema and \
                      outputSchema as an object schema, so one boolean property schema fails the \
                      parse of the entire tools/list result (the Python SDK has the same problem, \
                      modelcontextprotocol/python-sdk#3353).",
        },
        "write `{}` instead of `true` (and `{\"not\": {}}` instead of `false`)",
    ),
    entry(
        "mcp/schema-dialect",
        Mcp,
        Info,
        true,
        "`$schema` names a dialect other than 2020-12",
        Source {
            url: "https://modelcontextprotocol.io/specification/2025-11-25/server/tools",
            summary: "Tool schemas default to JSON Schema 2020-12; other dialects named by \
                      $schema are not guaranteed to be understood by every client.",
        },
        "drop `$schema`, or generate 2020-12 schemas",
    ),
    // canaries (one pair per adapter; see `canary`)
    canary_refuses("openai-strict/canary-server-refuses", OpenaiStrict, OPENAI_SUBSET),
    canary_inexpressible("openai-strict/canary-inexpressible", OpenaiStrict, OPENAI_SUBSET),
    canary_refuses("anthropic/canary-server-refuses", Anthropic, ANTHROPIC_ROOT),
    canary_inexpressible("anthropic/canary-inexpressible", Anthropic, ANTHROPIC_ROOT),
    canary_refuses(
        "anthropic-strict/canary-server-refuses",
        AnthropicStrict,
        ANTHROPIC_STRICT_SOURCE,
    ),
    canary_inexpressible(
        "anthropic-strict/canary-inexpressible",
        AnthropicStrict,
        ANTHROPIC_STRICT_SOURCE,
    ),
    canary_refuses(
        "anthropic-strict-api/canary-server-refuses",
        AnthropicStrictApi,
        ANTHROPIC_STRICT_API_SOURCE,
    ),
    canary_inexpressible(
        "anthropic-strict-api/canary-inexpressible",
        AnthropicStrictApi,
        ANTHROPIC_STRICT_API_SOURCE,
    ),
    canary_refuses("gemini/canary-server-refuses", Gemini, GEMINI_SOURCE),
    canary_inexpressible("gemini/canary-inexpressible", Gemini, GEMINI_SOURCE),
    canary_refuses("openapi/canary-server-refuses", Openapi, MCPO_SOURCE),
    canary_inexpressible("openapi/canary-inexpressible", Openapi, MCPO_SOURCE),
    canary_refuses("mcp/canary-server-refuses", Mcp, MCP_SOURCE),
    canary_inexpressible("mcp/canary-inexpressible", Mcp, MCP_SOURCE),
];

const ANTHROPIC_STRICT_SOURCE: Source = Source {
    url: ANTHROPIC_STRICT,
    summary: "Strict tool use supports a listed subset of JSON Schema and drops or rejects the \
              rest (numeric and string-length constraints among them).",
};
const ANTHROPIC_STRICT_API_SOURCE: Source = Source {
    url: ANTHROPIC_STRICT,
    summary: "The JSON Schema limitations of strict tool use list numeric, string-length and most \
              array constraints as unsupported; the official SDKs strip them (and warn) before \
              sending, while a request that carries them straight to the Messages API is \
              answered with a 400 invalid_request_error.",
};
const GEMINI_SOURCE: Source = Source {
    url: GEMINI,
    summary: "Function parameters use a select subset of the OpenAPI 3.0 schema object whose \
              fields are listed; other fields are not carried.",
};
const MCP_SOURCE: Source = Source {
    url: "https://modelcontextprotocol.io/specification/2025-11-25/server/tools",
    summary: "A tool's inputSchema is a JSON Schema object that clients pass on as declared.",
};

/// The rule of a canary the rendering allows and the server's schema rejects: what a model
/// constrained by the client may send and the server will refuse (`warn`; `fail` when `--call`
/// shows the server failing on it).
const fn canary_refuses(id: &'static str, adapter: Adapter, source: Source) -> Rule {
    entry(
        id,
        adapter,
        Warn,
        false,
        "canary: a value the client's rendering allows and the server's schema rejects (a model may send it)",
        source,
        "make the constraint expressible to the client (see the adapter's other findings) and answer such values with a tool error",
    )
}

/// The rule of a canary the server's schema allows and the rendering rejects: what a model
/// using the client can no longer send.
const fn canary_inexpressible(id: &'static str, adapter: Adapter, source: Source) -> Rule {
    entry(
        id,
        adapter,
        Info,
        false,
        "canary: a value the server accepts that the client's rendering cannot express (a model cannot send it)",
        source,
        "restructure the schema so the client keeps the lost property or branch (see the adapter's other findings)",
    )
}

/// The canary rule of `adapter` (modelled or real) for `direction`.
#[must_use]
pub fn canary_rule(
    adapter: impl Into<AnyAdapter>,
    direction: crate::canary::Direction,
) -> &'static Rule {
    let adapter = adapter.into();
    let suffix = match direction {
        crate::canary::Direction::RenderedAllowsServerRejects => "canary-server-refuses",
        crate::canary::Direction::ServerAllowsRenderedRejects => "canary-inexpressible",
    };
    catalogue()
        .find(|r| r.adapter == adapter && r.id.ends_with(suffix))
        .expect("every adapter has both canary rules")
}

/// Every rule: the modelled adapters' ([`RULES`]) then the real clients' ([`REAL_RULES`]).
pub fn catalogue() -> impl Iterator<Item = &'static Rule> {
    RULES.iter().chain(REAL_RULES)
}

/// The rule with id `id`.
///
/// # Panics
/// When `id` is not in the catalogue: a bug in an adapter.
#[must_use]
pub fn rule(id: &str) -> &'static Rule {
    catalogue().find(|r| r.id == id).unwrap_or_else(|| panic!("rule {id} is in the catalogue"))
}

/// The kinds of rule every real client has (one rule of each per client in [`REAL_RULES`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RealRule {
    /// `<client>/tool-lost`.
    ToolLost,
    /// `<client>/listing-lost`.
    ListingLost,
    /// `<client>/schema-loosened`.
    SchemaLoosened,
    /// `<client>/schema-narrowed`.
    SchemaNarrowed,
    /// `<client>/description-lost`.
    DescriptionLost,
    /// `<client>/name-rewritten`.
    NameRewritten,
}

impl RealRule {
    fn suffix(self) -> &'static str {
        match self {
            Self::ToolLost => "/tool-lost",
            Self::ListingLost => "/listing-lost",
            Self::SchemaLoosened => "/schema-loosened",
            Self::SchemaNarrowed => "/schema-narrowed",
            Self::DescriptionLost => "/description-lost",
            Self::NameRewritten => "/name-rewritten",
        }
    }

    /// `client`'s rule of this kind.
    #[must_use]
    pub fn of(self, client: RealClient) -> &'static Rule {
        let suffix = self.suffix();
        REAL_RULES
            .iter()
            .find(|r| r.adapter == client && r.id.ends_with(suffix))
            .expect("every real client has every real rule")
    }
}

/// A real client's source: the client itself, run against the server.
const fn captured(url: &'static str, summary: &'static str) -> Source {
    Source { url, summary }
}

const INSPECTOR_SOURCE: Source = captured(
    "https://www.npmjs.com/package/@modelcontextprotocol/inspector/v/2.12.0",
    "Captured by running MCP Inspector CLI (`--cli --method tools/list`) against the server: the \
     tools it prints are the ones its TypeScript SDK client parsed.",
);
const MCPO_SOURCE_REAL: Source = captured(
    "https://pypi.org/project/mcpo/0.0.20/",
    "Captured by running mcpo on 127.0.0.1 against the server: its /openapi.json is what an \
     OpenAPI tool client (Open WebUI) is given.",
);
const CODEX_SOURCE: Source = captured(
    "https://www.npmjs.com/package/@openai/codex/v/0.171.0",
    "Captured by running Codex CLI against the server with a loopback stand-in for its model \
     provider: the tools of its first Responses API request.",
);
const CLAUDE_CODE_SOURCE: Source = captured(
    "https://www.npmjs.com/package/@anthropic-ai/claude-code/v/2.1.332",
    "Captured by running Claude Code against the server with a loopback stand-in for its model \
     provider: the tools of its first Messages API request.",
);
const GEMINI_CLI_SOURCE: Source = captured(
    "https://www.npmjs.com/package/@google/gemini-cli/v/0.61.0",
    "Captured by running Gemini CLI against the server with a loopback stand-in for its model \
     provider: the function declarations of its first streamGenerateContent request.",
);

const fn real(
    id: &'static str,
    client: RealClient,
    severity: Severity,
    title: &'static str,
    source: Source,
    fix: &'static str,
) -> Rule {
    Rule { id, adapter: AnyAdapter::Real(client), severity, ambiguous: false, title, source, fix }
}

/// The same eight rules for every real client: what a capture shows is a fact about that
/// client's version, never ambiguous.
macro_rules! real_rules {
    ($($client:ident $name:literal $source:ident;)*) => {
        /// The real clients' rules, eight per client, in report order. Their findings come from
        /// a capture (see `analysis::analyse_capture`), not from a model.
        pub static REAL_RULES: &[Rule] = &[$(
            real(
                concat!($name, "/tool-lost"),
                RealClient::$client,
                Fail,
                "the client leaves the tool out (an agent does not offer it to its model, the Inspector does not list it, mcpo does not serve it)",
                $source,
                "change what the client refuses (the finding quotes its reason): the model cannot call the tool",
            ),
            real(
                concat!($name, "/listing-lost"),
                RealClient::$client,
                Fail,
                "because of this tool the client leaves out every tool of the server (mcpo does not start)",
                $source,
                "fix this tool's schema at the pointer: every other tool of the server is lost with it",
            ),
            real(
                concat!($name, "/schema-loosened"),
                RealClient::$client,
                Warn,
                "what the client sends is looser than the server's schema here: the model may send values the server refuses",
                $source,
                "check the constraint in the handler and answer with a tool error; restate it in the description",
            ),
            real(
                concat!($name, "/schema-narrowed"),
                RealClient::$client,
                Warn,
                "what the client sends is narrower than the server's schema here: the model cannot send some values the server accepts",
                $source,
                "restructure the schema so the client keeps the property, type or branch (see the drift)",
            ),
            real(
                concat!($name, "/description-lost"),
                RealClient::$client,
                Info,
                "a description of the server's schema is missing from what the client sends",
                $source,
                "keep what the model must know in a place the client sends (see the rendered schema)",
            ),
            real(
                concat!($name, "/name-rewritten"),
                RealClient::$client,
                Info,
                "the client shows the model another name than the server's (characters rewritten, cut to a length)",
                $source,
                "name tools with [A-Za-z0-9_-] only, short enough for the client's prefix and limit",
            ),
            real(
                concat!($name, "/canary-server-refuses"),
                RealClient::$client,
                Warn,
                "canary: a value the client's rendering allows and the server's schema rejects (a model may send it)",
                $source,
                "answer such values with a tool error, and make the constraint expressible to the client",
            ),
            real(
                concat!($name, "/canary-inexpressible"),
                RealClient::$client,
                Info,
                "canary: a value the server accepts that the client's rendering cannot express (a model cannot send it)",
                $source,
                "restructure the schema so the client keeps the lost property or branch (see the drift)",
            ),
        )*];
    };
}

real_rules! {
    Inspector "inspector" INSPECTOR_SOURCE;
    Mcpo "mcpo" MCPO_SOURCE_REAL;
    CodexCli "codex-cli" CODEX_SOURCE;
    ClaudeCode "claude-code" CLAUDE_CODE_SOURCE;
    GeminiCli "gemini-cli" GEMINI_CLI_SOURCE;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_prefixed_by_their_adapter() {
        let all: Vec<&Rule> = catalogue().collect();
        for (i, a) in all.iter().enumerate() {
            assert!(a.id.starts_with(&format!("{}/", a.adapter)) || a.id.starts_with("anthropic/"));
            assert!(!a.source.url.is_empty() && a.source.summary.ends_with('.'), "{}", a.id);
            assert!(!a.fix.is_empty());
            for b in &all[i + 1..] {
                assert_ne!(a.id, b.id);
            }
        }
    }

    #[test]
    fn every_adapter_has_both_canary_rules() {
        use crate::canary::Direction;
        let every = Adapter::EVERY
            .into_iter()
            .map(AnyAdapter::from)
            .chain(RealClient::ALL.into_iter().map(AnyAdapter::from));
        for adapter in every {
            for direction in
                [Direction::RenderedAllowsServerRejects, Direction::ServerAllowsRenderedRejects]
            {
                let r = canary_rule(adapter, direction);
                assert_eq!(r.adapter, adapter);
                assert!(r.id.starts_with(&format!("{adapter}/canary-")), "{}", r.id);
            }
        }
    }

    #[test]
    fn every_adapter_has_rules() {
        for adapter in Adapter::EVERY {
            assert!(RULES.iter().any(|r| r.adapter == adapter), "{adapter}");
        }
        for client in RealClient::ALL {
            assert_eq!(REAL_RULES.iter().filter(|r| r.adapter == client).count(), 8, "{client}");
            assert!(REAL_RULES.iter().all(|r| !r.ambiguous));
            assert_eq!(RealRule::NameRewritten.of(client).id, format!("{client}/name-rewritten"));
            assert_eq!(RealRule::ListingLost.of(client).severity, Fail);
        }
    }
}
