//! A stdio server's transport: the SDK's line transport over the child's pipes, with the
//! server's output watched on its way in.
//!
//! The SDK drops a message longer than its line limit (16 MiB) and keeps waiting for the
//! answer, so a call whose answer is too large would end as a timeout. The watch follows each
//! line as it passes (nothing is held back or copied) and notes the top-level `id` of a line
//! over the limit; once that line has ended, it hands the SDK one more line: a JSON-RPC error
//! answer to that id saying the message was too large. The call then ends at once, as
//! [`too_large_error`] says.

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use rmcp::RoleClient;
use rmcp::model::ErrorData;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::async_rw::{AsyncRwTransport, DEFAULT_MAX_LINE_LENGTH};
use serde_json::{Value, json};
use tokio::io::{AsyncRead, ReadBuf};
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};

/// The longest message the SDK reads from a stdio server (a line, its newline included).
pub const MAX_MESSAGE_BYTES: usize = DEFAULT_MAX_LINE_LENGTH;

/// The `data.reason` of the error answer made up for a message over the limit.
pub const TOO_LARGE: &str = "message_too_large";

/// How long a closed server may take to exit before it is killed.
const EXIT_GRACE: Duration = Duration::from_secs(3);

/// Longest top-level `id` value kept (an id is a number or a short string).
const MAX_ID_BYTES: usize = 256;

/// The error answer handed to the SDK for a message of `bytes` bytes over the limit.
pub fn too_large_error(bytes: usize) -> ErrorData {
    ErrorData::internal_error(
        format!(
            "the server's answer is too large: {bytes} bytes, over the {} MiB a message may have",
            MAX_MESSAGE_BYTES / (1024 * 1024)
        ),
        Some(json!({"reason": TOO_LARGE, "bytes": bytes, "limit": MAX_MESSAGE_BYTES})),
    )
}

/// Whether an error answer is one [`too_large_error`] made, and then its size in bytes.
pub fn too_large_bytes(error: &ErrorData) -> Option<u64> {
    let data = error.data.as_ref()?;
    (data.get("reason").and_then(Value::as_str) == Some(TOO_LARGE))
        .then(|| data.get("bytes").and_then(Value::as_u64).unwrap_or(0))
}

/// Follows JSON-RPC lines byte by byte: each line's length and its top-level `id`.
#[derive(Debug, Default)]
pub struct LineWatch {
    len: usize,
    depth: u32,
    in_string: bool,
    escaped: bool,
    /// At depth 1, the next string is a key.
    expect_key: bool,
    /// The key being read (or last read) at depth 1, cut to a few bytes.
    key: Vec<u8>,
    reading_key: bool,
    /// The raw value of the top-level `id` while it is read, and once read.
    id: Vec<u8>,
    reading_id: bool,
}

impl LineWatch {
    /// Follows `bytes`; returns the position just after the first line over the limit that
    /// ends in them, with the line to insert there (the rest is followed on the next call).
    pub fn follow(&mut self, bytes: &[u8]) -> Option<(usize, Vec<u8>)> {
        for (i, &b) in bytes.iter().enumerate() {
            if b == b'\n' {
                // the SDK counts the newline against its limit
                let total = self.len + 1;
                let id = std::mem::take(&mut self.id);
                *self = LineWatch::default();
                if total > MAX_MESSAGE_BYTES {
                    return Some((i + 1, Self::answer(&id, total)));
                }
                continue;
            }
            self.len += 1;
            self.step(b);
        }
        None
    }

    /// The error answer to the line's id; nothing when it had none (a notification).
    fn answer(id: &[u8], bytes: usize) -> Vec<u8> {
        let Ok(id) = serde_json::from_slice::<rmcp::model::RequestId>(id) else {
            tracing::warn!(
                bytes,
                "an MCP message over the size limit without an id was dropped"
            );
            return Vec::new();
        };
        let message: RxJsonRpcMessage<RoleClient> =
            rmcp::model::JsonRpcMessage::error(too_large_error(bytes), Some(id));
        let mut line = serde_json::to_vec(&message).unwrap_or_default();
        line.push(b'\n');
        line
    }

    fn step(&mut self, b: u8) {
        if self.reading_id && !(self.depth == 1 && !self.in_string && (b == b',' || b == b'}')) {
            if self.id.len() < MAX_ID_BYTES {
                self.id.push(b);
            } else {
                // not an id after all: too long to be one
                self.id.clear();
                self.reading_id = false;
            }
        }
        if self.in_string {
            if self.escaped {
                self.escaped = false;
            } else if b == b'\\' {
                self.escaped = true;
            } else if b == b'"' {
                self.in_string = false;
                self.reading_key = false;
            } else if self.reading_key && self.key.len() < 8 {
                self.key.push(b);
            }
            return;
        }
        match b {
            b'"' => {
                self.in_string = true;
                if self.depth == 1 && self.expect_key {
                    self.key.clear();
                    self.reading_key = true;
                    self.expect_key = false;
                }
            }
            b'{' | b'[' => {
                self.depth += 1;
                if self.depth == 1 {
                    self.expect_key = true;
                }
            }
            b'}' | b']' => {
                if self.depth == 1 {
                    self.reading_id = false;
                }
                self.depth = self.depth.saturating_sub(1);
            }
            b',' if self.depth == 1 => {
                self.reading_id = false;
                self.expect_key = true;
            }
            b':' if self.depth == 1 && self.key == b"id" => {
                self.id.clear();
                self.reading_id = true;
            }
            _ => {}
        }
    }
}

/// A child's stdout seen through a [`LineWatch`].
pub struct Watched<R> {
    inner: R,
    watch: LineWatch,
    /// A made-up line being handed over, and how much of it went.
    insert: Vec<u8>,
    sent: usize,
    /// Bytes read from `inner` but not yet handed over (those after an inserted line).
    held: Vec<u8>,
}

impl<R> Watched<R> {
    pub fn new(inner: R) -> Self {
        Watched {
            inner,
            watch: LineWatch::default(),
            insert: Vec::new(),
            sent: 0,
            held: Vec::new(),
        }
    }

    /// Hands over from what is waiting (an inserted line, then held bytes); whether it did.
    fn drain(&mut self, buf: &mut ReadBuf<'_>) -> bool {
        if self.sent < self.insert.len() {
            let n = buf.remaining().min(self.insert.len() - self.sent);
            buf.put_slice(&self.insert[self.sent..self.sent + n]);
            self.sent += n;
            return true;
        }
        if self.held.is_empty() {
            return false;
        }
        let held = std::mem::take(&mut self.held);
        self.pass(&held, buf);
        true
    }

    /// Hands over `bytes` up to the end of a line over the limit, then its error answer;
    /// what does not fit now is kept for the next read.
    fn pass(&mut self, bytes: &[u8], buf: &mut ReadBuf<'_>) {
        let room = buf.remaining();
        let (take, rest) = bytes.split_at(room.min(bytes.len()));
        match self.watch.follow(take) {
            Some((end, line)) => {
                buf.put_slice(&take[..end]);
                self.insert = line;
                self.sent = 0;
                let mut held = take[end..].to_vec();
                held.extend_from_slice(rest);
                self.held = held;
            }
            None => {
                buf.put_slice(take);
                self.held = rest.to_vec();
            }
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for Watched<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        if buf.remaining() == 0 || this.drain(buf) {
            return Poll::Ready(Ok(()));
        }
        let mut scratch = vec![0u8; buf.remaining().min(64 * 1024)];
        let mut read = ReadBuf::new(&mut scratch);
        match Pin::new(&mut this.inner).poll_read(cx, &mut read) {
            Poll::Ready(Ok(())) => {
                let filled = read.filled().to_vec();
                this.pass(&filled, buf);
                Poll::Ready(Ok(()))
            }
            other => other,
        }
    }
}

/// A started stdio server: its pipes as the SDK's transport, and the process, stopped when
/// the connection closes or is dropped.
pub struct ChildTransport {
    inner: AsyncRwTransport<RoleClient, Watched<ChildStdout>, ChildStdin>,
    child: Option<Child>,
}

impl ChildTransport {
    /// Starts `cmd` with piped stdin, stdout and stderr; the stderr is the caller's to read.
    pub fn spawn(mut cmd: Command) -> std::io::Result<(ChildTransport, Option<ChildStderr>)> {
        cmd.stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true);
        let mut child = cmd.spawn()?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(std::io::Error::other("the server's pipes were not set up"));
        };
        let stderr = child.stderr.take();
        Ok((
            ChildTransport {
                inner: AsyncRwTransport::new_client(Watched::new(stdout), stdin),
                child: Some(child),
            },
            stderr,
        ))
    }
}

impl Transport<RoleClient> for ChildTransport {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        self.inner.receive()
    }

    /// Closes its stdin (how MCP asks a stdio server to exit), waits a little, then kills it.
    async fn close(&mut self) -> Result<(), Self::Error> {
        let closed = self.inner.close().await;
        if let Some(mut child) = self.child.take() {
            match tokio::time::timeout(EXIT_GRACE, child.wait()).await {
                Ok(Ok(_)) => {}
                Ok(Err(e)) => tracing::debug!("waiting for the MCP server to exit: {e}"),
                Err(_) => {
                    if let Err(e) = child.kill().await {
                        tracing::warn!("stopping the MCP server: {e}");
                    }
                }
            }
        }
        closed
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn line(id: &str, len: usize) -> Vec<u8> {
        let head = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"text":""#);
        let tail = r#""}}"#;
        let mut l = head.into_bytes();
        l.resize(len - tail.len() - 1, b'x');
        l.extend_from_slice(tail.as_bytes());
        l.push(b'\n');
        assert_eq!(l.len(), len);
        l
    }

    fn answer_id(inserted: &[u8]) -> Value {
        let v: Value = serde_json::from_slice(inserted).unwrap();
        assert_eq!(v["error"]["data"]["reason"], TOO_LARGE, "{v}");
        v["id"].clone()
    }

    #[test]
    fn a_line_at_the_limit_passes_and_one_byte_more_is_answered() {
        let mut w = LineWatch::default();
        assert_eq!(w.follow(&line("7", MAX_MESSAGE_BYTES)), None);
        let over = line("8", MAX_MESSAGE_BYTES + 1);
        let (end, inserted) = w.follow(&over).unwrap();
        assert_eq!(end, over.len());
        assert_eq!(answer_id(&inserted), json!(8));
        let err: RxJsonRpcMessage<RoleClient> = serde_json::from_slice(&inserted).unwrap();
        let rmcp::model::JsonRpcMessage::Error(e) = err else {
            panic!("not an error")
        };
        assert_eq!(
            too_large_bytes(&e.error),
            Some(MAX_MESSAGE_BYTES as u64 + 1)
        );
    }

    #[test]
    fn the_top_level_id_is_found_wherever_it_is_and_nested_ids_are_not() {
        // an id after the result (as the TypeScript SDK writes it), a string id, and an
        // "id" inside the result that must not be taken for the message's
        let mut body = br#"{"result":{"id":99,"text":""#.to_vec();
        body.resize(MAX_MESSAGE_BYTES, b'y');
        body.extend_from_slice(br#""},"jsonrpc":"2.0","id":"req-3"}"#);
        body.push(b'\n');
        let mut w = LineWatch::default();
        // in small pieces, as a pipe delivers them
        let mut found = None;
        let mut at = 0;
        for chunk in body.chunks(65_536) {
            if let Some((end, l)) = w.follow(chunk) {
                found = Some((at + end, l));
            }
            at += chunk.len();
        }
        let (end, inserted) = found.unwrap();
        assert_eq!(end, body.len());
        assert_eq!(answer_id(&inserted), json!("req-3"));
        // an oversized notification (no id) is dropped without an answer
        let mut note = br#"{"jsonrpc":"2.0","method":"notifications/message","params":""#.to_vec();
        note.resize(MAX_MESSAGE_BYTES + 10, b'z');
        note.extend_from_slice(b"\"}\n");
        let (_, inserted) = LineWatch::default().follow(&note).unwrap();
        assert!(inserted.is_empty());
    }

    #[tokio::test]
    async fn the_answer_follows_the_line_and_the_next_message_is_untouched() {
        use tokio::io::AsyncReadExt;
        let mut input = line("1", MAX_MESSAGE_BYTES + 100);
        input.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n");
        let mut r = Watched::new(&input[..]);
        let mut out = Vec::new();
        r.read_to_end(&mut out).await.unwrap();
        let lines: Vec<&[u8]> = out.split(|b| *b == b'\n').collect();
        assert_eq!(lines[0].len(), MAX_MESSAGE_BYTES + 99);
        assert_eq!(answer_id(lines[1]), json!(1));
        assert_eq!(lines[2], b"{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}");
        assert_eq!(lines.len(), 4);
    }
}
