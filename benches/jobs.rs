//! `--jobs`: a whole run's throughput with 1 and 2 server instances, on a server whose calls take
//! a few milliseconds (`fx-ids` with `FX_DELAY_MS=3`). With the time spent waiting on the server,
//! 2 jobs should come close to twice the cases per second of 1.
//!
//! Each iteration is one `run` (listing, 2 tools, boundary, mutation and 40 + 40 random cases,
//! no shrinking so that only the case loop is measured). Throughput is in cases.
//!
//! Needs the fixture servers in release: `cargo build --release -p mcp-fuzz-fixtures`.

use mcp_fuzz_bench_support as common;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use mcp_fuzz_engine::config::ShrinkConfig;
use mcp_fuzz_engine::config::{Campaign, PerTool, RunConfig, Selection};
use mcp_fuzz_engine::run::run;
use std::path::PathBuf;
use std::time::Duration;

fn server() -> PathBuf {
    common::fixture("fx-ids")
}

fn config(jobs: usize) -> RunConfig {
    RunConfig {
        server: common::stdio(&server(), &[("FX_DELAY_MS", "3")]),
        seed: 1,
        cases: 40,
        selection: Selection::default(),
        campaign: Campaign {
            shrink: ShrinkConfig { enabled: false, reruns: 0, ..ShrinkConfig::default() },
            jobs,
            ..Campaign::default()
        },
        per_tool: PerTool::default(),
    }
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    let mut g = c.benchmark_group("jobs");
    let cases = rt.block_on(run(&config(1), |_| {})).expect("runs").calls;
    g.throughput(Throughput::Elements(cases));
    for jobs in [1, 2] {
        let cfg = config(jobs);
        g.bench_function(format!("fx-ids-3ms/{jobs}"), |b| {
            b.iter(|| rt.block_on(run(&cfg, |_| {})).expect("runs"));
        });
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10).measurement_time(Duration::from_secs(8)).warm_up_time(Duration::from_secs(1));
    targets = bench
}
criterion_main!(benches);
