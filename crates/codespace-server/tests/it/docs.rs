//! The docs stay true: every error code is documented with its meaning and next action,
//! every architecture invariant names checks that exist, and every README recipe is a
//! registry the server accepts, with tool calls its tools take.

use std::path::Path;

use codespace_policy::Registry;
use codespace_protocol::{
    ErrorCode, ExecCommandParams, ProcessStatusParams, ReadProcessParams, RefusalReason,
};
use serde_json::Value;

use crate::support::Env;

/// The README's error table is exactly the one `ErrorCode`'s rows make: every code, in
/// declaration order, with its meaning and next action, and no other row.
#[test]
fn readme_documents_every_error_code() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md")).unwrap();
    let mut table =
        String::from("## Error codes\n\n| Code | Meaning | Next action |\n| --- | --- | --- |\n");
    for code in ErrorCode::ALL {
        table.push_str(&format!(
            "| `{}` | {} | {} |\n",
            code.as_str(),
            code.meaning(),
            code.next_action()
        ));
    }
    table.push('\n');
    assert!(
        readme.contains(&table),
        "README's error table differs from ErrorCode's; it should read:\n{table}"
    );
}

/// The README's table of refusal reasons is exactly the one `RefusalReason`'s rows make.
#[test]
fn readme_documents_every_refusal_reason() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md")).unwrap();
    let mut table = String::from("\n| Reason | Meaning | Next action |\n| --- | --- | --- |\n");
    for reason in RefusalReason::ALL {
        table.push_str(&format!(
            "| `{}` | {} | {} |\n",
            reason.as_str(),
            reason.meaning(),
            reason.next_action()
        ));
    }
    table.push('\n');
    assert!(
        readme.contains(&table),
        "README's table of refusal reasons differs from RefusalReason's; it should read:\n{table}"
    );
}

/// Every `fn` defined in the workspace's Rust sources, by name.
fn defined_functions(dir: &std::path::Path, names: &mut std::collections::BTreeSet<String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            defined_functions(&path, names);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path).unwrap();
            for rest in text.split("fn ").skip(1) {
                let name: String =
                    rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
                names.insert(name);
            }
        }
    }
}

#[test]
fn every_architecture_invariant_names_checks_that_exist() {
    let root = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    let doc = std::fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap();
    let mut functions = std::collections::BTreeSet::new();
    defined_functions(&root.join("crates"), &mut functions);
    let invariants: Vec<&str> =
        doc.split("\n\n").filter(|p| p.starts_with("Architecture Invariant:")).collect();
    assert!(invariants.len() >= 10, "ARCHITECTURE.md lost its invariants: {}", invariants.len());
    for invariant in invariants {
        let (_, checks) = invariant
            .split_once("Checked by:")
            .unwrap_or_else(|| panic!("an invariant names no check:\n{invariant}"));
        let mut named = 0;
        for quoted in checks.split('`').skip(1).step_by(2) {
            let is_test_name = quoted.matches('_').count() >= 2
                && quoted.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
            if is_test_name {
                assert!(
                    functions.contains(quoted),
                    "ARCHITECTURE.md names a missing test: {quoted}"
                );
                named += 1;
            } else if quoted.contains('/') && !quoted.contains(' ') && !quoted.contains("::") {
                assert!(
                    root.join(quoted).exists(),
                    "ARCHITECTURE.md names a missing file: {quoted}"
                );
                named += 1;
            }
        }
        assert!(named > 0, "an invariant's checks name no test or file:\n{invariant}");
    }
}

/// One `### ` recipe of the README's "Recipes" section: its ```json blocks (registry files)
/// and the lines of its ```text blocks (tool calls, `TOOL {arguments}`).
struct Recipe {
    title: String,
    registries: Vec<String>,
    calls: Vec<String>,
}

/// The recipes, in order; text before the first `### ` is a recipe with an empty title.
fn recipes(readme: &str) -> Vec<Recipe> {
    let mut recipes: Vec<Recipe> = Vec::new();
    let mut in_section = false;
    let mut fence: Option<(String, Vec<&str>)> = None;
    for line in readme.lines() {
        if let Some((info, body)) = &mut fence {
            if line.trim_start() == "```" {
                let recipe = recipes.last_mut().expect("a recipe is open");
                match info.as_str() {
                    "json" => recipe.registries.push(body.join("\n")),
                    "text" => recipe.calls.extend(body.iter().map(|l| (*l).to_owned())),
                    other => panic!("recipe {:?}: a ```{other} block", recipe.title),
                }
                fence = None;
            } else {
                body.push(line);
            }
            continue;
        }
        if let Some(title) = line.strip_prefix("## ") {
            in_section = title == "Recipes";
            if in_section {
                recipes.push(Recipe { title: String::new(), registries: vec![], calls: vec![] });
            }
        } else if !in_section {
            continue;
        } else if let Some(title) = line.strip_prefix("### ") {
            recipes.push(Recipe { title: title.to_owned(), registries: vec![], calls: vec![] });
        } else if let Some(info) = line.trim_start().strip_prefix("```") {
            fence = Some((info.trim().to_owned(), Vec::new()));
        }
    }
    assert!(fence.is_none(), "the README ends inside a code block");
    recipes
}

fn readme() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md")).unwrap()
}

/// The registry as `--config` reads it, or the key and reason it is refused for.
fn parse_registry(text: &str) -> Result<Registry, String> {
    Registry::parse(text).map_err(|e| format!("key {}: {}", e.key, e.reason))
}

/// `codespace doctor --config` on the registry, its paths moved under `fs` (where every
/// root and extra read root is created): the start-time checks `serve` makes too.
fn doctor(env: &Env, fs: &Path, text: &str) -> std::process::Output {
    let mut doc: Value = serde_json::from_str(text).unwrap();
    let mut moved = |path: &mut Value| {
        let Some(p) = path.as_str() else { return };
        let under = fs.join(p.trim_start_matches('/'));
        std::fs::create_dir_all(&under).unwrap();
        *path = Value::String(under.display().to_string());
    };
    if let Some(workspaces) = doc.get_mut("workspaces").and_then(Value::as_object_mut) {
        for ws in workspaces.values_mut() {
            if let Some(root) = ws.get_mut("root") {
                moved(root);
            }
            if let Some(extra) = ws.get_mut("extra_read_roots").and_then(Value::as_array_mut) {
                extra.iter_mut().for_each(&mut moved);
            }
        }
    }
    let config = env.path().join("recipe.json");
    std::fs::write(&config, serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
    env.command().args(["doctor", "--config"]).arg(&config).output().unwrap()
}

/// The argument names a tool's input schema declares.
fn schema_keys<T: rmcp::schemars::JsonSchema>() -> Vec<String> {
    let schema = serde_json::to_value(rmcp::schemars::schema_for!(T)).unwrap();
    schema["properties"].as_object().unwrap().keys().cloned().collect()
}

/// A recipe's `TOOL {arguments}` line: a process tool, arguments its schema declares and
/// its decoder takes; an `exec_command` names a workspace of the recipe and asks for no
/// more time than that workspace allows (the recipe never shows a clamped call).
fn check_call(line: &str, registry: &Registry) {
    let (tool, args) = line.split_once(' ').unwrap_or_else(|| panic!("not TOOL {{args}}: {line}"));
    let args: Value = serde_json::from_str(args)
        .unwrap_or_else(|e| panic!("arguments are not JSON ({e}): {line}"));
    let keys = match tool {
        "exec_command" => {
            let p: ExecCommandParams = serde_json::from_value(args.clone()).unwrap();
            let ws = registry
                .get(&p.workspace_id)
                .unwrap_or_else(|| panic!("the recipe registers no {:?}: {line}", p.workspace_id));
            // The server's default limit (CODESPACE_PROCESS_TIMEOUT_SECS) is 30 s.
            let max = ws.timeouts(30).max_secs;
            assert!(p.timeout_secs.unwrap_or(0) <= max, "over max_timeout_secs {max}: {line}");
            assert!(!p.command.is_empty(), "{line}");
            schema_keys::<ExecCommandParams>()
        }
        "read_process" => {
            let _: ReadProcessParams = serde_json::from_value(args.clone()).unwrap();
            schema_keys::<ReadProcessParams>()
        }
        "process_status" => {
            let _: ProcessStatusParams = serde_json::from_value(args.clone()).unwrap();
            schema_keys::<ProcessStatusParams>()
        }
        other => panic!("a recipe calls {other}, which this test does not know: {line}"),
    };
    for key in args.as_object().unwrap().keys() {
        assert!(keys.contains(key), "{tool} takes no {key:?} (it takes {keys:?}): {line}");
    }
}

#[test]
fn every_readme_recipe_is_a_registry_the_server_accepts() {
    let readme = readme();
    let recipes = recipes(&readme);
    let blocks: usize = recipes.iter().map(|r| r.registries.len()).sum();
    assert!(blocks >= 4, "the Recipes section lost its registries: {blocks}");
    let env = Env::new();
    for (i, recipe) in recipes.iter().enumerate().filter(|(_, r)| !r.title.is_empty()) {
        let title = &recipe.title;
        assert_eq!(recipe.registries.len(), 1, "recipe {title:?}: one registry");
        let text = &recipe.registries[0];
        let registry =
            parse_registry(text).unwrap_or_else(|e| panic!("recipe {title:?}: {e}\n{text}"));
        let out = doctor(&env, &env.path().join(format!("fs{i}")), text);
        assert!(
            out.status.success(),
            "recipe {title:?}: doctor --config refuses it: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            recipe.calls.iter().any(|c| c.starts_with("exec_command ")),
            "recipe {title:?} shows no exec_command call"
        );
        for line in &recipe.calls {
            check_call(line, &registry);
        }
    }
    let loose: usize =
        recipes.iter().filter(|r| r.title.is_empty()).map(|r| r.registries.len()).sum();
    assert_eq!(loose, 0, "a registry outside any recipe");
}

/// The check above has teeth: a misspelled key in a recipe fails both the parser and
/// `doctor --config`, naming the key.
#[test]
fn a_misspelled_key_in_a_recipe_is_refused() {
    let readme = readme();
    let recipes = recipes(&readme);
    let text = recipes
        .iter()
        .flat_map(|r| &r.registries)
        .find(|t| t.contains("\"extra_read_roots\""))
        .expect("a recipe with extra_read_roots");
    let bad = text.replacen("\"extra_read_roots\"", "\"extra_read_root\"", 1);
    let e = parse_registry(&bad).expect_err("a misspelled key parses");
    assert!(e.contains(".extra_read_root: unknown key"), "{e}");
    let env = Env::new();
    let out = doctor(&env, &env.path().join("fs"), &bad);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(".extra_read_root: unknown key"), "{stderr}");
}
