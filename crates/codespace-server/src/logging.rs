//! Tracing, and the server's own warnings as MCP log notifications: every `warn!` or
//! `error!` of a CodeSpace crate also reaches each connected session as
//! `notifications/message`, at or above the level the session chose with
//! `logging/setLevel` (`warning` until it chooses). Warnings raised before serving (a
//! recovered operation) are kept and sent to each session when it is initialized.
// rmcp marks the logging types deprecated (a later protocol revision drops them); the
// protocol revisions this server speaks still define them.
#![expect(deprecated, reason = "MCP logging is part of the protocol revisions served")]

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use rmcp::{Peer, RoleServer};
use serde_json::{Map, Value};
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, filter::LevelFilter};

/// At most this many start-up warnings are kept for sessions that connect later.
const EARLY_KEEP: usize = 32;

/// Stderr gets what `RUST_LOG` asks for (default `info`); clients get every warning and
/// error whatever `RUST_LOG` says.
pub(crate) fn init() {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let stderr = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_filter(filter);
    tracing_subscriber::registry()
        .with(stderr)
        .with(ClientLog.with_filter(LevelFilter::WARN))
        .init();
}

/// The severity order of MCP levels (the rmcp type has no order of its own).
fn rank(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

/// The level one session asked for.
pub(crate) struct SessionLevel(AtomicU8);

impl SessionLevel {
    pub(crate) fn new() -> Arc<SessionLevel> {
        Arc::new(SessionLevel(AtomicU8::new(rank(LoggingLevel::Warning))))
    }

    pub(crate) fn set(&self, level: LoggingLevel) {
        self.0.store(rank(level), Ordering::Relaxed);
    }

    fn admits(&self, level: LoggingLevel) -> bool {
        rank(level) >= self.0.load(Ordering::Relaxed)
    }
}

#[derive(Default)]
struct Hub {
    sessions: Vec<(Peer<RoleServer>, Arc<SessionLevel>)>,
    early: Vec<LoggingMessageNotificationParam>,
    serving: bool,
}

fn hub() -> &'static Mutex<Hub> {
    static HUB: OnceLock<Mutex<Hub>> = OnceLock::new();
    HUB.get_or_init(Mutex::default)
}

/// From here on warnings go to sessions only; the ones raised so far are kept for them.
pub(crate) fn serving() {
    if let Ok(mut h) = hub().lock() {
        h.serving = true;
    }
}

/// Registers an initialized session and sends it the start-up warnings it admits.
pub(crate) fn attach(peer: Peer<RoleServer>, level: Arc<SessionLevel>) {
    let Ok(mut h) = hub().lock() else { return };
    h.sessions.retain(|(p, _)| !p.is_transport_closed());
    for note in &h.early {
        if level.admits(note.level) {
            send(&peer, note.clone());
        }
    }
    h.sessions.push((peer, level));
}

fn publish(note: LoggingMessageNotificationParam) {
    let Ok(mut h) = hub().lock() else { return };
    if !h.serving {
        if h.early.len() < EARLY_KEEP {
            h.early.push(note);
        }
        return;
    }
    h.sessions.retain(|(p, _)| !p.is_transport_closed());
    for (peer, level) in &h.sessions {
        if level.admits(note.level) {
            send(peer, note.clone());
        }
    }
}

/// Sends without waiting: a tracing event must never block on a slow client.
fn send(peer: &Peer<RoleServer>, note: LoggingMessageNotificationParam) {
    let Ok(runtime) = tokio::runtime::Handle::try_current() else { return };
    let peer = peer.clone();
    runtime.spawn(async move {
        // A session that went away just misses the message.
        let _ = peer.notify_logging_message(note).await;
    });
}

/// The tracing layer that turns CodeSpace's warnings and errors into notifications.
struct ClientLog;

impl<S: Subscriber> Layer<S> for ClientLog {
    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        let meta = event.metadata();
        // rmcp's and other libraries' events are about the transport, not for the client.
        if !meta.target().starts_with("codespace") {
            return;
        }
        let level =
            if *meta.level() == Level::ERROR { LoggingLevel::Error } else { LoggingLevel::Warning };
        let mut fields = Fields(Map::new());
        event.record(&mut fields);
        let note = LoggingMessageNotificationParam::new(level, Value::Object(fields.0))
            .with_logger("codespace");
        publish(note);
    }
}

/// An event's fields as a JSON object (`message` holds the text).
struct Fields(Map<String, Value>);

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), Value::from(value));
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.0.insert(field.name().to_owned(), Value::from(value));
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.0.insert(field.name().to_owned(), Value::from(value));
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.0.insert(field.name().to_owned(), Value::from(value));
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), Value::from(format!("{value:?}")));
    }
}
