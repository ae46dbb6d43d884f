//! Unit tests for `hygiene`: the network-filesystem classifier and sidecar names (the
//! refusals themselves are exercised on real files by the integration tests).

use super::*;

#[test]
fn network_filesystems_are_recognised() {
    let cases = [
        (0x6969_u64, "NFS"),
        (0x517B, "SMB"),
        (0xFF53_4D42, "CIFS"),
        (0xFE53_4D42, "SMB2"),
        (0x0102_1997, "9P"),
        (0x5346_414F, "AFS"),
        (0x6B41_4653, "kAFS"),
        (0x00C3_6400, "Ceph"),
        (0x7375_7245, "Coda"),
        (0x0BD0_0BD0, "Lustre"),
    ];
    for (magic, name) in cases {
        assert_eq!(network_filesystem(magic), Some(name), "{magic:#x}");
    }
}

#[test]
fn a_sign_extended_32_bit_magic_still_matches() {
    // A 32-bit `f_type` holding CIFS's magic is negative; widened to u64 it sign-extends.
    let cifs_as_i32 = 0xFF53_4D42_u32 as i32;
    assert_eq!(network_filesystem(i64::from(cifs_as_i32) as u64), Some("CIFS"));
}

#[test]
fn local_filesystems_are_not_network() {
    for magic in [
        0xEF53_u64,  // ext2/3/4
        0x0102_1994, // tmpfs
        0x9123_683E, // btrfs
        0x5846_5342, // xfs
        0x794C_7630, // overlayfs
        0x2FC1_2FC1, // zfs
        0xF2F5_2010, // f2fs
        0x6573_5546, // fuse (may be local or remote; not refused)
        0,
    ] {
        assert_eq!(network_filesystem(magic), None, "{magic:#x}");
    }
}

#[test]
fn sidecars_append_the_suffix_to_the_whole_name() {
    assert_eq!(sidecar(Path::new("/s/ops.sqlite3"), "-wal"), PathBuf::from("/s/ops.sqlite3-wal"));
    assert_eq!(sidecar(Path::new("ops"), "-shm"), PathBuf::from("ops-shm"));
}

#[test]
fn the_current_directory_filesystem_is_classified() {
    // Wherever the tests run, statfs works and gives some magic; this only checks the call.
    let stats = rustix::fs::statfs(".").expect("statfs .");
    let _ = network_filesystem(stats.f_type as u64);
}
