//! `mcp-fuzz gen`: values generated for one schema, printed as JSON Lines on stdout.
//!
//! One line per value: `{"mode":"boundary"|"valid","value":...}`, or
//! `{"mode":"invalid","value":...,"mutation":...,"pointer":...,"keyword":...}` where `pointer` is
//! the JSON pointer of the mutated location in the value and `keyword` the schema keyword it
//! violates. Notes go to stderr, so stdout stays machine-readable.

use crate::cli::{GenArgs, Mode};
use crate::errors::CliError;
use crate::tools_list::{self, Tool};
use anyhow::Context as _;
use mcp_fuzz_generators::{Generator, Invalid, Sampler, SchemaError, SchemaErrorKind};
use serde_json::{Map, Value};
use std::fmt;
use std::fs;
use std::io::{self, BufWriter, Write};
use std::path::Path;

/// How many tool names an error lists before summarising the rest.
///
/// Why: some servers list hundreds of tools (`@azure/mcp` has 235); the full list would bury the
/// message.
const LISTED_NAMES: usize = 50;

/// Runs `mcp-fuzz gen`.
///
/// # Errors
/// A [`CliError`] for bad input or a schema that cannot be honoured, or an I/O error on stdout.
pub fn run(args: &GenArgs) -> anyhow::Result<()> {
    let input = load(args)?;
    let generator = Generator::compile(&input.schema).map_err(|e| input.cannot_generate(e))?;
    for message in generator.notes() {
        note(format_args!("{message} (in {})", input.origin));
    }
    let stdout = io::stdout();
    let mut out = Output { out: BufWriter::new(stdout.lock()) };
    generate(&generator, args, &input, &mut out)?;
    out.out.flush().context("failed to write to stdout")
}

/// The schema to generate for, and how messages name it.
struct Input {
    schema: Value,
    /// "`file.json`", "standard input", "the inputSchema of tool `x` in `file.json`".
    origin: String,
}

impl Input {
    fn cannot_generate(&self, error: SchemaError) -> anyhow::Error {
        CliError::CannotGenerate { origin: self.origin.clone(), error }.into()
    }
}

/// Writes the lines in the order the mode asks for; see [`Mode`].
fn generate<W: Write>(
    generator: &Generator,
    args: &GenArgs,
    input: &Input,
    out: &mut Output<W>,
) -> anyhow::Result<()> {
    let mut sampler = generator.sampler(args.seed);
    match args.mode {
        Mode::Valid => random_valid(&mut sampler, args.count, input, out),
        Mode::Boundary => boundary(generator, input, out),
        Mode::Invalid => {
            let mutations = generator.mutations().map_err(|e| input.cannot_generate(e))?;
            for invalid in mutations {
                out.invalid(invalid)?;
            }
            random_invalid(&mut sampler, args.count, input, out)
        }
        Mode::All => {
            boundary(generator, input, out)?;
            let mutations = match generator.mutations() {
                Ok(mutations) => Some(mutations),
                Err(error) if accepts_everything(&error) => {
                    note(format_args!("no invalid values for {}: {}", input.origin, error.kind));
                    None
                }
                Err(error) => return Err(input.cannot_generate(error)),
            };
            let has_invalid = mutations.is_some();
            for invalid in mutations.into_iter().flatten() {
                out.invalid(invalid)?;
            }
            random_valid(&mut sampler, args.count, input, out)?;
            if has_invalid {
                random_invalid(&mut sampler, args.count, input, out)?;
            }
            Ok(())
        }
    }
}

fn boundary<W: Write>(
    generator: &Generator,
    input: &Input,
    out: &mut Output<W>,
) -> anyhow::Result<()> {
    for value in generator.boundary().map_err(|e| input.cannot_generate(e))? {
        out.value(Output::<W>::BOUNDARY, value)?;
    }
    Ok(())
}

fn random_valid<W: Write>(
    sampler: &mut Sampler<'_>,
    count: usize,
    input: &Input,
    out: &mut Output<W>,
) -> anyhow::Result<()> {
    for _ in 0..count {
        let value = sampler.valid().map_err(|e| input.cannot_generate(e))?;
        out.value(Output::<W>::VALID, value)?;
    }
    Ok(())
}

fn random_invalid<W: Write>(
    sampler: &mut Sampler<'_>,
    count: usize,
    input: &Input,
    out: &mut Output<W>,
) -> anyhow::Result<()> {
    for _ in 0..count {
        let invalid = sampler.invalid().map_err(|e| input.cannot_generate(e))?;
        out.invalid(invalid)?;
    }
    Ok(())
}

fn accepts_everything(error: &SchemaError) -> bool {
    matches!(error.kind, SchemaErrorKind::AcceptsEverything)
}

/// The JSON Lines writer.
struct Output<W> {
    out: W,
}

impl<W: Write> Output<W> {
    const BOUNDARY: &'static str = "boundary";
    const VALID: &'static str = "valid";
    const INVALID: &'static str = "invalid";

    fn value(&mut self, mode: &'static str, value: Value) -> anyhow::Result<()> {
        let mut line = Map::new();
        line.insert("mode".to_owned(), mode.into());
        line.insert("value".to_owned(), value);
        self.line(line)
    }

    fn invalid(&mut self, invalid: Invalid) -> anyhow::Result<()> {
        let Invalid { value, label } = invalid;
        let mut line = Map::new();
        line.insert("mode".to_owned(), Self::INVALID.into());
        line.insert("value".to_owned(), value);
        line.insert("mutation".to_owned(), label.mutation.as_str().into());
        line.insert("pointer".to_owned(), label.pointer.into());
        line.insert("keyword".to_owned(), label.keyword.into());
        self.line(line)
    }

    fn line(&mut self, line: Map<String, Value>) -> anyhow::Result<()> {
        writeln!(self.out, "{}", Value::Object(line)).context("failed to write to stdout")
    }
}

/// Reads the schema named by `--schema`, or picks it out of the `--tools` capture.
fn load(args: &GenArgs) -> anyhow::Result<Input> {
    if let Some(path) = &args.tools {
        return load_tool(path, args.tool.as_deref(), args.output_schema);
    }
    let path = args.schema.as_deref().expect("clap requires exactly one of --schema and --tools");
    let (schema, origin) = read_schema(path)?;
    Ok(Input { schema, origin })
}

/// Reads a `--schema FILE` (`-` for standard input): one JSON Schema, not a capture or a tool.
/// Returns the schema and how messages name its origin.
pub(crate) fn read_schema(path: &Path) -> anyhow::Result<(Value, String)> {
    let origin = origin(path);
    let text = read(path, &origin)?;
    let schema: Value = serde_json::from_str(&text)
        .map_err(|error| CliError::SchemaJson { origin: origin.clone(), error })?;
    if let Some(what) = capture_like(&schema) {
        return Err(CliError::SchemaIsCapture { origin, what }.into());
    }
    Ok((schema, origin))
}

fn load_tool(path: &Path, name: Option<&str>, output_schema: bool) -> anyhow::Result<Input> {
    let origin = origin(path);
    let text = read(path, &origin)?;
    let tools = tools_list::parse(&text)
        .map_err(|error| CliError::Capture { origin: origin.clone(), error })?;
    let tool = select(tools, name, &origin)?;
    let (which, schema, hint) = if output_schema {
        ("outputSchema", tool.output_schema, "; drop --output-schema to use its inputSchema")
    } else {
        ("inputSchema", tool.input_schema, "")
    };
    let Some(schema) = schema else {
        return Err(CliError::MissingSchema { tool: tool.name, origin, which, hint }.into());
    };
    Ok(Input { schema, origin: format!("the {which} of tool `{}` in {origin}", tool.name) })
}

/// The tool named by `--tool`, or the only tool of the capture.
fn select(tools: Vec<Tool>, name: Option<&str>, origin: &str) -> Result<Tool, CliError> {
    if tools.is_empty() {
        return Err(CliError::NoTools { origin: origin.to_owned() });
    }
    match name {
        Some(name) => match tools.iter().position(|tool| tool.name == name) {
            Some(index) => Ok(tools.into_iter().nth(index).expect("index from position")),
            None => Err(CliError::UnknownTool {
                origin: origin.to_owned(),
                name: name.to_owned(),
                available: ToolNames(&tools).to_string(),
            }),
        },
        None if tools.len() == 1 => Ok(tools.into_iter().next().expect("exactly one tool")),
        None => Err(CliError::ToolRequired {
            origin: origin.to_owned(),
            count: tools.len(),
            available: ToolNames(&tools).to_string(),
        }),
    }
}

/// "a, b, c" (at most [`LISTED_NAMES`], then a count).
struct ToolNames<'a>(&'a [Tool]);

impl fmt::Display for ToolNames<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, tool) in self.0.iter().take(LISTED_NAMES).enumerate() {
            if index > 0 {
                f.write_str(", ")?;
            }
            f.write_str(&tool.name)?;
        }
        if self.0.len() > LISTED_NAMES {
            write!(f, " and {} more", self.0.len() - LISTED_NAMES)?;
        }
        Ok(())
    }
}

/// How messages name an input path.
pub(crate) fn origin(path: &Path) -> String {
    if is_stdin(path) { "standard input".to_owned() } else { format!("`{}`", path.display()) }
}

fn is_stdin(path: &Path) -> bool {
    path == Path::new("-")
}

pub(crate) fn read(path: &Path, origin: &str) -> Result<String, CliError> {
    let text = if is_stdin(path) {
        io::read_to_string(io::stdin().lock())
    } else {
        fs::read_to_string(path)
    };
    text.map_err(|error| CliError::Read { origin: origin.to_owned(), error })
}

/// Whether a `--schema` document is really a tools/list capture or a tool (a common mix-up).
///
/// Only documents with none of the usual schema keywords are flagged, so a schema that happens to
/// have a `tools` property is still read as a schema.
fn capture_like(document: &Value) -> Option<&'static str> {
    let object = document.as_object()?;
    let schema_keys = ["$schema", "type", "properties", "$ref", "anyOf", "oneOf", "allOf", "enum"];
    if schema_keys.iter().any(|key| object.contains_key(*key)) {
        return None;
    }
    if object.contains_key("jsonrpc") || object.get("tools").is_some_and(Value::is_array) {
        Some("a tools/list capture")
    } else if object.contains_key("inputSchema") && object.contains_key("name") {
        Some("a tool")
    } else {
        None
    }
}

/// A note on stderr; stdout carries only JSON Lines.
#[expect(clippy::print_stderr, reason = "notes go to stderr so stdout stays JSON Lines")]
fn note(message: fmt::Arguments<'_>) {
    eprintln!("note: {message}");
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(name: &str) -> Tool {
        Tool {
            name: name.to_owned(),
            input_schema: Some(json!({})),
            output_schema: None,
            raw: json!({"name": name}),
        }
    }

    #[test]
    fn select_picks_the_only_tool_or_the_named_one() {
        assert_eq!(select(vec![tool("a")], None, "f").expect("one tool").name, "a");
        let tools = vec![tool("a"), tool("b")];
        assert_eq!(select(tools, Some("b"), "f").expect("named").name, "b");
    }

    #[test]
    fn select_errors_list_the_names() {
        let message = select(vec![tool("a"), tool("b")], None, "`f`").expect_err("ambiguous");
        assert_eq!(message.to_string(), "`f` lists 2 tools; choose one with --tool NAME: a, b");
        let message = select(vec![tool("a")], Some("z"), "`f`").expect_err("unknown");
        assert_eq!(message.to_string(), "`f` has no tool named `z`; available: a");
        assert!(matches!(select(vec![], Some("a"), "f"), Err(CliError::NoTools { .. })));
    }

    #[test]
    fn long_name_lists_are_cut() {
        let tools: Vec<Tool> = (0..60).map(|i| tool(&format!("t{i}"))).collect();
        let names = ToolNames(&tools).to_string();
        assert!(names.ends_with("t49 and 10 more"), "{names}");
    }

    #[test]
    fn captures_passed_as_schemas_are_caught() {
        assert_eq!(capture_like(&json!({"tools": []})), Some("a tools/list capture"));
        assert_eq!(
            capture_like(&json!({"jsonrpc": "2.0", "result": {}})),
            Some("a tools/list capture")
        );
        assert_eq!(capture_like(&json!({"name": "x", "inputSchema": {}})), Some("a tool"));
        assert_eq!(capture_like(&json!({"type": "object", "tools": []})), None);
        assert_eq!(capture_like(&json!(true)), None);
        assert_eq!(capture_like(&json!({})), None);
    }

    #[test]
    fn lines_have_the_documented_keys_in_order() {
        let mut out = Output { out: Vec::new() };
        out.value(Output::<Vec<u8>>::BOUNDARY, json!({"a": 1})).expect("write");
        out.invalid(Invalid {
            value: json!({}),
            label: mcp_fuzz_generators::Label {
                mutation: mcp_fuzz_generators::Mutation::MissingRequired,
                pointer: "/a".to_owned(),
                keyword: "required",
            },
        })
        .expect("write");
        assert_eq!(
            String::from_utf8(out.out).expect("utf-8"),
            "{\"mode\":\"boundary\",\"value\":{\"a\":1}}\n\
             {\"mode\":\"invalid\",\"value\":{},\"mutation\":\"missing-required\",\
             \"pointer\":\"/a\",\"keyword\":\"required\"}\n"
        );
    }
}
