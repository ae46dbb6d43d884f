//! SIGHUP: the registry file is read and checked again, and the log says whether it is valid
//! and which workspaces it adds, removes or changes. A running server does not apply a
//! registry change yet (its roots, watchers and the worker's roots are opened once at
//! start): the log says so and names the restart that does. A bad file is refused with its
//! reason, and the server keeps serving as it was. Without this handler SIGHUP's default
//! action would end the server.

use std::collections::BTreeSet;

use codespace_policy::Registry;

use crate::cli::RegistryArgs;

/// Answers every SIGHUP for as long as the server runs.
pub(crate) async fn watch(args: RegistryArgs, serving: Registry) {
    use tokio::signal::unix::{SignalKind, signal};
    let Ok(mut hangups) = signal(SignalKind::hangup()) else { return };
    while hangups.recv().await.is_some() {
        let read = RegistryArgs { config: args.config.clone(), write: args.write };
        let loaded = tokio::task::spawn_blocking(move || crate::config::load_registry(&read)).await;
        match loaded {
            Ok(Ok((registry, _))) => report(&serving, &registry),
            Ok(Err(e)) => tracing::error!(
                "SIGHUP: the registry is refused ({e}); the server keeps serving the registry it started with"
            ),
            Err(e) => tracing::error!("SIGHUP: reading the registry failed: {e}"),
        }
    }
}

fn report(serving: &Registry, read: &Registry) {
    let ids = |r: &Registry| r.workspaces().map(|w| w.id.clone()).collect::<BTreeSet<_>>();
    let (before, after) = (ids(serving), ids(read));
    let added: Vec<&String> = after.difference(&before).collect();
    let removed: Vec<&String> = before.difference(&after).collect();
    let changed: Vec<&String> =
        before.intersection(&after).filter(|id| serving.get(id) != read.get(id)).collect();
    if added.is_empty() && removed.is_empty() && changed.is_empty() {
        tracing::info!("SIGHUP: the registry is valid and unchanged");
        return;
    }
    tracing::warn!(
        ?added,
        ?removed,
        ?changed,
        "SIGHUP: the registry is valid but not applied: a running server serves the registry it started with; restart it (roll the pod) to serve this one"
    );
}
