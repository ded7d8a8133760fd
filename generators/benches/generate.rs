//! Generator throughput over the real tool schemas in `fixtures/tools-list`.
//!
//! Every `inputSchema` of the corpus is loaded and sized (serialized length); the benches use the
//! smallest, the median, the 90th percentile and the largest, named `<pick>-<tool>`.
//!
//! * `compile/<name>`: [`Generator::compile`].
//! * `valid/<name>`, `invalid/<name>`: one value drawn per iteration from a pre-built strategy
//!   with a seeded runner (`new_tree(..).current()`); `Throughput::Elements(1)`, so criterion
//!   reports values/s.
//! * `corpus/compile_all`: compiling every input schema of the corpus.
//! * Baselines, measured in the same run so results can be given as ratios:
//!   `baseline/serde_json_clone/<name>` clones a pre-generated value of the same schema (the floor
//!   for handing out a fresh value), `baseline/jsonschema_build/<name>` builds a `jsonschema`
//!   validator of the same schema (part of what `compile` pays for its oracle), and
//!   `baseline/proptest_any_u64` draws proptest's `any::<u64>()` (the cost of a draw itself).
//!
//! Each bench measures for 2 s after 0.5 s of warm-up, with 20 samples.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use mcp_fuzz_generators::{Generator, seeded_runner};
use proptest::arbitrary::any;
use proptest::strategy::{Strategy, ValueTree};
use serde_json::Value;
use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

/// `(tool name, inputSchema)` of every tool in the corpus, in file order.
fn corpus_input_schemas() -> Vec<(String, Value)> {
    let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/tools-list"));
    let mut schemas = Vec::new();
    for ecosystem in ["npm", "pypi"] {
        let mut files: Vec<_> = std::fs::read_dir(root.join(ecosystem))
            .expect("fixtures/tools-list exists")
            .map(|entry| entry.expect("a readable directory entry").path())
            .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
            .collect();
        files.sort();
        for file in files {
            let text = std::fs::read_to_string(&file).expect("a readable capture");
            let capture: Value = serde_json::from_str(&text).expect("a JSON capture");
            for tool in capture["tools"].as_array().into_iter().flatten() {
                let name = tool["name"].as_str().unwrap_or("?").to_owned();
                schemas.push((name, tool["inputSchema"].clone()));
            }
        }
    }
    schemas
}

/// The named picks: smallest, median, 90th percentile and largest by serialized size.
fn picks(all: &[(String, Value)]) -> Vec<(String, Value)> {
    let mut sized: Vec<(usize, &(String, Value))> =
        all.iter().map(|entry| (entry.1.to_string().len(), entry)).collect();
    sized.sort_by_key(|(size, (name, _))| (*size, name.clone()));
    let at = |label: &str, index: usize| {
        let (_, (name, schema)) = sized[index.min(sized.len() - 1)];
        (format!("{label}-{name}"), schema.clone())
    };
    let n = sized.len();
    vec![at("smallest", 0), at("median", n / 2), at("p90", n * 9 / 10), at("largest", n - 1)]
}

fn bench(c: &mut Criterion) {
    let all = corpus_input_schemas();
    assert!(!all.is_empty(), "the corpus has input schemas");
    let picks = picks(&all);

    let mut compile = c.benchmark_group("compile");
    for (name, schema) in &picks {
        compile.bench_with_input(BenchmarkId::from_parameter(name), schema, |b, schema| {
            b.iter(|| Generator::compile(black_box(schema)));
        });
    }
    compile.finish();

    let generators: Vec<(&str, Generator)> = picks
        .iter()
        .map(|(name, schema)| {
            (name.as_str(), Generator::compile(schema).expect("corpus schemas compile"))
        })
        .collect();

    let mut valid = c.benchmark_group("valid");
    valid.throughput(Throughput::Elements(1));
    for (name, generator) in &generators {
        // A schema the generator cannot honour has no bench; the corpus test reports why.
        let Ok(strategy) = generator.valid_strategy() else { continue };
        let mut runner = seeded_runner(1);
        valid.bench_function(*name, |b| {
            b.iter(|| strategy.new_tree(&mut runner).expect("a draw").current());
        });
    }
    valid.finish();

    let mut invalid = c.benchmark_group("invalid");
    invalid.throughput(Throughput::Elements(1));
    for (name, generator) in &generators {
        // `AcceptsEverything` (no invalid value exists) has no bench.
        let Ok(strategy) = generator.invalid_strategy() else { continue };
        let mut runner = seeded_runner(2);
        invalid.bench_function(*name, |b| {
            b.iter(|| strategy.new_tree(&mut runner).expect("a draw").current());
        });
    }
    invalid.finish();

    let mut baseline = c.benchmark_group("baseline");
    baseline.throughput(Throughput::Elements(1));
    for ((name, generator), (_, schema)) in generators.iter().zip(&picks) {
        if let Ok(sample) = generator.sampler(1).valid() {
            baseline.bench_with_input(
                BenchmarkId::new("serde_json_clone", name),
                &sample,
                |b, sample| b.iter(|| black_box(sample).clone()),
            );
        }
        baseline.bench_with_input(
            BenchmarkId::new("jsonschema_build", name),
            schema,
            |b, schema| {
                b.iter(|| {
                    jsonschema::options().should_validate_formats(true).build(black_box(schema))
                });
            },
        );
    }
    let u64s = any::<u64>();
    let mut runner = seeded_runner(3);
    baseline.bench_function("proptest_any_u64", |b| {
        b.iter(|| u64s.new_tree(&mut runner).expect("a draw").current());
    });
    baseline.finish();

    let mut corpus = c.benchmark_group("corpus");
    corpus.throughput(Throughput::Elements(all.len() as u64));
    corpus.sample_size(10);
    corpus.bench_function("compile_all", |b| {
        b.iter(|| all.iter().filter(|(_, schema)| Generator::compile(schema).is_ok()).count());
    });
    corpus.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(20)
        .measurement_time(Duration::from_secs(2))
        .warm_up_time(Duration::from_millis(500));
    targets = bench
}
criterion_main!(benches);
