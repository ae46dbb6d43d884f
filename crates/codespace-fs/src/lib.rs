//! Rooted, no-follow, race-safe file I/O beneath a workspace root.
//!
//! This is the only crate in CodeSpace that touches workspace files. Everything goes
//! through a [`Root`], which pins the canonicalised workspace root as an `O_PATH`
//! directory descriptor when it is opened. Every later lookup is made relative to that
//! descriptor with `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
//! RESOLVE_NO_MAGICLINKS)` (per-component `O_NOFOLLOW` opens where the kernel lacks
//! openat2), so the kernel resolves the whole path atomically and refuses any symlink, any
//! escape and any magic link: a command that swaps directories for symlinks while a read
//! or write is in flight cannot redirect it outside the root.
//!
//! **Architecture Invariant:** no function here follows a symlink (as a leaf or as an
//! ancestor), opens a FIFO or device for reading, or takes a raw path string from a
//! client: every path is a [`WorkspacePath`], validated lexically first and then resolved
//! by the kernel beneath the root descriptor.
//!
//! **Architecture Invariant:** writes never go through an existing inode. They create a
//! temporary file with `O_CREAT | O_EXCL` in the same (rooted) directory, `fsync` it and
//! `renameat` it over the target, so a hard link planted to an outside file is replaced,
//! never written through.
//!
//! The API is synchronous; async callers use `spawn_blocking`, except for opening one
//! file ([`Root::open_regular`]), which is cheap enough to do in place and tells the size.
//!
//! # Layout
//! - `path`: [`WorkspacePath`], the lexical validation.
//! - `error`: [`FsError`] and the errno mapping.
//! - `root`: [`Root`], descriptor pinning and the beneath-root resolver.
//! - `read`: [`Root::open_regular`] and its [`OpenedFile`], [`Root::open_file`],
//!   [`Root::read_window`], [`Root::read_opened`], [`Root::read_window_known`],
//!   [`Root::version`], [`Root::version_stamped`].
//! - `walk`: [`Root::walk`], the bounded no-follow listing, and [`Root::walk_filtered`] with
//!   its [`WalkFilter`] hook (rule files read through [`DirFiles`]).
//! - `dir`: [`Root::open_dir`] and its [`OpenedDir`] ([`DirListing`]): a directory opened
//!   beneath the root for the watcher, with its identity and entries.
//! - `cancel`: [`Cancel`], the stop flag a walk (and the runner's search) polls.
//! - `progress`: [`Progress`], the counters a walk (and the runner's search) advances.
//! - `write`: [`Root::create_dirs`], [`Root::write_atomic`], [`Root::remove_file`].
//! - `meta`: [`Root::metadata`], [`FileMeta`], [`FileKind`], and [`Root::open_parent_of`] with
//!   its [`ParentDir`] (one directory open for the stats of many names in it).
//! - `marker`: [`Root::create_marker`] and [`Root::remove_marker`], the watcher's cookies.
//! - `pinned`: [`Root::status`] (a `codespace_types::RootStatus`) and [`Root::dir_handle`], for commands.

mod cancel;
mod dir;
mod error;
mod marker;
mod meta;
mod path;
mod pinned;
mod progress;
mod read;
mod root;
mod walk;
mod write;
mod writer;

pub use cancel::Cancel;
/// The version type is shared with every layer above; it is defined once, in `codespace-types`.
pub use codespace_types::{ParseVersionError, Version};
pub use dir::{DirListing, OpenedDir};
pub use error::{FsError, PathEscapeReason};
pub use meta::{FileKind, FileMeta, ParentDir};
pub use path::{MAX_COMPONENT_BYTES, MAX_PATH_BYTES, WorkspacePath};
pub use progress::Progress;
pub use read::{OpenedFile, Window};
pub use root::Root;
pub use walk::{DirFiles, SmallFile, Walk, WalkFilter, WalkLimits};
pub use write::TEMP_PREFIX;
