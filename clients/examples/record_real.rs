//! Records real-client captures as test fixtures: every source listing (the edge schemas and a
//! dozen corpus servers) served by `fx-serve-tools` and captured through each real client, stored
//! as `fixtures/clients/real/<client>@<version>/<source>.json` with a `PROVENANCE.md`.
//!
//! Run through `fixtures/clients/real/record.sh` (it builds what this needs). Clients run in
//! parallel, sources one after another per client; bisection is on, so a listing a client loses
//! as a whole names its culprits and records the other tools too. A client that is not installed
//! fails the recording with the install command.
//!
//! Arguments: `[--out DIR] [CLIENT...]` (default: `fixtures/clients/real`, every client).

use mcp_fuzz_clients::real::{
    Capture, CaptureOptions, CaptureStatus, CapturedTool, RealClient, ServerSpec, SubsetServer,
    discover,
};
use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// The listings recorded, relative to the repository root: the edge schemas, then a dozen corpus
/// servers chosen for their spread (TypeScript SDK with zod and draft-07, Python FastMCP with
/// `$defs` and nullable `anyOf`, OpenAPI-derived `$ref`s, big and small).
const SOURCES: &[&str] = &[
    "fixtures/clients/real/edge.json",
    "fixtures/tools-list/npm/@modelcontextprotocol__server-everything@2026.8.31.json",
    "fixtures/tools-list/npm/@modelcontextprotocol__server-filesystem@2026.8.31.json",
    "fixtures/tools-list/npm/@modelcontextprotocol__server-memory@2026.8.31.json",
    "fixtures/tools-list/npm/@modelcontextprotocol__server-sequential-thinking@2026.8.31.json",
    "fixtures/tools-list/npm/@upstash__context7-mcp@4.1.1.json",
    "fixtures/tools-list/npm/@playwright__mcp@0.0.83.json",
    "fixtures/tools-list/npm/@sentry__mcp-server@0.39.0.json",
    "fixtures/tools-list/npm/@notionhq__notion-mcp-server@2.5.2.json",
    "fixtures/tools-list/npm/tavily-mcp@0.2.22.json",
    "fixtures/tools-list/npm/chrome-devtools-mcp@1.11.0.json",
    "fixtures/tools-list/npm/@browserbasehq__mcp-server-browserbase@2.4.3.json",
    "fixtures/tools-list/pypi/mcp-server-time@2026.10.19.json",
    "fixtures/tools-list/pypi/mcp-server-git@2026.10.19.json",
    "fixtures/tools-list/pypi/mcp-server-fetch@2026.10.24.json",
    "fixtures/tools-list/pypi/awslabs.aws-pricing-mcp-server@1.1.1.json",
    "fixtures/tools-list/pypi/awslabs.aws-documentation-mcp-server@1.2.3.json",
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// `npm/@x__y@1.json` → `npm__@x__y@1`; `fixtures/clients/real/edge.json` → `edge`.
fn stem(source: &str) -> String {
    let path = Path::new(source);
    let file = path.file_stem().expect("a file name").to_string_lossy().into_owned();
    match path.parent().and_then(Path::file_name).map(|p| p.to_string_lossy().into_owned()) {
        Some(eco) if eco == "npm" || eco == "pypi" => format!("{eco}__{file}"),
        _ => file,
    }
}

/// The server's tools by name, to leave out what a client did not change.
fn by_name(listed: &[Value]) -> Map<String, Value> {
    listed.iter().filter_map(|t| Some((t.get("name")?.as_str()?.to_owned(), t.clone()))).collect()
}

/// A captured tool as stored: the schema and the description only when the client changed them.
fn stored_tool(tool: &CapturedTool, listed: &Map<String, Value>) -> Value {
    let original = tool.server_name.as_ref().and_then(|n| listed.get(n));
    let mut out = Map::new();
    out.insert("serverName".into(), json!(tool.server_name));
    out.insert("shownName".into(), json!(tool.shown_name));
    if let Some(ns) = &tool.namespace {
        out.insert("namespace".into(), json!(ns));
    }
    if let Some(strict) = tool.strict {
        out.insert("strict".into(), json!(strict));
    }
    let same_schema = original.is_some_and(|o| o.get("inputSchema") == tool.input_schema.as_ref());
    if same_schema {
        out.insert("sameSchema".into(), json!(true));
    } else {
        out.insert("inputSchema".into(), json!(tool.input_schema));
    }
    let same_description = original.is_some_and(|o| {
        o.get("description").and_then(Value::as_str) == tool.description.as_deref()
    });
    if !same_description {
        out.insert("description".into(), json!(tool.description));
    }
    if !tool.notes.is_empty() {
        out.insert("notes".into(), json!(tool.notes));
    }
    Value::Object(out)
}

/// The shape of the raw document, without its bulk (prompts, built-in tools' schemas).
fn request_shape(client: RealClient, request: &Value) -> Value {
    match client {
        RealClient::Mcpo => json!({
            "openapi": request.get("openapi"),
            "paths": request.get("paths").and_then(Value::as_object).map_or(0, Map::len),
            "componentSchemas": request.pointer("/components/schemas").and_then(Value::as_object).map_or(0, Map::len),
        }),
        RealClient::Inspector => {
            json!({"keys": request.as_object().map(|o| o.keys().cloned().collect::<Vec<_>>())})
        }
        _ => {
            let keys: Vec<String> =
                request.as_object().map(|o| o.keys().cloned().collect()).unwrap_or_default();
            let tools: Vec<Value> = request
                .get("tools")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|t| {
                    let name = t.get("name").cloned().unwrap_or(Value::Null);
                    match (t.get("type").and_then(Value::as_str), t.get("functionDeclarations")) {
                        (Some(kind), _) => json!({"type": kind, "name": name}),
                        (None, Some(Value::Array(d))) => json!({"functionDeclarations": d.len()}),
                        _ => json!({"name": name}),
                    }
                })
                .collect();
            json!({"keys": keys, "tools": tools})
        }
    }
}

fn stored(capture: &Capture, source: &str) -> Value {
    let listed = capture.server_tools.clone().unwrap_or_default();
    let names = by_name(&listed);
    let tools: Vec<Value> = capture.tools.iter().map(|t| stored_tool(t, &names)).collect();
    let failure = capture.listing_failure.as_ref().map(|f| {
        json!({
            "reason": f.reason,
            "source": f.source,
            "culprits": f.culprits,
            "others": f.others.as_ref().map(|o| o.iter().map(|t| stored_tool(t, &names)).collect::<Vec<_>>()),
            "othersLost": f.others_lost,
            "probes": f.probes,
        })
    });
    json!({
        "client": capture.client,
        "version": capture.version,
        "source": source,
        "serverTools": listed.len(),
        "status": match &capture.status {
            CaptureStatus::Captured => json!("captured"),
            other => json!(other),
        },
        "handshake": capture.handshake,
        "tools": tools,
        "lost": capture.lost.iter().filter(|l| !l.reason.starts_with("lost with the whole listing")).collect::<Vec<_>>(),
        "listingFailure": failure,
        "request": request_shape(capture.client, &capture.request),
        "notes": capture.notes,
        "elapsedMs": u64::try_from(capture.elapsed.as_millis()).unwrap_or(u64::MAX),
    })
}

/// One line per tool: diffs stay readable and the file stays small.
fn write_json(path: &Path, value: &Value) -> std::io::Result<()> {
    let mut text = String::from("{\n");
    let object = value.as_object().expect("a capture is an object");
    for (i, (key, v)) in object.iter().enumerate() {
        let rendered = match v {
            Value::Array(items) if key == "tools" || key == "lost" => {
                let lines: Vec<String> = items.iter().map(|i| format!("  {i}")).collect();
                if lines.is_empty() {
                    "[]".to_owned()
                } else {
                    format!("[\n{}\n ]", lines.join(",\n"))
                }
            }
            Value::Object(failure) if key == "listingFailure" => {
                let mut inner = Vec::new();
                for (k, fv) in failure {
                    let r = match fv {
                        Value::Array(items) if !items.is_empty() => {
                            let lines: Vec<String> =
                                items.iter().map(|i| format!("   {i}")).collect();
                            format!("[\n{}\n  ]", lines.join(",\n"))
                        }
                        other => other.to_string(),
                    };
                    inner.push(format!("  {}: {r}", Value::String(k.clone())));
                }
                format!("{{\n{}\n }}", inner.join(",\n"))
            }
            other => other.to_string(),
        };
        let comma = if i + 1 < object.len() { "," } else { "" };
        text.push_str(&format!(" {}: {rendered}{comma}\n", Value::String(key.clone())));
    }
    text.push_str("}\n");
    std::fs::write(path, text)
}

#[expect(clippy::print_stdout, clippy::print_stderr, reason = "a recording tool reports progress")]
fn main() -> ExitCode {
    let mut args = std::env::args().skip(1).peekable();
    let mut out = root().join("fixtures/clients/real");
    let mut clients = Vec::new();
    while let Some(arg) = args.next() {
        if arg == "--out" {
            out = PathBuf::from(args.next().expect("--out needs a directory"));
        } else if let Some(c) = RealClient::from_name(&arg) {
            clients.push(c);
        } else {
            eprintln!(
                "unknown argument {arg:?} (clients: inspector mcpo codex-cli claude-code gemini-cli)"
            );
            return ExitCode::from(2);
        }
    }
    if clients.is_empty() {
        clients = RealClient::ALL.to_vec();
    }
    let server = std::env::var_os("FX_SERVE_TOOLS")
        .map_or_else(|| root().join("target/debug/fx-serve-tools"), PathBuf::from);
    if !server.is_file() {
        eprintln!(
            "{} is missing: cargo build -p mcp-fuzz-fixtures --bin fx-serve-tools",
            server.display()
        );
        return ExitCode::FAILURE;
    }
    let mut installs = Vec::new();
    for &client in &clients {
        match discover(client, None) {
            Ok(i) => installs.push(i),
            Err(e) => {
                eprintln!("record: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    let subsets = std::env::temp_dir().join(format!("mcp-fuzz-record-{}", std::process::id()));
    std::fs::create_dir_all(&subsets).expect("a temp dir");
    let counter = Arc::new(AtomicU64::new(0));
    let (dir, program) = (subsets.clone(), server.clone());
    let subset: SubsetServer = Arc::new(move |tools: &[Value]| {
        let path = dir.join(format!("subset-{}.json", counter.fetch_add(1, Ordering::Relaxed)));
        std::fs::write(&path, json!({ "tools": tools }).to_string()).map_err(|e| e.to_string())?;
        Ok(ServerSpec::new(&program).env("FX_TOOLS_FILE", path.to_string_lossy()))
    });
    let options = CaptureOptions { subset_server: Some(subset), ..CaptureOptions::default() };
    let started = Instant::now();
    let failures: usize = std::thread::scope(|s| {
        let handles: Vec<_> = installs
            .iter()
            .map(|install| {
                let (out, options, server) = (&out, &options, &server);
                s.spawn(move || {
                    let version = install.version.clone().unwrap_or_else(|| "unknown".into());
                    let dir = out.join(format!("{}@{version}", install.client));
                    std::fs::create_dir_all(&dir).expect("the client's fixture dir");
                    let mut failed = 0;
                    for source in SOURCES {
                        let file = root().join(source);
                        let spec = ServerSpec::new(server).env("FX_TOOLS_FILE", file.to_string_lossy());
                        let capture = mcp_fuzz_clients::real::capture_with(install, &spec, options);
                        if let CaptureStatus::Broken { reason, stderr_tail } = &capture.status {
                            eprintln!("{} {source}: broken: {reason}\n{stderr_tail}", install.client);
                            failed += 1;
                        }
                        eprintln!(
                            "{} {source}: {} exposed, {} lost{} in {:.1} s",
                            install.client,
                            capture.tools.len(),
                            capture.lost.len(),
                            capture.listing_failure.as_ref().map_or(String::new(), |f| format!(
                                ", listing lost ({} culprits, {} probes)",
                                f.culprits.len(),
                                f.probes
                            )),
                            capture.elapsed.as_secs_f64()
                        );
                        let path = dir.join(format!("{}.json", stem(source)));
                        write_json(&path, &stored(&capture, source)).expect("the fixture is written");
                    }
                    let provenance = format!(
                        "# {client}@{version}: recorded captures\n\n\
                         Recorded by `fixtures/clients/real/record.sh` ({command}) on {date} with\n\
                         {client} {version} ({package}, installed by `scripts/install-clients.sh`), \
                         `{program}` on {runtime}.\n\n\
                         Each `<source>.json` is one capture of a listing served verbatim by `fx-serve-tools`\n\
                         (see `../README.md` for the format); `source` names the listing.\n",
                        client = install.client,
                        package = install.client.package(),
                        program = install.program.display().to_string().rsplit("target/clients/").next().unwrap_or_default(),
                        command = "cargo run -p mcp-fuzz-clients --example record_real",
                        date = std::env::var("RECORD_DATE").unwrap_or_else(|_| "(date not given)".into()),
                        runtime = if install.client == RealClient::Mcpo {
                            std::env::var("RECORD_PYTHON").unwrap_or_else(|_| "Python (version not given)".into())
                        } else {
                            format!("Node {}", std::env::var("RECORD_NODE").unwrap_or_else(|_| "(version not given)".into()))
                        },
                    );
                    std::fs::write(dir.join("PROVENANCE.md"), provenance).expect("provenance written");
                    failed
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("a recording thread")).sum()
    });
    let _ = std::fs::remove_dir_all(&subsets);
    println!(
        "recorded {} clients x {} sources in {:.0} s",
        installs.len(),
        SOURCES.len(),
        started.elapsed().as_secs_f64()
    );
    if failures > 0 {
        eprintln!("record: {failures} captures were broken (see above)");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
