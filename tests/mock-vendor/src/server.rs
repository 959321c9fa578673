//! The HTTP server: pops scripted responses per route and records every request.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response as HttpResponse};
use axum::routing::{get, post};
use futures::StreamExt;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

use crate::script::{Response, Route, Script};

/// A request the server received.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordedRequest {
    /// The vendor route it matched, if any.
    pub route: Option<Route>,
    pub method: String,
    pub path: String,
    pub query: Option<String>,
    /// Header names lowercased; repeated headers joined with ", ".
    pub headers: BTreeMap<String, String>,
    /// The JSON body (`null` when the body was not JSON; see `raw_body`).
    pub body: Value,
    pub raw_body: String,
}

impl RecordedRequest {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .get(&name.to_ascii_lowercase())
            .map(String::as_str)
    }

    /// The text of the last user message of an OpenAI-format chat request.
    pub fn last_user_text(&self) -> Option<&str> {
        self.body["messages"]
            .as_array()?
            .iter()
            .rev()
            .find(|m| m["role"] == "user")?["content"]
            .as_str()
    }
}

#[derive(Default)]
struct Shared {
    script: Mutex<Script>,
    requests: Mutex<Vec<RecordedRequest>>,
    record_to: Mutex<Option<PathBuf>>,
    open_gates: Mutex<std::collections::HashSet<String>>,
    gate_opened: tokio::sync::Notify,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panicking test thread must not take the server down with it.
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Shared {
    /// The first queued response for `route` that this request may have (responses with
    /// `when_body_contains` only go to a request whose body contains it).
    fn next_response(&self, route: Route, body: &str) -> Option<Response> {
        let mut script = lock(&self.script);
        let repeat_last = script.repeat_last;
        let queue = script.queue_mut(route);
        let i = queue.iter().position(|r| {
            r.when_body_contains
                .as_deref()
                .is_none_or(|t| body.contains(t))
        })?;
        if queue.len() == 1 && repeat_last {
            return queue.first().cloned();
        }
        Some(queue.remove(i))
    }

    async fn wait_for_gate(&self, gate: &str) {
        loop {
            let opened = self.gate_opened.notified();
            if lock(&self.open_gates).contains(gate) {
                return;
            }
            opened.await;
        }
    }
}

/// A running mock vendor server on 127.0.0.1. Dropping it stops accepting requests.
pub struct MockServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    task: Option<JoinHandle<()>>,
}

impl MockServer {
    /// Starts an empty server on a free port; script it with [`MockServer::push`].
    pub async fn start() -> std::io::Result<MockServer> {
        MockServer::start_with(Script::default(), 0).await
    }

    /// Starts a server with a script on `port` (0 = any free port).
    pub async fn start_with(script: Script, port: u16) -> std::io::Result<MockServer> {
        let listener = TcpListener::bind(("127.0.0.1", port)).await?;
        MockServer::start_on(listener, script)
    }

    /// Serves `script` on a listener already bound (so a script can be written knowing
    /// the server's address).
    pub fn start_on(listener: TcpListener, script: Script) -> std::io::Result<MockServer> {
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            script: Mutex::new(script),
            requests: Mutex::new(Vec::new()),
            record_to: Mutex::new(None),
            ..Shared::default()
        });
        let app = Router::new()
            .route("/__mock/requests", get(list_requests))
            .route("/__mock/responses/{route}", post(push_response))
            .merge(
                crate::web::routes().layer(axum::middleware::from_fn_with_state(
                    shared.clone(),
                    record_web_request,
                )),
            )
            .fallback(handle_vendor)
            .with_state(shared.clone());
        let task = tokio::spawn(async move {
            if let Err(e) = axum::serve(listener, app).await {
                log_stderr(&format!("mock-vendor: server stopped: {e}"));
            }
        });
        Ok(MockServer {
            addr,
            shared,
            task: Some(task),
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT` (no trailing slash).
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Appends a response to a route's queue.
    pub fn push(&self, route: Route, response: Response) {
        lock(&self.shared.script).queue_mut(route).push(response);
    }

    /// Also append every request from now on to `path`, one JSON object per line.
    pub fn record_to(&self, path: PathBuf) {
        *lock(&self.shared.record_to) = Some(path);
    }

    /// Responses still queued for a route.
    pub fn pending(&self, route: Route) -> usize {
        lock(&self.shared.script).queue_mut(route).len()
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.shared.requests).clone()
    }

    /// Forgets the requests received so far (long runs that would otherwise keep every
    /// request body in memory).
    pub fn clear_requests(&self) {
        lock(&self.shared.requests).clear();
    }

    /// Lets the responses held behind `gate` go.
    pub fn open_gate(&self, gate: &str) {
        lock(&self.shared.open_gates).insert(gate.to_owned());
        self.shared.gate_opened.notify_waiters();
    }

    /// Requests received on one route, in order.
    pub fn requests_to(&self, route: Route) -> Vec<RecordedRequest> {
        lock(&self.shared.requests)
            .iter()
            .filter(|r| r.route == Some(route))
            .cloned()
            .collect()
    }

    /// Serves until the task ends (the binary's main loop).
    pub async fn wait(mut self) {
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        if let Some(task) = &self.task {
            task.abort();
        }
    }
}

// The library has no logger of its own; server errors only matter to whoever runs it.
fn log_stderr(msg: &str) {
    let _ = writeln!(std::io::stderr(), "{msg}");
}

fn append_line(path: &std::path::Path, request: &RecordedRequest) {
    let line = match serde_json::to_string(request) {
        Ok(l) => l,
        Err(e) => return log_stderr(&format!("mock-vendor: cannot record: {e}")),
    };
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path);
    match file {
        Ok(mut f) => {
            if let Err(e) = writeln!(f, "{line}") {
                log_stderr(&format!("mock-vendor: cannot record: {e}"));
            }
        }
        Err(e) => log_stderr(&format!("mock-vendor: cannot open {}: {e}", path.display())),
    }
}

fn route_of(path: &str) -> Option<Route> {
    if path.ends_with("/chat/completions") {
        Some(Route::Openai)
    } else if path.ends_with("/messages") {
        Some(Route::Claude)
    } else if path.contains(":streamGenerateContent") {
        Some(Route::Gemini)
    } else {
        None
    }
}

/// Records a `/__web/` page request like the vendor ones (route `None`), so tests can
/// tell whether a fetch reached the server.
async fn record_web_request(
    State(shared): State<Arc<Shared>>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> HttpResponse {
    let headers = request
        .headers()
        .iter()
        .map(|(name, value)| {
            (
                name.as_str().to_string(),
                String::from_utf8_lossy(value.as_bytes()).into_owned(),
            )
        })
        .collect();
    let recorded = RecordedRequest {
        route: None,
        method: request.method().to_string(),
        path: request.uri().path().to_string(),
        query: request.uri().query().map(str::to_string),
        headers,
        body: Value::Null,
        raw_body: String::new(),
    };
    if let Some(path) = lock(&shared.record_to).as_ref() {
        append_line(path, &recorded);
    }
    lock(&shared.requests).push(recorded);
    next.run(request).await
}

async fn list_requests(State(shared): State<Arc<Shared>>) -> axum::Json<Vec<RecordedRequest>> {
    axum::Json(lock(&shared.requests).clone())
}

async fn push_response(
    State(shared): State<Arc<Shared>>,
    Path(route): Path<String>,
    body: Bytes,
) -> HttpResponse {
    let route: Route = match serde_json::from_value(Value::String(route.clone())) {
        Ok(r) => r,
        Err(_) => {
            return (StatusCode::NOT_FOUND, format!("unknown route {route}")).into_response();
        }
    };
    match serde_json::from_slice::<Response>(&body) {
        Ok(resp) => {
            lock(&shared.script).queue_mut(route).push(resp);
            StatusCode::NO_CONTENT.into_response()
        }
        Err(e) => (StatusCode::BAD_REQUEST, format!("bad response: {e}")).into_response(),
    }
}

async fn handle_vendor(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> HttpResponse {
    let route = route_of(uri.path());
    let mut header_map: BTreeMap<String, String> = BTreeMap::new();
    for (name, value) in &headers {
        let v = String::from_utf8_lossy(value.as_bytes()).into_owned();
        header_map
            .entry(name.as_str().to_string())
            .and_modify(|e| {
                e.push_str(", ");
                e.push_str(&v);
            })
            .or_insert(v);
    }
    let raw_body = String::from_utf8_lossy(&body).into_owned();
    let recorded = RecordedRequest {
        route,
        method: method.to_string(),
        path: uri.path().to_string(),
        query: uri.query().map(str::to_string),
        headers: header_map,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
        raw_body,
    };
    if let Some(path) = lock(&shared.record_to).as_ref() {
        append_line(path, &recorded);
    }
    let raw = recorded.raw_body.clone();
    lock(&shared.requests).push(recorded);

    let Some(route) = route else {
        return (StatusCode::NOT_FOUND, "mock-vendor: unknown path").into_response();
    };
    if method != Method::POST {
        return StatusCode::METHOD_NOT_ALLOWED.into_response();
    }
    let Some(scripted) = shared.next_response(route, &raw) else {
        let body = json!({"error": {"message": format!(
            "mock-vendor: no scripted response left for route {}", route.as_str()),
            "type": "mock_script_exhausted"}});
        return (StatusCode::INTERNAL_SERVER_ERROR, axum::Json(body)).into_response();
    };
    if let Some(gate) = &scripted.gate {
        shared.wait_for_gate(gate).await;
    }
    render(scripted)
}

fn render(scripted: Response) -> HttpResponse {
    let status = StatusCode::from_u16(scripted.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = if let Some(body) = &scripted.body {
        let (text, content_type) = match body {
            Value::String(s) => (s.clone(), "text/plain; charset=utf-8"),
            other => (other.to_string(), "application/json"),
        };
        let mut r = HttpResponse::new(Body::from(text));
        r.headers_mut()
            .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
        r
    } else {
        let mut r = HttpResponse::new(event_body(&scripted));
        r.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/event-stream"),
        );
        r.headers_mut()
            .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
        r
    };
    *response.status_mut() = status;
    for (name, value) in &scripted.headers {
        if let (Ok(n), Ok(v)) = (
            header::HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            response.headers_mut().insert(n, v);
        }
    }
    response
}

enum Step {
    Send(Bytes),
    Stall,
    Cut,
}

fn event_body(scripted: &Response) -> Body {
    let mut steps: Vec<(u64, Step)> = Vec::new();
    for (i, ev) in scripted.events.iter().enumerate() {
        if scripted.stall_after == Some(i) {
            steps.push((0, Step::Stall));
            break;
        }
        if scripted.cut_after == Some(i) {
            steps.push((0, Step::Cut));
            break;
        }
        steps.push((ev.delay_ms, Step::Send(Bytes::from(ev.to_wire()))));
    }
    let n = scripted.events.len();
    if steps.len() == n {
        // stall/cut counts equal to the number of events apply after the last one.
        if scripted.stall_after == Some(n) {
            steps.push((0, Step::Stall));
        } else if scripted.cut_after == Some(n) {
            steps.push((0, Step::Cut));
        }
    }
    let stream = futures::stream::iter(steps).then(|(delay, step)| async move {
        if delay > 0 {
            tokio::time::sleep(Duration::from_millis(delay)).await;
        }
        match step {
            Step::Send(bytes) => Ok(bytes),
            Step::Stall => {
                // Half-open peer: the connection stays up and nothing more arrives.
                let never: Infallible = futures::future::pending().await;
                match never {}
            }
            Step::Cut => {
                // Let the server flush what was sent before aborting, so the client
                // really sees a partial stream.
                tokio::time::sleep(Duration::from_millis(20)).await;
                Err(std::io::Error::other("mock-vendor: connection cut"))
            }
        }
    });
    Body::from_stream(stream)
}
