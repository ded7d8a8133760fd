//! mcp-fuzz's own overhead per call, against a bare rmcp client loop making the same calls to the
//! same server, in the same run.
//!
//! `calls/bare-rmcp`: rmcp's `call_tool` over its child-process transport, nothing else.
//! `calls/bare-rmcp-timeout`: the same with a per-request timeout (as any tester needs).
//! `calls/mcp-fuzz`: the engine's `Connection::call_tool` (stdout tee, exit watcher, raw reply)
//! plus classification. The ratio of their throughputs is the number that matters: the target is
//! mcp-fuzz >= 90% of the bare loop.
//!
//! Needs the fixture servers in release: `cargo build --release -p mcp-fuzz-fixtures`.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use mcp_fuzz_engine::classify::classify;
use mcp_fuzz_engine::client::{ConnectOptions, Connection, Target};
use rmcp::ServiceExt as _;
use rmcp::model::CallToolRequestParams;
use serde_json::{Map, Value, json};
use std::path::PathBuf;
use std::time::Duration;

fn server() -> PathBuf {
    let path = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/target/release/fx-healthy"));
    assert!(
        path.exists(),
        "{} is missing: run `cargo build --release -p mcp-fuzz-fixtures` first",
        path.display()
    );
    path
}

fn args() -> Map<String, Value> {
    json!({"message": "hello"}).as_object().expect("object").clone()
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    let path = server();
    let mut g = c.benchmark_group("calls");
    g.throughput(Throughput::Elements(1));

    let bare = rt.block_on(async {
        let transport =
            rmcp::transport::TokioChildProcess::new(tokio::process::Command::new(&path))
                .expect("spawn");
        ().serve(transport).await.expect("handshake")
    });
    g.bench_function("bare-rmcp", |b| {
        b.iter(|| {
            rt.block_on(bare.call_tool(CallToolRequestParams::new("echo").with_arguments(args())))
                .expect("call")
        });
    });
    // The same loop with a per-request timeout, which any tester needs (a hung server must not
    // hang the run): the fair floor for mcp-fuzz.
    g.bench_function("bare-rmcp-timeout", |b| {
        b.iter(|| {
            rt.block_on(async {
                let req =
                    rmcp::model::ClientRequest::CallToolRequest(rmcp::model::CallToolRequest::new(
                        CallToolRequestParams::new("echo").with_arguments(args()),
                    ));
                let handle = bare
                    .send_request_with_option(
                        req,
                        rmcp::service::PeerRequestOptions::with_timeout(Duration::from_secs(10)),
                    )
                    .await
                    .expect("sent");
                handle.await_response().await.expect("answered")
            })
        });
    });
    drop(bare);

    let target = Target::Stdio {
        command: vec![path.display().to_string()],
        env: Vec::new(),
        inherit_env: false,
        cwd: None,
    };
    let opts =
        ConnectOptions { startup_timeout: Duration::from_secs(10), max_response_bytes: 16 << 20 };
    let conn = rt.block_on(Connection::connect(&target, &opts)).expect("connects");
    let a = args();
    g.bench_function("mcp-fuzz", |b| {
        b.iter(|| {
            rt.block_on(async {
                let reply = conn.call_tool("echo", &a, Duration::from_secs(10)).await;
                classify(reply, None, Vec::new)
            })
        });
    });
    rt.block_on(conn.close());
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30).measurement_time(Duration::from_secs(4)).warm_up_time(Duration::from_secs(1));
    targets = bench
}
criterion_main!(benches);
