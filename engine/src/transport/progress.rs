//! Progress notifications, and what they say about a call still running; and the watch kept on a
//! call past its timeout, to tell a slow answer from none.
//!
//! rmcp puts a `_meta.progressToken` on every request; the server's `notifications/progress` for
//! that token reach [`Handler::on_progress`] and land in the [`Book`]. A call's deadline is its
//! timeout after the last progress (never past `--max-call-time` from its start), and a call whose
//! own `progress` / `total` show it cannot finish by then is given up on at once
//! ([`Track::unbounded`]).

use super::asks::{self, ClientFeatures, Heard};
use rmcp::RoleClient;
use rmcp::handler::client::ClientHandler;
use rmcp::model::{ClientConfig, ProgressNotificationParam, ProgressToken};
use rmcp::service::NotificationContext;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{Notify, watch};

/// Progress samples needed before a rate is believed.
const MIN_SAMPLES: u32 = 3;
/// Time the samples must span before a rate is believed.
const MIN_SPAN: Duration = Duration::from_millis(200);
/// How far past the limit the estimate must be before a call is cancelled: an estimate only
/// just past it is left to run into the limit (the rate may pick up a little; a quarter more
/// than three steady reports showed is not seen in practice).
const MARGIN: f64 = 1.25;

/// The client side of the connection: the handshake's identity, and the progress book.
pub(crate) struct Handler {
    pub info: ClientConfig,
    pub book: Arc<Book>,
    /// `roots/list`'s answer (`--roots`): URI and name of each.
    pub roots: Vec<(String, Option<String>)>,
    /// Told when the server asks for the roots.
    pub roots_asked: Arc<tokio::sync::Notify>,
    /// The client features declared, and how they are answered.
    pub features: ClientFeatures,
    /// What the server asked and told, for the run's checks.
    pub heard: Arc<Heard>,
    /// Elicitations answered so far (each accepted form gets content of its own).
    pub elicited: std::sync::atomic::AtomicU64,
}

// Sampling is in the 2025-11-25 specification servers follow; rmcp marks it deprecated ahead
// of SEP-2577 (as it does roots, below).
#[allow(deprecated)]
impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        self.info.clone()
    }

    // Roots are in the 2025-11-25 specification that servers such as server-filesystem follow;
    // rmcp marks them deprecated ahead of SEP-2577.
    #[allow(deprecated)]
    fn list_roots(
        &self,
        _context: rmcp::service::RequestContext<RoleClient>,
    ) -> impl Future<Output = Result<rmcp::model::ListRootsResult, rmcp::ErrorData>> + Send + '_
    {
        let roots = self
            .roots
            .iter()
            .map(|(uri, name)| {
                let root = rmcp::model::Root::new(uri.clone());
                match name {
                    Some(n) => root.with_name(n.clone()),
                    None => root,
                }
            })
            .collect();
        self.roots_asked.notify_one();
        if self.roots.is_empty() {
            self.heard.undeclared("`roots/list` without the `roots` capability".into());
            return std::future::ready(Err(rmcp::ErrorData::method_not_found::<
                rmcp::model::ListRootsRequestMethod,
            >()));
        }
        std::future::ready(Ok(rmcp::model::ListRootsResult::new(roots)))
    }

    fn create_message(
        &self,
        params: rmcp::model::CreateMessageRequestParams,
        _context: rmcp::service::RequestContext<RoleClient>,
    ) -> impl Future<Output = Result<rmcp::model::CreateMessageResult, rmcp::ErrorData>> + Send + '_
    {
        use rmcp::model::{CreateMessageRequestMethod, CreateMessageResult, SamplingMessage};
        if !self.features.sampling {
            self.heard.undeclared(
                "`sampling/createMessage` without the `sampling` capability (declare it with \
                 --client-capabilities sampling)"
                    .into(),
            );
            return std::future::ready(Err(rmcp::ErrorData::method_not_found::<
                CreateMessageRequestMethod,
            >()));
        }
        self.heard.sampling(asks::sampling_problem(&params));
        let message = SamplingMessage::assistant_text(SAMPLED);
        let mut result = CreateMessageResult::new(message, "mcp-fuzz".into());
        result.stop_reason = Some("endTurn".into());
        std::future::ready(Ok(result))
    }

    fn create_elicitation(
        &self,
        request: rmcp::model::ElicitRequestParams,
        _context: rmcp::service::RequestContext<RoleClient>,
    ) -> impl Future<Output = Result<rmcp::model::ElicitResult, rmcp::ErrorData>> + Send + '_ {
        if !self.features.elicitation {
            self.heard.undeclared(
                "`elicitation/create` without the `elicitation` capability (declare it with \
                 --client-capabilities elicitation)"
                    .into(),
            );
            return std::future::ready(Err(rmcp::ErrorData::method_not_found::<
                rmcp::model::ElicitationCreateRequestMethod,
            >()));
        }
        self.heard.elicitation(asks::elicitation_problem(&request));
        let n = self.elicited.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        std::future::ready(Ok(asks::elicitation_answer(&request, self.features.elicit, n)))
    }

    /// A request rmcp could not read as one it knows: a sampling or elicitation request whose
    /// params do not fit the specification's shape is noted as such (and refused with
    /// -32602); anything else is not served (-32601).
    fn on_custom_request(
        &self,
        request: rmcp::model::CustomRequest,
        _context: rmcp::service::RequestContext<RoleClient>,
    ) -> impl Future<Output = Result<rmcp::model::CustomResult, rmcp::ErrorData>> + Send + '_ {
        let rmcp::model::CustomRequest { method, params, .. } = request;
        let params = params.unwrap_or(serde_json::Value::Null);
        let misshapen = match method.as_str() {
            "sampling/createMessage" if self.features.sampling => {
                asks::misshapen::<rmcp::model::CreateMessageRequestParams>(&params)
                    .map(|p| self.heard.sampling(Some(p)))
            }
            "elicitation/create" if self.features.elicitation => {
                asks::misshapen::<rmcp::model::ElicitRequestParams>(&params)
                    .map(|p| self.heard.elicitation(Some(p)))
            }
            "sampling/createMessage" | "elicitation/create" | "roots/list" => {
                self.heard.undeclared(format!("`{method}` without the capability"));
                None
            }
            _ => None,
        };
        std::future::ready(Err(match misshapen {
            Some(()) => rmcp::ErrorData::invalid_params(
                format!("mcp-fuzz could not read the {method} params"),
                None,
            ),
            None => rmcp::ErrorData::new(rmcp::model::ErrorCode::METHOD_NOT_FOUND, method, None),
        }))
    }

    fn on_tool_list_changed(
        &self,
        context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        self.list_changed("tools", &context, |c| c.tools.as_ref()?.list_changed);
        std::future::ready(())
    }

    fn on_prompt_list_changed(
        &self,
        context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        self.list_changed("prompts", &context, |c| c.prompts.as_ref()?.list_changed);
        std::future::ready(())
    }

    fn on_resource_list_changed(
        &self,
        context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        self.list_changed("resources", &context, |c| c.resources.as_ref()?.list_changed);
        std::future::ready(())
    }

    fn on_logging_message(
        &self,
        _params: rmcp::model::LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        self.heard.log_message(None);
        std::future::ready(())
    }

    fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        let before = self.book.get(&params.progress_token).map(|t| t.last.1);
        self.heard.progress(before.filter(|b| params.progress <= *b).map(|b| {
            format!(
                "progress went from {} to {} for token {}",
                number(b),
                number(params.progress),
                serde_json::to_string(&params.progress_token).unwrap_or_default()
            )
        }));
        self.book.record(&params.progress_token, params.progress, params.total, Instant::now());
        std::future::ready(())
    }
}

impl Handler {
    /// A `notifications/{what}/list_changed`: the server must have declared `listChanged` for
    /// `what` (it told clients it would send these; unannounced, they are never listened for).
    /// `listed` reads that capability's `listChanged` from what the server declared.
    fn list_changed(
        &self,
        what: &str,
        context: &NotificationContext<RoleClient>,
        listed: fn(&rmcp::model::ServerCapabilities) -> Option<bool>,
    ) {
        let declared = context.peer.peer_info().and_then(|p| listed(&p.capabilities)) == Some(true);
        self.heard.list_changed((!declared).then(|| {
            format!(
                "`notifications/{what}/list_changed` from a server that did not declare \
                 `{what}.listChanged`"
            )
        }));
    }
}

/// The text of every sampling answer.
const SAMPLED: &str = "mcp-fuzz: a fixed sampling answer (no model was asked)";

/// What the server said about each call's progress.
#[derive(Default)]
pub(crate) struct Book {
    tracks: Mutex<HashMap<ProgressToken, Track>>,
    /// Woken on every progress notification.
    pub notify: Notify,
}

/// The progress of one call: the first and the last report.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Track {
    first: (Instant, f64),
    last: (Instant, f64),
    total: Option<f64>,
    count: u32,
}

impl Book {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<ProgressToken, Track>> {
        self.tracks.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub fn record(&self, token: &ProgressToken, progress: f64, total: Option<f64>, at: Instant) {
        {
            let mut tracks = self.lock();
            let t = tracks.entry(token.clone()).or_insert(Track {
                first: (at, progress),
                last: (at, progress),
                total,
                count: 0,
            });
            t.last = (at, progress);
            t.total = total.or(t.total);
            t.count += 1;
        }
        self.notify.notify_waiters();
    }

    pub fn get(&self, token: &ProgressToken) -> Option<Track> {
        self.lock().get(token).copied()
    }

    pub fn forget(&self, token: &ProgressToken) {
        self.lock().remove(token);
    }
}

impl Track {
    /// When the last report came.
    pub fn last_at(&self) -> Instant {
        self.last.0
    }

    /// Why a call that started at `start` cannot finish by `limit` at the rate its reports show,
    /// if they show it: `(estimated time to finish, the text of the estimate)`.
    pub fn unbounded(&self, start: Instant, limit: Duration) -> Option<String> {
        let total = self.total?;
        let (t0, p0) = self.first;
        let (t1, p1) = self.last;
        let span = t1.saturating_duration_since(t0);
        if self.count < MIN_SAMPLES || span < MIN_SPAN || p1 <= p0 || !total.is_finite() {
            return None;
        }
        let rate = (p1 - p0) / span.as_secs_f64();
        let left = (total - p1).max(0.0) / rate;
        let finish = t1.saturating_duration_since(start).as_secs_f64() + left;
        (finish > limit.as_secs_f64() * MARGIN).then(|| {
            format!(
                "about {} in all at the observed rate ({} of {} after {:.1} s, {}/s): it cannot \
                 finish within {} s, so it was cancelled",
                mcp_fuzz_model::text::duration(finish),
                number(p1),
                number(total),
                t1.saturating_duration_since(start).as_secs_f64(),
                number(rate),
                limit.as_secs()
            )
        })
    }
}

/// A number as a person reads it: integers without a fraction.
fn number(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e17 { format!("{x:.0}") } else { format!("{x:.1}") }
}

/// How a call given up on at its timeout ended later, watched until `--max-call-time`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Late {
    /// Still watched.
    Waiting,
    /// It was answered this long after it was sent.
    Answered(Duration),
    /// No answer within the limit (it was cancelled then), or the connection ended first: how
    /// long it was watched.
    Unanswered(Duration),
}

/// The watch on one call past its timeout.
#[derive(Debug, Clone)]
pub struct LateWatch {
    rx: watch::Receiver<Late>,
    start: Instant,
    limit: Instant,
    /// Tells the watching task to cancel the call and stop.
    stop: Arc<Notify>,
}

impl LateWatch {
    pub(crate) fn new(start: Instant, limit: Instant) -> (watch::Sender<Late>, Self) {
        let (tx, rx) = watch::channel(Late::Waiting);
        (tx, Self { rx, start, limit, stop: Arc::new(Notify::new()) })
    }

    /// What the watching task waits on, besides the answer and the limit.
    pub(crate) fn stop_signal(&self) -> Arc<Notify> {
        Arc::clone(&self.stop)
    }

    /// Stops watching: the call, if still unanswered, is cancelled.
    pub fn give_up(&self) {
        self.stop.notify_one();
    }

    /// A watch that already ended with no answer (nothing to watch, e.g. over HTTP once the
    /// transport is gone).
    #[must_use]
    pub fn ended(start: Instant) -> Self {
        let (tx, mut w) = Self::new(start, Instant::now());
        let _ = tx.send(Late::Unanswered(start.elapsed()));
        w.rx.mark_changed();
        w
    }

    /// What is known now.
    #[must_use]
    pub fn now(&self) -> Late {
        *self.rx.borrow()
    }

    /// Waits until the call is answered or the watch ends, but not past `by`: what is known then
    /// (still `Waiting` if nothing is).
    pub async fn settle(&self, by: Instant) -> Late {
        let mut rx = self.rx.clone();
        let until = tokio::time::Instant::from_std(by.min(self.limit));
        let _ = tokio::time::timeout_at(until, rx.wait_for(|l| *l != Late::Waiting)).await;
        *rx.borrow()
    }

    /// When the watch ends at the latest (`--max-call-time` after the call was sent).
    #[must_use]
    pub fn limit(&self) -> Instant {
        self.limit
    }

    /// When the call was sent.
    #[must_use]
    pub fn sent(&self) -> Instant {
        self.start
    }

    /// How long the call has been in flight.
    #[must_use]
    pub fn watched(&self) -> Duration {
        self.start.elapsed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn track(samples: &[(u64, f64)], total: f64) -> (Instant, Track) {
        let start = Instant::now();
        let book = Book::default();
        let token = ProgressToken(rmcp::model::NumberOrString::Number(1));
        for (ms, p) in samples {
            book.record(&token, *p, Some(total), start + Duration::from_millis(*ms));
        }
        (start, book.get(&token).expect("recorded"))
    }

    #[test]
    fn a_rate_that_cannot_finish_is_told_with_its_estimate() {
        // server-everything's long-running tool with steps 2^31 - 1: 1000 steps a second.
        let (start, t) =
            track(&[(0, 0.0), (100, 100.0), (200, 200.0), (300, 300.0)], 2_147_483_647.0);
        let text = t.unbounded(start, Duration::from_secs(60)).expect("unbounded");
        assert!(text.starts_with("about 25 days in all"), "{text}");
        assert!(text.contains("300 of 2147483647 after 0.3 s, 1000/s"), "{text}");
    }

    #[test]
    fn a_rate_that_finishes_in_time_or_too_few_samples_say_nothing() {
        let (start, t) = track(&[(0, 0.0), (300, 1.0), (600, 2.0)], 10.0);
        assert_eq!(t.unbounded(start, Duration::from_secs(60)), None, "3 s in all");
        let (start, t) = track(&[(0, 0.0), (100, 100.0)], 1e12);
        assert_eq!(t.unbounded(start, Duration::from_secs(60)), None, "two samples");
        let (start, t) = track(&[(0, 5.0), (300, 5.0), (600, 5.0)], 1e12);
        assert_eq!(t.unbounded(start, Duration::from_secs(60)), None, "no rate yet");
        // 70 s of work against a 60 s limit is left to run into the limit; 90 s is not.
        let (start, t) = track(&[(0, 0.0), (500, 1.0), (1000, 2.0)], 140.0);
        assert_eq!(t.unbounded(start, Duration::from_secs(60)), None);
        let (start, t) = track(&[(0, 0.0), (500, 1.0), (1000, 2.0)], 180.0);
        assert!(t.unbounded(start, Duration::from_secs(60)).is_some());
    }
}
