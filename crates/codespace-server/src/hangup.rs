//! SIGHUP: the registry file is read, checked and applied again ([`Gateway::reload`]):
//! added workspaces are served, removed ones answer `WORKSPACE_NOT_FOUND`, changed ones
//! serve their new settings to calls that start after the reload, and a root whose path
//! changed or that no longer names the directory opened is opened afresh (with a new
//! watcher); sessions stay. A bad file (or a root that cannot be opened, roots that nest, a
//! root that holds the ledger) is refused with its reason, and the server keeps serving the
//! registry it had. The log says which. Without this handler SIGHUP's default action would
//! end the server.

use std::path::PathBuf;
use std::sync::Arc;

use codespace_gateway::{Gateway, Workspaces};

use crate::cli::RegistryArgs;

/// Answers every SIGHUP for as long as the server runs; `keep_out` is what no root may hold
/// (the ledger), as at start.
pub(crate) async fn watch(args: RegistryArgs, gateway: Arc<Gateway>, keep_out: Vec<PathBuf>) {
    use tokio::signal::unix::{SignalKind, signal};
    let Ok(mut hangups) = signal(SignalKind::hangup()) else { return };
    while hangups.recv().await.is_some() {
        reload(&args, &gateway, &keep_out).await;
    }
}

async fn reload(args: &RegistryArgs, gateway: &Gateway, keep_out: &[PathBuf]) {
    let name = crate::config_name(args);
    let read = RegistryArgs { config: args.config.clone(), write: args.write };
    let loaded = tokio::task::spawn_blocking(move || {
        let (registry, _) = crate::config::load_registry(&read)?;
        let workspaces = Workspaces::open(&registry).map_err(|e| {
            crate::config::UsageError(format!("{}: {e}", crate::config_name(&read)))
        })?;
        Ok::<_, crate::config::UsageError>((registry, workspaces))
    })
    .await;
    let (registry, workspaces) = match loaded {
        Ok(Ok(read)) => read,
        Ok(Err(e)) => return refused(&e.to_string()),
        Err(e) => return refused(&format!("reading it failed: {e}")),
    };
    match gateway.reload(workspaces, keep_out.to_vec()).await {
        Ok(done) if done.is_empty() => tracing::info!("SIGHUP: the registry is unchanged"),
        Ok(done) => {
            crate::doctor::announce_external(
                registry
                    .workspaces()
                    .filter(|w| done.added.contains(&w.id) || done.changed.contains(&w.id)),
                gateway.host(),
            );
            tracing::warn!(
                added = ?done.added,
                removed = ?done.removed,
                changed = ?done.changed,
                reopened = ?done.reopened,
                "SIGHUP: the registry is applied: calls from now on see it (a removed workspace's commands run on until they end)"
            );
        }
        Err(e) => refused(&format!("{name}: {e}")),
    }
}

fn refused(why: &str) {
    tracing::error!(
        "SIGHUP: the registry is refused ({why}); the server keeps serving the registry it had"
    );
}
