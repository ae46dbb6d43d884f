//! Probes of kernel features, each asked of the kernel directly rather than inferred from
//! version numbers or configuration files.
#![allow(unsafe_code)]

use serde::Serialize;

/// What this kernel offers, as probed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HostProbe {
    /// Landlock ABI version, or None when Landlock is unavailable or disabled.
    pub landlock_abi: Option<u32>,
    /// seccomp filters can be installed (the kernel has CONFIG_SECCOMP_FILTER).
    pub seccomp_filter: bool,
    /// A child could create a user namespace together with a network namespace.
    pub user_and_network_namespaces: bool,
    /// A child could create user, mount and PID namespaces, mount a tmpfs and a fresh
    /// `/proc` in them, and set its PID namespace's own `pid_max` (Linux 6.14+): what the
    /// launcher needs for the command's root and its process cap.
    pub mount_and_pid_namespaces: bool,
    /// openat2(2) with RESOLVE_BENEATH works.
    pub openat2: bool,
}

impl HostProbe {
    /// What the command sandbox needs and this host lacks, one phrase each; empty when the
    /// sandbox can be entered. The same answer decides what runs and what is reported.
    pub fn missing(&self) -> Vec<String> {
        let mut out = Vec::new();
        match self.landlock_abi {
            None => out.push("Landlock (unavailable or disabled)".to_owned()),
            Some(abi) if abi < 7 => out.push(format!("Landlock ABI 7 (this kernel has {abi})")),
            Some(_) => {}
        }
        if !self.seccomp_filter {
            out.push("seccomp filters".to_owned());
        }
        if !self.user_and_network_namespaces {
            out.push("user + network namespaces".to_owned());
        }
        if !self.mount_and_pid_namespaces {
            out.push(
                "mount + PID namespaces with a fresh /proc and a per-namespace pid_max (Linux 6.14+)"
                    .to_owned(),
            );
        }
        out
    }

    /// Whether every layer of the command sandbox is available.
    pub fn sandbox_usable(&self) -> bool {
        self.missing().is_empty()
    }
}

/// Runs every probe. Cheap (one short-lived child process); call it once at start.
pub fn probe() -> HostProbe {
    HostProbe {
        landlock_abi: landlock_abi(),
        seccomp_filter: seccomp_filter(),
        user_and_network_namespaces: namespaces(),
        mount_and_pid_namespaces: mount_and_pid_namespaces(),
        openat2: openat2(),
    }
}

const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;

fn landlock_abi() -> Option<u32> {
    // SAFETY: landlock_create_ruleset with a NULL attribute, size 0 and the VERSION flag only
    // returns the ABI number (or -1); it creates no descriptor and touches no memory.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    u32::try_from(v).ok().filter(|v| *v > 0)
}

fn seccomp_filter() -> bool {
    // SAFETY: PR_GET_SECCOMP reads this thread's seccomp mode; it has no side effects.
    let mode = unsafe { libc::prctl(libc::PR_GET_SECCOMP, 0, 0, 0, 0) };
    if mode < 0 {
        return false;
    }
    // A NULL filter pointer makes SECCOMP_SET_MODE_FILTER fail with EFAULT when filters are
    // supported, and with EINVAL when they are not; no filter is ever installed.
    // SAFETY: the call is made with a NULL program and so cannot change the process.
    let r = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_SET_MODE_FILTER,
            0u32,
            std::ptr::null::<libc::c_void>(),
        )
    };
    r == -1 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EFAULT)
}

fn namespaces() -> bool {
    // SAFETY: fork in a process that may have other threads; the child only calls the
    // async-signal-safe unshare and _exit, so it never touches locks held by other threads.
    let pid = unsafe { libc::fork() };
    match pid {
        -1 => false,
        0 => {
            // SAFETY: in the child: unshare and _exit are async-signal-safe.
            unsafe {
                let ok = libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNET) == 0;
                libc::_exit(if ok { 0 } else { 1 });
            }
        }
        child => exited_zero(child),
    }
}

fn mount_and_pid_namespaces() -> bool {
    // Everything the children need is prepared here: after a fork in a process that may
    // have other threads, they make only raw, async-signal-safe system calls.
    // SAFETY: geteuid/getegid only read the caller's credentials.
    let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
    let (Ok(uid_map), Ok(gid_map)) = (
        std::ffi::CString::new(format!("{uid} {uid} 1\n")),
        std::ffi::CString::new(format!("{gid} {gid} 1\n")),
    ) else {
        return false;
    };
    // SAFETY: see above; the child only calls the helpers below and _exit.
    let pid = unsafe { libc::fork() };
    match pid {
        -1 => false,
        0 => {
            // SAFETY: raw system calls on NUL-terminated strings prepared before the fork.
            unsafe {
                let flags = libc::CLONE_NEWUSER | libc::CLONE_NEWNS | libc::CLONE_NEWPID;
                let ok = libc::unshare(flags) == 0
                    && put(c"/proc/self/setgroups", c"deny")
                    && put(c"/proc/self/uid_map", &uid_map)
                    && put(c"/proc/self/gid_map", &gid_map);
                if !ok {
                    libc::_exit(1);
                }
                // The first child is PID 1 of the new namespace.
                let init = libc::fork();
                if init == 0 {
                    let null = std::ptr::null();
                    let ok = libc::mount(
                        null,
                        c"/".as_ptr(),
                        null,
                        libc::MS_REC | libc::MS_PRIVATE,
                        null.cast(),
                    ) == 0
                        && libc::mount(
                            c"tmpfs".as_ptr(),
                            c"/tmp".as_ptr(),
                            c"tmpfs".as_ptr(),
                            0,
                            null.cast(),
                        ) == 0
                        && libc::mkdir(c"/tmp/proc".as_ptr(), 0o755) == 0
                        && libc::mount(
                            c"proc".as_ptr(),
                            c"/tmp/proc".as_ptr(),
                            c"proc".as_ptr(),
                            0,
                            null.cast(),
                        ) == 0
                        && put(c"/tmp/proc/sys/kernel/pid_max", c"1000");
                    libc::_exit(if ok { 0 } else { 1 });
                }
                libc::_exit(if init > 0 && exited_zero(init) { 0 } else { 1 });
            }
        }
        child => exited_zero(child),
    }
}

/// Writes `text` to `path` with raw calls (usable right after a fork).
///
/// # Safety
/// Both arguments are NUL-terminated strings; the call only opens, writes and closes.
unsafe fn put(path: &std::ffi::CStr, text: &std::ffi::CStr) -> bool {
    // SAFETY: per the function's contract.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return false;
        }
        let len = text.to_bytes().len();
        let ok = libc::write(fd, text.as_ptr().cast(), len) == len as isize;
        libc::close(fd);
        ok
    }
}

fn exited_zero(child: libc::pid_t) -> bool {
    let mut status = 0;
    // SAFETY: waits for a child this process forked; status is a valid out pointer.
    let r = unsafe { libc::waitpid(child, &mut status, 0) };
    r == child && libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0
}

fn openat2() -> bool {
    #[repr(C)]
    struct OpenHow {
        flags: u64,
        mode: u64,
        resolve: u64,
    }
    const RESOLVE_BENEATH: u64 = 0x08;
    let how = OpenHow {
        flags: (libc::O_PATH | libc::O_CLOEXEC) as u64,
        mode: 0,
        resolve: RESOLVE_BENEATH,
    };
    // SAFETY: openat2 on "." relative to the working directory, with a valid open_how of the declared size;
    // the returned descriptor is closed right away.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            libc::AT_FDCWD,
            c".".as_ptr(),
            &how as *const OpenHow,
            std::mem::size_of::<OpenHow>(),
        )
    };
    if fd < 0 {
        return false;
    }
    // SAFETY: fd was just returned by openat2 and is owned here.
    unsafe { libc::close(fd as libc::c_int) };
    true
}

#[cfg(test)]
mod tests {
    #[test]
    fn probe_runs_and_openat2_matches_kernel() {
        let p = super::probe();
        // Every supported kernel (5.6+) has openat2; the file tools depend on it.
        assert!(p.openat2, "{p:?}");
        if std::env::var("CODESPACE_REQUIRE_SANDBOX").as_deref() == Ok("1") {
            assert!(p.sandbox_usable(), "missing {:?}: {p:?}", p.missing());
        }
    }
}
