//! `codespace approvals list|show|grant|deny`: an operator answers confirmation holds from
//! another terminal, on the ledger a running server uses (SQLite's locks order the two
//! writers; every change is the same compare-and-swap `approval_resolve` makes). Reports go
//! to stdout, every control and format character in them written out (`\u{202E}` in text,
//! `\u202e` in JSON); nothing here serves MCP.

use codespace_gateway::GatewayError;
use codespace_protocol::{Decision, ErrorCode};
use codespace_store::{HoldFilter, HoldRecord};
use codespace_types::visible;
use serde_json::json;

use crate::Failure;
use crate::cli::{ApprovalIdArgs, ApprovalListArgs, ApprovalsCommand};
use crate::operations::{open, print, runtime};

pub(crate) fn run(command: ApprovalsCommand) -> Result<(), Failure> {
    match command {
        ApprovalsCommand::List(args) => list(&args),
        ApprovalsCommand::Show(args) => {
            let store = open(&args.ledger, &[])?;
            let hold = codespace_gateway::show_hold(&store, &args.approval_id).map_err(refusal)?;
            let text = serde_json::to_string_pretty(&detail(&hold)).map_err(runtime)?;
            print(&format!("{}\n", visible::escape_json(&text)))
        }
        ApprovalsCommand::Grant(args) => decide(&args, Decision::Grant),
        ApprovalsCommand::Deny(args) => decide(&args, Decision::Deny),
    }
}

fn list(args: &ApprovalListArgs) -> Result<(), Failure> {
    let store = open(&args.ledger, &[])?;
    let filter = HoldFilter { workspace_id: args.workspace.clone(), state: args.state };
    let holds = codespace_gateway::list_holds(&store, &filter, args.limit).map_err(runtime)?;
    if args.json {
        let rows: Vec<_> = holds.iter().map(row).collect();
        let text = serde_json::to_string_pretty(&rows).map_err(runtime)?;
        return print(&format!("{}\n", visible::escape_json(&text)));
    }
    let mut out = String::new();
    for h in &holds {
        let first = h.summary.lines().next().unwrap_or("");
        out.push_str(&format!(
            "{}\t{}\t{}\t{}\t{}\t{}\n",
            visible::escape(&h.approval_id, false),
            h.state,
            visible::escape(&h.workspace_id, false),
            h.tool,
            h.created_at,
            visible::escape(first, false)
        ));
    }
    print(&out)
}

fn decide(args: &ApprovalIdArgs, decision: Decision) -> Result<(), Failure> {
    let store = open(&args.ledger, &[])?;
    let hold =
        codespace_gateway::decide_hold(&store, &args.approval_id, decision).map_err(refusal)?;
    let next = match decision {
        Decision::Grant => "; the client runs it with operation_resume",
        Decision::Deny => "",
    };
    print(&format!("{}\t{}{next}\n", hold.approval_id, hold.state))
}

/// A hold as a list row.
fn row(h: &HoldRecord) -> serde_json::Value {
    json!({
        "approval_id": h.approval_id,
        "state": h.state,
        "workspace_id": h.workspace_id,
        "tool": h.tool,
        "created_at": h.created_at,
        "resolved_at": h.resolved_at,
        "operation_id": h.operation_id,
        "owner": h.owner,
        "summary": h.summary,
    })
}

/// A hold in full: the row, the arguments while it is active, the stored outcome once
/// consumed.
fn detail(h: &HoldRecord) -> serde_json::Value {
    let mut value = row(h);
    let parse = |text: &Option<String>| {
        text.as_deref().and_then(|t| serde_json::from_str::<serde_json::Value>(t).ok())
    };
    value["arguments"] = parse(&h.params_json).unwrap_or(serde_json::Value::Null);
    value["result"] = parse(&h.result_json).unwrap_or(serde_json::Value::Null);
    value
}

/// A hold that is missing or no longer pending is the operator's to look at: exit 3 with
/// the reason; a ledger failure is a runtime failure.
fn refusal(e: GatewayError) -> Failure {
    match e.code() {
        ErrorCode::ApprovalNotFound | ErrorCode::ApprovalConflict => {
            Failure::Refused(e.to_string())
        }
        _ => runtime(e),
    }
}
