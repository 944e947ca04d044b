//! The sidecar's stdout, the protocol channel to the client, written without a thread hop.
//!
//! `tokio::io::stdout` writes on the blocking pool: each message waits for a pool thread to wake
//! up, write, and wake the writer again. When stdout is a pipe (JetBrains, most hosts) or a Unix
//! socket (VS Code: Node gives a child socketpairs), it is written here as a non-blocking file
//! descriptor registered with the runtime instead, like any socket: a message leaves with one
//! `write(2)` from the task that sends it (bench row 9a). Anything else (a terminal, a file) keeps
//! tokio's stdout. The descriptor is a duplicate of fd 1; making it non-blocking affects only
//! this process's end of the channel, which nothing else here writes (logs go to stderr).

use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::AsyncWrite;

/// Where the LSP server writes its messages.
pub enum Stdout {
    #[cfg(unix)]
    Pipe(tokio::net::unix::pipe::Sender),
    #[cfg(unix)]
    Socket(tokio::net::UnixStream),
    Blocking(tokio::io::Stdout),
}

impl Stdout {
    /// fd 1 as a non-blocking pipe or socket when it is one, else tokio's stdout.
    pub fn open() -> Stdout {
        #[cfg(unix)]
        if let Some(stdout) = non_blocking() {
            return stdout;
        }
        Stdout::Blocking(tokio::io::stdout())
    }
}

#[cfg(unix)]
fn non_blocking() -> Option<Stdout> {
    use std::os::fd::AsFd;
    use std::os::unix::fs::FileTypeExt;

    let fd = std::io::stdout().as_fd().try_clone_to_owned().ok()?;
    let file = std::fs::File::from(fd);
    let kind = file.metadata().ok()?.file_type();
    if kind.is_fifo() {
        return match tokio::net::unix::pipe::Sender::from_file(file) {
            Ok(pipe) => Some(Stdout::Pipe(pipe)),
            Err(e) => {
                tracing::debug!("stdout stays blocking: {e}");
                None
            }
        };
    }
    if kind.is_socket() {
        let socket = std::os::unix::net::UnixStream::from(std::os::fd::OwnedFd::from(file));
        let socket = socket
            .set_nonblocking(true)
            .and_then(|()| tokio::net::UnixStream::from_std(socket));
        return match socket {
            Ok(socket) => Some(Stdout::Socket(socket)),
            Err(e) => {
                tracing::debug!("stdout stays blocking: {e}");
                None
            }
        };
    }
    None
}

impl Stdout {
    fn writer(self: Pin<&mut Self>) -> Pin<&mut (dyn AsyncWrite + Send + Unpin)> {
        match self.get_mut() {
            #[cfg(unix)]
            Stdout::Pipe(pipe) => Pin::new(pipe as &mut (dyn AsyncWrite + Send + Unpin)),
            #[cfg(unix)]
            Stdout::Socket(socket) => Pin::new(socket as &mut (dyn AsyncWrite + Send + Unpin)),
            Stdout::Blocking(stdout) => Pin::new(stdout as &mut (dyn AsyncWrite + Send + Unpin)),
        }
    }
}

impl AsyncWrite for Stdout {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        self.writer().poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        self.writer().poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        self.writer().poll_shutdown(cx)
    }
}
