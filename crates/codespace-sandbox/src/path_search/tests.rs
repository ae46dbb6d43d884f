//! Unit tests of `path_search`.

use super::*;

fn candidates(argv0: &str, search_path: &str) -> Vec<PathBuf> {
    PathSearch::new(OsStr::new(argv0), OsStr::new(search_path)).candidates().to_vec()
}

#[test]
fn candidates_follow_path_order_and_stay_relative() {
    let want: Vec<PathBuf> =
        ["/usr/bin/tool", "bin/tool", "./tool", "./x/tool", "/nonexistent-x/tool"]
            .iter()
            .map(PathBuf::from)
            .collect();
    assert_eq!(candidates("tool", "/usr/bin:bin::./x:/nonexistent-x"), want);
    assert_eq!(candidates("t", ""), vec![PathBuf::from("./t")]);
    assert_eq!(candidates("./run.sh", "/bin"), vec![PathBuf::from("./run.sh")]);
    assert!(PathSearch::new(OsStr::new("./run.sh"), OsStr::new("/bin")).dirs().is_empty());
}

#[test]
fn refusals_say_why() {
    let find = |argv0: &str, path: &str| {
        PathSearch::new(OsStr::new(argv0), OsStr::new(path)).find().map_err(|e| e.message)
    };
    let missing = find("/nonexistent/dir/tool", "/bin");
    assert!(missing.as_ref().is_err_and(|m| m.ends_with("no such file")), "{missing:?}");
    let dir = find("/", "/bin");
    assert!(dir.as_ref().is_err_and(|m| m.ends_with("not a regular file")), "{dir:?}");
    let none = find("no-such-binary-codespace-test", "/bin");
    assert!(none.as_ref().is_err_and(|m| m.ends_with("command not found on PATH")), "{none:?}");
    assert_eq!(find("sh", "/nonexistent:/bin"), Ok("/bin/sh".into()));
}
