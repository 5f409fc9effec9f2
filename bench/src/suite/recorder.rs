//! A recording notification server, in this process, so that the moment a `Notify` call
//! arrives is read on the same monotonic clock as the moment the benchmark changed the cloud.
//!
//! It answers the four calls the product makes (`GetCapabilities`, `GetServerInformation`,
//! `Notify`, `CloseNotification`) as a server would: ids it hands out, `replaces_id` kept. It
//! shows nothing: it is a recorder, not a notification server a person would use.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use futures_util::StreamExt;

#[derive(Debug, Clone)]
pub struct Arrival {
    pub at: Instant,
    pub summary: String,
}

#[derive(Clone, Default)]
pub struct Recorder {
    arrivals: Arc<Mutex<Vec<Arrival>>>,
}

impl Recorder {
    /// Owns `org.freedesktop.Notifications` on the bus at `address` and records until the
    /// runtime stops.
    pub async fn start(address: &str) -> anyhow::Result<Recorder> {
        let conn = zbus::connection::Builder::address(address)?.build().await?;
        conn.request_name("org.freedesktop.Notifications").await?;
        let rec = Recorder::default();
        let arrivals = rec.arrivals.clone();
        tokio::spawn(async move {
            let mut stream = zbus::MessageStream::from(&conn);
            let mut next_id = 0u32;
            while let Some(Ok(msg)) = stream.next().await {
                let at = Instant::now();
                let header = msg.header();
                if header.message_type() != zbus::message::Type::MethodCall {
                    continue;
                }
                let member = header.member().map(|m| m.as_str().to_owned()).unwrap_or_default();
                let _ = match member.as_str() {
                    "Notify" => {
                        type Body<'a> = (
                            &'a str,
                            u32,
                            &'a str,
                            &'a str,
                            &'a str,
                            Vec<&'a str>,
                            std::collections::HashMap<&'a str, zbus::zvariant::Value<'a>>,
                            i32,
                        );
                        let message_body = msg.body();
                        let Ok((_, replaces, _, summary, _, _, _, _)) = message_body.deserialize::<Body>() else { continue };
                        let id = if replaces != 0 {
                            replaces
                        } else {
                            next_id += 1;
                            next_id
                        };
                        let arrival = Arrival { at, summary: summary.into() };
                        arrivals.lock().unwrap().push(arrival);
                        conn.reply(&header, &id).await
                    }
                    "GetCapabilities" => conn.reply(&header, &vec!["body", "actions"]).await,
                    "GetServerInformation" => conn.reply(&header, &("recorder", "cmux-tray-bench", "1", "1.2")).await,
                    "CloseNotification" => conn.reply(&header, &()).await,
                    _ => continue,
                };
            }
        });
        Ok(rec)
    }

    pub fn count(&self) -> usize {
        self.arrivals.lock().unwrap().len()
    }

    pub fn since(&self, from: usize) -> Vec<Arrival> {
        self.arrivals.lock().unwrap()[from..].to_vec()
    }
}
