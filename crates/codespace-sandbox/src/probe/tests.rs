//! Unit tests of `probe`.

#[test]
#[expect(clippy::disallowed_methods, reason = "reads CODESPACE_REQUIRE_SANDBOX")]
fn probe_runs_and_openat2_matches_kernel() {
    let p = super::probe();
    // Every supported kernel (5.6+) has openat2; the file tools depend on it.
    assert!(p.openat2, "{p:?}");
    if std::env::var("CODESPACE_REQUIRE_SANDBOX").as_deref() == Ok("1") {
        assert!(p.sandbox_usable(), "missing {:?}: {p:?}", p.missing());
    }
}
