//! The control API over HTTP (`/_sim/…`), for tests and demos in another process. It mirrors the
//! Rust methods of [`Sim`] one for one.

use axum::Json;
use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::script::Fault;
use crate::state::{HandoffChange, NewHandoff, RunChange, Sim};

pub fn routes() -> Router<Sim> {
    Router::new()
        .route("/users", post(add_user))
        .route("/tokens/revoke", post(revoke))
        .route("/runs", post(create_run))
        .route("/runs/{id}", post(update_run).get(get_run))
        .route("/handoffs", post(create_handoff))
        .route("/handoffs/{id}", post(update_handoff).get(get_handoff).delete(remove_handoff))
        .route("/faults", post(add_fault).delete(clear_faults))
        .route("/requests", get(requests).delete(clear_requests))
        .route("/device/approve", post(approve))
        .route("/device/last", get(last_device))
        .route("/run-list", post(run_list))
}

#[derive(Deserialize)]
struct NewUser {
    email: String,
}

async fn add_user(State(sim): State<Sim>, Json(u): Json<NewUser>) -> Response {
    Json(sim.add_user(&u.email)).into_response()
}

#[derive(Deserialize)]
struct Token {
    token: String,
}

async fn revoke(State(sim): State<Sim>, Json(t): Json<Token>) -> StatusCode {
    sim.revoke_token(&t.token);
    StatusCode::NO_CONTENT
}

#[derive(Deserialize)]
struct NewRun {
    owner: String,
    task: String,
}

async fn create_run(State(sim): State<Sim>, Json(r): Json<NewRun>) -> Response {
    let id = sim.create_run(&r.owner, &r.task);
    Json(sim.run(&id)).into_response()
}

fn found(v: Option<Value>) -> Response {
    match v {
        Some(v) => Json(v).into_response(),
        None => (StatusCode::NOT_FOUND, Json(json!({"error": "no such item"}))).into_response(),
    }
}

async fn update_run(State(sim): State<Sim>, Path(id): Path<String>, Json(c): Json<RunChange>) -> Response {
    found(sim.update_run(&id, c))
}

async fn get_run(State(sim): State<Sim>, Path(id): Path<String>) -> Response {
    found(sim.run(&id))
}

async fn create_handoff(State(sim): State<Sim>, Json(h): Json<NewHandoff>) -> Response {
    let id = sim.create_handoff(h);
    Json(sim.handoff(&id)).into_response()
}

async fn update_handoff(State(sim): State<Sim>, Path(id): Path<String>, Json(c): Json<HandoffChange>) -> Response {
    found(sim.update_handoff(&id, c))
}

async fn get_handoff(State(sim): State<Sim>, Path(id): Path<String>) -> Response {
    found(sim.handoff(&id))
}

async fn remove_handoff(State(sim): State<Sim>, Path(id): Path<String>) -> StatusCode {
    sim.remove_handoff(&id);
    StatusCode::NO_CONTENT
}

async fn add_fault(State(sim): State<Sim>, Json(f): Json<Fault>) -> StatusCode {
    sim.add_fault(f);
    StatusCode::NO_CONTENT
}

async fn clear_faults(State(sim): State<Sim>) -> StatusCode {
    sim.clear_faults();
    StatusCode::NO_CONTENT
}

async fn requests(State(sim): State<Sim>) -> Response {
    Json(sim.requests()).into_response()
}

async fn clear_requests(State(sim): State<Sim>) -> StatusCode {
    sim.clear_requests();
    StatusCode::NO_CONTENT
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Approve {
    user_code: String,
    user_id: String,
}

async fn approve(State(sim): State<Sim>, Json(a): Json<Approve>) -> StatusCode {
    if sim.approve_device(&a.user_code, &a.user_id) { StatusCode::NO_CONTENT } else { StatusCode::NOT_FOUND }
}

async fn last_device(State(sim): State<Sim>) -> Response {
    Json(json!({"userCode": sim.last_user_code()})).into_response()
}

#[derive(Deserialize)]
struct Offered {
    offered: bool,
}

async fn run_list(State(sim): State<Sim>, Json(o): Json<Offered>) -> StatusCode {
    sim.offer_run_list(o.offered);
    StatusCode::NO_CONTENT
}
