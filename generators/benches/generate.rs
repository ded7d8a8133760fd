//! Generator throughput over the real tool schemas in `fixtures/tools-list`.
//!
//! Groups: `compile/<schema>` (Generator::compile), `valid/<schema>` and `invalid/<schema>` (one
//! value drawn from a pre-built strategy per iteration, so criterion reports values/s), and
//! `baseline/<schema>` (cloning a pre-generated value of the same schema: the floor any generator
//! pays to hand a fresh value out), measured in the same run for ratios.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use mcp_fuzz_generators::{Generator, seeded_runner};
use proptest::strategy::{Strategy, ValueTree};
use serde_json::Value;
use std::hint::black_box;
use std::time::Duration;

fn corpus_input_schemas() -> Vec<(String, Value)> {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/tools-list");
    let mut out = Vec::new();
    for eco in ["npm", "pypi"] {
        let mut files: Vec<_> = std::fs::read_dir(format!("{root}/{eco}"))
            .expect("fixtures/tools-list exists")
            .map(|e| e.expect("readable dir entry").path())
            .collect();
        files.sort();
        for f in files {
            let capture: Value =
                serde_json::from_str(&std::fs::read_to_string(&f).expect("readable"))
                    .expect("JSON");
            for tool in capture["tools"].as_array().into_iter().flatten() {
                out.push((
                    tool["name"].as_str().unwrap_or("?").to_owned(),
                    tool["inputSchema"].clone(),
                ));
            }
        }
    }
    out
}

fn picks() -> Vec<(String, Value)> {
    let mut all = corpus_input_schemas();
    all.sort_by_key(|(_, s)| s.to_string().len());
    let median = all[all.len() / 2].clone();
    let p90 = all[all.len() * 9 / 10].clone();
    let largest = all[all.len() - 1].clone();
    vec![
        (format!("median-{}", median.0), median.1),
        (format!("p90-{}", p90.0), p90.1),
        (format!("largest-{}", largest.0), largest.1),
    ]
}

fn bench(c: &mut Criterion) {
    for (name, schema) in picks() {
        let generator = Generator::compile(&schema).expect("corpus schemas compile");
        let valid = generator.valid_strategy().expect("valid strategy");
        let invalid = generator.invalid_strategy().expect("invalid strategy");
        let sample = generator.sampler(1).valid().expect("a value");

        let mut g = c.benchmark_group("generator");
        g.throughput(Throughput::Elements(1));
        g.bench_function(format!("compile/{name}"), |b| {
            b.iter(|| Generator::compile(black_box(&schema)))
        });
        let mut runner = seeded_runner(1);
        g.bench_function(format!("valid/{name}"), |b| {
            b.iter(|| valid.new_tree(&mut runner).expect("draw").current());
        });
        g.bench_function(format!("invalid/{name}"), |b| {
            b.iter(|| invalid.new_tree(&mut runner).expect("draw").current());
        });
        g.bench_function(format!("baseline/{name}"), |b| b.iter(|| black_box(&sample).clone()));
        g.finish();
    }
    let all = corpus_input_schemas();
    let mut g = c.benchmark_group("corpus");
    g.throughput(Throughput::Elements(all.len() as u64));
    g.sample_size(10);
    g.bench_function("compile_all", |b| {
        b.iter(|| all.iter().filter(|(_, s)| Generator::compile(s).is_ok()).count());
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30).measurement_time(Duration::from_secs(2)).warm_up_time(Duration::from_millis(500));
    targets = bench
}
criterion_main!(benches);
