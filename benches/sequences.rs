//! Sequence shrinking: a failing sequence of 20 steps on `fx-use-after-close` (opens, reads
//! of live handles, two closes, and at the end a read of the first handle, closed at step 10)
//! minimized against fresh server processes to its three essential steps (open, close, read),
//! with the default shrink budget. The target is under 15 s.
//!
//! The baseline, measured in the same run, is one replay of the 20 steps from a fresh process:
//! the ratio says how many replays minimizing costs.
//!
//! Needs the fixture servers in release: `cargo build --release -p mcp-fuzz-fixtures`.

use mcp_fuzz_bench_support as common;

use criterion::{Criterion, criterion_group, criterion_main};
use mcp_fuzz_engine::config::ShrinkConfig;
use mcp_fuzz_engine::phase::sequence::exec::{self, Binding, SeqStep, StepCheck};
use mcp_fuzz_engine::phase::sequence::minimize::{Goal, Runner, minimize};
use mcp_fuzz_engine::server::{Instance, ServerSpec};
use serde_json::{Value, json};
use std::time::Duration;

fn spec() -> ServerSpec {
    common::stdio(&common::fixture("fx-use-after-close"), &[])
}

fn step(tool: &str, arguments: Value, from: Option<usize>, check: Option<StepCheck>) -> SeqStep {
    let Value::Object(arguments) = arguments else { unreachable!("arguments are objects") };
    SeqStep {
        tool: tool.into(),
        arguments,
        bindings: from
            .map(|step| Binding {
                pointer: "/handle".into(),
                step,
                from: "/handle".into(),
                altered: false,
            })
            .into_iter()
            .collect(),
        check,
        outcome: None,
    }
}

/// The 20 steps: 0 (open), 10 (close it) and 19 (read it) are the essential ones.
fn sequence() -> Vec<SeqStep> {
    let open = |p: &str| step("open_file", json!({ "path": p }), None, None);
    let read = |from| step("read_file", json!({ "handle": "" }), Some(from), None);
    let close = |from| step("close_file", json!({ "handle": "" }), Some(from), None);
    vec![
        open("a.txt"),
        open("b.txt"),
        read(0),
        open("c.txt"),
        read(1),
        read(3),
        open("d.txt"),
        read(6),
        open("e.txt"),
        read(8),
        close(0),
        read(1),
        open("f.txt"),
        read(12),
        close(3),
        read(6),
        open("g.txt"),
        read(16),
        read(8),
        step("read_file", json!({ "handle": "" }), Some(0), Some(StepCheck::AfterDelete)),
    ]
}

/// The fixture's input schemas, as the shrinker's oracle: a non-empty `path`, a `handle`.
fn valid(tool: &str, args: &Value) -> bool {
    let text = |k: &str| args.get(k).and_then(Value::as_str);
    match tool {
        "open_file" => text("path").is_some_and(|p| !p.is_empty()),
        _ => text("handle").is_some(),
    }
}

#[expect(clippy::print_stdout, reason = "a bench reports on stdout")]
fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    let spec = spec();
    let steps = sequence();
    let patience = Duration::from_secs(10);
    let output = |_: &str| None;
    let cfg = ShrinkConfig::default();

    let mut slot = Instance::new(&spec, None);
    let ran = rt.block_on(exec::replay(&mut slot, &steps, output, patience));
    let Some((at, failure)) = ran.failed else { panic!("the 20 steps did not fail") };
    assert_eq!(at, 19, "the 20 steps failed early, at step {at}: {:?}", failure.outcome);
    let target = Goal::of(&failure);
    // The result the timing is about: three steps, open, close, read.
    let m = rt.block_on(async {
        let mut runner = Runner { slot: &mut slot, output: &output, valid: &valid, patience };
        minimize(&mut runner, steps.clone(), &target, &cfg).await
    });
    let tools: Vec<&str> = m.steps.iter().map(|s| s.tool.as_str()).collect();
    assert_eq!(tools, ["open_file", "close_file", "read_file"], "minimized to {tools:?}");
    println!(
        "sequences: 20 steps -> {} ({} candidates, {} accepted)",
        m.steps.len(),
        m.tried,
        m.accepted
    );

    let mut g = c.benchmark_group("sequences");
    g.bench_function("replay-20-steps", |b| {
        b.iter(|| rt.block_on(exec::replay(&mut slot, &steps, output, patience)));
    });
    g.bench_function("minimize-20-to-3", |b| {
        b.iter(|| {
            rt.block_on(async {
                let mut runner =
                    Runner { slot: &mut slot, output: &output, valid: &valid, patience };
                minimize(&mut runner, steps.clone(), &target, &cfg).await
            })
        });
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10).measurement_time(Duration::from_secs(10)).warm_up_time(Duration::from_secs(1));
    targets = bench
}
criterion_main!(benches);
