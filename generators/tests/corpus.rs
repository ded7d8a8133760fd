//! The real-world corpus: every `inputSchema` and `outputSchema` of every tool in
//! `fixtures/tools-list/{npm,pypi}/*.json` (1427 tools from 40 MCP servers).
//!
//! For each schema:
//!
//! 1. it compiles (every one must);
//! 2. 100 values from [`Generator::sampler`] are valid and 100 labelled invalid values are
//!    invalid, for the generator's oracle *and* an independent `jsonschema` validator built here
//!    (formats asserted; the draft comes from `$schema`, 2020-12 when there is none, as for the
//!    generator);
//! 3. every boundary value is valid and every mutation invalid;
//! 4. invalid values are skipped only when the generator answers `AcceptsEverything` (e.g. `{}`),
//!    and that answer is checked: no produced value and no probe value may be invalid.
//!
//! Failures are collected into one report. The run prints one summary line. If the process aborts
//! instead (an allocation failure, a stack overflow), `target/tmp/breadcrumbs/corpus-worker-*`
//! name the schemas being checked. Meant for
//! `cargo test --release` (under a minute on 2 cores); it also runs, slower, in debug builds.

mod common;

use common::{
    Failure, check_generation, fixture, json_files, read_json, reference_validator, run_all,
    seed_of, workers, write_failures,
};
use mcp_fuzz_generators::Generator;
use serde_json::Value;
use std::fmt::Write as _;
use std::time::Duration;

/// Valid values drawn per schema, and invalid ones.
const SAMPLES: usize = 100;

/// Failing schemas reported in detail; the rest are listed by name.
const DETAILED: usize = 30;

/// Checks reported per schema.
const MAX_FAILURES_PER_SCHEMA: usize = 5;

/// One schema of the corpus.
struct Item {
    /// `npm/firecrawl-mcp@3.26.0.json`.
    file: String,
    tool: String,
    /// `inputSchema` or `outputSchema`.
    field: &'static str,
    schema: Value,
}

impl Item {
    fn name(&self) -> String {
        format!("{} {} {}", self.file, self.tool, self.field)
    }
}

/// Every schema of the corpus, and the number of files and tools read.
fn load_items() -> (Vec<Item>, usize, usize) {
    let mut items = Vec::new();
    let (mut files, mut tools) = (0, 0);
    for ecosystem in ["npm", "pypi"] {
        for path in json_files(&fixture("tools-list").join(ecosystem)) {
            files += 1;
            let file =
                format!("{ecosystem}/{}", path.file_name().expect("a file name").to_string_lossy());
            let capture = read_json(&path);
            let list = capture["tools"]
                .as_array()
                .unwrap_or_else(|| panic!("{file}: `tools` is an array"));
            for tool in list {
                tools += 1;
                let name = tool["name"].as_str().unwrap_or("<unnamed>").to_owned();
                for field in ["inputSchema", "outputSchema"] {
                    if let Some(schema) = tool.get(field) {
                        items.push(Item {
                            file: file.clone(),
                            tool: name.clone(),
                            field,
                            schema: schema.clone(),
                        });
                    }
                }
            }
        }
    }
    (items, files, tools)
}

/// What checking one schema found.
#[derive(Default)]
struct Outcome {
    compiled: bool,
    valid: usize,
    invalid: usize,
    boundary: usize,
    mutations: usize,
    accepts_everything: bool,
    failures: Vec<Failure>,
}

fn check_item(item: &Item) -> Outcome {
    let mut outcome = Outcome::default();
    let generator = match Generator::compile(&item.schema) {
        Ok(generator) => generator,
        Err(e) => {
            let detail = format!("{}: {e}", e.code());
            Failure::push(&mut outcome.failures, "compile", None, detail);
            return outcome;
        }
    };
    outcome.compiled = true;
    let reference = match reference_validator(&item.schema, None) {
        Ok(reference) => reference,
        Err(e) => {
            Failure::push(&mut outcome.failures, "reference-build", None, e);
            return outcome;
        }
    };
    let seed = seed_of(&item.name());
    let drawn =
        check_generation(&generator, &reference, seed, SAMPLES, SAMPLES, &mut outcome.failures);
    outcome.valid = drawn.valid;
    outcome.invalid = drawn.invalid;
    outcome.boundary = drawn.boundary;
    outcome.mutations = drawn.mutations;
    outcome.accepts_everything = drawn.accepts_everything;
    outcome
}

#[test]
#[expect(clippy::print_stderr, reason = "the test prints its one summary line")]
fn every_corpus_schema_generates_valid_and_invalid_values() {
    let (items, files, tools) = load_items();
    assert!(tools >= 1000, "expected the whole corpus, found {tools} tools in {files} files");
    let inputs = items.iter().filter(|i| i.field == "inputSchema").count();
    let outputs = items.len() - inputs;
    let names: Vec<String> = items.iter().map(Item::name).collect();

    let results =
        run_all("corpus", items, workers(), Duration::from_secs(900), Item::name, check_item);

    let mut compiled = 0;
    let (mut valid, mut invalid, mut boundary, mut mutations) = (0, 0, 0, 0);
    let mut accepts_everything = Vec::new();
    let mut failing = Vec::new();
    let mut detail = String::new();
    for (name, result) in names.iter().zip(results) {
        let outcome = result.unwrap_or_else(|panic| Outcome {
            failures: vec![Failure { check: "panic", value: None, detail: panic }],
            ..Outcome::default()
        });
        compiled += usize::from(outcome.compiled);
        valid += outcome.valid;
        invalid += outcome.invalid;
        boundary += outcome.boundary;
        mutations += outcome.mutations;
        if outcome.accepts_everything {
            accepts_everything.push(name.as_str());
        }
        if !outcome.failures.is_empty() {
            if failing.len() < DETAILED {
                write_failures(&mut detail, name, &outcome.failures, MAX_FAILURES_PER_SCHEMA);
            }
            failing.push(name.as_str());
        }
    }

    eprintln!(
        "corpus: {} schemas ({inputs} inputSchema, {outputs} outputSchema) of {tools} tools in \
         {files} files: {compiled} compiled; {valid} valid, {invalid} invalid, {boundary} boundary \
         and {mutations} mutation values checked; {} accept everything (no invalid values); {} failing",
        names.len(),
        accepts_everything.len(),
        failing.len()
    );

    if failing.is_empty() {
        return;
    }
    let mut report = format!("{} of {} corpus schemas failed\n", failing.len(), names.len());
    report.push_str(&detail);
    if failing.len() > DETAILED {
        let _ = writeln!(report, "... and {} more:", failing.len() - DETAILED);
        for name in &failing[DETAILED..] {
            let _ = writeln!(report, "FAIL {name}");
        }
    }
    panic!("{report}");
}

/// The harness itself: the reference validator builds every corpus schema (so a
/// `reference-build` failure above would be news), and the corpus is whole.
#[test]
fn reference_validator_builds_every_corpus_schema() {
    let (items, files, tools) = load_items();
    assert_eq!(
        (files, tools),
        (40, 1427),
        "the corpus PROVENANCE.md promises 40 servers, 1427 tools"
    );
    let problems: Vec<String> = items
        .iter()
        .filter_map(|item| {
            reference_validator(&item.schema, None).err().map(|e| format!("{}: {e}", item.name()))
        })
        .collect();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
