//! mcp-fuzz's own overhead per call, against a bare rmcp client loop making the same calls to the
//! same server, in the same run.
//!
//! `calls/bare-rmcp`: rmcp's `call_tool` over its child-process transport, nothing else.
//! `calls/bare-rmcp-timeout`: the same with a per-request timeout (as any tester needs).
//! `calls/mcp-fuzz`: the call a campaign makes per case, `Instance::call_patiently` (stdout tee,
//! exit watcher, raw reply, the patience timer that would leave a hang in the background) and its
//! judgement. The ratio of their throughputs is the number that matters: the target is
//! mcp-fuzz >= 90% of the bare loop.
//!
//! Every server is started before anything is measured, so all three clients run under the same
//! conditions (three idle-or-busy servers alive throughout). Criterion measures the groups one
//! after the other, so a change in machine load between groups (other jobs on a shared 2-core
//! machine) shows up as a difference between clients; the interleaved rounds printed at the end
//! (`calls/interleaved`) time a batch of every client in turn, rotating who goes first, and report
//! the median of the per-round ratios, which load drift cannot bias.
//!
//! Needs the fixture servers in release: `cargo build --release -p mcp-fuzz-fixtures`.

use mcp_fuzz_bench_support as common;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use mcp_fuzz_engine::server::{Attempt, Instance, Keep};
use mcp_fuzz_engine::transport::Connection;
use rmcp::ServiceExt as _;
use rmcp::model::{CallToolRequest, CallToolRequestParams, ClientRequest};
use rmcp::service::{PeerRequestOptions, RoleClient, RunningService};
use serde_json::{Map, Value, json};
use std::path::PathBuf;
use std::time::{Duration, Instant};
use tokio::runtime::Runtime;

/// Calls per client per interleaved round.
const BATCH: u32 = 1500;
/// Interleaved rounds.
const ROUNDS: usize = 15;

fn server() -> PathBuf {
    common::fixture("fx-healthy")
}

fn args() -> Map<String, Value> {
    json!({"message": "hello"}).as_object().expect("object").clone()
}

type Bare = RunningService<RoleClient, ()>;

fn bare_call(rt: &Runtime, bare: &Bare) {
    rt.block_on(bare.call_tool(CallToolRequestParams::new("echo").with_arguments(args())))
        .expect("call");
}

// The same loop with a per-request timeout, which any tester needs (a hung server must not hang
// the run): the fair floor for mcp-fuzz.
fn bare_timeout_call(rt: &Runtime, bare: &Bare) {
    rt.block_on(async {
        let req = ClientRequest::CallToolRequest(CallToolRequest::new(
            CallToolRequestParams::new("echo").with_arguments(args()),
        ));
        let handle = bare
            .send_request_with_option(
                req,
                PeerRequestOptions::with_timeout(Duration::from_secs(10)),
            )
            .await
            .expect("sent");
        handle.await_response().await.expect("answered")
    });
}

fn engine_call(rt: &Runtime, inst: &mut Instance<'_>, a: &Map<String, Value>) {
    let outcome = rt.block_on(async {
        let keep = Keep { exchange: false, result: false, late: true };
        match inst.call_patiently("echo", a, None, keep, Duration::from_secs(1)).await {
            Ok(Attempt::Done(c)) => c.outcome,
            Ok(Attempt::Waiting(_)) => panic!("an echo outlasted its patience"),
            Err(e) => panic!("the server stopped: {e}"),
        }
    });
    std::hint::black_box(outcome);
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    let path = server();
    let bare = rt.block_on(async {
        let transport =
            rmcp::transport::TokioChildProcess::new(tokio::process::Command::new(&path))
                .expect("spawn");
        ().serve(transport).await.expect("handshake")
    });
    let bare_t = rt.block_on(async {
        let transport =
            rmcp::transport::TokioChildProcess::new(tokio::process::Command::new(&path))
                .expect("spawn");
        ().serve(transport).await.expect("handshake")
    });
    let spec = common::stdio(&path, &[]);
    let conn = rt.block_on(Connection::connect(&spec.target, &spec.connect)).expect("connects");
    let inst = std::cell::RefCell::new(Instance::new(&spec, Some(conn)));
    let a = args();

    let mut g = c.benchmark_group("calls");
    g.throughput(Throughput::Elements(1));
    g.bench_function("bare-rmcp", |b| b.iter(|| bare_call(&rt, &bare)));
    g.bench_function("bare-rmcp-timeout", |b| b.iter(|| bare_timeout_call(&rt, &bare_t)));
    g.bench_function("mcp-fuzz", |b| b.iter(|| engine_call(&rt, &mut inst.borrow_mut(), &a)));
    g.finish();

    // `cargo bench --bench calls -- interleaved` runs only these rounds; another filter skips them.
    let filter = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    if filter.is_none_or(|f| "calls/interleaved".contains(f.as_str())) {
        interleaved(&rt, &bare, &bare_t, &inst, &a);
    }
    rt.block_on(inst.borrow_mut().close());
    drop((bare, bare_t));
}

/// Rounds of `BATCH` calls per client, the order rotating each round; prints each client's
/// median rate and the median per-round ratios.
#[expect(clippy::print_stdout, reason = "a bench reports on stdout")]
fn interleaved(
    rt: &Runtime,
    bare: &Bare,
    bare_t: &Bare,
    inst: &std::cell::RefCell<Instance<'_>>,
    a: &Map<String, Value>,
) {
    // (calls per second, client CPU microseconds per call)
    let run = |which: usize| {
        let cpu0 = thread_cpu();
        let start = Instant::now();
        for _ in 0..BATCH {
            match which {
                0 => bare_call(rt, bare),
                1 => bare_timeout_call(rt, bare_t),
                _ => engine_call(rt, &mut inst.borrow_mut(), a),
            }
        }
        let rate = f64::from(BATCH) / start.elapsed().as_secs_f64();
        (rate, (thread_cpu() - cpu0).as_secs_f64() * 1e6 / f64::from(BATCH))
    };
    // Warm-up: one batch each.
    for w in 0..3 {
        run(w);
    }
    let mut rates: [Vec<f64>; 3] = Default::default();
    let mut cpu: [Vec<f64>; 3] = Default::default();
    let (mut vs_bare, mut vs_timeout) = (Vec::new(), Vec::new());
    for round in 0..ROUNDS {
        let mut r = [0.0; 3];
        for k in 0..3 {
            let which = (round + k) % 3;
            let (rate, us) = run(which);
            r[which] = rate;
            cpu[which].push(us);
        }
        for (all, one) in rates.iter_mut().zip(r) {
            all.push(one);
        }
        vs_bare.push(r[2] / r[0]);
        vs_timeout.push(r[2] / r[1]);
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let [mut b, mut bt, mut e] = rates;
    let [mut cb, mut cbt, mut ce] = cpu;
    println!(
        "calls/interleaved client CPU per call (medians): bare-rmcp {:.1} us, \
         bare-rmcp-timeout {:.1} us, mcp-fuzz {:.1} us",
        median(&mut cb),
        median(&mut cbt),
        median(&mut ce),
    );
    println!(
        "calls/interleaved ({ROUNDS} rounds x {BATCH} calls, medians): bare-rmcp {:.0}/s, \
         bare-rmcp-timeout {:.0}/s, mcp-fuzz {:.0}/s; mcp-fuzz / bare {:.1}%, \
         mcp-fuzz / bare-timeout {:.1}%",
        median(&mut b),
        median(&mut bt),
        median(&mut e),
        100.0 * median(&mut vs_bare),
        100.0 * median(&mut vs_timeout),
    );
}

/// CPU time (user + system) of the calling thread: with a current-thread runtime, every client
/// task runs on it, so this is the client's whole cost per call, free of scheduling noise.
fn thread_cpu() -> Duration {
    use nix::sys::resource::{UsageWho, getrusage};
    let u = getrusage(UsageWho::RUSAGE_THREAD).expect("getrusage");
    let us = |t: nix::sys::time::TimeVal| {
        Duration::from_secs(u64::try_from(t.tv_sec()).unwrap_or(0))
            + Duration::from_micros(u64::try_from(t.tv_usec()).unwrap_or(0))
    };
    us(u.user_time()) + us(u.system_time())
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30).measurement_time(Duration::from_secs(4)).warm_up_time(Duration::from_secs(1));
    targets = bench
}
criterion_main!(benches);
