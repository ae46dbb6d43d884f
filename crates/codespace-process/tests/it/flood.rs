//! R4: a 100 MB output flood keeps the supervisor's memory bounded and says what was
//! dropped.
#![expect(
    clippy::disallowed_methods,
    reason = "the test re-runs itself as a child process to measure its memory"
)]

use std::collections::HashMap;

use codespace_process::DEFAULT_RING_BYTES;
use codespace_types::Termination;

use crate::support::*;

const FLOOD: u64 = 100_000_000;

#[tokio::test]
async fn r4_a_100_mb_flood_is_capped_at_the_ring_and_reports_the_loss() {
    let sup = supervisor();
    let spawned = sup.spawn(req(&["head", "-c", &FLOOD.to_string(), "/dev/zero"])).await.unwrap();
    let status = wait_exit(&sup, &spawned).await;
    assert_eq!((status.termination, status.exit_code), (Some(Termination::Exited), Some(0)));
    assert_eq!(status.output_total, FLOOD);
    assert_eq!(status.retained_from, FLOOD - DEFAULT_RING_BYTES as u64);
    assert!(status.eof);

    let chunk = sup.read(&spawned.id, 0, usize::MAX).unwrap();
    assert!(chunk.output_lost);
    assert_eq!(chunk.retained_from, FLOOD - DEFAULT_RING_BYTES as u64);
    assert_eq!(chunk.chunk.len(), DEFAULT_RING_BYTES);
    assert!(chunk.chunk.iter().all(|b| *b == 0));
    assert_eq!(chunk.cursor, FLOOD);
    assert!(chunk.eof);
    // Reading on from the returned cursor loses nothing more.
    let next = sup.read(&spawned.id, chunk.cursor, 10).unwrap();
    assert!(!next.output_lost && next.eof && next.chunk.is_empty());
}

#[test]
fn r4_a_100_mb_flood_keeps_the_supervisors_memory_bounded() {
    // Measured in a helper process that runs nothing but the supervisor: this test
    // process runs other tests concurrently, so its own RSS says nothing about the flood.
    let out = std::process::Command::new(example("supervise"))
        .arg(example("reaper"))
        .args(["flood", "head", "-c", &FLOOD.to_string(), "/dev/zero"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", lossy(&out.stderr));
    let text = lossy(&out.stdout);
    let fig: HashMap<&str, u64> = text
        .split_whitespace()
        .filter_map(|kv| kv.split_once('=').and_then(|(k, v)| Some((k, v.parse().ok()?))))
        .collect();
    assert_eq!(fig["output_total"], FLOOD, "{text}");
    assert_eq!(fig["retained_from"], FLOOD - DEFAULT_RING_BYTES as u64, "{text}");
    assert_eq!(fig["exit_code"], 0, "{text}");
    let rss_growth = fig["rss_peak"].saturating_sub(fig["rss_before"]);
    let anon_growth = fig["anon_peak"].saturating_sub(fig["anon_before"]);
    eprintln!(
        "R4: 100 MB in {} ms; supervisor VmRSS {} -> peak {} KiB (+{rss_growth}), \
         RssAnon {} -> peak {} KiB (+{anon_growth})",
        fig["elapsed_ms"], fig["rss_before"], fig["rss_peak"], fig["anon_before"], fig["anon_peak"]
    );
    assert!(rss_growth < 32 * 1024, "VmRSS grew by {rss_growth} KiB: {text}");
    assert!(anon_growth < 32 * 1024, "RssAnon grew by {anon_growth} KiB: {text}");
}
