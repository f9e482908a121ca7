//! A template syntax and its delimiters: one table, read by the renderer's
//! configuration and by the tracing rewrite.

use minijinja::syntax::SyntaxConfig;

/// A template's delimiters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Syntax {
    /// `{{ }}`, `{% %}`, `{# #}`.
    #[default]
    Jinja,
    /// `[[ ]]`, `[% %]`, `[# #]`.
    Brackets,
}

/// The delimiters of a syntax.
pub(crate) struct Delimiters {
    pub(crate) var: (&'static str, &'static str),
    pub(crate) block: (&'static str, &'static str),
    pub(crate) comment: (&'static str, &'static str),
}

impl Delimiters {
    pub(crate) fn for_syntax(syntax: Syntax) -> Self {
        match syntax {
            Syntax::Jinja => Delimiters {
                var: ("{{", "}}"),
                block: ("{%", "%}"),
                comment: ("{#", "#}"),
            },
            Syntax::Brackets => Delimiters {
                var: ("[[", "]]"),
                block: ("[%", "%]"),
                comment: ("[#", "#]"),
            },
        }
    }

    /// minijinja's configuration: these delimiters, block lines trimmed
    /// (`trim_blocks`, `lstrip_blocks`) and the trailing newline kept.
    pub(crate) fn config(&self) -> SyntaxConfig {
        SyntaxConfig::builder()
            .block_delimiters(self.block.0, self.block.1)
            .variable_delimiters(self.var.0, self.var.1)
            .comment_delimiters(self.comment.0, self.comment.1)
            .trim_blocks(true)
            .lstrip_blocks(true)
            .keep_trailing_newline(true)
            .build()
            .expect("the table's delimiters are valid")
    }
}
