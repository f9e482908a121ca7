//! `seams write-back`.

use seams_core::{BlockChange, Consent, Planned, plan_target};

use crate::io::{EXIT_OK, FormatArg, Io, ProjectArg, in_project};

/// Write a hand edit of an output line back into the model: the one literal change that gives the edit back.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The edited output (relative to the project or its output directory), optionally with :LINE.
    #[arg(value_name = "OUTPUT[:LINE]")]
    target: String,
    #[command(flatten)]
    project: ProjectArg,
    /// Write the patch into the model file, then generate, so that the output is recorded as generated again.
    #[arg(long)]
    apply: bool,
    /// With --apply: apply even though the patch changes other lines too (listed first).
    #[arg(long, requires = "apply")]
    accept_effects: bool,
    /// With --apply: apply even though the change creates or removes a whole page, entity or form (said first).
    #[arg(long, requires = "apply")]
    accept_structure: bool,
    /// Propose the model change of this number among those that give the edit back (listed with the plan, or in the refusal), not the first.
    #[arg(long, value_name = "N")]
    choose: Option<usize>,
    #[command(flatten)]
    format: FormatArg,
}

pub(crate) fn run(io: &mut Io<'_>, args: Args) -> u8 {
    let format = args.format.format;
    let mut shown = String::new();
    let result = in_project(
        &args.project.project,
        args.project.reach(),
        io.console,
        |project, runtime| {
            // A line's edit, or a block added or removed.
            let plan = plan_target(project, runtime, &args.target, args.choose)?;
            shown = plan.to_text(&project.root);
            let mut written = Vec::new();
            if args.apply {
                written = plan
                    .apply_and_generate(
                        project,
                        runtime,
                        Consent {
                            effects: args.accept_effects,
                            structure: args.accept_structure,
                        },
                    )?
                    .written;
            }
            Ok((plan, written))
        },
    );
    match result {
        Ok((plan, written)) => {
            let model_file = plan.model_file().display().to_string();
            io.finish(
                format,
                || {
                    let mut text = shown.clone();
                    if args.apply {
                        text.push_str(&format!("wrote {model_file}\n"));
                        for w in &written {
                            text.push_str(&format!("wrote {w}\n"));
                        }
                    } else {
                        text.push_str(if plan.sweeping().is_some() {
                            "nothing written: pass --apply --accept-structure to write the patch\n"
                        } else {
                            "nothing written: pass --apply to write the patch\n"
                        });
                    }
                    text
                },
                || {
                    let mut json = json(&plan);
                    json["model_file"] = model_file.clone().into();
                    json["applied"] = args.apply.into();
                    json["written"] = written.clone().into();
                    json
                },
                EXIT_OK,
            )
        }
        Err(e) => {
            // A plan refused for its effects is shown before the refusal.
            if !shown.is_empty() {
                let _ = io.out.write_all(shown.as_bytes());
            }
            io.fail(format, "write-back", e)
        }
    }
}

/// The JSON form of `plan`, without what applying it wrote.
fn json(plan: &Planned) -> serde_json::Value {
    match plan {
        Planned::Line(plan) => serde_json::json!({
            "output": plan.output,
            "line": plan.line,
            "element": plan.patch.element,
            "property": plan.patch.property,
            "old": plan.patch.old,
            "new": plan.patch.new,
            "diff": plan.diff.iter().map(|(l, o, n)| serde_json::json!({"line": l, "old": o, "new": n})).collect::<Vec<_>>(),
            "effects": plan.effects,
        }),
        Planned::Block(plan) => {
            let change = change_json(&plan.change);
            let mut json = serde_json::json!({
                "output": plan.output,
                "lines": {"first": plan.lines.0, "count": plan.lines.1},
                "diff": plan.diff,
                "effects": plan.effects,
                "chosen": plan.chosen,
                "alternatives": plan.alternatives.iter().map(change_json).collect::<Vec<_>>(),
            });
            if let (Some(json), serde_json::Value::Object(change)) = (json.as_object_mut(), change)
            {
                json.extend(change);
            }
            json
        }
    }
}

/// The JSON form of a block's change: its kind under `change`, and what it
/// is about.
fn change_json(change: &BlockChange) -> serde_json::Value {
    match change {
        BlockChange::Added {
            sibling,
            element,
            label,
            ..
        } => serde_json::json!({
            "change": "added", "element": element, "sibling": sibling, "label": label,
        }),
        BlockChange::Removed { element } => {
            serde_json::json!({"change": "removed", "element": element})
        }
        BlockChange::Revalued { values } => serde_json::json!({
            "change": "revalued",
            "values": values.iter().map(|(element, property, old, new)| serde_json::json!({
                "element": element, "property": property, "old": old, "new": new,
            })).collect::<Vec<_>>(),
        }),
        BlockChange::Reordered { orders } => serde_json::json!({
            "change": "reordered",
            "orders": orders.iter().map(|(element, old, new)| serde_json::json!({
                "element": element, "old": old, "new": new,
            })).collect::<Vec<_>>(),
        }),
    }
}
