//! Real-client captures (issue 14's targets: one capture under 5 s per client, all five on one
//! server under 30 s). Each client captures the same listing (4 tools, names some clients
//! rewrite) served by `fx-serve-tools`; the baseline is mcp-fuzz's own start, handshake and
//! `tools/list` of that server, measured in the same run, so each capture reads as a multiple
//! of what listing the tools costs without a client.
//!
//! Needs the fixture servers in release (`cargo build --release -p mcp-fuzz-fixtures`) and the
//! five clients (`scripts/install-clients.sh`); a client that is not installed fails the bench
//! with its install command. Slow by nature: 10 samples each, about 3 minutes in all.

use mcp_fuzz_bench_support as common;

use criterion::{Criterion, criterion_group, criterion_main};
use mcp_fuzz_clients::real::{
    CLIENTS_DIR_VAR, CaptureOptions, CaptureStatus, RealClient, ServerSpec as ClientServer,
    capture_all, capture_with, discover,
};
use mcp_fuzz_engine::server::Instance;
use serde_json::json;
use std::path::PathBuf;
use std::time::Duration;

/// The listing every capture serves.
fn listing() -> PathBuf {
    let tool = |name: &str| {
        json!({
            "name": name,
            "description": "A tool",
            "inputSchema": {
                "type": "object",
                "properties": {"q": {"type": "string", "minLength": 3}},
                "required": ["q"]
            }
        })
    };
    let tools =
        json!({"tools": [tool("plain"), tool("dot.name"), tool("space name"), tool("a_b")]});
    let path =
        std::env::temp_dir().join(format!("mcp-fuzz-bench-clients-{}.json", std::process::id()));
    std::fs::write(&path, tools.to_string()).expect("the listing is written");
    path
}

fn clients_dir() -> PathBuf {
    std::env::var_os(CLIENTS_DIR_VAR).map_or_else(
        || PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/target/clients")),
        PathBuf::from,
    )
}

fn bench(c: &mut Criterion) {
    let file = listing();
    let server = common::fixture("fx-serve-tools");
    let file_env = file.display().to_string();
    let spec = ClientServer::new(&server).env("FX_TOOLS_FILE", file_env.clone());
    let options = CaptureOptions {
        timeout: Duration::from_secs(60),
        clients_dir: Some(clients_dir()),
        ..CaptureOptions::default()
    };
    let mut g = c.benchmark_group("real-clients");
    g.sample_size(10);
    g.warm_up_time(Duration::from_millis(1));

    let direct = common::stdio(&server, &[("FX_TOOLS_FILE", &file_env)]);
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    g.bench_function("baseline: mcp-fuzz lists the tools itself", |b| {
        b.iter(|| {
            rt.block_on(async {
                let mut s = Instance::start(&direct).await.expect("fx-serve-tools starts");
                let listing = s.list_tools(1).await.expect("lists");
                assert_eq!(listing.tools.len(), 4);
                s.close().await;
            });
        });
    });

    for client in RealClient::ALL {
        let install = discover(client, Some(&clients_dir())).unwrap_or_else(|e| {
            panic!("{client} is not installed ({e}); install it with scripts/install-clients.sh")
        });
        g.bench_function(format!("capture: {client}"), |b| {
            b.iter(|| {
                let capture = capture_with(&install, &spec, &options);
                assert_eq!(capture.status, CaptureStatus::Captured, "{client}");
                assert_eq!(capture.tools.len(), 4, "{client} shows every tool");
            });
        });
    }
    g.bench_function("capture: all five at once", |b| {
        b.iter(|| {
            let all = capture_all(&RealClient::ALL, &spec, &options);
            assert!(all.iter().all(|c| c.status == CaptureStatus::Captured && c.tools.len() == 4));
        });
    });
    g.finish();
    let _ = std::fs::remove_file(file);
}

criterion_group!(benches, bench);
criterion_main!(benches);
