//! `mcp-fuzz gen`: values generated for one schema, printed as JSON Lines on stdout.
//!
//! One line per value: `{"mode":"boundary"|"valid","value":...}`, or
//! `{"mode":"invalid","value":...,"mutation":...,"pointer":...,"keyword":...}` where `pointer` is
//! the JSON pointer of the mutated location in the value and `keyword` the schema keyword it
//! violates. Notes go to stderr, so stdout stays machine-readable.

use crate::cli::{GenArgs, Mode};
use crate::errors::CliError;
use crate::input;
use anyhow::Context as _;
use mcp_fuzz_generators::{Generator, Invalid, SchemaError, SchemaErrorKind};
use serde_json::{Map, Value};
use std::fmt;
use std::io::{self, BufWriter, Write};

/// Runs `mcp-fuzz gen`.
///
/// # Errors
/// A [`CliError`] for bad input or a schema that cannot be honoured, or an I/O error on stdout.
pub fn run(args: &GenArgs) -> anyhow::Result<u8> {
    let input = load(args)?;
    let generator = Generator::compile(&input.schema).map_err(|e| input.cannot_generate(e))?;
    for message in generator.notes() {
        note(format_args!("{message} (in {})", input.origin));
    }
    let stdout = io::stdout();
    let mut out = Output { out: BufWriter::new(stdout.lock()) };
    generate(&generator, args, &input, &mut out)?;
    out.out.flush().context("failed to write to stdout")?;
    Ok(crate::exit_code::SUCCESS)
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

/// Writes the lines in the order the mode asks for; see [`Mode`]: boundary values, mutations,
/// random valid values, random invalid values, each when the mode asks for it.
fn generate<W: Write>(
    generator: &Generator,
    args: &GenArgs,
    input: &Input,
    out: &mut Output<W>,
) -> anyhow::Result<()> {
    let cannot = |e| input.cannot_generate(e);
    let all = args.mode == Mode::All;
    let mut sampler = generator.sampler(args.seed);
    if all || args.mode == Mode::Boundary {
        for value in generator.boundary().map_err(cannot)? {
            out.value(Output::<W>::BOUNDARY, value)?;
        }
    }
    let mut invalid = all || args.mode == Mode::Invalid;
    if invalid {
        match generator.mutations() {
            Ok(mutations) => mutations.into_iter().try_for_each(|m| out.invalid(m))?,
            Err(error) if all && matches!(error.kind, SchemaErrorKind::AcceptsEverything) => {
                note(format_args!("no invalid values for {}: {}", input.origin, error.kind));
                invalid = false;
            }
            Err(error) => return Err(cannot(error)),
        }
    }
    if all || args.mode == Mode::Valid {
        for _ in 0..args.count {
            out.value(Output::<W>::VALID, sampler.valid().map_err(cannot)?)?;
        }
    }
    for _ in 0..if invalid { args.count } else { 0 } {
        out.invalid(sampler.invalid().map_err(cannot)?)?;
    }
    Ok(())
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
        let (capture, origin) = input::read_capture(path)?;
        let tool = input::select(capture.tools, args.tool.as_deref(), &origin)?;
        let (which, schema, hint) = if args.output_schema {
            ("outputSchema", tool.output_schema, "; drop --output-schema to use its inputSchema")
        } else {
            ("inputSchema", tool.input_schema, "")
        };
        let Some(schema) = schema else {
            return Err(CliError::MissingSchema { tool: tool.name, origin, which, hint }.into());
        };
        return Ok(Input {
            schema,
            origin: format!("the {which} of tool `{}` in {origin}", tool.name),
        });
    }
    let path = args.schema.as_deref().expect("clap requires exactly one of --schema and --tools");
    let (schema, origin) = input::read_schema(path)?;
    Ok(Input { schema, origin })
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
