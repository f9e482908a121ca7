//! `seams serve`.

use std::net::IpAddr;

use seams_core::Project;
use seams_runtime::Runtime;
use seams_serve::ServeOptions;

use crate::io::{EXIT_INTERNAL, EXIT_OK, Format, Io, ProjectArg, cache_dir, prepare};

/// Open the generation viewer: the project's outputs, traces, check state and write-back, in the browser.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(flatten)]
    project: ProjectArg,
    /// The port (0 picks a free one).
    #[arg(long, default_value_t = 7878)]
    port: u16,
    /// The address to listen on; loopback unless --allow-remote.
    #[arg(long, default_value = "127.0.0.1")]
    address: IpAddr,
    /// Serve on a non-loopback address (anyone who can reach it sees the project; writes still need the printed URL's token).
    #[arg(long)]
    allow_remote: bool,
}

pub(crate) fn run(io: &mut Io<'_>, args: Args) -> u8 {
    let options = ServeOptions {
        address: args.address,
        port: args.port,
        allow_remote: args.allow_remote,
        reach: args.project.reach(),
    };
    let root = args.project.project.clone();
    let bound = Project::load_reaching(&root, options.reach)
        .map_err(anyhow::Error::from)
        .and_then(|project| {
            Ok(Runtime::with_stack(
                cache_dir(),
                project.limits.stack_bytes,
            )?)
        })
        .and_then(|runtime| {
            Ok(seams_serve::bind(
                root.clone(),
                Box::new(|project: &mut Project| prepare(project, Box::new(seams_core::Silent))),
                runtime,
                &options,
            )?)
        });
    let server = match bound {
        Ok(server) => server,
        Err(e) => return io.fail(Format::Text, "serve", e),
    };
    // The one line a script waits for, flushed before serving.
    let _ = writeln!(io.out, "seams serve: open {}", server.url());
    let _ = io.out.flush();
    match server.run() {
        Ok(()) => EXIT_OK,
        Err(e) => {
            io.fail(Format::Text, "serve", e.into());
            EXIT_INTERNAL
        }
    }
}
