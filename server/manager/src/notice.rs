//! Seeing `notifications/tools/list_changed` on a stdio server's stdout as its bytes are read
//! (BUD-6). rmcp hands a notification to our handler on a task of its own, so a tool result that
//! follows the notification in the stream may reach the agent first; reading the notice in the
//! byte stream itself starts the refresh before rmcp even parses the result, and the agent's next
//! model request waits for it. The same stream gives the server's `notifications/message` in
//! the order it wrote them (rmcp's handler tasks may run them in any order): a line that names
//! the method is parsed and handed to the server's log (SRV-2). What rmcp's types drop of a
//! 2025-11-25 server's tasks (its `tasks` capability, its tools' `execution.taskSupport`) is read
//! from the same lines (SRV-5).

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, ReadBuf};

use crate::logs::LogSink;

/// The method name as a JSON string token, quotes included: inside another string (a tool's
/// description that mentions the notification) its quotes are escaped, so it never matches.
const NEEDLE: &[u8] = b"\"notifications/tools/list_changed\"";

/// The log method's name as a JSON string token (SRV-2).
const LOG_NEEDLE: &[u8] = b"\"notifications/message\"";

/// Longest line kept to be parsed as a log message; a longer line (a big tool result) is not.
const LOG_LINE: usize = 64 * 1024;

/// Longest line kept to be read for tasks (an `initialize` result or a page of tools).
const TASKS_LINE: usize = 16 * 1024 * 1024;

/// An `AsyncRead` that calls `on_notice` each time the bytes read so far complete the method
/// name of `tools/list_changed` as a JSON string (matched across reads), and hands each line
/// that is a `notifications/message` to `log`, in stream order.
pub(crate) struct NoticeReader<R> {
    inner: R,
    on_notice: Arc<dyn Fn() + Send + Sync>,
    /// How many bytes of [`NEEDLE`] the stream currently ends with (KMP state).
    matched: usize,
    log: Option<LogSink>,
    legacy_tasks: Option<crate::tasks::Legacy>,
    /// The current line, while it is short enough to be read.
    line: Vec<u8>,
    line_too_long: bool,
}

impl<R> NoticeReader<R> {
    pub(crate) fn new(
        inner: R,
        on_notice: Arc<dyn Fn() + Send + Sync>,
        log: Option<LogSink>,
    ) -> NoticeReader<R> {
        NoticeReader {
            inner,
            on_notice,
            matched: 0,
            log,
            legacy_tasks: None,
            line: Vec::new(),
            line_too_long: false,
        }
    }

    /// Also hands the lines that may say how the server runs tasks to `legacy` (SRV-5).
    pub(crate) fn with_legacy_tasks(mut self, legacy: crate::tasks::Legacy) -> NoticeReader<R> {
        self.legacy_tasks = Some(legacy);
        self
    }

    /// Keeps the current line (up to [`LOG_LINE`], or [`TASKS_LINE`] when tasks are read) and,
    /// at its end, logs it if it is a `notifications/message` and reads it for tasks.
    fn collect_lines(&mut self, mut bytes: &[u8]) {
        if self
            .legacy_tasks
            .as_ref()
            .is_some_and(|legacy| !legacy.is_reading())
        {
            // The server runs no 2025-11-25 tasks: its lines are read for logs only.
            self.legacy_tasks = None;
        }
        if self.log.is_none() && self.legacy_tasks.is_none() {
            return;
        }
        let limit = if self.legacy_tasks.is_some() {
            TASKS_LINE
        } else {
            LOG_LINE
        };
        while let Some(end) = bytes.iter().position(|&b| b == b'\n') {
            if !self.line_too_long && self.line.len() + end <= limit {
                self.line.extend_from_slice(&bytes[..end]);
                if let Some(log) = &self.log
                    && self.line.len() <= LOG_LINE
                    && contains(&self.line, LOG_NEEDLE)
                {
                    log.message_line(&self.line);
                }
                if let Some(legacy) = &self.legacy_tasks
                    && crate::tasks::Legacy::NEEDLES
                        .iter()
                        .any(|needle| contains(&self.line, needle))
                {
                    legacy.read_line(&self.line);
                }
            }
            self.line.clear();
            self.line_too_long = false;
            bytes = &bytes[end + 1..];
        }
        if self.line_too_long || self.line.len() + bytes.len() > limit {
            self.line.clear();
            self.line_too_long = true;
        } else {
            self.line.extend_from_slice(bytes);
        }
    }

    fn scan(&mut self, bytes: &[u8]) {
        self.collect_lines(bytes);
        for &byte in bytes {
            while self.matched > 0 && NEEDLE[self.matched] != byte {
                self.matched = fallback(self.matched);
            }
            if NEEDLE[self.matched] == byte {
                self.matched += 1;
            }
            if self.matched == NEEDLE.len() {
                (self.on_notice)();
                self.matched = fallback(self.matched);
            }
        }
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// The KMP failure function of [`NEEDLE`]: the longest proper prefix that is also a suffix of
/// its first `matched` bytes.
fn fallback(matched: usize) -> usize {
    let part = &NEEDLE[..matched];
    (1..matched)
        .rev()
        .find(|&len| part[..len] == part[matched - len..])
        .unwrap_or(0)
}

impl<R: AsyncRead + Unpin> AsyncRead for NoticeReader<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = &mut *self;
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = polled {
            this.scan(&buf.filled()[before..]);
        }
        polled
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use tokio::io::AsyncReadExt;

    use super::*;

    // BUD-6: the notice is seen across read boundaries, once per occurrence.
    #[tokio::test]
    async fn bud_6_notices_are_seen_across_reads() {
        let seen = Arc::new(AtomicUsize::new(0));
        let count = seen.clone();
        let text = b"{\"method\":\"notifications/tools/list_changed\"}\n{\"description\":\"then send \\\"notifications/tools/list_changed\\\" or notifications/tools/list_changed\"}\n{\"method\": \"\"notifications/tools/list_changed\"}";
        let (mut writer, reader) = tokio::io::duplex(4);
        let mut reader = NoticeReader::new(
            reader,
            Arc::new(move || {
                count.fetch_add(1, Ordering::SeqCst);
            }),
            None,
        );
        let write = tokio::spawn(async move {
            use tokio::io::AsyncWriteExt;
            writer.write_all(text).await.unwrap();
        });
        let mut out = Vec::new();
        reader.read_to_end(&mut out).await.unwrap();
        write.await.unwrap();
        assert_eq!(out, text);
        assert_eq!(seen.load(Ordering::SeqCst), 2);
    }

    // SRV-2: log messages come out in stream order, split across reads; a description that
    // mentions the method, and a line too long to be a log message, are not logged.
    #[tokio::test]
    async fn srv_2_log_messages_are_read_in_order() {
        let logs = crate::logs::Logs::default();
        let long = format!(
            "{{\"method\":\"notifications/message\",\"params\":{{\"level\":\"info\",\"data\":\"{}\"}}}}\n",
            "x".repeat(LOG_LINE)
        );
        let mut text = String::new();
        for (level, data) in [("debug", "one"), ("error", "two"), ("warning", "three")] {
            text.push_str(&format!(
                "{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{{\"level\":\"{level}\",\"logger\":\"l\",\"data\":\"{data}\"}}}}\n"
            ));
        }
        text.push_str("{\"result\":{\"description\":\"sends \\\"notifications/message\\\"\"}}\n");
        text.push_str(&long);
        text.push_str("{\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":{\"n\":4}}}\n");
        let (mut writer, reader) = tokio::io::duplex(7);
        let mut reader = NoticeReader::new(reader, Arc::new(|| {}), Some(logs.sink("s")));
        let bytes = text.clone().into_bytes();
        let write = tokio::spawn(async move {
            use tokio::io::AsyncWriteExt;
            writer.write_all(&bytes).await.unwrap();
        });
        let mut out = Vec::new();
        reader.read_to_end(&mut out).await.unwrap();
        write.await.unwrap();
        assert_eq!(out, text.as_bytes());
        let logged: Vec<(String, String)> = logs
            .read("s")
            .entries
            .into_iter()
            .map(|e| (e.level.unwrap_or_default(), e.text))
            .collect();
        let expected = [
            ("debug", "one"),
            ("error", "two"),
            ("warning", "three"),
            ("info", "{\"n\":4}"),
        ];
        assert_eq!(
            logged,
            expected.map(|(l, t)| (l.to_string(), t.to_string()))
        );
    }
}
