//! Probes of kernel features, each asked of the kernel directly rather than inferred from
//! version numbers or configuration files.

use std::ffi::CStr;

use rustix::fs::{CWD, Mode, OFlags, ResolveFlags};
use rustix::mount::{MountFlags, MountPropagationFlags};
use rustix::process::{Pid, WaitOptions};
use rustix::thread::UnshareFlags;
use serde::Serialize;

use crate::sys::{self, Forked};

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
    /// AppArmor's `kernel.apparmor_restrict_unprivileged_userns` (Ubuntu 23.10+): `Some(true)`
    /// when unprivileged user namespaces are restricted (then the namespace probes above
    /// fail unless a profile allows this binary), `None` when the kernel has no such knob.
    pub apparmor_restricts_userns: Option<bool>,
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
        apparmor_restricts_userns: apparmor_restricts_userns(),
    }
}

#[expect(clippy::disallowed_methods, reason = "reads one sysctl of the host")]
fn apparmor_restricts_userns() -> Option<bool> {
    let text = std::fs::read_to_string("/proc/sys/kernel/apparmor_restrict_unprivileged_userns");
    text.ok().map(|t| t.trim() != "0")
}

const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;

#[expect(unsafe_code, reason = "rustix has no landlock_create_ruleset")]
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

#[expect(unsafe_code, reason = "rustix has no seccomp call")]
fn seccomp_filter() -> bool {
    if rustix::thread::secure_computing_mode().is_err() {
        return false;
    }
    // A NULL filter pointer makes SECCOMP_SET_MODE_FILTER fail with EFAULT when filters are
    // supported, and with EINVAL when they are not; no filter is ever installed. (rustix
    // has no `seccomp` call.)
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
    in_child(|| sys::unshare_namespaces(UnshareFlags::NEWUSER | UnshareFlags::NEWNET).is_ok())
}

fn mount_and_pid_namespaces() -> bool {
    // Everything the children need is prepared here: after a fork in a process that may
    // have other threads, they make only raw, async-signal-safe system calls.
    let uid = rustix::process::geteuid().as_raw();
    let gid = rustix::process::getegid().as_raw();
    let (Ok(uid_map), Ok(gid_map)) = (
        std::ffi::CString::new(format!("{uid} {uid} 1\n")),
        std::ffi::CString::new(format!("{gid} {gid} 1\n")),
    ) else {
        return false;
    };
    in_child(|| {
        let flags = UnshareFlags::NEWUSER | UnshareFlags::NEWNS | UnshareFlags::NEWPID;
        sys::unshare_namespaces(flags).is_ok()
            && put(c"/proc/self/setgroups", c"deny")
            && put(c"/proc/self/uid_map", &uid_map)
            && put(c"/proc/self/gid_map", &gid_map)
            // The first child is PID 1 of the new namespace.
            && in_child(mount_proc_with_pid_max)
    })
}

/// In PID 1 of a new PID namespace: a private mount tree, a tmpfs, a fresh `/proc` in it
/// and that namespace's own `pid_max`.
fn mount_proc_with_pid_max() -> bool {
    let private = MountPropagationFlags::REC | MountPropagationFlags::PRIVATE;
    let none: Option<&CStr> = None;
    rustix::mount::mount_change(c"/", private).is_ok()
        && rustix::mount::mount(c"tmpfs", c"/tmp", c"tmpfs", MountFlags::empty(), none).is_ok()
        && rustix::fs::mkdir(c"/tmp/proc", Mode::from_raw_mode(0o755)).is_ok()
        && rustix::mount::mount(c"proc", c"/tmp/proc", c"proc", MountFlags::empty(), none).is_ok()
        && put(c"/tmp/proc/sys/kernel/pid_max", c"1000")
}

/// Runs `probe` in a forked child and says whether it returned `true` there. In a process
/// that may have other threads, `probe` may only make raw system calls (no allocation,
/// no lock): nothing but rustix's calls on C strings, and [`in_child`] itself.
#[expect(unsafe_code, reason = "forks the probe's child")]
fn in_child(probe: impl FnOnce() -> bool) -> bool {
    // SAFETY: the child only runs `probe`, bound to async-signal-safe calls (above), and
    // ends with `_exit`.
    match unsafe { sys::fork() } {
        Err(_) => false,
        Ok(Forked::Child) => sys::exit_now(if probe() { 0 } else { 1 }),
        Ok(Forked::Parent(child)) => exited_zero(child),
    }
}

/// Writes `text` to `path` with raw calls (usable right after a fork).
#[expect(clippy::disallowed_methods, reason = "writes a /proc file in the probe's child")]
fn put(path: &CStr, text: &CStr) -> bool {
    let Ok(fd) = rustix::fs::open(path, OFlags::WRONLY | OFlags::CLOEXEC, Mode::empty()) else {
        return false;
    };
    let len = text.to_bytes().len();
    rustix::io::write(&fd, text.to_bytes()) == Ok(len)
}

fn exited_zero(child: Pid) -> bool {
    matches!(
        rustix::process::waitpid(Some(child), WaitOptions::empty()),
        Ok(Some((pid, status))) if pid == child && status.exit_status() == Some(0)
    )
}

#[expect(clippy::disallowed_methods, reason = "probes openat2 on the working directory")]
fn openat2() -> bool {
    let flags = OFlags::PATH | OFlags::CLOEXEC;
    // The descriptor, if any, is closed as soon as it is dropped.
    rustix::fs::openat2(CWD, c".", flags, Mode::empty(), ResolveFlags::BENEATH).is_ok()
}

#[cfg(test)]
mod tests;
