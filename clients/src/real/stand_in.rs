//! A stand-in MCP server over stdio that serves a saved listing verbatim: what a real client is
//! pointed at when there is no server process to run (a `--tools` file, one `--schema`, an HTTP
//! server whose listing mcp-fuzz read itself), and what bisection runs a client against to find
//! the tool that makes it lose a whole listing (a subset of what the server listed to it).
//!
//! It answers `initialize` (echoing a known protocol version, else 2025-06-18), `ping`,
//! `tools/list` (one page: the tools as given) and `tools/call` (a tool error: nothing is
//! called); any other request gets -32601. Notifications, responses and lines that are not JSON
//! are ignored. Synchronous, one line at a time; it ends at end of input.

use super::spec::{ServerSpec, SubsetServer};
use serde_json::{Value, json};
use std::io::{self, BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// The protocol versions a client may ask for and get back; anything else gets
/// [`FALLBACK_VERSION`].
const KNOWN_VERSIONS: &[&str] = &["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];
/// Why: the newest version every one of the five clients speaks with `initialize`.
const FALLBACK_VERSION: &str = "2025-06-18";

/// The text of every `tools/call` answer.
pub const NOT_CALLED: &str =
    "mcp-fuzz stand-in: this server only serves a saved listing; no tool is called";

/// Serves `tools` (a JSON array, listed as it is) from `input` to `output` until end of input.
///
/// # Errors
/// Reading `input` or writing `output` failed.
pub fn serve_listing(tools: &Value, input: impl BufRead, mut output: impl Write) -> io::Result<()> {
    for line in input.lines() {
        let line = line?;
        let Ok(message) = serde_json::from_str::<Value>(line.trim()) else { continue };
        let (Some(id), Some(method)) =
            (message.get("id"), message.get("method").and_then(Value::as_str))
        else {
            continue;
        };
        let params = message.get("params").unwrap_or(&Value::Null);
        let reply = match method {
            "initialize" => {
                let asked = params.get("protocolVersion").and_then(Value::as_str);
                let version =
                    asked.filter(|v| KNOWN_VERSIONS.contains(v)).unwrap_or(FALLBACK_VERSION);
                json!({"jsonrpc": "2.0", "id": id, "result": {
                    "protocolVersion": version,
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "mcp-fuzz-stand-in", "version": env!("CARGO_PKG_VERSION")},
                }})
            }
            "ping" => json!({"jsonrpc": "2.0", "id": id, "result": {}}),
            "tools/list" => json!({"jsonrpc": "2.0", "id": id, "result": {"tools": tools}}),
            "tools/call" => json!({"jsonrpc": "2.0", "id": id, "result": {
                "content": [{"type": "text", "text": NOT_CALLED}],
                "isError": true,
            }}),
            other => json!({"jsonrpc": "2.0", "id": id, "error": {
                "code": -32601,
                "message": format!("Method not found: {other}"),
            }}),
        };
        let mut bytes = reply.to_string().into_bytes();
        bytes.push(b'\n');
        output.write_all(&bytes)?;
        output.flush()?;
    }
    Ok(())
}

/// Reads a listing file written by [`write_listing`] and serves it on stdin and stdout.
///
/// # Errors
/// The file cannot be read or is not a listing, or stdio failed.
pub fn serve_listing_file(path: &Path) -> io::Result<()> {
    let text = std::fs::read_to_string(path)?;
    let document: Value = serde_json::from_str(&text)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string()))?;
    let tools = document.get("tools").filter(|t| t.is_array()).ok_or_else(|| {
        io::Error::new(io::ErrorKind::InvalidData, "the listing file has no `tools` array")
    })?;
    serve_listing(tools, io::stdin().lock(), io::stdout().lock())
}

/// Writes `tools` as a listing file for [`serve_listing_file`].
///
/// # Errors
/// The file cannot be written.
pub fn write_listing(path: &Path, tools: &[Value]) -> io::Result<()> {
    std::fs::write(path, json!({ "tools": tools }).to_string())
}

/// Stand-ins for real clients: each serves one listing written into a throwaway directory,
/// removed when the last clone is dropped. The stand-in command is `program args... FILE`
/// (mcp-fuzz's hidden `serve-listing`, which calls [`serve_listing_file`]).
#[derive(Clone)]
pub struct StandIns(Arc<Listings>);

struct Listings {
    dir: PathBuf,
    next: AtomicU64,
    program: PathBuf,
    args: Vec<String>,
}

impl StandIns {
    /// A new directory of listings for stand-ins started as `program args... FILE`.
    ///
    /// # Errors
    /// The directory cannot be created.
    pub fn new(program: impl Into<PathBuf>, args: &[&str]) -> io::Result<Self> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir = std::env::temp_dir()
            .join(format!("mcp-fuzz-listings-{}-{nanos:x}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        let args = args.iter().map(|a| (*a).to_owned()).collect();
        Ok(Self(Arc::new(Listings { dir, next: AtomicU64::new(0), program: program.into(), args })))
    }

    /// The stand-in serving `tools` (written to a new file).
    ///
    /// # Errors
    /// The listing file cannot be written.
    pub fn serving(&self, tools: &[Value]) -> io::Result<ServerSpec> {
        let n = self.0.next.fetch_add(1, Ordering::Relaxed);
        let path = self.0.dir.join(format!("listing-{n}.json"));
        write_listing(&path, tools)?;
        let spec = self.0.args.iter().fold(ServerSpec::new(&self.0.program), |s, a| s.arg(a));
        Ok(spec.arg(path.to_string_lossy()))
    }

    /// Stand-ins for bisection: each part of a listing served by its own stand-in.
    #[must_use]
    pub fn subsets(&self) -> SubsetServer {
        let this = self.clone();
        Arc::new(move |tools: &[Value]| this.serving(tools).map_err(|e| e.to_string()))
    }
}

impl Drop for Listings {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exchange(tools: &Value, lines: &[Value]) -> Vec<Value> {
        let input: String = lines.iter().map(|l| format!("{l}\nnot json\n")).collect();
        let mut out = Vec::new();
        serve_listing(tools, input.as_bytes(), &mut out).expect("serves");
        String::from_utf8(out)
            .expect("utf-8")
            .lines()
            .map(|l| serde_json::from_str(l).expect("each answer is one JSON line"))
            .collect()
    }

    #[test]
    fn it_answers_the_handshake_the_listing_and_calls_and_ignores_the_rest() {
        let tools = json!([{"name": "a", "inputSchema": "not even a schema"}]);
        let answers = exchange(
            &tools,
            &[
                json!({"jsonrpc": "2.0", "id": "p", "method": "server/discover"}),
                json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}}),
                json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
                json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
                json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "a"}}),
                json!({"jsonrpc": "2.0", "id": 3, "result": {}}),
                json!({"jsonrpc": "2.0", "id": 4, "method": "initialize", "params": {"protocolVersion": "2099-01-01"}}),
            ],
        );
        assert_eq!(answers.len(), 5);
        assert_eq!(answers[0]["error"]["code"], -32601);
        assert_eq!(answers[1]["result"]["protocolVersion"], "2025-11-25");
        assert_eq!(answers[2]["result"]["tools"], tools, "the listing is served verbatim");
        assert_eq!(answers[3]["result"]["isError"], true);
        assert_eq!(answers[3]["result"]["content"][0]["text"], NOT_CALLED);
        assert_eq!(answers[4]["result"]["protocolVersion"], FALLBACK_VERSION);
    }

    #[test]
    fn a_listing_file_round_trips() {
        let path = std::env::temp_dir()
            .join(format!("mcp-fuzz-listing-{}", super::super::scratch::unique()));
        write_listing(&path, &[json!({"name": "a"})]).expect("writes");
        let text = std::fs::read_to_string(&path).expect("reads");
        assert_eq!(serde_json::from_str::<Value>(&text).expect("json")["tools"][0]["name"], "a");
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn stand_ins_write_one_listing_each_and_remove_them_with_the_last_handle() {
        let stand_ins = StandIns::new("/bin/mcp-fuzz", &["serve-listing"]).expect("dir");
        let spec = stand_ins.serving(&[json!({"name": "a"})]).expect("written");
        let subsets = stand_ins.subsets();
        let other = subsets(&[]).expect("written");
        assert_eq!(spec.program, Path::new("/bin/mcp-fuzz"));
        assert_eq!(spec.args[0], "serve-listing");
        assert_ne!(spec.args[1], other.args[1], "a file per listing");
        let file = PathBuf::from(&spec.args[1]);
        let written: Value =
            serde_json::from_str(&std::fs::read_to_string(&file).expect("file")).expect("JSON");
        assert_eq!(written, json!({"tools": [{"name": "a"}]}));
        drop(stand_ins);
        assert!(file.exists(), "the subset server still holds the directory");
        drop(subsets);
        assert!(!file.exists(), "removed with the last handle");
    }
}
