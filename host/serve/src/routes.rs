//! The viewer's HTTP surface: which request shows which page, the guard
//! in front of all of them, and the headers on every response.

use std::path::PathBuf;
use std::sync::Arc;

use axum::Router;
use axum::extract::rejection::FormRejection;
use axum::extract::{Form, Query, Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Deserialize;

use crate::guard;
use crate::pages::{self, Failure, WriteBack, WriteBackForm};
use crate::token::Token;
use seams_core::Project;
use seams_runtime::Runtime;

/// What every request shares.
pub(crate) struct Shared {
    pub(crate) root: PathBuf,
    pub(crate) reach: seams_core::Reach,
    pub(crate) prepare: Box<dyn Fn(&mut Project) + Send + Sync>,
    pub(crate) runtime: Arc<Runtime>,
    pub(crate) token: Token,
    /// `host:port` names the viewer answers to.
    pub(crate) served: Vec<String>,
}

type App = Arc<Shared>;

/// No script but the viewer's own file, no inline script or style, nothing
/// from elsewhere, forms posted only here, never framed.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; \
                   form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

pub(crate) fn router(app: App) -> Router {
    Router::new()
        .route("/", get(index))
        .route("/output", get(output))
        .route("/view", get(view))
        .route("/write-back", post(write_back))
        .route("/assets/viewer.css", get(css))
        .route("/assets/viewer.js", get(js))
        .fallback(not_found)
        .layer(middleware::from_fn_with_state(app.clone(), guard))
        .with_state(app)
}

/// Refuses requests for other hosts or from other origins, and puts the
/// security headers on every response.
async fn guard(State(app): State<App>, request: Request, next: Next) -> Response {
    let headers = request.headers();
    let text = |name: header::HeaderName| headers.get(name).and_then(|v| v.to_str().ok());
    let verdict = guard::admit(
        guard::Request {
            writes: !matches!(*request.method(), Method::GET | Method::HEAD),
            host: text(header::HOST),
            origin: text(header::ORIGIN),
            fetch_site: headers.get("sec-fetch-site").and_then(|v| v.to_str().ok()),
        },
        &app.served,
    );
    let mut response = match verdict {
        Ok(()) => next.run(request).await,
        Err(refusal) => (StatusCode::FORBIDDEN, refusal.to_string()).into_response(),
    };
    let headers = response.headers_mut();
    for (name, value) in [
        (header::CONTENT_SECURITY_POLICY, CSP),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        // The first URL carries the token: never sent to another site.
        // (`no-referrer` would make the browser send `Origin: null` with
        // the viewer's own forms.)
        (header::REFERRER_POLICY, "same-origin"),
        (header::CACHE_CONTROL, "no-store"),
        (header::X_FRAME_OPTIONS, "DENY"),
    ] {
        headers.insert(name, HeaderValue::from_static(value));
    }
    response
}

fn html(status: u16, body: String) -> Response {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    (
        status,
        [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
        body,
    )
        .into_response()
}

fn failed(failure: &Failure) -> Response {
    html(failure.status, pages::failure_page(failure))
}

/// What a request without the run's token gets: the viewer shows the
/// project only to the browser that opened the printed URL, so that
/// another user of the machine who finds the port reads nothing.
fn without_token() -> Response {
    failed(&Failure {
        status: 403,
        message: "this viewer shows the project only to the browser that opened the URL `seams serve` printed (it carries this run's token); open that URL".into(),
    })
}

/// Whether the request carries the run's token in its query. The token
/// is never kept in a cookie: cookies are scoped by host, not port, so a
/// page served by any other program on 127.0.0.1 would receive it.
fn has_token(app: &App, given: Option<&str>) -> bool {
    given.is_some_and(|given| app.token.matches(given))
}

/// Runs a page off the async workers (it loads the project and may run
/// generators) and answers with it.
async fn page(
    app: App,
    writes_offered: bool,
    make: impl FnOnce(&pages::Context<'_>) -> Result<Response, Failure> + Send + 'static,
) -> Response {
    let joined = tokio::task::spawn_blocking(move || {
        pages::with_project(
            &app.root,
            app.reach,
            &*app.prepare,
            &app.runtime,
            app.token.as_str(),
            writes_offered,
            make,
        )
    })
    .await;
    match joined {
        Ok(Ok(response)) => response,
        Ok(Err(failure)) => failed(&failure),
        Err(_) => failed(&Failure {
            status: 500,
            message: "seams serve: the page failed; see the terminal running seams serve".into(),
        }),
    }
}

#[derive(Deserialize)]
struct IndexQuery {
    token: Option<String>,
}

async fn index(State(app): State<App>, Query(query): Query<IndexQuery>) -> Response {
    if let Some(given) = &query.token
        && !app.token.matches(given)
    {
        return failed(&Failure {
            status: 403,
            message: "this token is not this run's: open the URL `seams serve` printed".into(),
        });
    }
    if !has_token(&app, query.token.as_deref()) {
        return without_token();
    }
    page(app, true, |cx| pages::index(cx).map(|body| html(200, body))).await
}

#[derive(Deserialize)]
struct OutputQuery {
    path: String,
    line: Option<usize>,
    token: Option<String>,
}

async fn output(State(app): State<App>, Query(query): Query<OutputQuery>) -> Response {
    if !has_token(&app, query.token.as_deref()) {
        return without_token();
    }
    page(app, true, move |cx| {
        pages::output(cx, &query.path, query.line, None).map(|body| html(200, body))
    })
    .await
}

#[derive(Deserialize)]
struct ViewQuery {
    generator: String,
    token: Option<String>,
}

async fn view(State(app): State<App>, Query(query): Query<ViewQuery>) -> Response {
    if !has_token(&app, query.token.as_deref()) {
        return without_token();
    }
    page(app, false, move |cx| {
        pages::generator_view(cx, &query.generator).map(|body| html(200, body))
    })
    .await
}

async fn write_back(
    State(app): State<App>,
    form: Result<Form<WriteBackForm>, FormRejection>,
) -> Response {
    let form = match form {
        Ok(Form(form)) => form,
        Err(_) => {
            return failed(&Failure {
                status: 400,
                message: "refused: this is not a write-back form of the viewer (it lacks a field: output or token, or a line is not a number); write back from the output's page".into(),
            });
        }
    };
    if !app.token.matches(&form.token) {
        return failed(&Failure {
            status: 403,
            message: "refused: this write does not carry this run's token; open the URL `seams serve` printed".into(),
        });
    }
    page(app, true, move |cx| {
        Ok(match pages::write_back(cx, &form)? {
            WriteBack::Planned(body) => html(200, body),
            WriteBack::Refused(body) => html(422, body),
            WriteBack::Applied { notice } => html(
                200,
                pages::output(cx, &form.output, form.line, Some(&notice))?,
            ),
        })
    })
    .await
}

async fn css() -> Response {
    (
        [(header::CONTENT_TYPE, "text/css; charset=utf-8")],
        include_str!("../assets/viewer.css"),
    )
        .into_response()
}

async fn js() -> Response {
    (
        [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
        include_str!("../assets/viewer.js"),
    )
        .into_response()
}

async fn not_found() -> Response {
    failed(&Failure {
        status: 404,
        message: "no such page; the project page links to every other".into(),
    })
}
