//! Read windows, whole-file versions, error mapping, and a multi-GiB sparse file.

use std::fs;
use std::io::{Read, Seek, SeekFrom, Write};

use codespace_fs::{FsError, Version};
use sha2::{Digest, Sha256};

use crate::support::{Fx, p};

#[test]
fn windows_cover_boundaries_and_eof() {
    let fx = Fx::new();
    fx.file("ten.txt", b"0123456789");
    let whole = Version::of_bytes(b"0123456789");
    let path = p("ten.txt");
    for (offset, limit, want) in [
        (0, 4, &b"0123"[..]),
        (0, 10, b"0123456789"),
        (0, 11, b"0123456789"),
        (3, usize::MAX, b"3456789"),
        (8, 4, b"89"),
        (9, 1, b"9"),
        (10, 4, b""),
        (11, 4, b""),
        (u64::MAX, 4, b""),
        (0, 0, b""),
        (5, 0, b""),
    ] {
        let window = fx.root.read_window(&path, offset, limit).unwrap();
        assert_eq!(window.data, want, "offset {offset} limit {limit}");
        assert_eq!(window.file_size, 10);
        assert_eq!(window.version, whole, "the version is of the whole file, not the window");
    }
}

#[test]
fn windows_across_the_stream_buffer_boundary() {
    let fx = Fx::new();
    let content: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
    fx.file("big.bin", &content);
    let path = p("big.bin");
    let kib64 = 64 * 1024;
    for (offset, limit) in
        [(kib64 - 3, 10), (kib64, kib64), (2 * kib64 - 1, 2), (0, 200_000), (199_999, 5)]
    {
        let window = fx.root.read_window(&path, offset as u64, limit).unwrap();
        let end = (offset + limit).min(content.len());
        assert_eq!(window.data, &content[offset..end], "offset {offset} limit {limit}");
        assert_eq!(window.version, Version::of_bytes(&content));
    }
    assert_eq!(fx.root.version(&path).unwrap(), Version::of_bytes(&content));
}

#[test]
fn version_of_empty_missing_and_refused_paths() {
    let fx = Fx::new();
    fx.file("empty", b"");
    fx.file("file.txt", b"x");
    fx.dir("dir");
    assert_eq!(
        fx.root.version(&p("empty")).unwrap().to_string(),
        "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    );
    assert_eq!(fx.root.version(&p("missing")).unwrap(), Version::Absent);
    assert_eq!(fx.root.version(&p("missing/deeper/x")).unwrap(), Version::Absent);
    // A file where a directory is needed is not "absent": something is there.
    assert!(matches!(fx.root.version(&p("file.txt/x")), Err(FsError::NotDirectory { .. })));
    assert!(matches!(fx.root.version(&p("dir")), Err(FsError::IsDirectory { .. })));
}

#[test]
fn error_mapping_for_reads() {
    let fx = Fx::new();
    fx.file("file.txt", b"x");
    fx.dir("dir");
    type Check = fn(&FsError) -> bool;
    let cases: [(&str, Check); 4] = [
        ("missing", |e| matches!(e, FsError::NotFound { path } if path == "missing")),
        ("missing/x", |e| matches!(e, FsError::NotFound { .. })),
        ("file.txt/x", |e| matches!(e, FsError::NotDirectory { path } if path == "file.txt/x")),
        ("dir", |e| matches!(e, FsError::IsDirectory { path } if path == "dir")),
    ];
    for (path, ok) in cases {
        let err = fx.root.read_window(&p(path), 0, 1).unwrap_err();
        assert!(ok(&err), "{path}: {err:?}");
        let err = fx.root.open_file(&p(path)).unwrap_err();
        assert!(ok(&err), "{path}: {err:?}");
    }
}

#[test]
fn open_file_reads_the_file() {
    let fx = Fx::new();
    fx.file("a/b/c.txt", b"hello");
    let mut file = fx.root.open_file(&p("a/./b/../b/c.txt")).unwrap();
    let mut text = String::new();
    file.read_to_string(&mut text).unwrap();
    assert_eq!(text, "hello");
    // Read-only: writing through the returned handle fails.
    assert!(file.write_all(b"x").is_err());
    assert_eq!(fx.read("a/b/c.txt"), b"hello");
}

/// A multi-GiB sparse file: the window is tiny and memory stays bounded (64 KiB buffer
/// plus the window); the version must equal an independent streaming SHA-256.
///
/// Hashing 3 GiB twice takes minutes in a debug build (sha2 unoptimised), so the full
/// size runs only with `CODESPACE_SLOW_TESTS=1`; by default the file is 96 MiB.
#[test]
fn sparse_large_file_in_a_small_window() {
    let slow = std::env::var_os("CODESPACE_SLOW_TESTS").is_some_and(|v| v == "1");
    let size: u64 = if slow { 3 << 30 } else { 96 << 20 };
    eprintln!("sparse file of {} MiB (CODESPACE_SLOW_TESTS=1 for 3 GiB)", size >> 20);
    let fx = Fx::new();
    let path = fx.ws.join("sparse.bin");
    let mut file = fs::File::create(&path).unwrap();
    file.set_len(size).unwrap();
    let mark_at = size / 3 * 2 + 5;
    file.seek(SeekFrom::Start(mark_at)).unwrap();
    file.write_all(b"MARK").unwrap();
    drop(file);
    assert_eq!(fs::metadata(&path).unwrap().len(), size);

    let window = fx.root.read_window(&p("sparse.bin"), mark_at - 2, 8).unwrap();
    assert_eq!(window.data, b"\0\0MARK\0\0");
    assert_eq!(window.file_size, size);

    let mut hasher = Sha256::new();
    let mut reader = fs::File::open(&path).unwrap();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = reader.read(&mut buf).unwrap();
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    assert_eq!(window.version, Version::Sha256(hasher.finalize().into()));
}
