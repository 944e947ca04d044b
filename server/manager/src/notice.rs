//! Seeing `notifications/tools/list_changed` on a stdio server's stdout as its bytes are read
//! (BUD-6). rmcp hands a notification to our handler on a task of its own, so a tool result that
//! follows the notification in the stream may reach the agent first; reading the notice in the
//! byte stream itself starts the refresh before rmcp even parses the result, and the agent's next
//! model request waits for it.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, ReadBuf};

/// The method name as a JSON string token, quotes included: inside another string (a tool's
/// description that mentions the notification) its quotes are escaped, so it never matches.
const NEEDLE: &[u8] = b"\"notifications/tools/list_changed\"";

/// An `AsyncRead` that calls `on_notice` each time the bytes read so far complete the method
/// name of `tools/list_changed` as a JSON string (matched across reads).
pub(crate) struct NoticeReader<R> {
    inner: R,
    on_notice: Arc<dyn Fn() + Send + Sync>,
    /// How many bytes of [`NEEDLE`] the stream currently ends with (KMP state).
    matched: usize,
}

impl<R> NoticeReader<R> {
    pub(crate) fn new(inner: R, on_notice: Arc<dyn Fn() + Send + Sync>) -> NoticeReader<R> {
        NoticeReader {
            inner,
            on_notice,
            matched: 0,
        }
    }

    fn scan(&mut self, bytes: &[u8]) {
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
}
