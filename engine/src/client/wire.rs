//! A reader between the server's stdout and rmcp: it hands rmcp whole JSON lines only, and on
//! the way keeps what a judge needs and rmcp hides: non-JSON lines (junk), lines too long to
//! accept (oversize, dropped with bounded memory), and the raw bytes of the last response.

use std::pin::Pin;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, ReadBuf};
use tokio::sync::Notify;

/// What the reader saw, shared with the connection.
#[derive(Default)]
pub(crate) struct WireState {
    pub junk_lines: AtomicU64,
    pub last_junk: Mutex<Option<String>>,
    /// Size of the last line dropped for exceeding the limit, since the last reset.
    pub oversize: Mutex<Option<u64>>,
    /// Raw bytes of the last JSON-RPC response line, since the last reset.
    pub last_response: Mutex<Option<Vec<u8>>>,
    /// Junk lines seen since the last reset.
    pub junk_since_reset: AtomicU64,
    pub notify: Notify,
}

impl WireState {
    pub fn reset(&self) {
        *self.oversize.lock().expect("wire lock") = None;
        *self.last_response.lock().expect("wire lock") = None;
        self.junk_since_reset.store(0, Ordering::Relaxed);
    }
}

/// Junk text kept per line for reports.
const JUNK_EXCERPT: usize = 200;

/// Bytes read from the server per read call.
const READ_CHUNK: usize = 64 * 1024;

pub(crate) struct WireReader<R> {
    inner: R,
    line: Vec<u8>,
    out: Vec<u8>,
    out_pos: usize,
    discarding: Option<u64>,
    max_line: usize,
    state: std::sync::Arc<WireState>,
    eof: bool,
    /// Read buffer, allocated once: a fresh 64 KiB buffer per read costs more than the read.
    buf: Vec<u8>,
}

impl<R> WireReader<R> {
    pub fn new(inner: R, max_line: usize, state: std::sync::Arc<WireState>) -> Self {
        Self {
            inner,
            line: Vec::new(),
            out: Vec::new(),
            out_pos: 0,
            discarding: None,
            max_line,
            state,
            eof: false,
            buf: vec![0; READ_CHUNK],
        }
    }

    fn finish_line(&mut self) {
        let line = std::mem::take(&mut self.line);
        let trimmed = line.trim_ascii();
        if trimmed.is_empty() {
            return;
        }
        if matches!(trimmed.first(), Some(b'{' | b'[')) {
            if is_response(trimmed) {
                *self.state.last_response.lock().expect("wire lock") = Some(trimmed.to_vec());
            }
            self.out.extend_from_slice(trimmed);
            self.out.push(b'\n');
        } else {
            self.state.junk_lines.fetch_add(1, Ordering::Relaxed);
            self.state.junk_since_reset.fetch_add(1, Ordering::Relaxed);
            let text =
                String::from_utf8_lossy(&trimmed[..trimmed.len().min(JUNK_EXCERPT)]).into_owned();
            *self.state.last_junk.lock().expect("wire lock") = Some(text);
        }
    }

    fn take(&mut self, chunk: &[u8]) {
        let mut rest = chunk;
        while !rest.is_empty() {
            let nl = rest.iter().position(|&b| b == b'\n');
            let (part, after) = match nl {
                Some(i) => (&rest[..i], Some(&rest[i + 1..])),
                None => (rest, None),
            };
            if let Some(n) = &mut self.discarding {
                *n += part.len() as u64;
            } else if self.line.len() + part.len() > self.max_line {
                self.discarding = Some((self.line.len() + part.len()) as u64);
                self.line = Vec::new();
            } else {
                self.line.extend_from_slice(part);
            }
            match after {
                Some(a) => {
                    if let Some(n) = self.discarding.take() {
                        *self.state.oversize.lock().expect("wire lock") = Some(n);
                        self.state.notify.notify_waiters();
                    } else {
                        self.finish_line();
                    }
                    rest = a;
                }
                None => rest = &[],
            }
        }
    }
}

/// A JSON-RPC response has an `id` and a `result` or `error` (checked on the bytes: the line is
/// parsed only if a judge asks for it).
fn is_response(line: &[u8]) -> bool {
    let has = |needle: &[u8]| line.windows(needle.len()).any(|w| w == needle);
    has(b"\"id\"") && (has(b"\"result\"") || has(b"\"error\"")) && !has(b"\"method\"")
}

impl<R: AsyncRead + Unpin> AsyncRead for WireReader<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = &mut *self;
        loop {
            if this.out_pos < this.out.len() {
                let n = (this.out.len() - this.out_pos).min(buf.remaining());
                buf.put_slice(&this.out[this.out_pos..this.out_pos + n]);
                this.out_pos += n;
                if this.out_pos == this.out.len() {
                    this.out.clear();
                    this.out_pos = 0;
                }
                return Poll::Ready(Ok(()));
            }
            if this.eof {
                return Poll::Ready(Ok(()));
            }
            let mut chunk = std::mem::take(&mut this.buf);
            let mut rb = ReadBuf::new(&mut chunk);
            let polled = Pin::new(&mut this.inner).poll_read(cx, &mut rb);
            let n = rb.filled().len();
            let result = match polled {
                Poll::Pending => Some(Poll::Pending),
                Poll::Ready(Err(e)) => Some(Poll::Ready(Err(e))),
                Poll::Ready(Ok(())) if n == 0 => {
                    this.eof = true;
                    if this.discarding.is_none() {
                        this.finish_line();
                    }
                    None
                }
                Poll::Ready(Ok(())) => {
                    this.take(&chunk[..n]);
                    None
                }
            };
            this.buf = chunk;
            if let Some(r) = result {
                return r;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use tokio::io::AsyncReadExt;

    async fn run(input: &[u8], max: usize) -> (String, Arc<WireState>) {
        let state = Arc::new(WireState::default());
        let mut r = WireReader::new(input, max, Arc::clone(&state));
        let mut out = String::new();
        r.read_to_string(&mut out).await.expect("reads");
        (out, state)
    }

    #[tokio::test]
    async fn junk_is_dropped_and_counted() {
        let (out, st) =
            run(b"DEBUG: hi\n{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n", 1000).await;
        assert_eq!(out, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n");
        assert_eq!(st.junk_lines.load(Ordering::Relaxed), 1);
        assert_eq!(st.last_junk.lock().expect("lock").as_deref(), Some("DEBUG: hi"));
        assert!(st.last_response.lock().expect("lock").is_some());
    }

    #[tokio::test]
    async fn oversize_lines_are_dropped_with_bounded_memory() {
        let mut input = vec![b'{'];
        input.extend(std::iter::repeat_n(b'x', 5000));
        input.extend_from_slice(b"\n{\"id\":2,\"result\":1}\n");
        let (out, st) = run(&input, 100).await;
        assert_eq!(out, "{\"id\":2,\"result\":1}\n");
        assert_eq!(*st.oversize.lock().expect("lock"), Some(5001));
    }
}
