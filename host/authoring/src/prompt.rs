//! The drafting prompt (`prompts/draft-generator-v3.txt`): the reference,
//! the part of the model it prints as Turtle, the comments the model gives
//! for its terms, and the package module, each fenced as DATA. The same
//! inputs give the same bytes.
//!
//! The model part is bounded so that the whole prompt stays under
//! [`PROMPT_CAP`] bytes: the elements are added in order of nearness to
//! the reference (those it prints, their containers, the other elements of
//! their types, the elements they point at) until the next would pass the
//! cap; the prompt says how many were left out and names the first.

use std::collections::BTreeSet;

use crate::language::Language;
use seams_model::Model;

use crate::scaffold::{Reference, Sdk, scaffold};

/// The prompt, versioned by its file name: the part every language shares,
/// with `{{LANGUAGE}}`, `{{PACKAGE_FILE}}` and `{{EXTRACT_SECTION}}` for
/// [`prompt_template`] to fill.
pub const PROMPT: &str = include_str!("../../../prompts/draft-generator-v3.txt");
/// What the prompt asks of a Rust extract step.
const EXTRACT_RUST: &str = include_str!("../../../prompts/draft-extract-rust-v3.txt");
/// What the prompt asks of a Python extract step.
const EXTRACT_PYTHON: &str = include_str!("../../../prompts/draft-extract-python-v1.txt");
/// What the prompt asks of a JavaScript extract step.
const EXTRACT_JS: &str = include_str!("../../../prompts/draft-extract-js-v1.txt");
/// The rules the Python and JavaScript sections share (`{{RULES}}`).
const SCRIPT_RULES: &str = include_str!("../../../prompts/draft-extract-script-rules-v1.txt");
/// The prompt for another attempt after a rejection.
pub const REPAIR_PROMPT: &str = include_str!("../../../prompts/draft-generator-repair-v3.txt");

/// The most bytes a first prompt may have: what a provider's context
/// takes comfortably, and what `--print-prompt` pastes into a chat.
pub const PROMPT_CAP: usize = 64 * 1024;

/// The most elements considered for the model part, however large the
/// model: the cap cuts long before this.
const CANDIDATES: usize = 4096;

/// How many left-out elements the prompt names.
const NAMED_CUTS: usize = 10;

/// Fences `data` with more backticks than any run inside it, so that it
/// cannot close its block.
pub fn fence(data: &str) -> String {
    let longest = data.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let ticks = "`".repeat((longest + 1).max(3));
    let mut body = data.to_owned();
    if !body.ends_with('\n') {
        body.push('\n');
    }
    format!("{ticks}DATA\n{body}{ticks}")
}

/// The prompt is over [`PROMPT_CAP`] without any of the model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the prompt would take {size} bytes before any of the model, over its cap of {cap} bytes; draft from a shorter reference"
)]
pub struct TooLarge {
    /// Its size without the model.
    pub size: usize,
    /// [`PROMPT_CAP`].
    pub cap: usize,
}

/// The package's file that the extract step plugs into.
fn package_file(language: Language) -> &'static str {
    match language {
        Language::Rust => "src/lib.rs",
        Language::Python => "generator.py",
        Language::Js | Language::Ts => "generator.js",
    }
}

/// The prompt for `language`, before the data: [`PROMPT`] with the
/// language's extract section. For Rust it is the text of
/// `draft-generator-v3.txt` as it was before the other languages.
pub fn prompt_template(language: Language) -> String {
    let section = match language {
        Language::Rust => EXTRACT_RUST.to_owned(),
        Language::Python => EXTRACT_PYTHON.replace("{{RULES}}", SCRIPT_RULES),
        Language::Js | Language::Ts => EXTRACT_JS.replace("{{RULES}}", SCRIPT_RULES),
    };
    let name = match language {
        Language::Rust => "Rust",
        Language::Python => "Python",
        Language::Js | Language::Ts => "JavaScript",
    };
    PROMPT
        .replace("{{LANGUAGE}}", name)
        .replace("{{PACKAGE_FILE}}", package_file(language))
        .replace("{{EXTRACT_SECTION}}", &section)
}

/// The prompt's files for `language`, as a drafted package's README names
/// them.
pub(crate) fn prompt_files(language: Language) -> &'static str {
    match language {
        // The Rust section is the text v3 held before the other languages.
        Language::Rust => "`prompts/draft-generator-v3.txt`",
        Language::Python => {
            "`prompts/draft-generator-v3.txt` with\n`prompts/draft-extract-python-v1.txt`"
        }
        Language::Js | Language::Ts => {
            "`prompts/draft-generator-v3.txt` with\n`prompts/draft-extract-js-v1.txt`"
        }
    }
}

/// The prompt for `reference` and `model`, asking for an extract step in
/// `language`.
///
/// # Errors
///
/// [`TooLarge`] when the reference alone passes the cap.
pub fn build_prompt(
    name: &str,
    reference: &Reference,
    model: &Model,
    language: Language,
) -> Result<String, TooLarge> {
    let package = scaffold(name, reference, None, Sdk::Vendored, language);
    let module = package
        .files
        .iter()
        .find(|(p, _)| p == package_file(language))
        .map(|(_, t)| t.as_str())
        .unwrap_or_default();
    let template = prompt_template(language);
    let fill = |model_text: &str, cut: &str, comments: &str| {
        template
            .replace("{{REFERENCE_NAME}}", &reference.name)
            .replace("{{REFERENCE}}", &fence(&reference.text))
            .replace("{{MODEL}}", &fence(model_text))
            .replace("{{CUT}}", cut)
            .replace("{{COMMENTS}}", &fence(comments))
            .replace("{{PACKAGE_MODULE}}", &fence(module))
    };
    let fixed = fill("", "", "").len();
    if fixed > PROMPT_CAP {
        return Err(TooLarge {
            size: fixed,
            cap: PROMPT_CAP,
        });
    }
    let candidates = neighbourhood(model, &reference.text);
    // Each element's block costs about what it adds; the comments and the
    // cut note are kept within a tenth of the budget.
    let budget = (PROMPT_CAP - fixed) * 9 / 10;
    let mut shown = Vec::new();
    let mut cut = Vec::new();
    let mut used = prefix_lines(model).len();
    for subject in candidates {
        let block = model.turtle_of(std::slice::from_ref(&subject));
        let size = block
            .lines()
            .filter(|l| !l.starts_with("@prefix"))
            .map(|l| l.len() + 1)
            .sum::<usize>()
            + 1;
        if cut.is_empty() && used + size <= budget {
            used += size;
            shown.push(subject);
        } else {
            cut.push(subject);
        }
    }
    let mut comments: String = model
        .term_comments(&shown)
        .iter()
        .map(|(term, comment)| format!("{}: {}\n", model.compact(term), comment.replace('\n', " ")))
        .collect();
    if comments.is_empty() {
        comments = "(none)\n".to_owned();
    }
    comments.truncate(floor_char(&comments, (PROMPT_CAP - fixed) / 20));
    let note = if cut.is_empty() {
        String::new()
    } else {
        let named: Vec<String> = cut
            .iter()
            .take(NAMED_CUTS)
            .map(|s| model.compact(s))
            .collect();
        format!(
            " To keep this prompt under {PROMPT_CAP} bytes, {} further elements were left out ({}{}); query them as you query those shown.",
            cut.len(),
            named.join(", "),
            if cut.len() > NAMED_CUTS { ", ..." } else { "" }
        )
    };
    Ok(fill(&model.turtle_of(&shown), &note, &comments))
}

/// The largest char boundary of `text` at or below `at`.
fn floor_char(text: &str, at: usize) -> usize {
    (0..=at.min(text.len()))
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0)
}

/// The model's prefix declarations as Turtle.
fn prefix_lines(model: &Model) -> String {
    model
        .prefixes()
        .iter()
        .map(|(name, iri)| format!("@prefix {name}: <{iri}> .\n"))
        .collect()
}

/// The elements nearest the reference, nearest first: those whose labels
/// or telling values it prints, the elements containing them, the other
/// elements of their types, and the elements they point at.
fn neighbourhood(model: &Model, reference: &str) -> Vec<String> {
    let printed: BTreeSet<String> = model
        .literal_values()
        .into_iter()
        .filter(|(_, property, value)| {
            let label = property == "http://www.w3.org/2000/01/rdf-schema#label"
                && value.trim().chars().count() >= 2;
            (label || crate::probe::telling(value)) && reference.contains(value.as_str())
        })
        .map(|(element, _, _)| element)
        .filter(|e| model.is_element(e))
        .collect();
    let mut order: Vec<String> = Vec::new();
    let mut seen = BTreeSet::new();
    let mut push = |e: String, order: &mut Vec<String>| {
        if order.len() < CANDIDATES && seen.insert(e.clone()) {
            order.push(e);
        }
    };
    for e in &printed {
        push(e.clone(), &mut order);
    }
    for e in &printed {
        for (container, _) in model.containers(e) {
            push(container, &mut order);
        }
    }
    // Each sibling with the elements it belongs to: attributes shown
    // without their entity leave a draft guessing which entity they are
    // of.
    for e in &printed {
        for class in model.types_of(e) {
            for sibling in model.instances_of(&class) {
                let owners = model.containers(&sibling);
                push(sibling, &mut order);
                for (owner, _) in owners {
                    push(owner, &mut order);
                }
            }
        }
    }
    for e in &printed {
        for pointed in model.pointed_at(e) {
            push(pointed, &mut order);
        }
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_cannot_break_out_of_its_fence() {
        assert_eq!(fence("a"), "```DATA\na\n```");
        let tricky = "x ```` y\n```\n";
        let fenced = fence(tricky);
        assert!(fenced.starts_with("`````DATA\n"), "{fenced}");
        assert!(fenced.ends_with("\n`````"));
    }

    fn model_of(pages: usize) -> Model {
        let mut text = String::from(
            "@prefix ui: <https://w3id.org/seams/ui#> .\n@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n@prefix ex: <https://example.org/x#> .\nex:app a ui:Application ; rdfs:label \"Chat\" .\nui:path rdfs:comment \"A page's file name, without .html.\" .\n",
        );
        for i in 0..pages {
            text.push_str(&format!(
                "ex:app ui:page ex:p{i} .\nex:p{i} a ui:Page ; rdfs:label \"Page number {i}\" ; ui:path \"page{i}\" ; ui:order {i} .\n"
            ));
        }
        Model::parse("m.ttl", &text).unwrap()
    }

    fn reference(text: &str) -> Reference {
        Reference {
            name: "nav.html".into(),
            text: text.into(),
        }
    }

    #[test]
    fn the_model_part_holds_what_the_reference_prints_and_its_neighbourhood() {
        let model = model_of(3);
        let prompt = build_prompt(
            "nav",
            &reference("<h1>Chat</h1>\n<a href=\"page0.html\">Page number 0</a>\n"),
            &model,
            Language::Rust,
        )
        .unwrap();
        for part in [
            "@prefix ex: <https://example.org/x#>",
            "ex:app a ui:Application",
            "ex:p0 a ui:Page",
            // A sibling of the printed page, though the reference omits it.
            "ex:p2 a ui:Page",
            "ui:path: A page's file name, without .html.",
        ] {
            assert!(prompt.contains(part), "{part} missing from:\n{prompt}");
        }
        assert!(!prompt.contains("left out"), "nothing is cut");
        assert!(prompt.len() <= PROMPT_CAP);
    }

    #[test]
    fn attributes_come_with_the_entity_they_belong_to() {
        // The expense example: a reference printing the names of two
        // attributes of two entities; each entity must be shown, not only
        // the sibling attributes (ExpenseReport's four were orphaned).
        let model = Model::parse(
            "expense.ttl",
            include_str!("../../../examples/expense/model.ttl"),
        )
        .unwrap()
        .with_lists(seams_model::ui_shapes::list_properties().clone());
        let prompt = build_prompt(
            "columns",
            &reference("spent_on\namount\n"),
            &model,
            Language::Rust,
        )
        .unwrap();
        for entity in ["exp:LineItem a ui:Entity", "exp:ExpenseReport a ui:Entity"] {
            assert!(prompt.contains(entity), "{entity} missing from:\n{prompt}");
        }
        assert!(
            prompt.contains("a boolean prints `True`"),
            "how values print"
        );
    }

    #[test]
    fn each_language_is_asked_for_its_own_extract_step_with_its_package_module() {
        let model = model_of(2);
        let page = reference("<a href=\"page0.html\">Page number 0</a>\n");
        for (language, asks, module, not) in [
            (
                Language::Rust,
                "the Rust source of src/extract.rs",
                "register_generator!",
                "extract.py",
            ),
            (
                Language::Python,
                "the Python source of extract.py",
                "GeneratorApi = seams.export",
                "src/extract.rs",
            ),
            (
                Language::Js,
                "the JavaScript source of extract.js",
                "export default {",
                "src/extract.rs",
            ),
        ] {
            let prompt = build_prompt("nav", &page, &model, language).unwrap();
            for part in [
                asks,
                module,
                "Every model element the template prints",
                "2. template:",
            ] {
                assert!(prompt.contains(part), "{language}: {part} missing");
            }
            assert!(!prompt.contains(not), "{language}: {not}");
            assert!(
                !prompt.contains("{{"),
                "{language}: every placeholder is filled"
            );
        }
    }

    #[test]
    fn a_large_model_is_cut_to_the_cap_and_the_prompt_says_so() {
        let model = model_of(3000);
        let prompt = build_prompt(
            "nav",
            &reference("<a href=\"page7.html\">Page number 7</a>\n"),
            &model,
            Language::Rust,
        )
        .unwrap();
        assert!(prompt.len() <= PROMPT_CAP, "{} bytes", prompt.len());
        assert!(prompt.contains("ex:p7 a ui:Page"), "the printed page first");
        assert!(
            prompt.contains(&format!(" To keep this prompt under {PROMPT_CAP} bytes, ")),
            "the cut is said"
        );
        let huge = reference(&"<p>x</p>\n".repeat(PROMPT_CAP / 8));
        assert!(matches!(
            build_prompt("nav", &huge, &model, Language::Rust),
            Err(TooLarge { .. })
        ));
    }
}
