//! The JSONL transcript: `<home>/.wave/sessions/<session-id>.jsonl`, one [`Message`] per line.
//!
//! The in-memory history is the source of truth; the file follows it. Messages are appended as
//! they are added; compaction and rewind rewrite the whole file. Write failures are reported to
//! the caller, which logs them: a transcript that cannot be written never stops a turn, nor
//! MCP teardown (LIFE-8).
//!
//! A transcript holds the conversation, tool results included: the file is 0600 and its
//! directory 0700, and an existing file or directory with a looser mode is tightened when it
//! is written (TRUST-8).

use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::message::Message;

/// The transcript file of one session.
#[derive(Debug, Clone)]
pub(crate) struct Transcript {
    path: PathBuf,
}

impl Transcript {
    pub(crate) fn new(home: &Path, session_id: &str) -> Transcript {
        Transcript {
            path: home
                .join(".wave")
                .join("sessions")
                .join(format!("{session_id}.jsonl")),
        }
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The messages of an existing transcript (a resumed session); unreadable lines are
    /// skipped with a warning, a missing file is an empty history.
    pub(crate) fn load(&self) -> Vec<Message> {
        let Ok(text) = fs::read_to_string(&self.path) else {
            return Vec::new();
        };
        text.lines()
            .enumerate()
            .filter(|(_, line)| !line.trim().is_empty())
            .filter_map(|(number, line)| match serde_json::from_str(line) {
                Ok(message) => Some(message),
                Err(e) => {
                    tracing::warn!(
                        "skipping line {} of transcript {}: {e}",
                        number + 1,
                        self.path.display()
                    );
                    None
                }
            })
            .collect()
    }

    /// Appends messages at the end of the file.
    pub(crate) fn append(&self, messages: &[Message]) -> io::Result<()> {
        self.ensure_dir()?;
        let mut options = OpenOptions::new();
        options.create(true).append(true);
        let mut file = open_private(&self.path, &mut options)?;
        file.write_all(lines(messages)?.as_bytes())?;
        file.flush()
    }

    /// Replaces the file with exactly these messages (through a temporary file and a rename).
    pub(crate) fn rewrite(&self, messages: &[Message]) -> io::Result<()> {
        self.ensure_dir()?;
        let mut tmp = self.path.as_os_str().to_owned();
        tmp.push(".tmp");
        let tmp = PathBuf::from(tmp);
        let mut options = OpenOptions::new();
        options.create(true).write(true).truncate(true);
        open_private(&tmp, &mut options)?.write_all(lines(messages)?.as_bytes())?;
        fs::rename(&tmp, &self.path)
    }

    /// Creates the sessions directory (0700), or tightens an existing one to 0700.
    fn ensure_dir(&self) -> io::Result<()> {
        let Some(dir) = self.path.parent() else {
            return Ok(());
        };
        fs::create_dir_all(dir)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            if fs::metadata(dir)?.permissions().mode() & 0o777 != 0o700 {
                fs::set_permissions(dir, fs::Permissions::from_mode(0o700))?;
            }
        }
        Ok(())
    }
}

/// Opens `path` with `options`, created 0600, and an existing file with another mode set to
/// 0600 through the open handle.
fn open_private(path: &Path, options: &mut OpenOptions) -> io::Result<fs::File> {
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(options, 0o600);
    let file = options.open(path)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if file.metadata()?.permissions().mode() & 0o777 != 0o600 {
            file.set_permissions(fs::Permissions::from_mode(0o600))?;
        }
    }
    Ok(file)
}

fn lines(messages: &[Message]) -> io::Result<String> {
    let mut out = String::new();
    for message in messages {
        out.push_str(&serde_json::to_string(message)?);
        out.push('\n');
    }
    Ok(out)
}
