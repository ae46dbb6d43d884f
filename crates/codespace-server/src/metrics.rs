//! `GET /metrics`: the Prometheus text format (0.0.4), through the Prometheus project's
//! client crate. Label values come only from the declared tables (a tool's name from
//! `for_each_tool!`, a code from `error_codes!`, or `OK`), never from a request's text, so
//! every label set is bounded. Gauges are read from the gateway at each scrape.

use std::sync::Arc;
use std::time::Duration;

use codespace_gateway::Gateway;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::{Registry, Unit};

/// The `Content-Type` of a scrape's answer.
pub(crate) const CONTENT_TYPE: &str = prometheus_client::encoding::prometheus_text::CONTENT_TYPE;

/// The outcome label of a call that succeeded.
pub(crate) const OK: &str = "OK";

/// The outcome label of a held call that asked the person in its result (`input_required`),
/// or of a task that came to wait for input.
pub(crate) const INPUT_REQUIRED: &str = "INPUT_REQUIRED";

/// The outcome label of a task that `tasks/cancel` stopped.
pub(crate) const CANCELLED: &str = "CANCELLED";

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CallLabels {
    tool: &'static str,
    code: &'static str,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ToolLabel {
    tool: &'static str,
}

type Histograms = Family<ToolLabel, Histogram, fn() -> Histogram>;

/// Every metric of the server, shared by every session and the scrape.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    calls: Family<CallLabels, Counter>,
    latency: Histograms,
    live_processes: Gauge,
    mutations_in_flight: Gauge,
    pending_holds: Gauge,
    queued_instructions: Gauge,
    ledger_commit: Histogram,
    watcher_resyncs: Counter,
    spilled_bytes: Counter,
    /// Held while the runner's totals are copied in, so two scrapes never add one twice.
    totals: std::sync::Mutex<()>,
}

fn call_histogram() -> Histogram {
    // 100 µs to about 105 s.
    Histogram::new(exponential_buckets(0.0001, 4.0, 11))
}

impl Metrics {
    /// The metrics, all at zero.
    pub fn new() -> Arc<Metrics> {
        let mut registry = Registry::with_prefix("codespace");
        let calls = Family::<CallLabels, Counter>::default();
        registry.register(
            "tool_calls",
            "Tool calls by tool and outcome code (OK or the error code)",
            calls.clone(),
        );
        let latency = Histograms::new_with_constructor(call_histogram as fn() -> Histogram);
        registry.register_with_unit(
            "tool_call_duration",
            "How long a tool call took, by tool, waits included",
            Unit::Seconds,
            latency.clone(),
        );
        let gauge = |registry: &mut Registry, name: &str, help: &str| {
            let g = Gauge::default();
            registry.register(name, help, g.clone());
            g
        };
        let live_processes = gauge(&mut registry, "live_processes", "Commands alive now");
        let mutations_in_flight =
            gauge(&mut registry, "mutations_in_flight", "Patches, reverts and spawns under way");
        let pending_holds = gauge(
            &mut registry,
            "pending_holds",
            "Confirmation holds waiting for a person's decision (-1: the ledger could not be read)",
        );
        let queued_instructions = gauge(
            &mut registry,
            "queued_instructions",
            "Instructions queued for the agent and not yet claimed (-1: the ledger could not be read)",
        );
        // 50 µs to about 52 s.
        let ledger_commit = Histogram::new(exponential_buckets(0.00005, 4.0, 11));
        registry.register_with_unit(
            "ledger_commit_duration",
            "How long one ledger write transaction took, commit and fsync included",
            Unit::Seconds,
            ledger_commit.clone(),
        );
        let watcher_resyncs = Counter::default();
        registry.register(
            "watcher_resyncs",
            "Workspace watcher resyncs (each dropped that workspace's caches)",
            watcher_resyncs.clone(),
        );
        let spilled_bytes = Counter::default();
        registry.register_with_unit(
            "output_spilled",
            "Command output written to spill files beyond the in-memory rings",
            Unit::Bytes,
            spilled_bytes.clone(),
        );
        Arc::new(Metrics {
            totals: std::sync::Mutex::new(()),
            watcher_resyncs,
            spilled_bytes,
            registry,
            calls,
            latency,
            live_processes,
            mutations_in_flight,
            pending_holds,
            queued_instructions,
            ledger_commit,
        })
    }

    /// Counts one tool call: `tool` from the tool table, `code` [`OK`] or an error code.
    pub(crate) fn call(&self, tool: &'static str, code: &'static str, took: Duration) {
        self.calls.get_or_create(&CallLabels { tool, code }).inc();
        self.latency.get_or_create(&ToolLabel { tool }).observe(took.as_secs_f64());
    }

    /// One ledger write transaction took `took`.
    pub fn ledger_commit(&self, took: Duration) {
        self.ledger_commit.observe(took.as_secs_f64());
    }

    /// The scrape: the gauges read from `gateway` now, then every metric as text.
    pub(crate) async fn render(&self, gateway: &Gateway) -> Result<String, std::fmt::Error> {
        let gauges = gateway.gauges().await;
        self.live_processes.set(gauges.live_processes as i64);
        self.mutations_in_flight.set(gauges.mutations_in_flight as i64);
        let (holds, queued) = gauges
            .ledger
            .map_or((-1, -1), |t| (t.pending_holds as i64, t.queued_instructions as i64));
        self.pending_holds.set(holds);
        self.queued_instructions.set(queued);
        // The runner keeps totals; each counter moves up to its total.
        if let Some(runner) = gauges.runner {
            let _one = self.totals.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            for (counter, total) in [
                (&self.watcher_resyncs, runner.watcher_resyncs),
                (&self.spilled_bytes, runner.spilled_bytes),
            ] {
                counter.inc_by(total.saturating_sub(counter.get()));
            }
        }
        let mut text = String::new();
        prometheus_client::encoding::prometheus_text::encode(&mut text, &self.registry)?;
        Ok(text)
    }
}
