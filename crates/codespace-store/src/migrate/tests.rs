//! Unit tests for `migrate`: the embedded list matches `migrations/`, and migrating an
//! empty database reaches the schema version once.

use std::collections::BTreeMap;
use std::path::Path;

use super::*;

#[test]
fn migrations_are_numbered_from_one_without_gaps() {
    for (index, migration) in MIGRATIONS.iter().enumerate() {
        assert_eq!(migration.version as usize, index + 1, "{}", migration.name);
        assert!(migration.name.starts_with(&format!("{:04}_", migration.version)));
    }
    assert_eq!(SCHEMA_VERSION as usize, MIGRATIONS.len());
}

#[test]
#[expect(
    clippy::disallowed_methods,
    reason = "the test reads the crate's own migrations directory"
)]
fn every_file_in_migrations_is_embedded_and_identical() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations");
    let mut files = BTreeMap::new();
    for entry in std::fs::read_dir(&dir).expect("migrations dir") {
        let path = entry.expect("entry").path();
        assert_eq!(path.extension().and_then(|e| e.to_str()), Some("sql"), "{path:?}");
        let stem = path.file_stem().and_then(|s| s.to_str()).expect("utf-8 name").to_owned();
        files.insert(stem, std::fs::read_to_string(&path).expect("read"));
    }
    let embedded: BTreeMap<String, String> =
        MIGRATIONS.iter().map(|m| (m.name.to_owned(), m.sql.to_owned())).collect();
    assert_eq!(files, embedded);
}

#[test]
fn an_empty_database_migrates_to_the_schema_version_once() {
    let mut conn = Connection::open_in_memory().expect("open");
    assert_eq!(header(&conn).expect("header"), (0, 0));
    assert_eq!(migrate(&mut conn).expect("migrate"), SCHEMA_VERSION);
    assert_eq!(
        header(&conn).expect("header"),
        (i64::from(SCHEMA_VERSION), i64::from(APPLICATION_ID))
    );
    assert_eq!(migrate(&mut conn).expect("again"), 0);
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")
        .expect("prepare")
        .query_map([], |row| row.get(0))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows");
    assert_eq!(
        tables,
        [
            "approvals",
            "instances",
            "intents",
            "operation_events",
            "operation_files",
            "operation_undo",
            "operations",
            "tasks",
            "works"
        ]
    );
}

fn refusal(conn: &mut Connection) -> String {
    match migrate(conn) {
        Err(MigrateError::Refused(reason)) => reason,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn another_applications_database_is_refused() {
    let mut conn = Connection::open_in_memory().expect("open");
    conn.pragma_update(None, "application_id", 42).expect("set");
    assert!(refusal(&mut conn).contains("another application"));
}

#[test]
fn a_newer_schema_is_refused() {
    let mut conn = Connection::open_in_memory().expect("open");
    migrate(&mut conn).expect("migrate");
    conn.pragma_update(None, "user_version", SCHEMA_VERSION + 1).expect("set");
    assert!(refusal(&mut conn).contains("newer than this build"));
}

#[test]
fn a_database_with_tables_but_no_version_is_refused() {
    let mut conn = Connection::open_in_memory().expect("open");
    conn.execute_batch("CREATE TABLE notes (body TEXT)").expect("create");
    assert!(refusal(&mut conn).contains("not a CodeSpace ledger"));
}
