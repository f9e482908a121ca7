//! `seams trust`.

use seams_core::{GenerateError, Project};

use crate::io::{EXIT_OK, FormatArg, Io, ProjectArg};

/// Trust this project's [propose] provider, base_url and key_env: the settings that run a command or send a key, which seams otherwise takes only from you. A changed setting is untrusted again.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Remove the trust instead.
    #[arg(long)]
    revoke: bool,
    #[command(flatten)]
    project: ProjectArg,
    #[command(flatten)]
    format: FormatArg,
}

pub(crate) fn run(io: &mut Io<'_>, args: Args) -> u8 {
    let format = args.format.format;
    let result = Project::load_reaching(&args.project.project, args.project.reach())
        .map_err(GenerateError::from)
        .map_err(anyhow::Error::from)
        .and_then(|project| Ok(seams_core::trust(&project, args.revoke)?));
    match result {
        Ok(report) => {
            let a = &report.authority;
            let shown = |v: &Option<String>| {
                v.as_deref()
                    .map_or("(not set)".into(), |v| format!("{v:?}"))
            };
            io.finish(
                format,
                || {
                    let verb = if args.revoke {
                        "no longer trusted"
                    } else {
                        "trusted"
                    };
                    format!(
                        "{verb}: [propose] provider = {}, base_url = {}, key_env = {}\n",
                        shown(&a.provider),
                        shown(&a.base_url),
                        shown(&a.key_env)
                    )
                },
                || {
                    serde_json::json!({
                        "trusted": !args.revoke,
                        "provider": a.provider,
                        "base_url": a.base_url,
                        "key_env": a.key_env,
                        "record": report.record.display().to_string(),
                    })
                },
                EXIT_OK,
            )
        }
        Err(e) => io.fail(format, "trust", e),
    }
}
