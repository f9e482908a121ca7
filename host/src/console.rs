//! How the CLI talks to the person at the terminal: `-q`/`-v`, `--color`
//! (and `NO_COLOR`), and the progress bar on stderr.

mod bar;

use std::io::Write;

use anstyle::{AnsiColor, Style};

use bar::TerminalProgress;
use seams_core::{Progress, Silent};

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

    /// `seams COMMAND: message` on stderr, the prefix in red when colored.
    pub fn error(&self, err: &mut dyn Write, command: &str, message: &str) {
        let prefix = if command.is_empty() {
            "seams:".to_owned()
        } else {
            format!("seams {command}:")
        };
        let prefix = paint(self.color_err, ERROR, &prefix);
        let _ = writeln!(err, "{prefix} {message}");
    }

    /// Where long work reports its progress: a bar on a terminal, nothing
    /// otherwise (and nothing with `-q`).
    pub fn progress(&self) -> Box<dyn Progress> {
        if self.progress {
            Box::new(TerminalProgress::default())
        } else {
            Box::new(Silent)
        }
    }
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
