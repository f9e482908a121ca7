//! How the CLI talks to the person at the terminal: `-q`/`-v`, `--color`
//! (and `NO_COLOR`), the progress bar on stderr, and text made safe to
//! print: whatever a generator produced (log lines, error messages, paths,
//! terms) may hold escape sequences that would drive the terminal (clear
//! it, set its title or clipboard, fake a `seams generate:` line) or text
//! direction overrides, and may be huge.

mod bar;

use std::borrow::Cow;
use std::io::Write;

use anstyle::{AnsiColor, Style};

use bar::TerminalProgress;
use seams_core::{Progress, Silent};
use seams_model::input_text::unsafe_char;
pub(crate) use seams_model::input_text::{escape_line as safe_line, escape_text as safe_text};
use seams_runtime::GeneratorError;

/// `--color`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub(crate) enum ColorChoice {
    /// Color on a terminal, unless `NO_COLOR` is set.
    #[default]
    Auto,
    /// Always color, even into a pipe or with `NO_COLOR`.
    Always,
    /// Never color.
    Never,
}

/// Whether the streams are terminals; [`crate::cli::run`] assumes they are not.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Terminal {
    /// Standard output is a terminal.
    pub stdout: bool,
    /// Standard error is a terminal.
    pub stderr: bool,
}

/// Whether to color a stream: `--color always|never` win, then `NO_COLOR`
/// (any non-empty value, per no-color.org), then whether it is a terminal.
pub(crate) fn use_color(choice: ColorChoice, is_terminal: bool, no_color: bool) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => is_terminal && !no_color,
    }
}

/// The settings every command shares.
pub(crate) struct Console {
    /// `-q`: only results and errors.
    pub quiet: bool,
    /// `-v` (counted): more detail.
    pub verbose: u8,
    /// Color stdout.
    pub color_out: bool,
    /// Color stderr.
    pub color_err: bool,
    /// Draw progress on stderr.
    pub progress: bool,
}

pub(crate) const ERROR: Style = Style::new()
    .bold()
    .fg_color(Some(anstyle::Color::Ansi(AnsiColor::Red)));
pub(crate) const GOOD: Style = Style::new().fg_color(Some(anstyle::Color::Ansi(AnsiColor::Green)));
pub(crate) const WARN: Style = Style::new().fg_color(Some(anstyle::Color::Ansi(AnsiColor::Yellow)));

impl Console {
    /// The console for these flags and streams.
    pub fn new(
        quiet: bool,
        verbose: u8,
        color: ColorChoice,
        terminal: Terminal,
        no_color: bool,
    ) -> Console {
        Console {
            quiet,
            verbose,
            color_out: use_color(color, terminal.stdout, no_color),
            color_err: use_color(color, terminal.stderr, no_color),
            progress: terminal.stderr && !quiet,
        }
    }

    /// `text` in `style` when stdout is colored.
    pub fn out_paint(&self, style: Style, text: &str) -> String {
        paint(self.color_out, style, text)
    }

    /// `seams COMMAND: message` on stderr, the prefix in red when colored;
    /// the message made safe ([`safe_text`]: its lines are seams's, what a
    /// generator said in it was made one line where it was received), at
    /// most [`MESSAGE_LIMIT`] characters.
    pub fn error(&self, err: &mut dyn Write, command: &str, message: &str) {
        let prefix = if command.is_empty() {
            "seams:".to_owned()
        } else {
            format!("seams {command}:")
        };
        let prefix = paint(self.color_err, ERROR, &prefix);
        let _ = writeln!(err, "{prefix} {}", safe_text(message, MESSAGE_LIMIT));
    }

    /// Generators' failures: the same failure of several (a model that
    /// breaks the vocabulary they all read, a value they all refuse) once,
    /// naming them all.
    pub fn failures(&self, err: &mut dyn Write, command: &str, failures: &[GeneratorError]) {
        for (generators, message) in grouped(failures) {
            let who = match generators.as_slice() {
                [one] => format!("generator {one}"),
                many => format!("generators {}", many.join(", ")),
            };
            self.error(err, command, &format!("{who}: {message}"));
        }
    }

    /// Where long work reports its progress: a bar on a terminal, nothing
    /// otherwise (and nothing with `-q`).
    pub fn progress(&self) -> Box<dyn Progress + Send> {
        if self.progress {
            Box::new(TerminalProgress::default())
        } else {
            Box::new(Silent)
        }
    }
}

/// Failures with the same message, in the order of their first: the
/// generators' names and the message.
fn grouped(failures: &[GeneratorError]) -> Vec<(Vec<&str>, String)> {
    let mut groups: Vec<(Vec<&str>, String)> = Vec::new();
    for failure in failures {
        let message = failure.kind.to_string();
        match groups.iter_mut().find(|(_, m)| *m == message) {
            Some((generators, _)) => generators.push(&failure.generator),
            None => groups.push((vec![&failure.generator], message)),
        }
    }
    groups
}

/// The most characters of one message printed; the rest is cut, and said.
/// Above what the runtime keeps of a generator's own message (2000), so
/// that its note of the full size survives.
pub(crate) const MESSAGE_LIMIT: usize = 4000;

/// The most characters of one generator log line printed.
pub(crate) const LOG_LINE_LIMIT: usize = 1000;

/// JSON text with the characters serde_json leaves raw but a terminal would
/// act on (C1 controls, bidi and invisible formatting characters) written
/// as `\uXXXX` escapes, which mean the same to every JSON reader (they can
/// only occur inside strings).
pub(crate) fn safe_json(json: &str) -> Cow<'_, str> {
    if !json.chars().any(|c| unsafe_char(c) && c != '\n') {
        return Cow::Borrowed(json);
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if unsafe_char(c) && c != '\n' {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

fn paint(on: bool, style: Style, text: &str) -> String {
    if on {
        format!("{style}{text}{style:#}")
    } else {
        text.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_failure_of_several_generators_is_grouped_in_order() {
        let failure = |generator: &str, message: &str| GeneratorError {
            generator: generator.to_owned(),
            kind: seams_runtime::GeneratorErrorKind::Clash {
                reason: message.to_owned(),
            },
        };
        let failures = [
            failure("htmx", "same"),
            failure("mine.wasm", "other"),
            failure("fastapi", "same"),
            failure("compose", "same"),
        ];
        assert_eq!(
            grouped(&failures),
            [
                (vec!["htmx", "fastapi", "compose"], "same".to_owned()),
                (vec!["mine.wasm"], "other".to_owned()),
            ]
        );
    }

    #[test]
    fn what_a_generator_printed_cannot_drive_the_terminal() {
        let cases: &[(&str, &str)] = &[
            ("plain text, ünïcode", "plain text, ünïcode"),
            // Clear the screen, then a fake line of ours.
            (
                "\u{1b}[2J\nseams generate: fine",
                "\\u{1b}[2J\\u{a}seams generate: fine",
            ),
            // OSC 52: write the clipboard; BEL ends it.
            ("\u{1b}]52;c;ZXZpbA==\u{7}", "\\u{1b}]52;c;ZXZpbA==\\u{7}"),
            // C1 CSI, carriage return, DEL.
            ("a\u{9b}31mb\rc\u{7f}", "a\\u{9b}31mb\\u{d}c\\u{7f}"),
            // Right-to-left override and isolates, zero-width space, BOM.
            (
                "x\u{202e}gpj.exe\u{2066}\u{200b}\u{feff}",
                "x\\u{202e}gpj.exe\\u{2066}\\u{200b}\\u{feff}",
            ),
        ];
        for (raw, shown) in cases {
            assert_eq!(safe_line(raw, 100), *shown, "{raw:?}");
        }
        assert_eq!(safe_text("one\ntwo\u{1b}[m\n", 100), "one\ntwo\\u{1b}[m\n");
        assert!(matches!(safe_line("fine", 100), Cow::Borrowed(_)));
    }

    #[test]
    fn a_huge_message_is_cut_and_its_size_said() {
        let huge = "x".repeat(64 << 20);
        let shown = safe_line(&huge, MESSAGE_LIMIT);
        assert_eq!(shown.chars().filter(|&c| c == 'x').count(), MESSAGE_LIMIT);
        assert!(
            shown.ends_with("... (67108864 bytes in all)"),
            "{}",
            &shown[shown.len() - 40..]
        );
        let exact = "y".repeat(MESSAGE_LIMIT);
        assert_eq!(
            safe_line(&exact, MESSAGE_LIMIT),
            exact,
            "at the limit, nothing is cut"
        );
    }

    #[test]
    fn json_keeps_its_meaning_without_raw_terminal_controls() {
        let value = serde_json::json!({ "log": "a\u{9b}b\u{202e}c\u{1b}d" });
        let text = serde_json::to_string_pretty(&value).unwrap();
        let safe = safe_json(&text);
        assert!(!safe.chars().any(|c| unsafe_char(c) && c != '\n'), "{safe}");
        let back: serde_json::Value = serde_json::from_str(&safe).unwrap();
        assert_eq!(back, value);
    }

    #[test]
    fn color_follows_the_flag_then_no_color_then_the_terminal() {
        use ColorChoice::*;
        // (choice, terminal, NO_COLOR, colored)
        let table = [
            (Auto, true, false, true),
            (Auto, true, true, false),
            (Auto, false, false, false),
            (Auto, false, true, false),
            (Always, false, true, true),
            (Always, true, false, true),
            (Never, true, false, false),
            (Never, false, false, false),
        ];
        for (choice, terminal, no_color, expected) in table {
            assert_eq!(
                use_color(choice, terminal, no_color),
                expected,
                "{choice:?}, terminal {terminal}, NO_COLOR {no_color}"
            );
        }
    }

    #[test]
    fn progress_is_drawn_only_on_a_terminal_and_not_when_quiet() {
        let console = |quiet, stderr| {
            Console::new(
                quiet,
                0,
                ColorChoice::Auto,
                Terminal {
                    stdout: false,
                    stderr,
                },
                false,
            )
        };
        assert!(console(false, true).progress);
        assert!(!console(true, true).progress);
        assert!(!console(false, false).progress);
    }
}
