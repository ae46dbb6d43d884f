//! Asking the person about a pending hold: the prompt (the hold's summary and, for a patch,
//! the patch itself, bounded, every hidden character written out), and for a client that
//! answers on a retry (MCP 2026-07-28's `input_required`) a `requestState` the server seals:
//! `cs1.<payload as hex>.<seal>`, the server key's HMAC over the payload (the hold's id,
//! workspace, tool and request fingerprint, and when the question expires). A retry's state
//! is opened only when its seal verifies, it was made for this very request (tool,
//! workspace, fingerprint) and hold, and it has not expired; otherwise nothing runs and no
//! decision is recorded (`REQUEST_STATE_INVALID`, `REQUEST_STATE_EXPIRED`).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use codespace_protocol::{ApplyPatchParams, ApprovalResult, HeldTool};
use codespace_store::HoldRecord;
use codespace_types::visible;
use serde::{Deserialize, Serialize};

use super::{Held, resume};
use crate::error::TrustError;
use crate::{Gateway, GatewayError};

/// The seal's domain: a seal made for anything else (a hold, say) never verifies as this.
const DOMAIN: &str = "codespace request state v1";

/// The state's version tag, its first dot-separated part.
const TAG: &str = "cs1";

/// How many lines of a patch the prompt shows; the rest are counted.
pub(crate) const SHOWN_PATCH_LINES: usize = 200;

/// How many characters of a patch the prompt shows at most.
const SHOWN_PATCH_CHARS: usize = 16_000;

/// How many characters of one patch line the prompt shows; a longer line is cut.
const SHOWN_LINE_CHARS: usize = 400;

/// What a `requestState` carries, sealed.
#[derive(Debug, Serialize, Deserialize)]
struct Payload {
    approval_id: String,
    workspace_id: String,
    tool: HeldTool,
    fingerprint: String,
    /// Unix milliseconds after which the state is refused.
    expires_at_ms: u64,
}

/// A question about a pending hold, for a client that answers on a retry.
#[derive(Debug, Clone)]
pub struct Question {
    pub approval_id: String,
    /// What the person reads: [`Gateway::hold_prompt`].
    pub message: String,
    /// The sealed state the retry sends back.
    pub request_state: String,
}

impl Gateway {
    /// What the person reads about hold `approval_id`: its summary and, for a patch, the
    /// patch itself (its first lines, bounded), then the question.
    pub async fn hold_prompt(&self, approval_id: &str) -> Result<String, GatewayError> {
        Ok(prompt(&resume::load(self, approval_id).await?))
    }

    /// The hold `approval_id` as it is now (its state, its summary), and the arguments of
    /// the request it holds (JSON).
    pub async fn hold_state(
        &self,
        approval_id: &str,
    ) -> Result<(ApprovalResult, Option<String>), GatewayError> {
        let hold = resume::load(self, approval_id).await?;
        let result = ApprovalResult {
            approval_id: hold.approval_id,
            state: hold.state,
            summary: hold.summary,
        };
        Ok((result, hold.params_json))
    }

    /// The question about hold `approval_id`, its state sealed to expire after `ttl`.
    pub async fn question(
        &self,
        approval_id: &str,
        ttl: Duration,
    ) -> Result<Question, GatewayError> {
        let hold = resume::load(self, approval_id).await?;
        let ttl_ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX);
        let payload = Payload {
            approval_id: hold.approval_id.clone(),
            workspace_id: hold.workspace_id.clone(),
            tool: hold.tool,
            fingerprint: hold.fingerprint.clone(),
            expires_at_ms: now_ms().saturating_add(ttl_ms),
        };
        let json = serde_json::to_vec(&payload)
            .map_err(|e| GatewayError::Internal(format!("request state serialization: {e}")))?;
        let seal = self.key.seal(DOMAIN, &[&json]);
        Ok(Question {
            approval_id: hold.approval_id.clone(),
            message: prompt(&hold),
            request_state: format!("{TAG}.{}.{seal}", hex::encode(&json)),
        })
    }

    /// Opens a retry's `state` for a call of `tool` with `params`: the hold it answers, as
    /// it is now, or the refusal (nothing has run).
    pub async fn open_question<P: Serialize>(
        &self,
        tool: HeldTool,
        params: &P,
        state: &str,
    ) -> Result<ApprovalResult, GatewayError> {
        let payload = self.unseal(state)?;
        let arguments = match serde_json::to_value(params) {
            Ok(serde_json::Value::Object(map)) => map,
            Ok(_) | Err(_) => return Err(invalid("the call's arguments are not an object")),
        };
        let held = Held::decode(tool, arguments)?;
        if payload.tool != tool
            || payload.workspace_id != held.workspace_id()
            || payload.fingerprint != held.fingerprint()
        {
            return Err(invalid(&format!(
                "it was made for another request (hold {}: {} in workspace {}), not this call's",
                payload.approval_id,
                payload.tool,
                visible::escape(&payload.workspace_id, false)
            )));
        }
        let now = now_ms();
        if now > payload.expires_at_ms {
            let ago = (now - payload.expires_at_ms) / 1000;
            let approval_id = payload.approval_id;
            return Err(GatewayError::Trust(TrustError::StateExpired { approval_id, ago }));
        }
        let hold = resume::load(self, &payload.approval_id).await?;
        if hold.fingerprint != payload.fingerprint || hold.workspace_id != payload.workspace_id {
            return Err(invalid("its hold stands in front of another request"));
        }
        Ok(ApprovalResult {
            approval_id: hold.approval_id,
            state: hold.state,
            summary: hold.summary,
        })
    }

    /// The payload of `state`, when this server's key sealed it.
    fn unseal(&self, state: &str) -> Result<Payload, GatewayError> {
        let mut parts = state.split('.');
        let (Some(TAG), Some(body), Some(seal), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(invalid("it is not a requestState this server makes"));
        };
        let Ok(json) = hex::decode(body) else {
            return Err(invalid("it is not a requestState this server makes"));
        };
        if !self.key.verify(DOMAIN, &[&json], seal) {
            return Err(invalid(
                "its seal does not verify (it was changed, or made under another server key)",
            ));
        }
        serde_json::from_slice(&json).map_err(|e| {
            GatewayError::Internal(format!("a sealed request state does not decode: {e}"))
        })
    }
}

fn invalid(why: &str) -> GatewayError {
    GatewayError::Trust(TrustError::StateInvalid { why: why.to_owned() })
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// The prompt: the summary, the patch itself for a patch hold, and the question.
pub(crate) fn prompt(hold: &HoldRecord) -> String {
    let mut out = format!(
        "CodeSpace holds this change for your decision (hold {}):\n{}",
        hold.approval_id,
        visible::escape(&hold.summary, true)
    );
    let patch = match (hold.tool, hold.params_json.as_deref()) {
        (HeldTool::ApplyPatch, Some(json)) => {
            serde_json::from_str::<ApplyPatchParams>(json).ok().map(|p| p.patch)
        }
        (HeldTool::ApplyPatch | HeldTool::ExecCommand | HeldTool::OperationRevert, _) => None,
    };
    if let Some(text) = patch {
        out.push_str("\n\nThe patch:\n");
        out.push_str(&patch_excerpt(&text, &hold.approval_id));
    }
    out.push_str("\n\nAllow it to run?");
    out
}

/// The first [`SHOWN_PATCH_LINES`] lines of `text` (at most [`SHOWN_PATCH_CHARS`]
/// characters, a long line cut), every hidden character written out, then how many lines
/// are left out.
pub(crate) fn patch_excerpt(text: &str, approval_id: &str) -> String {
    let total = text.lines().count();
    let (mut out, mut shown, mut chars) = (String::new(), 0, 0);
    for line in text.lines() {
        let line = visible::escape(line, true);
        let count = line.chars().count();
        let line = if count > SHOWN_LINE_CHARS {
            let head: String = line.chars().take(SHOWN_LINE_CHARS).collect();
            format!("{head}... ({} more characters)", count - SHOWN_LINE_CHARS)
        } else {
            line.into_owned()
        };
        if shown == SHOWN_PATCH_LINES || chars + line.len() > SHOWN_PATCH_CHARS {
            break;
        }
        chars += line.len() + 1;
        shown += 1;
        out.push_str(&line);
        out.push('\n');
    }
    if shown < total {
        out.push_str(&format!(
            "... and {} more line(s) of the patch, not shown (`codespace approvals show {approval_id}` prints it all)\n",
            total - shown
        ));
    }
    out.truncate(out.trim_end().len());
    out
}

#[cfg(test)]
mod tests;
