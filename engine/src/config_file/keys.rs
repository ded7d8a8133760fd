//! The keys of `mcp-fuzz.toml`, as tables: each profile key (the long name of a `run` flag), each
//! key of a per-tool override and of `[server]`, with its doc and the JSON Schema of its value.
//! The deserialisers, `docs/config.schema.json` and `mcp-fuzz init`'s commented defaults all come
//! from these tables.

pub use crate::config::Seconds;
use crate::partition::Partition;
use crate::transport::asks::{ClientCapability, Elicit};
use mcp_fuzz_model::format::Format;
use serde::{Deserialize, Deserializer};
use std::path::PathBuf;

/// One key: its name, what it means, and the JSON Schema of its value (JSON text).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Key {
    /// The key as written in the file (`max-call-time`).
    pub name: &'static str,
    /// What it means, one line per doc line.
    pub doc: &'static str,
    /// The JSON Schema of its value, as JSON text.
    pub schema: &'static str,
}

/// A value type of a key, with the JSON Schema of what the file may say.
pub trait Kind {
    /// The schema, as JSON text.
    const SCHEMA: &'static str;
}

/// A whole number from `MIN` to `MAX`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Count<const MIN: u64, const MAX: u64>(pub u64);

macro_rules! kind {
    ($($t:ty => $schema:literal),* $(,)?) => {
        $(impl Kind for $t { const SCHEMA: &'static str = $schema; })*
    };
}

kind! {
    bool => r#"{"type": "boolean"}"#,
    u32 => r#"{"type": "integer", "minimum": 0, "maximum": 4294967295}"#,
    u64 => r#"{"type": "integer", "minimum": 0}"#,
    usize => r#"{"type": "integer", "minimum": 0}"#,
    f64 => r#"{"type": "number", "minimum": 0, "maximum": 100}"#,
    String => r#"{"type": "string"}"#,
    PathBuf => r#"{"type": "string", "minLength": 1}"#,
    Vec<String> => r#"{"type": "array", "items": {"type": "string"}}"#,
    Seconds => r##"{"$ref": "#/$defs/duration"}"##,
    Count<1, 64> => r#"{"type": "integer", "minimum": 1, "maximum": 64}"#,
    Count<1, 1000> => r#"{"type": "integer", "minimum": 1, "maximum": 1000}"#,
    Count<1, 10000> => r#"{"type": "integer", "minimum": 1, "maximum": 10000}"#,
    Count<1, { u64::MAX }> => r#"{"type": "integer", "minimum": 1}"#,
    Vec<Format> => r#"{"type": "array", "items": {"enum": ["human", "json", "junit", "sarif", "markdown"]}}"#,
    Partition => r#"{"type": "string", "pattern": "^(hash|count):[0-9]+/[0-9]+$"}"#,
    Vec<ClientCapability> => r#"{"type": "array", "items": {"enum": ["sampling", "elicitation"]}}"#,
    Elicit => r#"{"enum": ["decline", "accept", "cancel"]}"#,
}

/// The JSON Schema of a duration (`$defs/duration`).
pub const DURATION_SCHEMA: &str = r#"{"description": "A positive duration: a number of seconds, or a string such as \"90s\", \"1500ms\", \"2m\" or \"1h\".", "anyOf": [{"type": "number", "exclusiveMinimum": 0}, {"type": "string", "pattern": "^\\s*[0-9]*\\.?[0-9]+\\s*(ms|s|m|h)?\\s*$"}]}"#;

impl<'de, const MIN: u64, const MAX: u64> Deserialize<'de> for Count<MIN, MAX> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let n = i128::deserialize(d)?;
        u64::try_from(n).ok().filter(|n| (MIN..=MAX).contains(n)).map(Count).ok_or_else(|| {
            let most = if MAX == u64::MAX { String::new() } else { format!(" to {MAX}") };
            serde::de::Error::custom(format!("expected a whole number from {MIN}{most}, got {n}"))
        })
    }
}

macro_rules! profile {
    ($( $(#[doc = $doc:literal])+ $field:ident: $ty:ty = $key:literal; )*) => {
        /// The settings of a profile (`[profile.NAME]`): every `run` flag, under its long name, and
        /// the per-tool overrides. What a profile leaves unset is `None`; [`Profile::over`] layers
        /// profiles (and the flags, which the binary turns into one).
        #[derive(Debug, Clone, Default, Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct Profile {
            $(
                $(#[doc = $doc])+
                #[serde(rename = $key, default)]
                pub $field: Option<$ty>,
            )*
            /// Per-tool settings, by glob (`[[profile.NAME.overrides]]`).
            #[serde(default)]
            pub overrides: Vec<crate::config::ToolOverride>,
        }

        impl Profile {
            /// `self`, with what it leaves unset taken from `under`; `self`'s overrides come
            /// first.
            #[must_use]
            pub fn over(self, under: Self) -> Self {
                let mut overrides = self.overrides;
                overrides.extend(under.overrides);
                Self { $($field: self.$field.or(under.$field),)* overrides }
            }
        }

        /// Every key of a profile but `overrides`, in the order of the default config.
        pub const KEYS: &[Key] = &[$(Key {
            name: $key,
            doc: concat!($($doc, "\n"),+),
            schema: <$ty as Kind>::SCHEMA,
        }),*];
    };
}

profile! {
    /// Time allowed for start-up and the initialize handshake.
    startup_timeout: Seconds = "startup-timeout";
    /// Directories declared as the client's roots (`roots/list`); none by default. A relative
    /// one, or one with `{sandbox}`, lives in the sandbox.
    roots: Vec<String> = "roots";
    /// Run the server where it is told, with the caller's `HOME` and `TMPDIR`, instead of in a
    /// throwaway sandbox (its files are then the caller's).
    no_sandbox: bool = "no-sandbox";
    /// Keep the sandbox directory after the run (its path is printed).
    keep_sandbox: bool = "keep-sandbox";
    /// A directory copied into the sandbox's working directory before the server starts
    /// (never touched itself); relative to the config file.
    sandbox_from: String = "sandbox-from";
    /// Client capabilities declared besides roots, so that the server's paths behind them are
    /// fuzzed too: `sampling` (answered with a fixed text), `elicitation` (form mode, answered
    /// as `elicit` says); none by default.
    client_capabilities: Vec<ClientCapability> = "client-capabilities";
    /// How an elicitation is answered: `decline` (default), `cancel`, or `accept` with content
    /// generated from the requested schema.
    elicit: Elicit = "elicit";
    /// Time allowed per call.
    timeout: Seconds = "timeout";
    /// Longest a call may take (progress extends `timeout` up to this; a call past `timeout`
    /// is watched until this for a late answer); default twice the longest timeout.
    max_call_time: Seconds = "max-call-time";
    /// Largest response accepted, in bytes.
    max_response_bytes: usize = "max-response-bytes";
    /// Exit 1 when the crash-resilience score is below this percentage.
    fail_under: f64 = "fail-under";
    /// No progress on stderr.
    quiet: bool = "quiet";
    /// Also call tools that are not annotated readOnlyHint: true.
    include_destructive: bool = "include-destructive";
    /// Only call the tools whose name matches one of these globs (empty: every tool).
    tool: Vec<String> = "tool";
    /// Never call the tools whose name matches one of these globs.
    skip_tool: Vec<String> = "skip-tool";
    /// Random valid and random invalid cases per tool (each), after the deterministic ones.
    cases: usize = "cases";
    /// Seed of the whole run: the same seed makes the same calls.
    seed: u64 = "seed";
    /// Report formats (empty: human on stdout, and all four files with output-dir).
    format: Vec<Format> = "format";
    /// Write each format to this directory.
    output_dir: PathBuf = "output-dir";
    /// Also write the JSON report to this file.
    output: PathBuf = "output";
    /// Findings listed in this file do not fail the run.
    baseline: PathBuf = "baseline";
    /// Rewrite the baseline file with this run's findings.
    update_baseline: bool = "update-baseline";
    /// Run only a share of the tools: hash:M/N or count:M/N.
    partition: Partition = "partition";
    /// Write one case file per failure finding into this directory.
    artifacts: PathBuf = "artifacts";
    /// Do not shrink failing cases.
    no_shrink: bool = "no-shrink";
    /// Time allowed to shrink each failure.
    shrink_time: Seconds = "shrink-time";
    /// Candidate calls allowed to shrink each failure.
    max_shrink_steps: u32 = "max-shrink-steps";
    /// Stop the whole run after this long; tools not reached are skipped.
    time_budget: Seconds = "time-budget";
    /// Stop calling a tool after this long.
    tool_time_budget: Seconds = "tool-time-budget";
    /// Stop the run after this many failure findings.
    max_failures: Count<1, { u64::MAX }> = "max-failures";
    /// Server instances to spread the cases over; the report is the same for any.
    jobs: Count<1, 64> = "jobs";
    /// Do not feed values from earlier results (ids, cursors, paths) into later tools' inputs.
    no_feed: bool = "no-feed";
    /// Skip the sequence phase (random walks of calls, each from a fresh server process).
    no_stateful: bool = "no-stateful";
    /// Walks the sequence phase makes.
    sequences: Count<1, 10000> = "sequences";
    /// Calls per walk, at most.
    sequence_length: Count<1, 1000> = "sequence-length";
    /// Skip the prompts phase (`prompts/list`, `prompts/get`, completions of prompt arguments).
    no_prompts: bool = "no-prompts";
    /// Skip the resources phase (`resources/list`, reads, templates, completions of variables).
    no_resources: bool = "no-resources";
    /// Skip the protocol conformance phase (wrong requests on a separate server process).
    no_protocol: bool = "no-protocol";
}

/// The keys of a per-tool override (`[[profile.NAME.overrides]]`).
pub const OVERRIDE_KEYS: &[Key] = &[
    Key {
        name: "tools",
        doc: "The tools it applies to: a glob on the tool name (`*`, `?`). Required.\n",
        schema: r#"{"type": "string"}"#,
    },
    Key { name: "skip", doc: "Never call these tools.\n", schema: bool::SCHEMA },
    Key {
        name: "include-destructive",
        doc: "Call them though they are not annotated readOnlyHint: true.\n",
        schema: bool::SCHEMA,
    },
    Key { name: "timeout", doc: "Their per-call timeout.\n", schema: Seconds::SCHEMA },
    Key { name: "cases", doc: "Their random cases of each kind.\n", schema: usize::SCHEMA },
    Key {
        name: "expected-slow",
        doc: "Answers after the timeout are expected: their slow findings are infos.\n",
        schema: bool::SCHEMA,
    },
];

/// The keys of `[server]`.
pub const SERVER_KEYS: &[Key] = &[
    Key {
        name: "command",
        doc: "The command that starts the server over stdio, and its arguments.\n",
        schema: r#"{"type": "array", "minItems": 1, "items": {"type": "string"}}"#,
    },
    Key {
        name: "env",
        doc: "Extra environment variables for the server.\n",
        schema: r#"{"type": "object", "additionalProperties": {"type": "string"}}"#,
    },
    Key {
        name: "inherit-env",
        doc: "Give the server this process's whole environment instead of a minimal one.\n",
        schema: bool::SCHEMA,
    },
    Key {
        name: "cwd",
        doc: "The server's working directory (default: the config file's directory).\n",
        schema: PathBuf::SCHEMA,
    },
    Key {
        name: "http",
        doc: "The URL of a streamable HTTP server, instead of a command.\n",
        schema: r#"{"type": "string", "minLength": 1}"#,
    },
    Key {
        name: "headers",
        doc: "HTTP headers: each header name with the environment variable that holds its value.\n",
        schema: r#"{"type": "object", "additionalProperties": {"type": "string", "minLength": 1}}"#,
    },
];

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// The names a deserialiser expects, from its error for an unknown key.
    fn expected_names(toml_text: &str) -> Vec<String> {
        #[derive(Debug, Deserialize)]
        #[expect(dead_code, reason = "only the error is looked at")]
        struct Any {
            server: Option<super::super::server::ServerTable>,
            profile: Option<std::collections::BTreeMap<String, Profile>>,
        }
        let e = toml::from_str::<Any>(toml_text).expect_err("an unknown key");
        let message = e.message();
        let list = message.split_once("expected ").map_or("", |(_, l)| l);
        list.split('`').skip(1).step_by(2).map(str::to_owned).collect()
    }

    #[test]
    fn the_tables_name_exactly_what_the_file_accepts() {
        let names = |keys: &[Key]| keys.iter().map(|k| k.name.to_owned()).collect::<Vec<_>>();
        let mut profile = names(KEYS);
        profile.push("overrides".into());
        assert_eq!(expected_names("[profile.default]\nzzz = 1\n"), profile);
        assert_eq!(
            expected_names("[[profile.default.overrides]]\ntools = \"x\"\nzzz = 1\n"),
            names(OVERRIDE_KEYS)
        );
        assert_eq!(expected_names("[server]\nzzz = 1\n"), names(SERVER_KEYS));
        for k in KEYS.iter().chain(OVERRIDE_KEYS).chain(SERVER_KEYS) {
            let schema: serde_json::Value = serde_json::from_str(k.schema).expect("schema JSON");
            assert!(schema.is_object(), "{}", k.name);
            assert!(k.doc.ends_with(".\n"), "{}: docs are sentences", k.name);
        }
    }

    #[test]
    fn values_are_checked_where_they_are_read() {
        let read = |t: &str| toml::from_str::<Profile>(t).map_err(|e| e.message().to_owned());
        let p =
            read("timeout = \"1500ms\"\njobs = 4\nformat = [\"sarif\"]\npartition = \"count:1/2\"")
                .expect("reads");
        assert_eq!(p.timeout, Some(Seconds(Duration::from_millis(1500))));
        assert_eq!(p.jobs, Some(Count(4)));
        assert_eq!(
            read("timeout = 2.5").expect("reads").timeout,
            Some(Seconds(Duration::from_millis(2500)))
        );
        assert!(read("timeout = \"soon\"").expect_err("bad").contains("positive duration"));
        assert!(read("jobs = 65").expect_err("bad").contains("from 1 to 64"));
        assert!(read("max-failures = 0").expect_err("bad").contains("from 1"));
        assert!(read("format = [\"pdf\"]").expect_err("bad").contains("unknown format `pdf`"));
        assert!(read("partition = \"count:3/2\"").expect_err("bad").contains("invalid partition"));
    }
}
