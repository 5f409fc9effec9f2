//! The public endpoints of `docs/cloud-api.md`: sign-in, `/v1/me`, Runs and hand-offs.
// A refusal is the handler's own Response, built once per request; boxing it buys nothing.
#![allow(clippy::result_large_err)]

use std::collections::HashMap;
use std::time::Duration;

use axum::Json;
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};
use tokio::time::Instant;

use crate::reply::error;
use crate::state::Sim;
use crate::{HANDOFF_HOLD, RUN_HOLD};

pub fn routes() -> Router<Sim> {
    Router::new()
        .route("/v1/me", get(me))
        .route("/api/runs", get(list_runs))
        .route("/api/runs/{id}/wait", get(wait_run))
        .route("/api/runs/{id}/cancel", post(cancel_run))
        .route("/v1/handoffs", get(list_handoffs))
        .route("/v1/handoffs/{id}/wait", get(wait_handoff))
        .route("/api/vault/cli/auth/start", post(device_start))
        .route("/api/vault/cli/auth/poll", post(device_poll))
        .route("/api/auth/refresh", post(refresh))
}

type ApiResult = Result<Response, Response>;

/// The account behind `Authorization: Bearer …`, after checking `x-cmux-team` when sent.
fn authorize(sim: &Sim, headers: &HeaderMap) -> Result<String, Response> {
    let unauthenticated = || error(StatusCode::UNAUTHORIZED, "auth.unauthenticated", "sign in again");
    let token =
        headers.get("authorization").and_then(|v| v.to_str().ok()).and_then(|v| v.strip_prefix("Bearer ")).ok_or_else(unauthenticated)?;
    let st = sim.state();
    let (user, expiry) = st.tokens.get(token).cloned().ok_or_else(unauthenticated)?;
    if expiry.is_some_and(|e| Instant::now() >= e) {
        return Err(error(StatusCode::UNAUTHORIZED, "auth.expired", "the access token expired"));
    }
    if let Some(team) = headers.get("x-cmux-team") {
        let team = team.to_str().unwrap_or("");
        let is_member = st.user(&user).is_some_and(|u| u.teams.iter().any(|t| t["id"] == json!(team)));
        if !is_member {
            return Err(error(StatusCode::FORBIDDEN, "auth.forbidden", "not a member of that team"));
        }
    }
    Ok(user)
}

fn hold(query: &HashMap<String, String>, max: Duration) -> Result<Duration, Response> {
    match query.get("timeoutMs") {
        None => Ok(max),
        Some(ms) => ms
            .parse::<u64>()
            .map(|ms| Duration::from_millis(ms).min(max))
            .map_err(|_| error(StatusCode::BAD_REQUEST, "request.invalid", "timeoutMs must be an integer")),
    }
}

async fn me(State(sim): State<Sim>, headers: HeaderMap) -> ApiResult {
    let user = authorize(&sim, &headers)?;
    let st = sim.state();
    let u = st.user(&user).expect("a token names a known user");
    Ok(Json(json!({"userId": u.id, "email": u.email, "teams": u.teams})).into_response())
}

async fn list_runs(State(sim): State<Sim>, Query(q): Query<HashMap<String, String>>, headers: HeaderMap) -> ApiResult {
    let user = authorize(&sim, &headers)?;
    let st = sim.state();
    if !st.run_list_offered {
        return Err(error(StatusCode::NOT_FOUND, "not_found", "no such route"));
    }
    let active_only = q.get("active").is_some_and(|v| v == "1");
    let runs: Vec<Value> = st.runs.iter().filter(|r| r.owner == user && (!active_only || !r.is_terminal())).map(|r| r.json()).collect();
    Ok(Json(json!({"runs": runs})).into_response())
}

async fn wait_run(
    State(sim): State<Sim>,
    Path(id): Path<String>,
    Query(q): Query<HashMap<String, String>>,
    headers: HeaderMap,
) -> ApiResult {
    let user = authorize(&sim, &headers)?;
    let hold = match sim.state().run_timeout_honoured {
        true => hold(&q, RUN_HOLD)?,
        false => RUN_HOLD,
    };
    let deadline = Instant::now() + hold;
    let mut changes = {
        let st = sim.state();
        let run = st.runs.iter().find(|r| r.id == id).ok_or_else(not_found)?;
        if run.owner != user {
            return Err(forbidden());
        }
        if run.is_terminal() {
            return Ok(Json(run.json()).into_response());
        }
        run.changes.subscribe()
    };
    // Held until the Run changes or the hold runs out; either way the current snapshot answers.
    tokio::select! {
        _ = changes.changed() => {}
        _ = tokio::time::sleep_until(deadline) => {}
    }
    let st = sim.state();
    let run = st.runs.iter().find(|r| r.id == id).ok_or_else(not_found)?;
    Ok(Json(run.json()).into_response())
}

async fn cancel_run(State(sim): State<Sim>, Path(id): Path<String>, headers: HeaderMap) -> ApiResult {
    let user = authorize(&sim, &headers)?;
    {
        let st = sim.state();
        let run = st.runs.iter().find(|r| r.id == id).ok_or_else(not_found)?;
        if run.owner != user {
            return Err(forbidden());
        }
        if run.is_terminal() {
            return Ok(Json(run.json()).into_response());
        }
    }
    let snapshot = sim.update_run(&id, crate::RunChange::status("cancelling"));
    // The sandbox takes a moment to stop; the end arrives as a change like any other.
    let later = sim.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        later.update_run(&id, crate::RunChange::status("cancelled"));
    });
    Ok(Json(snapshot).into_response())
}

async fn list_handoffs(State(sim): State<Sim>, Query(q): Query<HashMap<String, String>>, headers: HeaderMap) -> ApiResult {
    let user = authorize(&sim, &headers)?;
    let limit = match q.get("limit") {
        None => 20,
        Some(l) => l
            .parse::<usize>()
            .ok()
            .filter(|l| (1..=100).contains(l))
            .ok_or_else(|| error(StatusCode::BAD_REQUEST, "request.invalid", "limit must be 1..=100"))?,
    };
    let offset = match q.get("cursor") {
        None => 0,
        Some(c) => c
            .strip_prefix("cur_")
            .and_then(|n| n.parse::<usize>().ok())
            .ok_or_else(|| error(StatusCode::BAD_REQUEST, "request.invalid", "unknown cursor"))?,
    };
    let st = sim.state();
    let mine: Vec<&crate::state::Handoff> = st.handoffs.iter().filter(|h| h.owner == user && !h.removed).collect();
    let page: Vec<Value> = mine.iter().skip(offset).take(limit).map(|h| h.json()).collect();
    let next = (offset + limit < mine.len()).then(|| format!("cur_{}", offset + limit));
    Ok(Json(json!({"handoffs": page, "nextCursor": next})).into_response())
}

async fn wait_handoff(
    State(sim): State<Sim>,
    Path(id): Path<String>,
    Query(q): Query<HashMap<String, String>>,
    headers: HeaderMap,
) -> ApiResult {
    let user = authorize(&sim, &headers)?;
    let after = match q.get("after") {
        None => 0,
        Some(a) => a.parse::<u64>().map_err(|_| error(StatusCode::BAD_REQUEST, "request.invalid", "after must be an integer"))?,
    };
    let deadline = Instant::now() + hold(&q, HANDOFF_HOLD)?;
    loop {
        let mut changes = {
            let st = sim.state();
            let h = st.handoffs.iter().find(|h| h.id == id && !h.removed).ok_or_else(not_found)?;
            if h.owner != user {
                return Err(forbidden());
            }
            if h.version > after || h.is_closed() {
                return Ok(Json(h.json()).into_response());
            }
            h.changes.subscribe()
        };
        tokio::select! {
            _ = changes.changed() => continue,
            _ = tokio::time::sleep_until(deadline) => {}
        }
        let st = sim.state();
        let h = st.handoffs.iter().find(|h| h.id == id && !h.removed).ok_or_else(not_found)?;
        return Ok(Json(h.json()).into_response());
    }
}

async fn device_start(State(sim): State<Sim>, body: Option<Json<Value>>) -> ApiResult {
    required_field(&body, "client")?;
    let (device_code, user_code) = sim.state().new_device();
    Ok(Json(json!({
        "deviceCode": device_code,
        "userCode": user_code,
        "verificationUrl": format!("/vault/cli-auth?code={user_code}"),
        "expiresInSeconds": 900,
        "intervalSeconds": 3,
    }))
    .into_response())
}

/// A required string field of a JSON body, or the service's 400.
fn required_field(body: &Option<Json<Value>>, key: &str) -> Result<String, Response> {
    body.as_ref()
        .and_then(|b| b.get(key))
        .and_then(Value::as_str)
        .map(String::from)
        .ok_or_else(|| error(StatusCode::BAD_REQUEST, "request.invalid", &format!("{key} is required")))
}

async fn device_poll(State(sim): State<Sim>, body: Option<Json<Value>>) -> ApiResult {
    let code = required_field(&body, "deviceCode")?;
    let mut st = sim.state();
    let Some(i) = st.devices.iter().position(|d| d.device_code == code) else {
        return Err(error(StatusCode::NOT_FOUND, "not_found", "unknown device code"));
    };
    let d = &st.devices[i];
    if d.handed_out || Instant::now() >= d.expires {
        return Ok(Json(json!({"status": "expired"})).into_response());
    }
    let Some(user) = d.approved_for.clone() else {
        return Ok(Json(json!({"status": "pending"})).into_response());
    };
    st.devices[i].handed_out = true;
    let (access, refresh) = st.issue_tokens(&user);
    Ok(Json(json!({"status": "approved", "accessToken": access, "refreshToken": refresh})).into_response())
}

async fn refresh(State(sim): State<Sim>, body: Option<Json<Value>>) -> ApiResult {
    let token = required_field(&body, "refreshToken")?;
    let mut st = sim.state();
    let Some(user) = st.refresh_tokens.remove(&token) else {
        return Err(error(StatusCode::UNAUTHORIZED, "auth.refresh_refused", "sign in again"));
    };
    let (access, refresh) = st.issue_tokens(&user);
    let ttl = st.access_ttl_secs.unwrap_or(600);
    Ok(Json(json!({"accessToken": access, "refreshToken": refresh, "expiresInSeconds": ttl})).into_response())
}

fn not_found() -> Response {
    error(StatusCode::NOT_FOUND, "not_found", "no such item")
}

fn forbidden() -> Response {
    error(StatusCode::FORBIDDEN, "auth.forbidden", "this item belongs to another account")
}
