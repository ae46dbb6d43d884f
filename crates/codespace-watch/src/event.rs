//! Watcher events and the classification of notify's raw events into them: paths made
//! workspace-relative and `/`-separated, events outside the root dropped, anything the
//! watcher cannot vouch for turned into [`EventKind::ResyncRequired`].

use std::path::Path;

use notify::event::{ModifyKind, RenameMode};

/// One delivered event: `seq` counts the events of `epoch` from 1; a restart starts a new
/// epoch. A subscriber that lagged receives a [`EventKind::ResyncRequired`] with `seq` 0.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WatchEvent {
    pub epoch: u64,
    pub seq: u64,
    pub kind: EventKind,
}

/// What happened. Paths are workspace-relative and lexical: a named path may be a symlink
/// or may already be gone; they are invalidation hints, never permissions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EventKind {
    Create {
        path: String,
    },
    Modify {
        path: String,
    },
    Remove {
        path: String,
    },
    Rename {
        from: String,
        to: String,
    },
    /// Events may have been lost: every cache built before this is untrusted.
    ResyncRequired,
}

/// A raw event as the watcher handles it: the kinds to emit, and what they mean for the
/// listing cache beyond their paths.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Classified {
    pub(crate) kinds: Vec<EventKind>,
    /// A directory appeared: its watch is added after the event, so a walk that starts
    /// right away may see files whose events never come (see `cache`).
    pub(crate) new_directory: bool,
    /// Names that arrived by rename: each is a new directory if it is one now.
    pub(crate) arrived: Vec<String>,
    /// Permissions or other metadata changed: a directory may have become unreadable.
    pub(crate) metadata: bool,
    /// The root itself was moved or removed: the watcher cannot go on.
    pub(crate) root_gone: bool,
    /// Markers whose creation this event reports (see `sync`).
    pub(crate) cookies: Vec<String>,
}

/// Prefix of the watcher's own marker files in the root (see `sync`); their events are
/// never emitted and a walk never lists them.
pub const COOKIE_PREFIX: &str = ".codespace-cookie-";

/// True for a workspace-relative path that is one of the watchers' markers.
pub fn is_cookie(path: &str) -> bool {
    path.starts_with(COOKIE_PREFIX) && !path.contains('/')
}

/// True for a workspace-relative path whose name is one of the server's own temporary
/// files (an atomic write's, renamed over its target or removed within the call).
pub(crate) fn is_server_temp(path: &str) -> bool {
    path.rsplit_once('/').map_or(path, |(_, name)| name).starts_with(codespace_fs::TEMP_PREFIX)
}

/// Where a raw path lies relative to the root.
enum Place {
    Root,
    Inside(String),
    /// Beneath the root, but not valid UTF-8: cannot be named, so cannot be vouched for.
    Unnameable,
    Outside,
}

fn place(root: &Path, path: &Path) -> Place {
    let Ok(rel) = path.strip_prefix(root) else { return Place::Outside };
    if rel.as_os_str().is_empty() {
        return Place::Root;
    }
    let mut parts = Vec::new();
    for c in rel.components() {
        match c {
            std::path::Component::Normal(name) => match name.to_str() {
                Some(name) => parts.push(name),
                None => return Place::Unnameable,
            },
            // `..`, `.` or a second root: not a plain path beneath the root.
            _ => return Place::Outside,
        }
    }
    Place::Inside(parts.join("/"))
}

/// Classifies one raw notify result.
pub(crate) fn classify(root: &Path, raw: &notify::Result<notify::Event>) -> Classified {
    let mut out = Classified::default();
    let ev = match raw {
        Ok(ev) => ev,
        Err(_) => {
            out.kinds.push(EventKind::ResyncRequired);
            return out;
        }
    };
    if ev.need_rescan() {
        out.kinds.push(EventKind::ResyncRequired);
        return out;
    }
    let mut places = ev.paths.iter().map(|p| place(root, p)).collect::<Vec<_>>();
    if places.iter().any(|p| matches!(p, Place::Unnameable)) {
        out.kinds.push(EventKind::ResyncRequired);
        return out;
    }
    if places.iter().any(|p| matches!(p, Place::Root)) {
        match ev.kind {
            // Opening or closing the root is not a change of it.
            notify::EventKind::Access(_) => {}
            _ => {
                out.root_gone = matches!(
                    ev.kind,
                    notify::EventKind::Remove(_) | notify::EventKind::Modify(ModifyKind::Name(_))
                );
                out.kinds.push(EventKind::ResyncRequired);
            }
        }
        return out;
    }
    let inside = |places: &mut Vec<Place>| -> Vec<String> {
        places
            .drain(..)
            .filter_map(|p| match p {
                Place::Inside(rel) if !is_cookie(&rel) => Some(rel),
                _ => None,
            })
            .collect()
    };
    match ev.kind {
        notify::EventKind::Access(_) => {}
        notify::EventKind::Create(kind) => {
            out.cookies = places
                .iter()
                .filter_map(|p| match p {
                    Place::Inside(rel) if is_cookie(rel) => Some(rel.clone()),
                    _ => None,
                })
                .collect();
            out.new_directory = !matches!(kind, notify::event::CreateKind::File);
            out.kinds
                .extend(inside(&mut places).into_iter().map(|path| EventKind::Create { path }));
        }
        notify::EventKind::Remove(_) => {
            out.kinds
                .extend(inside(&mut places).into_iter().map(|path| EventKind::Remove { path }));
        }
        notify::EventKind::Modify(ModifyKind::Name(mode)) => rename(mode, places, &mut out),
        notify::EventKind::Modify(kind) => {
            out.metadata = matches!(kind, ModifyKind::Metadata(_) | ModifyKind::Any);
            out.kinds
                .extend(inside(&mut places).into_iter().map(|path| EventKind::Modify { path }));
        }
        notify::EventKind::Any | notify::EventKind::Other => {
            let paths = inside(&mut places);
            if paths.is_empty() || matches!(ev.kind, notify::EventKind::Other) {
                out.kinds.push(EventKind::ResyncRequired);
            } else {
                out.metadata = true;
                out.kinds.extend(paths.into_iter().map(|path| EventKind::Modify { path }));
            }
        }
    }
    out
}

/// The three rename shapes notify reports: a one-sided `From` (removed, perhaps moved out),
/// a one-sided `To` (created, perhaps moved in) and `Both`.
fn rename(mode: RenameMode, places: Vec<Place>, out: &mut Classified) {
    let named = |p: Option<&Place>| match p {
        Some(Place::Inside(rel)) if !is_cookie(rel) => Some(rel.clone()),
        _ => None,
    };
    match mode {
        RenameMode::Both => match (named(places.first()), named(places.get(1))) {
            (Some(from), Some(to)) => {
                out.arrived.push(to.clone());
                out.kinds.push(EventKind::Rename { from, to });
            }
            (Some(from), None) => out.kinds.push(EventKind::Remove { path: from }),
            (None, Some(to)) => {
                out.arrived.push(to.clone());
                out.kinds.push(EventKind::Create { path: to });
            }
            (None, None) => {}
        },
        RenameMode::From => {
            out.kinds.extend(
                places.iter().filter_map(|p| named(Some(p))).map(|path| EventKind::Remove { path }),
            );
        }
        RenameMode::To => {
            out.arrived.extend(places.iter().filter_map(|p| named(Some(p))));
            out.kinds.extend(
                places.iter().filter_map(|p| named(Some(p))).map(|path| EventKind::Create { path }),
            );
        }
        RenameMode::Any | RenameMode::Other => {
            let paths: Vec<String> = places.iter().filter_map(|p| named(Some(p))).collect();
            if paths.is_empty() {
                out.kinds.push(EventKind::ResyncRequired);
            }
            out.arrived.extend(paths.iter().cloned());
            out.kinds.extend(paths.into_iter().map(|path| EventKind::Modify { path }));
        }
    }
}

#[cfg(test)]
mod tests;
