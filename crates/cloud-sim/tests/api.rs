//! The simulator against docs/cloud-api.md, over real HTTP with a paused clock.

use std::time::Duration;

use cmux_cloud_sim::state::NewHandoff;
use cmux_cloud_sim::{Fault, FaultBody, HandoffChange, RunChange};
use serde_json::{Value, json};
use tokio::time::Instant;

struct T {
    sim: cmux_cloud_sim::RunningSim,
    http: reqwest::Client,
    token: String,
    user: String,
}

impl T {
    async fn new() -> T {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let sim = cmux_cloud_sim::start().await.unwrap();
        let u = sim.sim.add_user("ada@example.com");
        T { http: reqwest::Client::new(), token: u.access_token, user: u.user_id, sim }
    }

    async fn get(&self, path: &str) -> (u16, Value) {
        let r = self.http.get(format!("{}{path}", self.sim.origin())).bearer_auth(&self.token).send().await.unwrap();
        let status = r.status().as_u16();
        (status, r.json().await.unwrap_or(Value::Null))
    }

    async fn post(&self, path: &str, body: Value) -> (u16, Value) {
        let r = self.http.post(format!("{}{path}", self.sim.origin())).json(&body).send().await.unwrap();
        let status = r.status().as_u16();
        (status, r.json().await.unwrap_or(Value::Null))
    }
}

#[tokio::test(start_paused = true)]
async fn a_run_wait_holds_ten_seconds_and_answers_at_once_on_a_change_or_an_end() {
    let t = T::new().await;
    let id = t.sim.sim.create_run(&t.user, "Task");
    let start = Instant::now();
    let (status, run) = t.get(&format!("/api/runs/{id}/wait")).await;
    assert_eq!((status, run["status"].as_str()), (200, Some("queued")));
    assert_eq!(start.elapsed().as_secs(), 10, "held for the full hold");
    let start = Instant::now();
    let (_, _) = t.get(&format!("/api/runs/{id}/wait?timeoutMs=3000")).await;
    assert_eq!(start.elapsed().as_secs(), 3, "timeoutMs shortens the hold");
    let start = Instant::now();
    let sim = t.sim.sim.clone();
    let id2 = id.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(4)).await;
        sim.update_run(&id2, RunChange::status("running"));
    });
    let (_, run) = t.get(&format!("/api/runs/{id}/wait")).await;
    assert_eq!((run["status"].as_str(), start.elapsed().as_secs()), (Some("running"), 4));
    t.sim.sim.update_run(&id, RunChange::status("succeeded"));
    let start = Instant::now();
    let (_, run) = t.get(&format!("/api/runs/{id}/wait")).await;
    assert_eq!(start.elapsed(), Duration::ZERO, "a terminal Run answers at once");
    assert_eq!(run["outcome"], "finished");
    assert!(run["receipt"]["summary"].is_string());
}

#[tokio::test(start_paused = true)]
async fn a_handoff_wait_follows_the_version_rule_and_legacy_has_no_state() {
    let t = T::new().await;
    let id = t.sim.sim.create_handoff(NewHandoff { owner: t.user.clone(), ..Default::default() });
    let start = Instant::now();
    let (_, h) = t.get(&format!("/v1/handoffs/{id}/wait?after=0")).await;
    assert_eq!((h["version"].as_u64(), start.elapsed()), (Some(1), Duration::ZERO));
    assert_eq!(h["state"], "open");
    let (_, h) = t.get(&format!("/v1/handoffs/{id}/wait?after=1")).await;
    assert_eq!((h["version"].as_u64(), start.elapsed().as_secs()), (Some(1), 25), "held 25 s, answered unchanged");
    t.sim.sim.update_handoff(&id, HandoffChange { next_turn: true, status: Some("done".into()), ..Default::default() });
    let (_, h) = t.get(&format!("/v1/handoffs/{id}/wait?after=1")).await;
    assert_eq!((h["version"].as_u64(), h["turn"].as_u64(), h["status"].as_str()), (Some(2), Some(2), Some("done")));
    t.sim.sim.update_handoff(&id, HandoffChange { close: true, ..Default::default() });
    let start = Instant::now();
    let (_, h) = t.get(&format!("/v1/handoffs/{id}/wait?after=99")).await;
    assert_eq!((h["state"].as_str(), start.elapsed()), (Some("closed"), Duration::ZERO), "closed answers at once");

    let legacy = t.sim.sim.create_handoff(NewHandoff { owner: t.user.clone(), legacy: true, ..Default::default() });
    t.sim.sim.update_handoff(&legacy, HandoffChange { close: true, status: Some("done".into()), ..Default::default() });
    let (_, h) = t.get(&format!("/v1/handoffs/{legacy}/wait?after=0")).await;
    assert!(h.get("state").is_none(), "{h}");
    assert_eq!(h["status"], "done");
    t.sim.sim.remove_handoff(&legacy);
    assert_eq!(t.get(&format!("/v1/handoffs/{legacy}/wait?after=0")).await.0, 404);
}

#[tokio::test(start_paused = true)]
async fn the_list_pages_with_the_stores_own_cursor() {
    let t = T::new().await;
    for _ in 0..45 {
        t.sim.sim.create_handoff(NewHandoff { owner: t.user.clone(), ..Default::default() });
    }
    let other = t.sim.sim.add_user("eve@example.com");
    t.sim.sim.create_handoff(NewHandoff { owner: other.user_id, ..Default::default() });
    let mut seen = 0;
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let q = cursor.as_ref().map(|c| format!("&cursor={c}")).unwrap_or_default();
        let (status, page) = t.get(&format!("/v1/handoffs?limit=20{q}")).await;
        assert_eq!(status, 200);
        pages += 1;
        seen += page["handoffs"].as_array().unwrap().len();
        match page["nextCursor"].as_str() {
            Some(c) => cursor = Some(c.into()),
            None => break,
        }
    }
    assert_eq!((seen, pages), (45, 3), "only this account's hand-offs");
    assert_eq!(t.get("/v1/handoffs?cursor=bogus").await.0, 400);
}

#[tokio::test(start_paused = true)]
async fn errors_have_the_services_shape() {
    let t = T::new().await;
    let other = t.sim.sim.add_user("eve@example.com");
    let theirs = t.sim.sim.create_run(&other.user_id, "x");
    let (status, body) = t.get(&format!("/api/runs/{theirs}/wait")).await;
    assert_eq!((status, body["error"]["code"].as_str()), (403, Some("auth.forbidden")));
    let (status, body) = t.get("/api/runs/run_ffffffffffffffffffff/wait").await;
    assert_eq!((status, body["error"]["code"].as_str()), (404, Some("not_found")));
    let r = t.http.get(format!("{}/v1/me", t.sim.origin())).send().await.unwrap();
    assert_eq!(r.status(), 401);
    let r = t
        .http
        .get(format!("{}/v1/me", t.sim.origin()))
        .bearer_auth(&t.token)
        .header("x-cmux-team", "team_ffffffffffffffffffff")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
    let (_, me) = t.get("/v1/me").await;
    assert_eq!(me["email"], "ada@example.com");
    assert_eq!(me["teams"][0]["kind"], "personal");
    t.sim.sim.offer_run_list(false);
    assert_eq!(t.get("/api/runs?active=1").await.0, 404);
}

#[tokio::test(start_paused = true)]
async fn device_code_sign_in_and_refresh() {
    let t = T::new().await;
    let (status, start) = t.post("/api/vault/cli/auth/start", json!({"client": "cmux-tray"})).await;
    assert_eq!(status, 200);
    assert_eq!(start["deviceCode"].as_str().unwrap().len(), 64);
    assert_eq!((start["expiresInSeconds"].as_u64(), start["intervalSeconds"].as_u64()), (Some(900), Some(3)));
    let code = start["deviceCode"].clone();
    let (_, p) = t.post("/api/vault/cli/auth/poll", json!({"deviceCode": code})).await;
    assert_eq!(p["status"], "pending");
    assert!(t.sim.sim.approve_device(start["userCode"].as_str().unwrap(), &t.user));
    let (_, p) = t.post("/api/vault/cli/auth/poll", json!({"deviceCode": code})).await;
    assert_eq!(p["status"], "approved");
    let (_, again) = t.post("/api/vault/cli/auth/poll", json!({"deviceCode": code})).await;
    assert_eq!(again["status"], "expired", "tokens are handed out once");
    let refresh = p["refreshToken"].clone();
    let (status, r) = t.post("/api/auth/refresh", json!({"refreshToken": refresh})).await;
    assert_eq!(status, 200);
    assert!(r["accessToken"].is_string() && r["refreshToken"] != refresh);
    let (status, _) = t.post("/api/auth/refresh", json!({"refreshToken": refresh})).await;
    assert_eq!(status, 401, "a used refresh token is refused");
    // A device code expires after 15 minutes.
    let (_, start) = t.post("/api/vault/cli/auth/start", json!({"client": "cmux-tray"})).await;
    tokio::time::sleep(Duration::from_secs(901)).await;
    let (_, p) = t.post("/api/vault/cli/auth/poll", json!({"deviceCode": start["deviceCode"]})).await;
    assert_eq!(p["status"], "expired");
}

#[tokio::test(start_paused = true)]
async fn faults_are_served_as_scripted_and_every_request_is_logged() {
    let t = T::new().await;
    let id = t.sim.sim.create_run(&t.user, "x");
    t.sim.sim.add_fault(Fault::on("/wait").status(503).retry_after(7));
    t.sim.sim.add_fault(Fault::on("/wait").body(FaultBody::Malformed));
    t.sim.sim.add_fault(Fault::on("/wait").body(FaultBody::Oversized));
    t.sim.sim.add_fault(Fault::on("/wait").delay(1500).status(429));
    let url = format!("{}/api/runs/{id}/wait", t.sim.origin());
    let r = t.http.get(&url).bearer_auth(&t.token).send().await.unwrap();
    assert_eq!((r.status().as_u16(), r.headers()["retry-after"].to_str().unwrap()), (503, "7"));
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["error"]["retryable"], true);
    let text = t.http.get(&url).bearer_auth(&t.token).send().await.unwrap().text().await.unwrap();
    assert!(serde_json::from_str::<Value>(&text).is_err(), "malformed");
    let big = t.http.get(&url).bearer_auth(&t.token).send().await.unwrap().bytes().await.unwrap();
    assert!(big.len() > 16 * 1024 * 1024);
    let start = Instant::now();
    let r = t.http.get(&url).bearer_auth(&t.token).send().await.unwrap();
    assert_eq!((r.status().as_u16(), start.elapsed().as_millis()), (429, 1500));
    let log = t.sim.sim.requests();
    assert_eq!(log.len(), 4);
    assert_eq!(log[0].header("authorization"), Some(format!("Bearer {}", t.token).as_str()));
    assert!(log[3].at_ms >= log[2].at_ms);
    assert_eq!(log[0].fault.as_deref(), Some("status 503"));
}

#[tokio::test]
async fn a_reset_and_a_stall_reach_the_client_as_network_failures() {
    let t = T::new().await;
    let id = t.sim.sim.create_run(&t.user, "x");
    t.sim.sim.add_fault(Fault::on("/wait").reset());
    t.sim.sim.add_fault(Fault::on("/wait").stall());
    let url = format!("{}/api/runs/{id}/wait", t.sim.origin());
    let err = t.http.get(&url).bearer_auth(&t.token).send().await.unwrap_err();
    assert!(!err.is_status(), "{err}");
    let err = t.http.get(&url).bearer_auth(&t.token).timeout(Duration::from_millis(300)).send().await.unwrap_err();
    assert!(err.is_timeout(), "{err}");
}

#[tokio::test]
async fn the_control_api_over_http_and_http2_prior_knowledge() {
    let t = T::new().await;
    let (status, user) = t.post("/_sim/users", json!({"email": "bob@example.com"})).await;
    assert_eq!(status, 200);
    let (_, run) = t.post("/_sim/runs", json!({"owner": user["userId"], "task": "From outside"})).await;
    let id = run["id"].as_str().unwrap();
    let (_, run) = t.post(&format!("/_sim/runs/{id}"), json!({"status": "failed"})).await;
    assert_eq!(run["outcome"], "failed");
    let h2 = reqwest::Client::builder().http2_prior_knowledge().build().unwrap();
    let r =
        h2.get(format!("{}/api/runs/{id}/wait", t.sim.origin())).bearer_auth(user["accessToken"].as_str().unwrap()).send().await.unwrap();
    assert_eq!((r.status().as_u16(), r.version()), (200, reqwest::Version::HTTP_2));
    let log: Value = reqwest::get(format!("{}/_sim/requests", t.sim.origin())).await.unwrap().json().await.unwrap();
    assert_eq!(log.as_array().unwrap().len(), 1, "control calls are not logged");
}
