//! Refusals a model can act on, end to end: a virtualenv interpreter that links out of every
//! root the sandbox shows names its target and the root to add, a program name with spaces
//! says no shell is interposed, an invalid grep regex shows the pattern and the literal
//! search, and `operation_status {}` says which argument is missing.

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use serde_json::json;

use crate::support::{Env, refused};

/// A Python installed outside every root the sandbox shows (as pyenv or uv put one under
/// the home directory) and a workspace virtualenv whose `python` links to it; returns the
/// installation prefix and the interpreter.
fn venv_linked_out(env: &Env, root: &Path) -> (PathBuf, PathBuf) {
    let prefix = env.path().join("home/.pyenv/versions/3.12.4");
    std::fs::create_dir_all(prefix.join("bin")).unwrap();
    let interpreter = prefix.join("bin/python3.12");
    std::fs::write(&interpreter, "#!/bin/sh\necho from-the-hidden-python\n").unwrap();
    std::fs::set_permissions(&interpreter, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::create_dir_all(root.join(".venv/bin")).unwrap();
    std::os::unix::fs::symlink(&interpreter, root.join(".venv/bin/python")).unwrap();
    let tool = root.join(".venv/bin/pytest");
    let shebang = format!("#!{}\nprint(1)\n", root.join(".venv/bin/python").display());
    std::fs::write(&tool, shebang).unwrap();
    std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
    (prefix.canonicalize().unwrap(), interpreter.canonicalize().unwrap())
}

#[tokio::test]
async fn a_venv_python_linked_out_of_the_sandbox_names_its_target_and_the_root_to_add() {
    let mut env = Env::new();
    let root = env.workspace("boxed", json!({"profile": "workspace-write", "sandbox": "on"}));
    let (prefix, interpreter) = venv_linked_out(&env, &root);
    let path = format!("{}:/usr/bin:/bin", root.join(".venv/bin").display());
    let (client, _) = env.stdio_with(&[("PATH", &path)]).await;
    let hint = |message: &str| {
        assert!(message.contains(&interpreter.display().to_string()), "target: {message}");
        let add = format!("add {} to the workspace's extra_read_roots", prefix.display());
        assert!(message.contains(&add), "root to add: {message}");
    };
    for command in
        [json!([".venv/bin/pytest"]), json!([".venv/bin/python", "-V"]), json!(["python"])]
    {
        let e = refused(
            &client,
            "exec_command",
            json!({"workspace_id": "boxed", "command": command}),
            "PROCESS_SPAWN_FAILED",
        )
        .await;
        hint(e["message"].as_str().unwrap());
    }
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_program_name_with_spaces_says_no_shell_is_interposed() {
    let mut env = Env::new();
    env.workspace("off", json!({"profile": "workspace-write", "sandbox": "off"}));
    env.workspace("on", json!({"profile": "workspace-write", "sandbox": "on"}));
    let client = env.stdio().await;
    for ws in ["off", "on"] {
        let e = refused(
            &client,
            "exec_command",
            json!({"workspace_id": ws, "command": ["ls -la"]}),
            "PROCESS_SPAWN_FAILED",
        )
        .await;
        let message = e["message"].as_str().unwrap();
        assert!(message.contains("no shell is interposed"), "{ws}: {message}");
        assert!(message.contains(r#"["ls", "-la"]"#), "{ws}: {message}");
        assert!(message.contains(r#"["sh", "-c", "ls -la"]"#), "{ws}: {message}");
    }
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn an_invalid_grep_regex_shows_the_pattern_and_suggests_fixed_strings() {
    let mut env = Env::new();
    let root = env.workspace("w", json!({}));
    std::fs::write(root.join("a.rs"), "fn main(\n").unwrap();
    let client = env.stdio().await;
    let e = refused(
        &client,
        "grep",
        json!({"workspace_id": "w", "pattern": "main("}),
        "INVALID_PATTERN",
    )
    .await;
    let message = e["message"].as_str().unwrap();
    assert!(message.contains(r#""main(""#), "{message}");
    assert!(message.contains("fixed_strings: true"), "{message}");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn operation_status_without_id_or_key_names_what_is_required() {
    let mut env = Env::new();
    env.workspace("w", json!({}));
    let client = env.stdio().await;
    let e = refused(&client, "operation_status", json!({}), "OPERATION_NOT_FOUND").await;
    let message = e["message"].as_str().unwrap();
    assert!(message.contains("one of operation_id or operation_key is required"), "{message}");
    assert!(!message.contains("operation_key with workspace_id"), "{message}");
    let both = json!({"operation_id": "op-1", "operation_key": "k"});
    let e = refused(&client, "operation_status", both, "OPERATION_NOT_FOUND").await;
    assert!(e["message"].as_str().unwrap().contains("not both"), "{e}");
    client.cancel().await.unwrap();
}
