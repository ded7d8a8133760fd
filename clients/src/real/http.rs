//! Just enough HTTP/1.1 for loopback: read one request (`Content-Length` or chunked body), write
//! one response, and a client for mcpo (`GET /openapi.json`, `POST /<tool>`). Every read has a
//! deadline.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

/// Why: request heads from these clients are under 4 KiB; a larger head is not a client we know.
const MAX_HEAD: usize = 64 * 1024;
/// Why: the largest request seen (Claude Code with a 235-tool server) is a few MiB; this bounds
/// memory against a runaway body.
const MAX_BODY: usize = 256 << 20;

/// One parsed request.
#[derive(Debug, Clone)]
pub(crate) struct Request {
    pub method: String,
    /// The request target (`/v1/responses`, `/v1/messages?beta=true`).
    pub path: String,
    /// Header names lowercased, in order.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Request {
    /// The first header named `name` (lowercase).
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    /// Whether the client asked to close the connection after this exchange.
    pub(crate) fn wants_close(&self) -> bool {
        self.header("connection").is_some_and(|v| v.eq_ignore_ascii_case("close"))
    }
}

fn invalid(what: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what.into())
}

/// Reads one line (CRLF or LF), bounded by `limit` bytes.
fn read_line(reader: &mut impl BufRead, limit: usize) -> io::Result<String> {
    let mut line = Vec::new();
    let read = reader.by_ref().take(limit as u64 + 1).read_until(b'\n', &mut line)?;
    if read == 0 {
        return Err(io::ErrorKind::UnexpectedEof.into());
    }
    if line.len() > limit {
        return Err(invalid("header line too long"));
    }
    while matches!(line.last(), Some(b'\n' | b'\r')) {
        line.pop();
    }
    String::from_utf8(line).map_err(|_| invalid("header is not UTF-8"))
}

/// Reads the header block after the start line.
fn read_headers(reader: &mut impl BufRead) -> io::Result<Vec<(String, String)>> {
    let mut headers = Vec::new();
    let mut size = 0;
    loop {
        let line = read_line(reader, MAX_HEAD)?;
        if line.is_empty() {
            return Ok(headers);
        }
        size += line.len();
        if size > MAX_HEAD {
            return Err(invalid("header block too large"));
        }
        let (name, value) = line.split_once(':').ok_or_else(|| invalid("header without ':'"))?;
        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
    }
}

/// Reads a body framed by `headers`: chunked, `Content-Length`, or (for responses only, with
/// `to_eof`) everything until the peer closes.
fn read_body(
    reader: &mut impl BufRead,
    headers: &[(String, String)],
    to_eof: bool,
) -> io::Result<Vec<u8>> {
    let get = |n: &str| headers.iter().find(|(k, _)| k == n).map(|(_, v)| v.as_str());
    if get("transfer-encoding").is_some_and(|v| v.to_ascii_lowercase().contains("chunked")) {
        let mut body = Vec::new();
        loop {
            let line = read_line(reader, 1024)?;
            let size = line.split(';').next().unwrap_or_default().trim();
            let size = usize::from_str_radix(size, 16).map_err(|_| invalid("bad chunk size"))?;
            if size == 0 {
                // Trailers, then the blank line.
                while !read_line(reader, MAX_HEAD)?.is_empty() {}
                return Ok(body);
            }
            if body.len() + size > MAX_BODY {
                return Err(invalid("body too large"));
            }
            let start = body.len();
            body.resize(start + size, 0);
            reader.read_exact(&mut body[start..])?;
            read_line(reader, 2)?;
        }
    }
    if let Some(length) = get("content-length") {
        let length: usize = length.trim().parse().map_err(|_| invalid("bad content-length"))?;
        if length > MAX_BODY {
            return Err(invalid("body too large"));
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body)?;
        return Ok(body);
    }
    let mut body = Vec::new();
    if to_eof {
        reader.take(MAX_BODY as u64).read_to_end(&mut body)?;
    }
    Ok(body)
}

/// Reads one request from a keep-alive connection; `Ok(None)` when the peer closed cleanly
/// between requests.
pub(crate) fn read_request(reader: &mut impl BufRead) -> io::Result<Option<Request>> {
    let start = match read_line(reader, MAX_HEAD) {
        Ok(line) => line,
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    };
    let mut parts = start.split_whitespace();
    let (Some(method), Some(path)) = (parts.next(), parts.next()) else {
        return Err(invalid(format!("bad request line {start:?}")));
    };
    let headers = read_headers(reader)?;
    let body = read_body(reader, &headers, false)?;
    Ok(Some(Request { method: method.to_owned(), path: path.to_owned(), headers, body }))
}

/// Writes one complete response with a `Content-Length`.
pub(crate) fn write_response(
    out: &mut impl Write,
    status: u16,
    content_type: &str,
    body: &[u8],
    close: bool,
) -> io::Result<()> {
    let reason = match status {
        200 => "OK",
        404 => "Not Found",
        _ => "Error",
    };
    let connection = if close { "close" } else { "keep-alive" };
    write!(
        out,
        "HTTP/1.1 {status} {reason}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\n\
         cache-control: no-cache\r\nconnection: {connection}\r\n\r\n",
        body.len()
    )?;
    out.write_all(body)?;
    out.flush()
}

/// `GET path` on `addr` with `Connection: close`: the status and the body. Connect, write and
/// every read are bounded by `timeout`.
pub(crate) fn get(addr: SocketAddr, path: &str, timeout: Duration) -> io::Result<(u16, Vec<u8>)> {
    exchange(addr, "GET", path, None, timeout)
}

/// `POST path` with a JSON body on `addr` with `Connection: close`: the status and the body,
/// bounded like [`get`].
pub(crate) fn post_json(
    addr: SocketAddr,
    path: &str,
    body: &[u8],
    timeout: Duration,
) -> io::Result<(u16, Vec<u8>)> {
    exchange(addr, "POST", path, Some(body), timeout)
}

fn exchange(
    addr: SocketAddr,
    method: &str,
    path: &str,
    body: Option<&[u8]>,
    timeout: Duration,
) -> io::Result<(u16, Vec<u8>)> {
    let deadline = Instant::now() + timeout;
    let mut stream = TcpStream::connect_timeout(&addr, timeout)?;
    stream.set_read_timeout(Some(timeout))?;
    stream.set_write_timeout(Some(timeout))?;
    let length = body.map_or_else(String::new, |b| {
        format!("content-type: application/json\r\ncontent-length: {}\r\n", b.len())
    });
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\naccept: application/json\r\n{length}\r\n"
    )?;
    if let Some(b) = body {
        stream.write_all(b)?;
    }
    let mut reader = BufReader::new(stream);
    let status_line = read_line(&mut reader, MAX_HEAD)?;
    let status: u16 = status_line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| invalid(format!("bad status line {status_line:?}")))?;
    let headers = read_headers(&mut reader)?;
    let body = read_body(&mut reader, &headers, true)?;
    if Instant::now() > deadline {
        return Err(io::ErrorKind::TimedOut.into());
    }
    Ok((status, body))
}

/// `path` with every byte outside the unreserved set and `/` percent-encoded (tool names may
/// hold spaces or non-ASCII letters).
pub(crate) fn encode_path(path: &str) -> String {
    let mut out = String::new();
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/') {
            out.push(char::from(b));
        } else {
            let _ = std::fmt::Write::write_fmt(&mut out, format_args!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(raw: &str) -> Request {
        read_request(&mut raw.as_bytes()).expect("parses").expect("a request")
    }

    #[test]
    fn content_length_and_chunked_bodies_are_read() {
        let r = parse("POST /v1/x HTTP/1.1\r\nContent-Length: 5\r\nHost: h\r\n\r\nhello");
        assert_eq!((r.method.as_str(), r.path.as_str()), ("POST", "/v1/x"));
        assert_eq!(r.body, b"hello");
        assert_eq!(r.header("host"), Some("h"));
        let r = parse(
            "POST /y HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;ext=1\r\nde\r\n0\r\n\r\n",
        );
        assert_eq!(r.body, b"abcde");
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        for raw in [
            "NONSENSE\r\n\r\n",
            "POST / HTTP/1.1\r\nContent-Length: nope\r\n\r\n",
            "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
            "POST / HTTP/1.1\r\nContent-Length: 10\r\n\r\nshort",
            "POST / HTTP/1.1\r\nno colon here\r\n\r\n",
        ] {
            assert!(read_request(&mut raw.as_bytes()).is_err(), "{raw:?}");
        }
        assert!(read_request(&mut "".as_bytes()).expect("clean eof").is_none());
    }

    #[test]
    fn paths_are_percent_encoded() {
        assert_eq!(encode_path("/space name"), "/space%20name");
        assert_eq!(encode_path("/unicode_é"), "/unicode_%C3%A9");
        assert_eq!(encode_path("/dot.name-x_y~"), "/dot.name-x_y~");
    }

    #[test]
    fn responses_carry_their_length() {
        let mut out = Vec::new();
        write_response(&mut out, 200, "text/plain", b"ok", false).expect("writes");
        let text = String::from_utf8(out).expect("utf-8");
        assert!(text.starts_with("HTTP/1.1 200 OK\r\n"));
        assert!(text.contains("content-length: 2\r\n"));
        assert!(text.ends_with("\r\n\r\nok"));
    }
}
