//! Helpers shared by the benchmarks: medians, the built binary, a tool call.

use std::path::PathBuf;
use std::time::Duration;

use rmcp::RoleClient;
use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use serde_json::Value;

pub(crate) fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// The `codespace` binary the bench profile builds beside the bench executable.
pub(crate) fn binary() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let bin = exe.parent().unwrap().parent().unwrap().join("codespace");
    assert!(bin.exists(), "{} missing: run `cargo bench -p codespace-server`", bin.display());
    bin
}

/// Calls a tool and returns its structuredContent; a refusal fails the benchmark.
#[allow(dead_code)] // not every benchmark calls tools through this
pub(crate) async fn call(
    client: &RunningService<RoleClient, ()>,
    name: &str,
    args: Value,
) -> Value {
    let Value::Object(map) = args else { unreachable!("arguments are an object") };
    let r = client
        .call_tool(CallToolRequestParams::new(name.to_owned()).with_arguments(map))
        .await
        .unwrap();
    assert_ne!(r.is_error, Some(true), "{name}: {:?}", r.content);
    r.structured_content.unwrap()
}
