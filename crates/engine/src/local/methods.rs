//! Every v1 command and v2 method of docs/local-socket.md, each answered by its request type
//! (`local/requests/`): this file picks the type by the [`Command`] or [`Method`] a line names,
//! keeps the order, and saves a batch's notices in one commit.

use serde_json::Value;

use super::conn::Conn;
use super::protocol::{self, Command, ErrorCode, Method, MethodError, Request};
use super::replies::{Replies, Write};
use super::requests::{
    Attach, Cancel, Capabilities, Clear, Create, CreateForCaller, DeviceStart, DeviceWait, Focus, Follow, GetStatus, GetTrayView, List,
    Login, MarkAllRead, MarkRead, MethodRequest as _, Pause, Ping, Reload, Resume, SignInToken, SignOut, create,
};
use crate::notice::local::LocalPost;
use crate::service::Engine;

/// Answers request lines a client sent together, in order, into `out`. The notices among them
/// (`notify`, `notify_target`, `notification.create*`) are saved in one commit, and answered once
/// it is in the WAL; a request that reads or changes the store sees the notices asked before it
/// saved first (docs/local-socket.md, "Pipelining"). Answers go out as soon as those before
/// them are ready and enough wait ([`Replies`]): a batch of large answers is never held whole.
pub async fn answer_all<W: Write>(engine: &Engine, conn: &mut Conn, lines: &[String], out: &mut Replies<'_, W>) -> std::io::Result<()> {
    let mut replies: Vec<Option<String>> = vec![None; lines.len()];
    let mut posts: Vec<Post> = Vec::new();
    for (slot, line) in lines.iter().enumerate() {
        let reply = match protocol::parse(line) {
            Err(r) => protocol::rejected_line(&r),
            Ok(Request::V1 { command: word, args }) => {
                let command = Command::parse(&word);
                match v1_post(conn, command, &args) {
                    Some(Ok(post)) => {
                        posts.push(Post { slot, post: conn.adopt(post), asked: AnsweredAs::V1 });
                        continue;
                    }
                    Some(Err(usage)) => usage,
                    None => {
                        save(engine, &mut posts, &mut replies).await;
                        v1(engine, conn, command, &args).await
                    }
                }
            }
            Ok(Request::V2 { id, method: word, params }) => {
                let method = Method::parse(&word);
                let result = match v2_post(conn, method, &params) {
                    Some(Ok(post)) => {
                        posts.push(Post { slot, post: conn.adopt(post), asked: AnsweredAs::V2 { id } });
                        continue;
                    }
                    Some(Err(invalid)) => Err(invalid),
                    None => {
                        save(engine, &mut posts, &mut replies).await;
                        v2(engine, conn, method, &word, &params).await
                    }
                };
                v2_line(&id, result)
            }
        };
        replies[slot] = Some(reply);
        // Every slot before this one is answered now (its notices saved first): out they go.
        out.take_ready(&mut replies).await?;
    }
    save(engine, &mut posts, &mut replies).await;
    out.take_ready(&mut replies).await
}

fn v2_line(id: &Value, result: Result<Value, MethodError>) -> String {
    match result {
        Ok(result) => protocol::v2_ok(id, result),
        Err(e) => protocol::v2_error(Some(id), e.code, &e.message),
    }
}

/// A notice asked for, waiting to be saved with the others of its batch.
struct Post {
    /// Where its answer goes among the batch's replies.
    slot: usize,
    post: LocalPost,
    asked: AnsweredAs,
}

/// How a notice was asked for, which is how its answer is written.
enum AnsweredAs {
    V1,
    V2 { id: Value },
}

/// Saves the notices waiting in `posts` in one commit and writes their answers in their slots.
async fn save(engine: &Engine, posts: &mut Vec<Post>, replies: &mut [Option<String>]) {
    if posts.is_empty() {
        return;
    }
    let (batch, answers): (Vec<LocalPost>, Vec<(usize, AnsweredAs)>) = posts.drain(..).map(|p| (p.post, (p.slot, p.asked))).unzip();
    for (saved, (slot, asked)) in engine.post_locals(batch).await.into_iter().zip(answers) {
        replies[slot] = Some(match asked {
            AnsweredAs::V1 => create::saved_v1(saved),
            AnsweredAs::V2 { id } => v2_line(&id, create::saved_v2(saved)),
        });
    }
}

/// v1 `notify`, `notify_needs_you` and `notify_target` from an authorised client: the notice to
/// save, or the usage error. `None` for every other command (and before authorisation), which
/// `v1` answers.
fn v1_post(conn: &Conn, command: Option<Command>, args: &str) -> Option<Result<LocalPost, String>> {
    if !conn.authorised {
        return None;
    }
    Some(Create::parse_v1(command?, args)?.map(|c| c.post))
}

/// v2 `notification.create` and `notification.create_for_caller` from an authorised client: the
/// notice to save, or what is wrong with its params. `None` for every other method.
fn v2_post(conn: &Conn, method: Option<Method>, params: &Value) -> Option<Result<LocalPost, MethodError>> {
    match method? {
        _ if !conn.authorised => None,
        Method::NotificationCreate => Some(Create::parse(params).map(|c| c.post)),
        Method::NotificationCreateForCaller => Some(CreateForCaller::parse(params).map(|c| c.post)),
        _ => None,
    }
}

/// A v1 command other than the notices `answer_all` saves.
async fn v1(engine: &Engine, conn: &mut Conn, command: Option<Command>, args: &str) -> String {
    if command == Some(Command::Auth) {
        return Login::parse_v1(args).apply(conn).v1();
    }
    if !conn.authorised {
        return "ERROR: Authentication required".into();
    }
    match command {
        Some(Command::Ping) => Ping.v1(),
        Some(Command::ListNotifications) => List::v1(engine),
        Some(Command::ClearNotifications) => Clear.v1(engine).await,
        // The notices are saved by `answer_all` (`v1_post`); `auth` is answered above.
        Some(Command::Notify | Command::NotifyNeedsYou | Command::NotifyTarget | Command::Auth) | None => "ERROR: Unknown command".into(),
    }
}

/// A v2 request other than the notices `answer_all` saves; `word` is the method as sent, which
/// `method` is when it names one.
async fn v2(engine: &Engine, conn: &mut Conn, method: Option<Method>, word: &str, params: &Value) -> Result<Value, MethodError> {
    if method == Some(Method::AuthLogin) {
        return Login::parse(params)?.apply(conn).v2();
    }
    if !conn.authorised {
        return Err(MethodError::new(ErrorCode::AuthRequired, "authenticate first with auth.login"));
    }
    let Some(method) = method else {
        return Err(MethodError::new(ErrorCode::MethodNotFound, format!("unknown method {word:?}")));
    };
    match method {
        Method::SystemPing => Ping::parse(params)?.apply(),
        Method::SystemCapabilities => Capabilities::parse(params)?.apply(conn),
        Method::NotificationList => List::parse(params)?.apply(engine),
        Method::NotificationMarkRead => MarkRead::parse(params)?.apply(engine).await,
        Method::NotificationClear => Clear::parse(params)?.apply(engine).await,
        Method::SessionAttach => Attach::parse_from(params, conn.forwarded.as_ref())?.apply(engine),
        Method::SurfaceFocus => Focus::parse(params)?.apply(engine).await,
        Method::CloudFollow => Follow::parse(params)?.apply(engine).await,
        Method::CloudCancel => Cancel::parse(params)?.apply(engine).await,
        Method::DeliveryPause => Pause::parse(params)?.apply(engine),
        Method::DeliveryResume => Resume::parse(params)?.apply(engine),
        Method::AccountDeviceStart => DeviceStart::parse(params)?.apply(engine).await,
        Method::AccountDeviceWait => DeviceWait::parse(params)?.apply(engine).await,
        Method::AccountSignInToken => SignInToken::parse(params)?.apply(engine).await,
        Method::AccountSignOut => SignOut::parse(params)?.apply(engine).await,
        Method::TrayStatus => GetStatus::parse(params)?.apply(engine),
        Method::TrayView => GetTrayView::parse(params)?.apply(engine),
        Method::TrayMarkAllRead => MarkAllRead::parse(params)?.apply(engine).await,
        Method::SettingsReload => Reload::parse(params)?.apply(engine),
        // Answered by `answer_all` with their batch (`v2_post`); login above.
        Method::AuthLogin | Method::NotificationCreate | Method::NotificationCreateForCaller => {
            Err(MethodError::new(ErrorCode::InternalError, format!("{method} is answered with its batch")))
        }
    }
}
