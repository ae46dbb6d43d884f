//! Reading: [`Root::open_regular`] (and [`Root::open_file`]), [`Root::read_window`] and
//! [`Root::version`].

use std::fs::File;
use std::io::{self, Read, Seek};
use std::os::fd::OwnedFd;

use rustix::fs::{Mode, OFlags, Stat};
use sha2::{Digest, Sha256};

use crate::Version;
use crate::error::{FsError, from_errno};
use crate::meta::{FileMeta, require_regular};
use crate::path::WorkspacePath;
use crate::root::Root;

/// Streaming buffer size: memory per read is this plus the window.
const BUF_BYTES: usize = 64 * 1024;
/// Upper bound on the up-front window allocation; a larger window grows as data arrives,
/// so a huge `limit` on a file that then shrinks does not allocate for nothing.
const MAX_PREALLOC: usize = 16 * 1024 * 1024;
/// How often `open_regular` starts over when the file is swapped between its two opens.
const SWAP_RETRIES: usize = 4;

/// A window of a file, with the size and version of the whole file read in the same pass.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Window {
    /// Bytes `[offset, offset + limit)` of the file (fewer at end of file; empty past it).
    #[serde(with = "serde_bytes")]
    pub data: Vec<u8>,
    /// Bytes read in total, i.e. the size of the content `version` is the hash of.
    pub file_size: u64,
    /// Version of the whole file (never [`Version::Absent`]).
    pub version: Version,
}

/// A regular file opened for reading by [`Root::open_regular`] (the only way to make one,
/// so it is always a checked regular file at offset 0), with the metadata of the
/// descriptor itself, taken right after it was opened.
#[derive(Debug)]
pub struct OpenedFile {
    file: File,
    meta: FileMeta,
}

impl OpenedFile {
    /// The opened descriptor's metadata.
    pub fn meta(&self) -> &FileMeta {
        &self.meta
    }
}

impl Root {
    /// [`Root::open_regular`]'s descriptor alone.
    pub fn open_file(&self, p: &WorkspacePath) -> Result<File, FsError> {
        self.open_regular(p).map(|opened| opened.file)
    }

    /// Opens the regular file `p` for reading, beneath the root, following no symlink.
    ///
    /// The path is first opened `O_PATH` (which never blocks and has no side effects) and
    /// `fstat`'ed: directories, symlinks and special files are refused there, so a FIFO is
    /// never waited on and a device is never opened. Only then is it opened again
    /// `O_RDONLY | O_NOCTTY | O_NONBLOCK` the same way, and the second descriptor must be
    /// the same regular inode (`dev`, `ino`); if it was swapped in between, start over (a
    /// few times), so the type check always describes the descriptor returned.
    /// `O_NONBLOCK` is left set: it has no effect on regular-file reads. Neither open waits
    /// on the file itself (a FIFO is never waited on), so a caller may open a file on a
    /// local filesystem on an async thread and decide from its size where to read it.
    pub fn open_regular(&self, p: &WorkspacePath) -> Result<OpenedFile, FsError> {
        let path = p.as_str();
        for _ in 0..SWAP_RETRIES {
            let probe = self
                .open_beneath(self.fd(), path, OFlags::PATH, Mode::empty())
                .map_err(|errno| from_errno(errno, path, "open"))?;
            let expected = fstat(&probe, path)?;
            require_regular(&expected, path)?;
            let flags = OFlags::RDONLY | OFlags::NOCTTY | OFlags::NONBLOCK | OFlags::NOFOLLOW;
            let fd = self
                .open_beneath(self.fd(), path, flags, Mode::empty())
                .map_err(|errno| from_errno(errno, path, "open"))?;
            let opened = fstat(&fd, path)?;
            if (opened.st_dev, opened.st_ino) == (expected.st_dev, expected.st_ino) {
                return Ok(OpenedFile { file: File::from(fd), meta: FileMeta::from_stat(&opened) });
            }
        }
        Err(FsError::io(
            path,
            "open",
            io::Error::other("the file kept being replaced while it was opened"),
        ))
    }

    /// Opens `p` for reading with one open, for a path a listing has just shown to be a
    /// regular file (a search's): the listing stands in for [`Root::open_file`]'s `O_PATH`
    /// probe. The open is `O_NONBLOCK | O_NOCTTY`, beneath the root, following no
    /// symlink, and the descriptor is refused unless it is a regular file. What is left is
    /// the race the probe has too: a device node put there (which takes privilege) after
    /// the listing is opened once, never read.
    pub fn open_listed_file(&self, p: &WorkspacePath) -> Result<File, FsError> {
        let path = p.as_str();
        let flags = OFlags::RDONLY | OFlags::NOCTTY | OFlags::NONBLOCK | OFlags::NOFOLLOW;
        let fd = self
            .open_beneath(self.fd(), path, flags, Mode::empty())
            .map_err(|errno| from_errno(errno, path, "open"))?;
        require_regular(&fstat(&fd, path)?, path)?;
        Ok(File::from(fd))
    }

    /// Reads `[offset, offset + limit)` of `p` and hashes the whole file, in one pass.
    ///
    /// Memory is the window plus one 64 KiB buffer, whatever the file size. An offset at
    /// or beyond the end gives an empty window (with the size and version still filled).
    pub fn read_window(
        &self,
        p: &WorkspacePath,
        offset: u64,
        limit: usize,
    ) -> Result<Window, FsError> {
        let opened = self.open_regular(p)?;
        Self::read_opened(opened, p, offset, limit)
    }

    /// [`Root::read_window`] of a file [`Root::open_regular`] opened as `p`.
    pub fn read_opened(
        mut opened: OpenedFile,
        p: &WorkspacePath,
        offset: u64,
        limit: usize,
    ) -> Result<Window, FsError> {
        Self::window_of(&mut opened.file, opened.meta.size, p, offset, limit)
    }

    /// Streams the opened `file` (about `size_hint` bytes): keeps the window, hashes
    /// everything.
    fn window_of(
        file: &mut File,
        size_hint: u64,
        p: &WorkspacePath,
        offset: u64,
        limit: usize,
    ) -> Result<Window, FsError> {
        let expected = usize::try_from(size_hint.saturating_sub(offset)).unwrap_or(usize::MAX);
        let mut data = Vec::with_capacity(limit.min(expected).min(MAX_PREALLOC));
        let end = offset.saturating_add(u64::try_from(limit).unwrap_or(u64::MAX));
        let (file_size, version) = stream(file, p.as_str(), |pos, chunk| {
            // Keep the part of this chunk that overlaps the window.
            let chunk_end = pos + chunk.len() as u64;
            let start = pos.max(offset);
            let stop = chunk_end.min(end);
            if start < stop {
                // Both differences are below chunk.len(), so they fit usize.
                let from = usize::try_from(start - pos).unwrap_or(0);
                let to = usize::try_from(stop - pos).unwrap_or(0);
                data.extend_from_slice(&chunk[from..to]);
            }
        })?;
        Ok(Window { data, file_size, version })
    }

    /// [`Root::read_window`] that hashes only when it must: `known` is asked for the version
    /// of the opened file's identity (its descriptor's metadata, before reading). When it
    /// answers, only the window is read (one positioned read) and the descriptor's metadata
    /// is checked again afterwards: unchanged, the window belongs to that version. Otherwise
    /// the whole file is streamed and hashed as `read_window` does, and the second value is
    /// the identity that held still while it was read (what a cache may keep), if it did.
    pub fn read_window_known(
        opened: OpenedFile,
        p: &WorkspacePath,
        offset: u64,
        limit: usize,
        known: impl FnOnce(&FileMeta) -> Option<Version>,
    ) -> Result<(Window, Option<FileMeta>), FsError> {
        let OpenedFile { mut file, meta } = opened;
        let mut before = Some(meta);
        if let Some(version) = known(&meta) {
            if let Some(data) = window_at(&file, &meta, p, offset, limit)? {
                return Ok((Window { data, file_size: meta.size, version }, None));
            }
            // It changed while the window was read: read and hash it all instead.
            file.rewind().map_err(|err| FsError::io(p.as_str(), "seek", err))?;
            before = rustix::fs::fstat(&file).ok().map(|st| FileMeta::from_stat(&st));
        }
        let size_hint = before.as_ref().map_or(0, |b| b.size);
        let window = Self::window_of(&mut file, size_hint, p, offset, limit)?;
        let after = rustix::fs::fstat(&file).ok().map(|st| FileMeta::from_stat(&st));
        let still = before.filter(|b| after.as_ref() == Some(b) && b.size == window.file_size);
        Ok((window, still))
    }

    /// The version of the whole file `p`.
    ///
    /// [`Version::Absent`] when the leaf or an ancestor does not exist (`ENOENT`); every
    /// other refusal (a symlink, a special file, a directory, a component that is a file)
    /// is an error, so "absent" always means "nothing there".
    pub fn version(&self, p: &WorkspacePath) -> Result<Version, FsError> {
        let mut file = match self.open_file(p) {
            Ok(file) => file,
            Err(FsError::NotFound { .. }) => return Ok(Version::Absent),
            Err(err) => return Err(err),
        };
        stream(&mut file, p.as_str(), |_, _| {}).map(|(_, version)| version)
    }

    /// [`Root::version`], plus the identity of the inode that was hashed when it held still
    /// while being read: the descriptor's metadata before and after the read agree (device,
    /// inode, size, mtime, ctime) and the size is the byte count hashed. `None` when it
    /// moved, or for [`Version::Absent`]. A cache keys the version by this identity.
    pub fn version_stamped(
        &self,
        p: &WorkspacePath,
    ) -> Result<(Version, Option<FileMeta>), FsError> {
        let mut file = match self.open_file(p) {
            Ok(file) => file,
            Err(FsError::NotFound { .. }) => return Ok((Version::Absent, None)),
            Err(err) => return Err(err),
        };
        let before = rustix::fs::fstat(&file).ok().map(|st| FileMeta::from_stat(&st));
        let (bytes, version) = stream(&mut file, p.as_str(), |_, _| {})?;
        let after = rustix::fs::fstat(&file).ok().map(|st| FileMeta::from_stat(&st));
        let still = before.filter(|b| after.as_ref() == Some(b) && b.size == bytes);
        Ok((version, still))
    }
}

/// Reads `file` to the end in fixed chunks, hashing everything and handing each chunk
/// (with its file offset) to `keep`. Returns the byte count and the version.
fn stream(
    file: &mut File,
    path: &str,
    mut keep: impl FnMut(u64, &[u8]),
) -> Result<(u64, Version), FsError> {
    let mut hasher = Sha256::new();
    // Small files get a small buffer: zeroing 64 KiB costs more than reading 4 KiB. One
    // byte more than the size lets the first read see the end; growth beyond the size
    // (a file being appended to) just takes more reads.
    let size_hint = file.metadata().map_or(BUF_BYTES as u64, |m| m.len());
    let len =
        usize::try_from(size_hint.saturating_add(1)).unwrap_or(BUF_BYTES).clamp(512, BUF_BYTES);
    let mut buf = vec![0u8; len];
    let mut pos = 0u64;
    loop {
        let n = match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(FsError::io(path, "read", err)),
        };
        let chunk = &buf[..n];
        hasher.update(chunk);
        keep(pos, chunk);
        pos += n as u64;
    }
    Ok((pos, Version::Sha256(hasher.finalize().into())))
}

/// Bytes `[offset, offset + limit)` of `file`, whose metadata was `meta`, by positioned
/// reads; `None` when the file's metadata is no longer `meta` afterwards, or it was shorter.
fn window_at(
    file: &File,
    meta: &FileMeta,
    p: &WorkspacePath,
    offset: u64,
    limit: usize,
) -> Result<Option<Vec<u8>>, FsError> {
    let want = usize::try_from(meta.size.saturating_sub(offset)).unwrap_or(usize::MAX).min(limit);
    let mut data = vec![0u8; want];
    let mut got = 0;
    while got < want {
        match std::os::unix::fs::FileExt::read_at(file, &mut data[got..], offset + got as u64) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
            Err(err) => return Err(FsError::io(p.as_str(), "read", err)),
        }
    }
    data.truncate(got);
    let after = rustix::fs::fstat(file).ok().map(|st| FileMeta::from_stat(&st));
    Ok((after.as_ref() == Some(meta) && got == want).then_some(data))
}

fn fstat(fd: &OwnedFd, path: &str) -> Result<Stat, FsError> {
    rustix::fs::fstat(fd).map_err(|errno| FsError::io(path, "stat", errno.into()))
}
