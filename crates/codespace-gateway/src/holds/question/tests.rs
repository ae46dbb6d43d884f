//! Unit tests of `holds::question`: the patch as the person reads it, and a retry's state
//! opened only for its own hold and request, under this key, before its expiry.
#![expect(clippy::disallowed_methods, reason = "tests build their fixtures on the host filesystem")]

use std::sync::Arc;

use codespace_policy::Registry;
use codespace_process::{Supervisor, SupervisorConfig};
use codespace_protocol::{ApprovalState, ErrorCode};
use codespace_store::Store;

use super::*;
use crate::Workspaces;

/// A gateway over workspace `w` (approvals confirm, `a.txt` holding `top`).
fn gateway(dir: &std::path::Path) -> Gateway {
    std::fs::create_dir_all(dir.join("w")).unwrap();
    std::fs::write(dir.join("w/a.txt"), "top\n").unwrap();
    let registry = Registry::parse(
        &serde_json::json!({"workspaces": {
            "w": {"root": dir.join("w"), "profile": "workspace-write", "approvals": "confirm"},
        }})
        .to_string(),
    )
    .unwrap();
    let workspaces = Workspaces::open(&registry).unwrap();
    let supervisor =
        Supervisor::new(SupervisorConfig::new(std::path::PathBuf::from("/nonexistent/reaper")));
    let runner = workspaces
        .local_runner(|roots| codespace_runner::LocalRunner::open(roots, supervisor, true))
        .unwrap();
    Gateway::for_tests(workspaces, runner, Arc::new(Store::open_in_memory().unwrap()), vec![])
}

fn patch(line: &str) -> ApplyPatchParams {
    let text =
        format!("*** Begin Patch\n*** Update File: a.txt\n@@\n top\n+{line}\n*** End Patch\n");
    serde_json::from_value(serde_json::json!({"workspace_id": "w", "patch": text})).unwrap()
}

/// The pending hold of `p`'s request.
async fn hold_of(gw: &Gateway, p: ApplyPatchParams) -> String {
    let held = gw.apply_patch(p).await.unwrap_err().to_body();
    assert_eq!(held.code, ErrorCode::ApprovalRequired);
    held.approval_id.unwrap()
}

fn code(e: GatewayError) -> ErrorCode {
    e.to_body().code
}

#[tokio::test]
async fn a_state_opens_only_for_its_own_request_unchanged_and_in_time() {
    let dir = tempfile::tempdir().unwrap();
    let gw = gateway(dir.path());
    let id = hold_of(&gw, patch("x")).await;
    let q = gw.question(&id, Duration::from_secs(600)).await.unwrap();
    assert!(q.message.contains("+x"), "{}", q.message);
    let opened = gw.open_question(HeldTool::ApplyPatch, &patch("x"), &q.request_state).await;
    let opened = opened.unwrap();
    assert_eq!((opened.approval_id.as_str(), opened.state), (id.as_str(), ApprovalState::Pending));
    // Another request, another tool, a changed or cut state, another kind of text.
    let other = gw.open_question(HeldTool::ApplyPatch, &patch("y"), &q.request_state).await;
    assert_eq!(code(other.unwrap_err()), ErrorCode::RequestStateInvalid);
    let exec: codespace_protocol::ExecCommandParams =
        serde_json::from_value(serde_json::json!({"workspace_id": "w", "command": ["true"]}))
            .unwrap();
    let tool = gw.open_question(HeldTool::ExecCommand, &exec, &q.request_state).await;
    assert_eq!(code(tool.unwrap_err()), ErrorCode::RequestStateInvalid);
    let (head, seal) = q.request_state.rsplit_once('.').unwrap();
    let flipped = format!("{head}.{}", seal.replace(|c: char| c.is_ascii_digit(), "a"));
    let cut = &q.request_state[..q.request_state.len() - 1];
    for bad in [flipped.as_str(), cut, "", "cs1", "cs1.zz.hmac-sha256:00", "x.y.z.w"] {
        let e = gw.open_question(HeldTool::ApplyPatch, &patch("x"), bad).await.unwrap_err();
        assert_eq!(code(e), ErrorCode::RequestStateInvalid, "{bad}");
    }
    // Expired: refused, and the hold is as it was.
    let old = gw.question(&id, Duration::ZERO).await.unwrap();
    tokio::time::sleep(Duration::from_millis(5)).await;
    let e = gw.open_question(HeldTool::ApplyPatch, &patch("x"), &old.request_state).await;
    let body = e.unwrap_err().to_body();
    assert_eq!(body.code, ErrorCode::RequestStateExpired);
    assert_eq!(body.approval_id.as_deref(), Some(id.as_str()));
}

#[test]
fn a_short_patch_is_shown_whole_with_hidden_characters_written_out() {
    let text =
        "*** Begin Patch\n*** Update File: a\u{202E}b\n@@\n top\n+x\u{1b}[31m\n*** End Patch\n";
    let shown = patch_excerpt(text, "appr-1");
    assert_eq!(
        shown,
        "*** Begin Patch\n*** Update File: a\\u{202E}b\n@@\n top\n+x\\u{001B}[31m\n*** End Patch"
    );
}

#[test]
fn a_long_patch_shows_its_first_lines_and_counts_the_rest() {
    let mut text = String::from("*** Begin Patch\n*** Add File: big.txt\n");
    for i in 0..1000 {
        text.push_str(&format!("+line {i}\n"));
    }
    text.push_str("*** End Patch\n");
    let shown = patch_excerpt(&text, "appr-1");
    let lines: Vec<&str> = shown.lines().collect();
    assert_eq!(lines.len(), SHOWN_PATCH_LINES + 1, "{shown}");
    assert_eq!(lines[2], "+line 0");
    assert_eq!(
        lines[SHOWN_PATCH_LINES],
        "... and 803 more line(s) of the patch, not shown (`codespace approvals show appr-1` prints it all)"
    );
}

#[test]
fn a_very_long_line_is_cut_and_the_whole_is_bounded() {
    let long = "x".repeat(100_000);
    let text = format!("*** Begin Patch\n*** Add File: one.txt\n+{long}\n*** End Patch\n");
    let shown = patch_excerpt(&text, "appr-1");
    assert!(shown.contains("... (99601 more characters)"), "{}", &shown[..600]);
    assert!(shown.chars().count() < 2_000, "{}", shown.len());
    let many = format!("*** Begin Patch\n{}", format!("+{}\n", "y".repeat(399)).repeat(150));
    let shown = patch_excerpt(&many, "appr-1");
    assert!(shown.len() <= SHOWN_PATCH_CHARS + 200, "{}", shown.len());
    assert!(shown.ends_with("prints it all)"), "{}", &shown[shown.len() - 200..]);
}
