//! What runs is what was shown: a hold is sealed when it is made (the server key's
//! HMAC-SHA256 over its id, workspace, tool, fingerprint, summary, stored arguments and the
//! identity of the workspace's root then), and a resume runs it only when the seal still
//! verifies over the row as it is now and the workspace's root is still that directory.
//! Otherwise nothing runs: `APPROVAL_UNVERIFIED` or `APPROVAL_ROOT_MISMATCH`.

use codespace_protocol::HeldTool;
use codespace_runner::ops;
use codespace_store::HoldRecord;
use codespace_types::ServerKey;

use crate::error::TrustError;
use crate::{Gateway, GatewayError};

/// The seal's domain: a seal made for anything else never verifies as a hold's.
const DOMAIN: &str = "codespace hold v1";

/// What a seal covers, as stored.
pub(super) struct Sealed<'a> {
    /// The hold's own id: a sealed request copied into another hold's row never verifies.
    pub(super) approval_id: &'a str,
    pub(super) workspace_id: &'a str,
    pub(super) tool: HeldTool,
    pub(super) fingerprint: &'a str,
    pub(super) summary: &'a str,
    pub(super) params_json: &'a str,
    pub(super) root_identity: &'a str,
}

impl Sealed<'_> {
    fn parts(&self) -> [&[u8]; 7] {
        [
            self.approval_id.as_bytes(),
            self.workspace_id.as_bytes(),
            self.tool.as_str().as_bytes(),
            self.fingerprint.as_bytes(),
            self.summary.as_bytes(),
            self.params_json.as_bytes(),
            self.root_identity.as_bytes(),
        ]
    }

    pub(super) fn seal(&self, key: &ServerKey) -> String {
        key.seal(DOMAIN, &self.parts())
    }
}

impl Gateway {
    /// `<device>:<inode>` of the directory the runner opened as workspace `id`'s root.
    pub(super) async fn root_identity(&self, id: &str) -> Result<String, GatewayError> {
        match self.runner.run(ops::RootIdentity { ws: id.to_owned() }).await? {
            Some((dev, ino)) => Ok(format!("{dev}:{ino}")),
            // A reload removed the workspace: the hold stays, and runs nothing.
            None => Err(GatewayError::WorkspaceNotFound { id: id.to_owned() }),
        }
    }

    /// Checks a hold about to run: its seal over the row as it is now, then its root.
    pub(super) async fn verify_hold(&self, hold: &HoldRecord) -> Result<(), GatewayError> {
        let id = hold.approval_id.clone();
        let unverified = |why: &str| {
            GatewayError::Trust(TrustError::Unverified {
                approval_id: id.clone(),
                why: why.to_owned(),
            })
        };
        let (Some(seal), Some(root), Some(params)) =
            (hold.seal.as_deref(), hold.root_identity.as_deref(), hold.params_json.as_deref())
        else {
            return Err(unverified(
                "it has no seal (it was made by an older version, before holds were sealed)",
            ));
        };
        let sealed = Sealed {
            approval_id: &hold.approval_id,
            workspace_id: &hold.workspace_id,
            tool: hold.tool,
            fingerprint: &hold.fingerprint,
            summary: &hold.summary,
            params_json: params,
            root_identity: root,
        };
        if !self.key.verify(DOMAIN, &sealed.parts(), seal) {
            return Err(unverified(
                "its stored request or summary does not match the seal made when it was shown (changed in the ledger or copied from another hold, or made under another server key)",
            ));
        }
        let now = self.root_identity(&hold.workspace_id).await?;
        if now != root {
            let path = self.runner.root_path(&hold.workspace_id).map(|p| p.display().to_string());
            return Err(GatewayError::Trust(TrustError::RootMismatch {
                approval_id: id,
                why: format!(
                    "workspace {} was the directory {root} (device:inode) when the hold was made, and is now {} ({now})",
                    hold.workspace_id,
                    path.unwrap_or_default()
                ),
            }));
        }
        Ok(())
    }
}
