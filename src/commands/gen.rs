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
use mcp_fuzz_generators::{Generator, Invalid, Sampler, SchemaError, SchemaErrorKind};
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
