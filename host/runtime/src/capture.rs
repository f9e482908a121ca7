//! Captures a generator's stdout, stderr and log messages into one bounded
//! buffer of lines; past the limit, text is cut and one marker line says so.

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use wasmtime_wasi::cli::{IsTerminal, StdoutStream};

/// The most characters of one log line kept; the rest is cut, and said.
const LINE_LIMIT: usize = 1000;

/// The bounded log of one run.
pub(crate) struct Capture {
    limit: usize,
    used: usize,
    lines: Vec<String>,
    partial: Vec<(&'static str, Vec<u8>)>,
    truncated: bool,
}

impl Capture {
    pub(crate) fn new(limit: usize) -> Self {
        Capture {
            limit,
            used: 0,
            lines: Vec::new(),
            partial: Vec::new(),
            truncated: false,
        }
    }

    /// Adds a line, unless the limit is reached.
    pub(crate) fn push_line(&mut self, line: &str) {
        if self.truncated {
            return;
        }
        // A generator's text: escaped so it cannot drive a terminal, and a
        // line at most LINE_LIMIT characters.
        let line = &*seams_model::input_text::escape_line(line, LINE_LIMIT);
        if self.used + line.len() > self.limit {
            self.truncated = true;
            self.lines.push(format!(
                "(log cut at {} KiB; raise [sandbox] max-log-kib to see more)",
                self.limit >> 10
            ));
            return;
        }
        self.used += line.len();
        self.lines.push(line.to_owned());
    }

    fn write(&mut self, stream: &'static str, data: &[u8]) {
        let at = match self.partial.iter().position(|(s, _)| *s == stream) {
            Some(at) => at,
            None => {
                self.partial.push((stream, Vec::new()));
                self.partial.len() - 1
            }
        };
        let mut buf = std::mem::take(&mut self.partial[at].1);
        for &byte in data {
            if byte == b'\n' {
                self.push_line(&format!("{stream}: {}", String::from_utf8_lossy(&buf)));
                buf.clear();
            } else if buf.len() < self.limit {
                buf.push(byte);
            }
        }
        self.partial[at].1 = buf;
    }

    /// Every line so far, with unfinished ones completed.
    pub(crate) fn take_lines(&mut self) -> Vec<String> {
        for (stream, buf) in std::mem::take(&mut self.partial) {
            if !buf.is_empty() {
                self.push_line(&format!("{stream}: {}", String::from_utf8_lossy(&buf)));
            }
        }
        std::mem::take(&mut self.lines)
    }
}

/// The guest's stdout or stderr, writing into a [`Capture`].
#[derive(Clone)]
pub(crate) struct Stream {
    capture: Arc<Mutex<Capture>>,
    name: &'static str,
}

impl Stream {
    pub(crate) fn new(capture: Arc<Mutex<Capture>>, name: &'static str) -> Self {
        Stream { capture, name }
    }
}

impl IsTerminal for Stream {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for Stream {
    fn async_stream(&self) -> Box<dyn tokio::io::AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }
}

impl tokio::io::AsyncWrite for Stream {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        self.capture
            .lock()
            .expect("log lock")
            .write(self.name, data);
        // Everything is accepted: what passes the limit is dropped, so a
        // chatty generator is cut short, not failed.
        Poll::Ready(Ok(data.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_is_split_into_lines_and_cut_at_the_limit() {
        let mut c = Capture::new(40);
        c.write("stdout", b"hello\nwor");
        c.write("stderr", b"oops\n");
        c.write("stdout", b"ld\n");
        c.push_line("a line that is far too long to fit in what is left");
        c.push_line("dropped");
        assert_eq!(
            c.take_lines(),
            [
                "stdout: hello",
                "stderr: oops",
                "stdout: world",
                "(log cut at 0 KiB; raise [sandbox] max-log-kib to see more)"
            ]
        );
    }
}
