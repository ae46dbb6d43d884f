//! Unit tests of `shim_messages`.

use codespace_types::NetworkPolicy;

use super::*;

fn args() -> ShimArgs {
    ShimArgs {
        ppid: 42,
        report_fd: 7,
        cwd_fd: 8,
        tty: true,
        sandbox: None,
        external: None,
        search_path: "/usr/bin:bin::-odd".into(),
        argv: vec!["printf".into(), "%s\n".into(), "a b".into(), "--".into(), "-x".into()],
    }
}

#[test]
fn args_round_trip() {
    let a = args();
    assert_eq!(ShimArgs::from_args(&a.to_args().unwrap()), Ok(a.clone()));
    let p = ShimArgs { tty: false, search_path: "".into(), ..a.clone() };
    assert_eq!(ShimArgs::from_args(&p.to_args().unwrap()), Ok(p));
    for network in [NetworkPolicy::Restricted, NetworkPolicy::Enabled] {
        let s = ShimArgs {
            sandbox: Some(SandboxPolicy {
                read_roots: vec!["/opt/x".into()],
                writable_roots: vec!["/w/one".into(), "/w/t wo".into()],
                masked: vec![],
                network,
                max_pids: 512,
                workdir: Some("/w/one".into()),
            }),
            ..a.clone()
        };
        assert_eq!(ShimArgs::from_args(&s.to_args().unwrap()), Ok(s));
    }
}

#[test]
fn args_refuse_malformed_and_say_why() {
    let refused = |a: ShimArgs| ShimArgs::from_args(&a.to_args().unwrap()).unwrap_err();
    assert!(refused(ShimArgs { ppid: 0, ..args() }).contains("ppid"));
    assert!(refused(ShimArgs { cwd_fd: 7, ..args() }).contains("differ"));
    assert!(refused(ShimArgs { cwd_fd: 2, ..args() }).contains("3 or above"));
    assert!(refused(ShimArgs { report_fd: 2, ..args() }).contains("3 or above"));
    assert!(refused(ShimArgs { argv: vec![], ..args() }).contains("argv"));
    let policy = SandboxPolicy {
        read_roots: vec![],
        writable_roots: vec!["rel".into()],
        masked: vec![],
        network: NetworkPolicy::Enabled,
        max_pids: 400,
        workdir: None,
    };
    assert!(refused(ShimArgs { sandbox: Some(policy), ..args() }).contains("sandbox"));
    assert!(ShimArgs::from_args(&[]).is_err());
    assert!(ShimArgs::from_args(&["--protocol=v5".into()]).is_err());
}

#[test]
fn reports_and_helper_messages_round_trip() {
    for r in [
        ShimReport::Started { pid: 7 },
        ShimReport::Failed { errno: 2, message: "No such file or directory".into() },
        ShimReport::Exited { code: 255, requested: true },
        ShimReport::Signaled { signal: 9, requested: false },
    ] {
        let frame = r.frame();
        let len = u32::from_le_bytes([frame[0], frame[1], frame[2], frame[3]]) as usize;
        assert_eq!(len, frame.len() - 4);
        assert_eq!(envelope::decode::<ShimReport>(&frame[4..]), Ok(r));
    }
    let f = ShimReport::Failed { errno: 1, message: "a\nb".into() }.frame();
    let one_line = ShimReport::Failed { errno: 1, message: "a b".into() };
    assert_eq!(envelope::decode::<ShimReport>(&f[4..]), Ok(one_line));
    let env = vec![("PATH".into(), "/bin".into()), ("E".into(), "a=b".into())];
    let request = HelperRequest { shim: args(), env };
    let bytes = envelope::encode(&request).unwrap();
    assert_eq!(envelope::decode::<HelperRequest>(&bytes), Ok(request));
    assert!(envelope::decode::<HelperRequest>(b"x1\0a\0").is_err());
}
