//! Slow answers overlap (issue 29 item 4): a whole run of `fx-slow-or-huge`, whose `report`
//! tool answers every `detailed: true` call after 1.5 s (past `--timeout 1`, before the 2 s
//! `--max-call-time`) while it serves other calls, and answers `format: "csv"` with 50 MiB.
//!
//! The baseline, computed in the same run: the sum of the slow answers' waits (slow cases x
//! 1.5 s), what the run would cost if they did not overlap. Printed beside criterion's time is
//! their ratio, the overlap factor (issue 29: "close to the longest wait, not the sum").
//!
//! Needs the fixture servers in release: `cargo build --release -p mcp-fuzz-fixtures`.

use mcp_fuzz_bench_support as common;

use criterion::{Criterion, criterion_group, criterion_main};
use mcp_fuzz_engine::config::{Campaign, PerTool, RunConfig, Selection, ShrinkConfig};
use mcp_fuzz_engine::run::run;
use std::time::{Duration, Instant};

/// How long a slow answer takes (`FX_SLOW_SECS`).
const WAIT: f64 = 1.5;

fn config() -> RunConfig {
    let mut server = common::stdio(&common::fixture("fx-slow-or-huge"), &[("FX_SLOW_SECS", "1.5")]);
    server.timeout = Duration::from_secs(1);
    server.connect.max_call_time = Duration::from_secs(2);
    server.connect.max_response_bytes = 16 << 20;
    RunConfig {
        server,
        seed: 1,
        cases: 60,
        selection: Selection::default(),
        campaign: Campaign {
            shrink: ShrinkConfig { enabled: false, reruns: 0, ..ShrinkConfig::default() },
            ..Campaign::default()
        },
        per_tool: PerTool::default(),
    }
}

#[expect(clippy::print_stdout, reason = "a bench reports on stdout")]
fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    let cfg = config();
    let started = Instant::now();
    let report = rt.block_on(run(&cfg, |_| {})).expect("runs");
    let took = started.elapsed().as_secs_f64();
    let slow: u64 =
        report.findings.iter().filter(|f| f.kind.as_str() == "slow").map(|f| f.occurrences).sum();
    let sum = slow as f64 * WAIT;
    println!(
        "waits/fx-slow-or-huge: {slow} slow answers of {WAIT} s (sum {sum:.1} s) in a run of \
         {took:.1} s: overlap factor {:.1}x",
        sum / took
    );
    let mut g = c.benchmark_group("waits");
    g.bench_function("fx-slow-or-huge/60-cases", |b| {
        b.iter(|| rt.block_on(run(&cfg, |_| {})).expect("runs"));
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10).measurement_time(Duration::from_secs(30)).warm_up_time(Duration::from_secs(1));
    targets = bench
}
criterion_main!(benches);
