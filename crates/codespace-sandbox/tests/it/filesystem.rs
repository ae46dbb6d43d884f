//! What a sandboxed command sees of the host's filesystem: writes only beneath its writable
//! roots, the private root that hides the rest of the host, and the server's `/proc`.
#![expect(
    clippy::disallowed_methods,
    reason = "tests build fixtures on the host filesystem and check that nothing reached it"
)]

use std::path::{Path, PathBuf};

use codespace_types::NetworkPolicy;

use crate::support::{
    TRY, argv, has_line, output_of, outside, policy, req, sandboxed, sh, with_policy, workspace,
};

/// F1 (workspace-write) and a write through a symlink out of the root: only the workspace
/// (and /dev/null) is writable.
#[test]
fn workspace_write_confines_writes_to_the_root() {
    let ws = workspace();
    let root = ws.path();
    let home = PathBuf::from(std::env::var("HOME").unwrap_or_else(|_| "/root".into()));
    let etc = outside(Path::new("/etc"), "etc");
    let home_file = outside(&home, "home");
    let host_tmp = outside(Path::new("/tmp"), "tmp");
    let escape_dir =
        tempfile::Builder::new().prefix("codespace-sbx-out-").tempdir_in("/tmp").unwrap();
    std::os::unix::fs::symlink(escape_dir.path(), root.join("link")).unwrap();
    let script = format!(
        "{TRY}try inside '{r}/inside'; try etc '{e}'; try home '{h}'; try tmp '{t}'; \
         try devnull /dev/null; try symlink '{r}/link/escaped'; \
         if mkdir '{t}.d' 2>/dev/null; then echo mkdir=ok; else echo mkdir=denied; fi; \
         mkdir '{r}/sub' && echo nested > '{r}/sub/f' && mv '{r}/sub/f' '{r}/sub/g' && echo tree=ok; \
         exit 7",
        r = root.display(),
        e = etc.display(),
        h = home_file.display(),
        t = host_tmp.display(),
    );
    let (code, out) = output_of(sandboxed(&argv(&sh(&script)), &[root], NetworkPolicy::Restricted));
    for line in [
        "inside=ok",
        "etc=denied",
        "home=denied",
        // The private /tmp: writable, and nothing reaches the host's (checked below).
        "tmp=ok",
        "devnull=ok",
        "symlink=denied",
        "mkdir=ok",
        "tree=ok",
    ] {
        assert!(has_line(&out, line), "missing {line:?} in {out:?}");
    }
    // The command's own exit code comes through the sandbox unchanged.
    assert_eq!(code, Some(7), "{out}");
    assert_eq!(std::fs::read_to_string(root.join("inside")).unwrap(), "x\n");
    assert_eq!(std::fs::read_to_string(root.join("sub/g")).unwrap(), "nested\n");
    for p in [&etc, &home_file, &host_tmp, &escape_dir.path().join("escaped")] {
        assert!(!p.exists(), "{} was written", p.display());
    }

    // Control: unsandboxed, the host-/tmp write works, so the denial above is the sandbox's.
    let control = format!("{TRY}try tmp '{}'", host_tmp.display());
    let (_, out) = output_of(req(&argv(&sh(&control))));
    assert!(has_line(&out, "tmp=ok"), "{out}");
    std::fs::remove_file(&host_tmp).unwrap();
}

/// F1 (read-only): every write is denied, the workspace included, but reads work.
#[test]
fn read_only_denies_every_write() {
    let ws = workspace();
    let root = ws.path();
    std::fs::write(root.join("existing"), "before\n").unwrap();
    let script = format!(
        "{TRY}try inside '{r}/new'; try existing '{r}/existing'; try devnull /dev/null; \
         cat '{r}/existing'; if rm '{r}/existing' 2>/dev/null; then echo rm=ok; else echo rm=denied; fi",
        r = root.display()
    );
    let ro = policy(&[root], &[], NetworkPolicy::Restricted);
    let (code, out) = output_of(with_policy(&argv(&sh(&script)), ro));
    for line in ["inside=denied", "existing=denied", "devnull=ok", "before", "rm=denied"] {
        assert!(has_line(&out, line), "missing {line:?} in {out:?}");
    }
    assert_eq!(code, Some(0), "{out}");
    assert!(!root.join("new").exists());
    assert_eq!(std::fs::read_to_string(root.join("existing")).unwrap(), "before\n");
}

/// F7, F2, private `/tmp`: the command's root holds the system directories, its roots and
/// its own `/tmp`; the host's home, `/tmp` and `/run` are absent, masked paths inside a
/// visible root are empty, and what the command writes to `/tmp` never reaches the host.
#[test]
fn the_private_root_hides_the_host() {
    let ws = workspace();
    let root = ws.path();
    let home = PathBuf::from(std::env::var("HOME").unwrap_or_else(|_| "/root".into()));
    let host_tmp_file = outside(Path::new("/tmp"), "visible");
    std::fs::write(&host_tmp_file, "host\n").unwrap();
    std::fs::create_dir(root.join("state")).unwrap();
    std::fs::write(root.join("state/token"), "s3cr3t\n").unwrap();
    std::fs::write(root.join("ledger.db"), "ledger\n").unwrap();
    // An extra read root (a toolchain outside the workspace): readable and executable.
    let tools = tempfile::Builder::new().prefix("codespace-sbx-tools-").tempdir_in("/tmp").unwrap();
    let hello = tools.path().join("hello");
    std::fs::write(&hello, "#!/bin/sh\necho hello-from-tools\n").unwrap();
    std::fs::set_permissions(&hello, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let mut p = policy(&[tools.path()], &[root], NetworkPolicy::Restricted);
    p.masked = vec![root.join("state"), root.join("ledger.db"), "/nonexistent/x".into()];
    let script = format!(
        "{TRY}see() {{ if [ -e \"$2\" ]; then echo \"$1=visible\"; else echo \"$1=absent\"; fi; }}; \
         see home '{home}'; see hosttmp '{htf}'; see run /run; see usr /usr/bin/env; \
         see state_token '{r}/state/token'; echo ledger=$(cat '{r}/ledger.db' | wc -c); \
         try state '{r}/state/new'; try tmp /tmp/scratch; try shm /dev/shm/scratch; \
         '{hello}'; try tools '{tools}/new'; echo shadow=$(cat /etc/shadow | wc -c); \
         echo tmpdir=$(ls -A /tmp); echo proc=$(ls /proc | grep -c '^[0-9]'); echo pid=$$",
        hello = hello.display(),
        tools = tools.path().display(),
        home = home.display(),
        htf = host_tmp_file.display(),
        r = root.display(),
    );
    let (code, out) = output_of(with_policy(&argv(&sh(&script)), p));
    assert_eq!(code, Some(0), "{out}");
    for line in [
        "home=absent",
        "hosttmp=absent",
        "run=absent",
        "usr=visible",
        "state_token=absent",
        "ledger=0",
        "state=denied",
        "tmp=ok",
        "shm=ok",
        "hello-from-tools",
        "tools=denied",
        // The host's password hashes are masked (readable to a root server's uid otherwise).
        "shadow=0",
        // The workspace and the tools lie under the host's /tmp, so they stay visible there.
        &{
            let mut names: Vec<&str> = [root, tools.path()]
                .iter()
                .map(|p| p.file_name().unwrap().to_str().unwrap())
                .collect();
            names.push("scratch");
            names.sort_unstable();
            format!("tmpdir={}", names.join(" "))
        },
        // PID 1 (the namespace's init), the shell and `ls`: nothing of the host.
        "pid=2",
    ] {
        assert!(has_line(&out, line), "missing {line:?} in {out:?}");
    }
    let procs: u32 = out.lines().find_map(|l| l.strip_prefix("proc=")).unwrap().parse().unwrap();
    assert!(procs <= 6, "host processes visible in /proc: {out}");
    assert!(!Path::new("/tmp/scratch").exists(), "the private /tmp leaked to the host");
    assert_eq!(std::fs::read_to_string(root.join("state/token")).unwrap(), "s3cr3t\n");
    std::fs::remove_file(&host_tmp_file).unwrap();

    // Control: unsandboxed, the same paths are there.
    let control = format!("cat '{}' '{}/state/token'", host_tmp_file.display(), root.display());
    std::fs::write(&host_tmp_file, "host\n").unwrap();
    let (code, out) = output_of(req(&["sh", "-c", &control]));
    assert_eq!((code, out.as_str()), (Some(0), "host\ns3cr3t\n"));
    std::fs::remove_file(&host_tmp_file).unwrap();
}

/// F7 (part): the server's `/proc/<pid>/environ` and `cmdline` are unreadable: the
/// command's `/proc` belongs to its own PID namespace, where the server does not exist.
#[test]
fn server_proc_secrets_are_unreadable() {
    let ws = workspace();
    let me = std::process::id();
    let script = format!(
        "for f in environ cmdline; do if cat /proc/{me}/$f >/dev/null 2>&1; then echo $f=ok; \
         else echo $f=denied; fi; done"
    );
    let (_, out) =
        output_of(sandboxed(&["sh", "-c", &script], &[ws.path()], NetworkPolicy::Enabled));
    assert!(has_line(&out, "environ=denied") && has_line(&out, "cmdline=denied"), "{out}");
    let control = format!(
        "if cat /proc/{me}/environ >/dev/null 2>&1; then echo environ=ok; else echo environ=denied; fi"
    );
    let (_, out) = output_of(req(&["sh", "-c", &control]));
    assert!(has_line(&out, "environ=ok"), "control: {out}");
}
