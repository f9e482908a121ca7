//! `seams serve`: the generation viewer. A local web application over a
//! project as it is on disk: its generators and outputs with `seams
//! check`'s state of each, an output's lines beside the template lines and
//! model elements behind the selected one, a generator's view model, and
//! write-back of an edited line into the model (ADR-0019's T3 and T4).
//!
//! It is safe to leave running: bound to loopback unless told otherwise,
//! it answers only to the host names it serves (no DNS rebinding), writes
//! only on a POST from its own pages carrying the run's token, escapes
//! every text it shows, and sends a Content-Security-Policy that allows no
//! inline script.
//!
//! ```no_run
//! let runtime = seams_runtime::Runtime::new(None)?;
//! let server = seams_serve::bind(
//!     "examples/chat".into(),
//!     Box::new(|_project| {}),
//!     runtime,
//!     &seams_serve::ServeOptions::default(),
//! )?;
//! println!("{}", server.url());
//! server.run()?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![deny(missing_docs)]

mod guard;
mod pages;
mod routes;
mod token;

use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener};
use std::path::PathBuf;
use std::sync::Arc;

use seams_core::{Project, Reach};
use seams_runtime::Runtime;

/// Where to listen.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// The address; loopback unless `allow_remote`.
    pub address: IpAddr,
    /// The port; 0 picks a free one.
    pub port: u16,
    /// Serve on a non-loopback address.
    pub allow_remote: bool,
    /// Whether the project's paths may lead outside it
    /// ([`seams_core::Reach`]).
    pub reach: Reach,
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions {
            address: IpAddr::V4(Ipv4Addr::LOCALHOST),
            port: 0,
            allow_remote: false,
            reach: Reach::Inside,
        }
    }
}

/// Why the viewer cannot start.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// A non-loopback address without `allow_remote`.
    #[error(
        "{0} is not a loopback address: the viewer shows and edits the project, so it serves only this machine; pass --allow-remote to serve {0} anyway"
    )]
    NotLoopback(IpAddr),
    /// The unspecified address, which answers on every interface under
    /// names the viewer cannot know.
    #[error(
        "{0} listens on every interface under names seams cannot check; name one address (e.g. --address 192.0.2.10 --allow-remote)"
    )]
    Unspecified(IpAddr),
    /// The project cannot be read.
    #[error(transparent)]
    Project(#[from] seams_core::ProjectError),
    /// The address cannot be bound, or serving failed.
    #[error("cannot serve on {address}: {source}")]
    Io {
        /// Address and port.
        address: SocketAddr,
        /// The cause.
        source: std::io::Error,
    },
    /// No randomness for the token.
    #[error("no randomness for the viewer's token: {0}")]
    Random(getrandom::Error),
}

/// A viewer bound to its port, ready to [`run`](Server::run).
pub struct Server {
    listener: TcpListener,
    address: SocketAddr,
    url: String,
    shared: Arc<routes::Shared>,
}

/// Binds the viewer of the project in `root`. `prepare` is applied to the
/// project each time a request loads it (the command line sets the
/// registry and build directory there).
///
/// # Errors
///
/// [`ServeError`]: a refused address, an unreadable project, a port that
/// cannot be bound.
pub fn bind(
    root: PathBuf,
    prepare: Box<dyn Fn(&mut Project) + Send + Sync>,
    runtime: Runtime,
    options: &ServeOptions,
) -> Result<Server, ServeError> {
    if options.address.is_unspecified() {
        return Err(ServeError::Unspecified(options.address));
    }
    if !options.address.is_loopback() && !options.allow_remote {
        return Err(ServeError::NotLoopback(options.address));
    }
    // Refuse a project that does not load now rather than on every page.
    Project::load_reaching(&root, options.reach)?;
    let requested = SocketAddr::new(options.address, options.port);
    let io = |source| ServeError::Io {
        address: requested,
        source,
    };
    let listener = TcpListener::bind(requested).map_err(io)?;
    let address = listener.local_addr().map_err(io)?;
    let token = token::Token::random().map_err(ServeError::Random)?;
    let port = address.port();
    let shown = match address.ip() {
        IpAddr::V6(ip) => format!("[{ip}]:{port}"),
        IpAddr::V4(ip) => format!("{ip}:{port}"),
    };
    let mut served = vec![shown.clone()];
    if address.ip().is_loopback() {
        served.push(format!("localhost:{port}"));
    }
    let url = format!("http://{shown}/?token={}", token.as_str());
    Ok(Server {
        listener,
        address,
        url,
        shared: Arc::new(routes::Shared {
            root,
            reach: options.reach,
            prepare,
            runtime: Arc::new(runtime),
            token,
            served,
        }),
    })
}

impl Server {
    /// The URL to open: the viewer's address with the run's token, which
    /// enables write-back in the browser that opens it.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Serves until the process ends.
    ///
    /// # Errors
    ///
    /// The listener fails.
    pub fn run(self) -> Result<(), ServeError> {
        let io = |source| ServeError::Io {
            address: self.address,
            source,
        };
        self.listener.set_nonblocking(true).map_err(io)?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .build()
            .map_err(io)?;
        runtime.block_on(async {
            let listener = tokio::net::TcpListener::from_std(self.listener).map_err(io)?;
            axum::serve(listener, routes::router(self.shared))
                .await
                .map_err(io)
        })
    }
}
