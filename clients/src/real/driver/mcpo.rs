//! mcpo: `mcpo --host 127.0.0.1 --port P --env K=V -- CMD ARGS`, then `GET /openapi.json` until
//! the proxy serves it (or exits). Each tool is `paths["/<tool>"].post`; its request body schema
//! is a `$ref` into `components/schemas`, resolved here into one self-contained schema. A
//! schema mcpo cannot turn into a pydantic model stops the whole proxy ("Application startup
//! failed", exit 3): that is a lost listing whose culprit bisection finds.

use super::{Culprit, Failed, ListingLoss, Outcome, Run, command, spawn, timeout, tool};
use crate::real::RealError;
use crate::real::http;
use crate::real::process::{Output, Proc};
use crate::real::spec::ReasonSource;
use serde_json::{Map, Value, json};
use std::net::{SocketAddr, TcpListener};
use std::thread;
use std::time::{Duration, Instant};

/// Why: mcpo takes 1.5-3 s to come up; polling every 100 ms costs nothing next to that.
const POLL: Duration = Duration::from_millis(100);
/// Why: one `GET` on loopback answers in milliseconds; a stuck proxy must not hold the poll.
const GET_TIMEOUT: Duration = Duration::from_secs(2);
/// Why: `$ref` chains in a real document are a few levels deep; past this the schema is cut.
const MAX_DEPTH: usize = 64;

fn free_port() -> std::io::Result<u16> {
    Ok(TcpListener::bind(("127.0.0.1", 0))?.local_addr()?.port())
}

pub(super) fn run(run: &Run<'_>) -> Result<Outcome, Failed> {
    let (proc, document) = match start(run)? {
        Up::Serving { proc, document, .. } => (proc, document),
        Up::Exited(output) => return refused(run, &output),
    };
    drop(proc.finish());
    Ok(Outcome {
        tools: tools_of(&document),
        request: document,
        lost: Vec::new(),
        loss: None,
        notes: Vec::new(),
    })
}

/// Sends each call as `POST /<tool>` to an mcpo started for the purpose, one after the other;
/// `answered` gets mcpo's HTTP status and body for each (`None` when the request failed) before
/// the next is sent.
pub(super) fn call(
    run: &Run<'_>,
    calls: &[crate::real::Call],
    mut answered: impl FnMut(Option<(u16, Vec<u8>)>),
) -> Result<(), Failed> {
    let (proc, addr) = match start(run)? {
        Up::Serving { proc, addr, .. } => (proc, addr),
        Up::Exited(output) => {
            let reason = match refused(run, &output) {
                Ok(o) => o.loss.map_or_else(String::new, |l| l.reason),
                Err(f) => f.error.to_string(),
            };
            return Err(Failed::with_stderr(
                RealError::NoOutput { client: run.install.client, reason },
                output.stderr,
            ));
        }
    };
    for call in calls {
        let left = run.deadline.saturating_duration_since(Instant::now());
        let answer = if left.is_zero() {
            None
        } else {
            let path = http::encode_path(&format!("/{}", call.tool));
            http::post_json(addr, &path, call.arguments.to_string().as_bytes(), left).ok()
        };
        answered(answer);
    }
    drop(proc.finish());
    Ok(())
}

/// mcpo serving its `openapi.json`, or exited before it did.
enum Up {
    Serving { proc: Proc, addr: SocketAddr, document: Value },
    Exited(Output),
}

/// Starts mcpo and waits for its `openapi.json`. The port is free when chosen but another
/// process may take it before mcpo binds: one retry.
fn start(run: &Run<'_>) -> Result<Up, Failed> {
    let first = start_once(run)?;
    match first {
        Up::Exited(ref o)
            if String::from_utf8_lossy(&o.stderr).contains("address already in use") =>
        {
            start_once(run)
        }
        up => Ok(up),
    }
}

fn start_once(run: &Run<'_>) -> Result<Up, Failed> {
    let home = run.scratch.dir("home")?;
    let work = run.scratch.dir("work")?;
    let port = free_port().map_err(|source| RealError::Provider { source })?;
    let mut c = command(run, &home, &work);
    // The default host is 0.0.0.0: always loopback.
    c.args(["--host", "127.0.0.1", "--port", &port.to_string()]);
    for (k, v) in &run.server.env {
        c.arg("--env").arg(format!("{k}={v}"));
    }
    c.arg("--").arg(&run.server.program).args(&run.server.args);
    let mut proc = spawn(run, c)?;
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    loop {
        if proc.try_status().is_some() {
            return Ok(Up::Exited(proc.finish()));
        }
        if Instant::now() >= run.deadline {
            let output = proc.finish();
            return Err(Failed::with_stderr(
                timeout(run, "waiting for /openapi.json"),
                output.stderr,
            ));
        }
        if let Ok((200, body)) = http::get(addr, "/openapi.json", GET_TIMEOUT)
            && let Ok(doc) = serde_json::from_slice::<Value>(&body)
        {
            let has_paths =
                doc.get("paths").and_then(Value::as_object).is_some_and(|p| !p.is_empty());
            let started = String::from_utf8_lossy(&proc.stderr_so_far())
                .contains("Application startup complete");
            // No paths after start-up: the server lists no tools (or mcpo kept none).
            if has_paths || started {
                return Ok(Up::Serving { proc, addr, document: doc });
            }
        }
        thread::sleep(POLL);
    }
}

/// mcpo exited before serving: a lost listing when it says it could not take the server's
/// tools, else a broken run.
fn refused(run: &Run<'_>, output: &Output) -> Result<Outcome, Failed> {
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    let status = output.status.map_or("killed".into(), |s| s.to_string());
    // "Failed to connect to MCP server '<name>': <Error>: <message>" names the error, not
    // the tool.
    if let Some(line) = stderr.lines().find(|l| l.contains("Failed to connect to MCP server")) {
        let reason = line.split(" - ERROR - ").last().unwrap_or(line).trim().to_owned();
        return Ok(Outcome {
            request: Value::Null,
            tools: Vec::new(),
            lost: Vec::new(),
            loss: Some(ListingLoss {
                reason: format!("mcpo refused to start ({status}): {reason}"),
                source: ReasonSource::Stderr,
                culprits: Vec::<Culprit>::new(),
            }),
            notes: Vec::new(),
        });
    }
    let reason = format!("it exited ({status}) before serving /openapi.json");
    Err(Failed::with_stderr(
        RealError::NoOutput { client: run.install.client, reason },
        output.stderr.clone(),
    ))
}

/// The tools of an mcpo `openapi.json`, in path order.
pub(super) fn tools_of(document: &Value) -> Vec<crate::real::CapturedTool> {
    let components = document
        .pointer("/components/schemas")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let Some(paths) = document.get("paths").and_then(Value::as_object) else { return Vec::new() };
    let mut tools = Vec::new();
    for (path, item) in paths {
        let Some(post) = item.get("post") else { continue };
        let name = path.strip_prefix('/').unwrap_or(path);
        let shown = post.get("operationId").and_then(Value::as_str).unwrap_or(name);
        let body = post.pointer("/requestBody/content/application~1json/schema");
        let schema = body.map(|b| resolve(b, &components));
        let mut captured = tool(shown, post.get("description"), schema.as_ref());
        captured.server_name = Some(name.to_owned());
        if body.is_none() {
            captured.notes.push("no request body: mcpo takes no arguments for this tool".into());
        }
        tools.push(captured);
    }
    tools
}

/// `schema` with every `#/components/schemas/X` reference replaced by its target (sibling
/// keywords kept); a reference that re-enters itself stays a `$ref` into a `$defs` added at the
/// root.
pub(super) fn resolve(schema: &Value, components: &Map<String, Value>) -> Value {
    let mut defs = Map::new();
    let mut stack = Vec::new();
    let mut out = inline(schema, components, &mut stack, &mut defs, 0);
    if !defs.is_empty()
        && let Some(object) = out.as_object_mut()
    {
        object.insert("$defs".into(), Value::Object(defs));
    }
    out
}

fn inline(
    schema: &Value,
    components: &Map<String, Value>,
    stack: &mut Vec<String>,
    defs: &mut Map<String, Value>,
    depth: usize,
) -> Value {
    if depth > MAX_DEPTH {
        return json!({});
    }
    match schema {
        Value::Object(object) => {
            let target = object
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| r.strip_prefix("#/components/schemas/"))
                .map(str::to_owned);
            if let Some(name) = target
                && let Some(component) = components.get(&name)
            {
                if stack.contains(&name) {
                    if !defs.contains_key(&name) {
                        defs.insert(name.clone(), Value::Null);
                        let resolved =
                            inline(component, components, &mut vec![name.clone()], defs, depth + 1);
                        defs.insert(name.clone(), resolved);
                    }
                    let mut kept = object.clone();
                    kept.insert("$ref".into(), Value::String(format!("#/$defs/{name}")));
                    return Value::Object(kept);
                }
                stack.push(name);
                let mut resolved = inline(component, components, stack, defs, depth + 1);
                stack.pop();
                if let Some(map) = resolved.as_object_mut() {
                    for (k, v) in object {
                        if k != "$ref" && !map.contains_key(k) {
                            map.insert(k.clone(), inline(v, components, stack, defs, depth + 1));
                        }
                    }
                }
                return resolved;
            }
            Value::Object(
                object
                    .iter()
                    .map(|(k, v)| (k.clone(), inline(v, components, stack, defs, depth + 1)))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(
            items.iter().map(|v| inline(v, components, stack, defs, depth + 1)).collect(),
        ),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn component_references_are_inlined_with_their_siblings() {
        let doc = json!({
            "paths": {
                "/defs_ref": {"post": {"operationId": "tool_defs_ref_post", "description": "d",
                    "requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/m"}}}}}},
                "/empty": {"post": {"operationId": "tool_empty_post"}},
            },
            "components": {"schemas": {
                "m": {"type": "object", "properties": {"p": {"$ref": "#/components/schemas/p", "description": ""}}},
                "p": {"type": "object", "properties": {"x": {"type": "number"}}},
            }},
        });
        let tools = tools_of(&doc);
        assert_eq!(tools.len(), 2);
        assert_eq!(tools[0].server_name.as_deref(), Some("defs_ref"));
        assert_eq!(tools[0].shown_name, "tool_defs_ref_post");
        assert_eq!(
            tools[0].input_schema,
            Some(
                json!({"type": "object", "properties": {"p": {"type": "object", "properties": {"x": {"type": "number"}}, "description": ""}}})
            )
        );
        assert_eq!(tools[1].input_schema, None);
        assert_eq!(tools[1].notes.len(), 1);
    }

    #[test]
    fn a_recursive_component_becomes_a_local_definition() {
        let components = json!({"node": {"type": "object", "properties": {"next": {"$ref": "#/components/schemas/node"}}}});
        let resolved = resolve(
            &json!({"$ref": "#/components/schemas/node"}),
            components.as_object().expect("map"),
        );
        assert_eq!(resolved["properties"]["next"]["$ref"], "#/$defs/node");
        assert_eq!(resolved["$defs"]["node"]["properties"]["next"]["$ref"], "#/$defs/node");
    }
}
