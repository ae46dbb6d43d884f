//! The launcher: three processes between the reaper shim and the command.
//!
//! - The *monitor* (the process [`launch`] is called in, a fresh fork of the shim) starts
//!   in the host's namespaces. It clones the *init* into new user, mount, PID and IPC
//!   namespaces and writes the init's uid and gid maps from outside (the caller's own ids
//!   mapped to themselves, `setgroups` denied). Under [`NetworkPolicy::Restricted`] it then
//!   joins the init's user namespace, makes a network namespace there while the init builds
//!   the root (the slowest namespace to create), and passes it over a socket. It then waits
//!   and finally exits exactly as the command did: with its exit code, or by raising its
//!   fatal signal. It holds none of the command's stdio and ignores the terminal's
//!   signals, so only the command reacts to them.
//! - The *init* is PID 1 of the new PID namespace, dies with the monitor
//!   (`PR_SET_PDEATHSIG(SIGKILL)`), and builds the command's root: a tmpfs holding read-only
//!   binds of the system directories, a read-only `/sys`, a fresh `/proc`, a minimal `/dev`,
//!   a private `/tmp`, and the policy's roots at their canonical paths, every read-only
//!   bind `nosuid`; the masked paths and the host's password hashes covered; then `pivot_root` and the old root detached. It
//!   caps the namespace's `pid_max` (Linux 6.14+), joins the network namespace it was sent
//!   (under `Restricted`), forks the command, reaps every orphan,
//!   and when the command ends passes its status to the monitor and exits, which makes the
//!   kernel kill whatever is left in the namespace. The monitor ends as soon as it has the
//!   status; the shim adopts and reaps the init while the namespaces are torn down.
//! - The *command* restricts itself ([`crate::enter`]: no-new-privs, Landlock, seccomp, no
//!   capabilities) and execs.
//!
//! Every failure before the exec is written to the report pipe as `<errno> <text>` and the
//! process exits 127; the pipe is close-on-exec everywhere and each stage closes its copy
//! once the next one holds it, so end of file with nothing read means the command's exec
//! succeeded. Nothing runs unsandboxed as a fallback.

// Namespaces, mounts, pivot_root, clone and wait are raw kernel calls.
#![allow(unsafe_code)]

use std::convert::Infallible;
use std::ffi::{CString, OsStr, OsString};
use std::io;
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};
use std::ptr;
use std::time::Duration;

use crate::enter::{SandboxError, Visible, enter, seccomp_program};
use crate::policy::{NetworkPolicy, SandboxPolicy};

/// Host directories bound read-only into every sandbox when they exist (a symlink, as
/// `/bin -> usr/bin` on a merged-`/usr` system, is recreated as the same symlink).
pub(crate) const SYSTEM_DIRS: [&str; 10] =
    ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/nix"];
/// Device nodes bound into the sandbox's `/dev` when the host has them.
pub(crate) const DEVICE_FILES: [&str; 6] =
    ["/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"];
/// Host files masked in every sandbox: a command runs with the server's uid, and as root its
/// file-system uid still owns them even without capabilities.
const HOST_SECRETS: [&str; 4] = ["/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-"];
/// Where the new root is assembled: a tmpfs mounted over the host's `/tmp` in the private
/// mount namespace (the host never sees it). Sources are opened before it hides anything.
const STAGING: &str = "/tmp";
/// The status the init passes to the monitor: how the command ended.
const STATUS_EXITED: u8 = b'x';
const STATUS_SIGNALED: u8 = b's';
/// Exit status of a stage that failed before the command's exec.
const EXIT_FAILED: i32 = 127;
/// Attempts and pause when `execve` says the program is busy being written (ETXTBSY).
const TXTBSY_RETRIES: u32 = 20;
const TXTBSY_PAUSE: Duration = Duration::from_millis(5);

/// Runs `exe` with `argv` under `policy`, in the calling process (the monitor). Never
/// returns. Call it in a single-threaded process whose fds 0-2 are the command's stdio, its
/// working directory the command's, and its environment the command's; `report` is the
/// write end of a close-on-exec pipe (see the module docs for what it carries).
pub fn launch(policy: &SandboxPolicy, exe: &OsStr, argv: &[OsString], report: i32) -> ! {
    let Err(e) = monitor(policy, exe, argv, report);
    fail(report, &e)
}

/// Writes `e` on the report pipe and exits without running anything.
fn fail(report: i32, e: &SandboxError) -> ! {
    let text = format!("{} {e}", e.errno);
    // SAFETY: writes bytes that outlive the call to a descriptor this process holds, then
    // exits without unwinding or running destructors (the process is a fork of the shim).
    unsafe {
        libc::write(report, text.as_ptr().cast(), text.len());
        libc::_exit(EXIT_FAILED)
    }
}

fn monitor(
    policy: &SandboxPolicy,
    exe: &OsStr,
    argv: &[OsString],
    report: i32,
) -> Result<Infallible, SandboxError> {
    let lists = [&policy.read_roots, &policy.writable_roots, &policy.masked];
    if let Some(p) = lists.iter().flat_map(|l| l.iter()).find(|p| !p.is_absolute()) {
        return Err(SandboxError::other("policy", format!("{} is not absolute", p.display())));
    }
    let cwd = std::env::current_dir().map_err(|e| SandboxError::io("cwd", &e))?;
    let exe = cstring("exe", exe.as_bytes())?;
    let argv = argv.iter().map(|a| cstring("argv", a.as_bytes())).collect::<Result<Vec<_>, _>>()?;
    // Built before anything changes, so a malformed filter fails first.
    let bpf = seccomp_program(policy.network)?;
    // SAFETY: geteuid/getegid only read the caller's credentials.
    let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
    let (sync_r, sync_w) = pipe()?;
    let (status_r, status_w) = pipe()?;
    // Under `restricted` the monitor makes the network namespace while the init builds the
    // root (creating one takes most of a millisecond), and hands it over on this socket.
    let netns_channel = match policy.network {
        NetworkPolicy::Restricted => Some(socketpair()?),
        NetworkPolicy::Enabled => None,
    };
    let flags = libc::CLONE_NEWUSER | libc::CLONE_NEWNS | libc::CLONE_NEWPID | libc::CLONE_NEWIPC;
    // SAFETY: a raw clone with no new stack behaves as fork, with the child entering the
    // new namespaces. This process is single-threaded (a fork of the shim), so the child
    // may allocate; it never returns from `init`. glibc's cached thread id is stale in that
    // child (only glibc's own fork refreshes it), so the init never raises a signal or
    // uses an owner-checked pthread lock; the command it forks with `fork` is exact again.
    let pid = unsafe {
        libc::syscall(
            libc::SYS_clone,
            (flags | libc::SIGCHLD) as libc::c_ulong,
            0usize,
            0usize,
            0usize,
            0usize,
        )
    };
    if pid < 0 {
        return Err(SandboxError::last_os("clone namespaces"));
    }
    if pid == 0 {
        close(sync_w);
        close(status_r);
        let netns = netns_channel.map(|(monitor_end, init_end)| {
            close(monitor_end);
            init_end
        });
        let Err(e) = init(policy, &cwd, &exe, &argv, &bpf, sync_r, status_w, netns, report);
        fail(report, &e)
    }
    let pid = pid as libc::pid_t;
    close(sync_r);
    close(status_w);
    if let Err(e) = write_maps(pid, uid, gid) {
        kill_and_reap(pid);
        return Err(e);
    }
    // SAFETY: writes one byte from a live buffer to the pipe created above.
    if unsafe { libc::write(sync_w, b"1".as_ptr().cast(), 1) } != 1 {
        let e = SandboxError::last_os("start init");
        kill_and_reap(pid);
        return Err(e);
    }
    close(sync_w);
    if let Some((monitor_end, init_end)) = netns_channel {
        close(init_end);
        if let Err(e) = make_network_namespace(pid, monitor_end) {
            kill_and_reap(pid);
            return Err(e);
        }
        close(monitor_end);
    }
    close(report);
    detach_stdio();
    ignore_terminal_signals();
    // The init writes the command's status and then exits; tearing its namespaces down
    // takes a while, so the status is read first and the monitor ends at once. The shim,
    // a child subreaper, adopts the exiting init and reaps it (it waits for the whole tree
    // before it reports the end of the tree).
    let mut buf = [0u8; 5];
    let n = loop {
        // SAFETY: reads at most 5 bytes into a live buffer from the pipe created above.
        let n = unsafe { libc::read(status_r, buf.as_mut_ptr().cast(), buf.len()) };
        if n >= 0 || io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            break n;
        }
    };
    let value = i32::from_le_bytes([buf[1], buf[2], buf[3], buf[4]]);
    match (n, buf[0]) {
        (5, STATUS_EXITED) => exit(value),
        (5, STATUS_SIGNALED) => die_by(value),
        // The init died before it could say (killed from outside): mirror it.
        _ => {
            let status = wait_for(pid);
            if libc::WIFSIGNALED(status) {
                die_by(libc::WTERMSIG(status))
            }
            exit(libc::WEXITSTATUS(status))
        }
    }
}

/// PID 1 of the new namespaces.
#[allow(clippy::too_many_arguments)]
fn init(
    policy: &SandboxPolicy,
    cwd: &Path,
    exe: &CString,
    argv: &[CString],
    bpf: &seccompiler::BpfProgram,
    sync_r: i32,
    status_w: i32,
    netns: Option<i32>,
    report: i32,
) -> Result<Infallible, SandboxError> {
    // SAFETY: prctl takes no pointer and only arms this process's parent-death signal.
    unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0) };
    let mut byte = 0u8;
    // SAFETY: reads one byte into a live local from the pipe inherited from the monitor.
    if unsafe { libc::read(sync_r, (&mut byte as *mut u8).cast(), 1) } != 1 {
        // The monitor is gone (or failed to write the maps and killed us anyway).
        // SAFETY: exits without unwinding.
        unsafe { libc::_exit(EXIT_FAILED) }
    }
    close(sync_r);
    let visible = build_root(policy, cwd)?;
    write_file("pid_max", "/proc/sys/kernel/pid_max", &policy.max_pids.to_string())?;
    if let Some(channel) = netns {
        let fd = receive_fd(channel)?;
        // SAFETY: setns on a namespace descriptor just received; it moves only this process.
        if unsafe { libc::setns(fd, libc::CLONE_NEWNET) } != 0 {
            return Err(SandboxError::last_os("join network namespace"));
        }
        close(fd);
        close(channel);
    }
    // SAFETY: fork in a single-threaded process; the child only runs `command`.
    let child = unsafe { libc::fork() };
    if child < 0 {
        return Err(SandboxError::last_os("fork command"));
    }
    if child == 0 {
        close(status_w);
        let Err(e) = command(policy, &visible, exe, argv, bpf);
        fail(report, &e)
    }
    close(report);
    let (kind, value) = loop {
        let mut status = 0;
        // SAFETY: waits for any child (orphans are reparented here); status is a live local.
        let r = unsafe { libc::waitpid(-1, &mut status, 0) };
        if r == child {
            break if libc::WIFSIGNALED(status) {
                (STATUS_SIGNALED, libc::WTERMSIG(status))
            } else {
                (STATUS_EXITED, libc::WEXITSTATUS(status))
            };
        }
        if r < 0 && io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            break (STATUS_EXITED, EXIT_FAILED);
        }
    };
    let mut buf = [kind, 0, 0, 0, 0];
    buf[1..].copy_from_slice(&value.to_le_bytes());
    // SAFETY: writes 5 bytes from a live buffer, then exits; the kernel kills every other
    // process of this PID namespace when its init exits.
    unsafe {
        libc::write(status_w, buf.as_ptr().cast(), buf.len());
        libc::_exit(0)
    }
}

/// The command: restricts itself, then execs (retrying briefly on ETXTBSY).
fn command(
    policy: &SandboxPolicy,
    visible: &Visible,
    exe: &CString,
    argv: &[CString],
    bpf: &seccompiler::BpfProgram,
) -> Result<Infallible, SandboxError> {
    // The shim ignores SIGPIPE and ignored signals survive exec; the command gets the
    // default, as it would unsandboxed.
    // SAFETY: restores a default disposition; no handler code is installed.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    enter(policy, visible, bpf)?;
    let mut ptrs: Vec<*const libc::c_char> = argv.iter().map(|a| a.as_ptr()).collect();
    ptrs.push(ptr::null());
    for _ in 0..=TXTBSY_RETRIES {
        // SAFETY: `exe` and every argv string are NUL-terminated and live; the array ends
        // with a null pointer; `environ` is this process's environment.
        unsafe { libc::execv(exe.as_ptr(), ptrs.as_ptr()) };
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::ETXTBSY) {
            return Err(SandboxError::io("exec", &e));
        }
        std::thread::sleep(TXTBSY_PAUSE);
    }
    Err(SandboxError::io("exec", &io::Error::from_raw_os_error(libc::ETXTBSY)))
}

/// One bind mount of the new root.
struct Bind {
    /// `O_PATH` descriptor of the source, opened before the staging tmpfs hid anything.
    source: i32,
    /// Canonical absolute path inside the new root.
    target: PathBuf,
    writable: bool,
    /// Directory (`true`) or a single file such as a device node.
    dir: bool,
}

/// Builds the new root and pivots into it. Returns the canonical roots for Landlock.
fn build_root(policy: &SandboxPolicy, cwd: &Path) -> Result<Visible, SandboxError> {
    mount(None, "/", None, libc::MS_REC | libc::MS_PRIVATE, None)?;
    let mut top = Vec::new();
    let mut links = Vec::new();
    for dir in SYSTEM_DIRS.into_iter().chain(["/sys"]) {
        match std::fs::symlink_metadata(dir) {
            Ok(m) if m.file_type().is_symlink() => {
                let to = std::fs::read_link(dir).map_err(|e| SandboxError::io("readlink", &e))?;
                links.push((PathBuf::from(dir), to));
            }
            Ok(m) if m.is_dir() => top.push(Bind {
                source: open_path(Path::new(dir))?,
                target: dir.into(),
                writable: false,
                dir: true,
            }),
            _ => {}
        }
    }
    let mut devices = Vec::new();
    // Placed after the /dev tmpfs is mounted (a link made before would be hidden by it).
    let mut dev_links = Vec::new();
    for dev in DEVICE_FILES.into_iter().chain(["/dev/ptmx"]) {
        match std::fs::symlink_metadata(dev) {
            Ok(m) if m.file_type().is_symlink() => {
                let to = std::fs::read_link(dev).map_err(|e| SandboxError::io("readlink", &e))?;
                dev_links.push((PathBuf::from(dev), to));
            }
            Ok(_) => devices.push(Bind {
                source: open_path(Path::new(dev))?,
                target: dev.into(),
                writable: true,
                dir: false,
            }),
            Err(_) => {}
        }
    }
    if Path::new("/dev/pts").is_dir() {
        devices.push(Bind {
            source: open_path(Path::new("/dev/pts"))?,
            target: "/dev/pts".into(),
            writable: true,
            dir: true,
        });
    }
    let mut visible = Visible::default();
    let mut roots = Vec::new();
    for (list, writable) in [(&policy.read_roots, false), (&policy.writable_roots, true)] {
        for root in list {
            let canonical =
                std::fs::canonicalize(root).map_err(|e| SandboxError::io_at("root", root, &e))?;
            if !canonical.is_dir() {
                return Err(SandboxError::other(
                    "root",
                    format!("{} is not a directory", root.display()),
                ));
            }
            roots.push(Bind {
                source: open_path(&canonical)?,
                target: canonical.clone(),
                writable,
                dir: true,
            });
            if writable { &mut visible.write } else { &mut visible.read }.push(canonical);
        }
    }
    // Parents before children, so a root inside another root lands on top of it.
    roots.sort_by_key(|b| b.target.components().count());
    let null = open_path(Path::new("/dev/null"))?;
    let cwd = std::fs::canonicalize(cwd).map_err(|e| SandboxError::io("cwd", &e))?;

    // From here the host's /tmp is hidden in this namespace; only descriptors reach it.
    mount(
        Some("tmpfs"),
        STAGING,
        Some("tmpfs"),
        libc::MS_NOSUID | libc::MS_NODEV,
        Some("mode=0755"),
    )?;
    let staged = |p: &Path| Path::new(STAGING).join(p.strip_prefix("/").unwrap_or(p));
    for bind in &top {
        place(bind, &staged(&bind.target))?;
    }
    let symlink = |link: &Path, to: &Path| {
        let at = staged(link);
        if let Some(parent) = at.parent() {
            mkdir_all(parent)?;
        }
        std::os::unix::fs::symlink(to, &at).map_err(|e| SandboxError::io_at("symlink", link, &e))
    };
    for (link, to) in &links {
        symlink(link, to)?;
    }
    let proc = staged(Path::new("/proc"));
    mkdir_all(&proc)?;
    mount(
        Some("proc"),
        &proc,
        Some("proc"),
        libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
        None,
    )?;
    let dev = staged(Path::new("/dev"));
    mkdir_all(&dev)?;
    mount(
        Some("tmpfs"),
        &dev,
        Some("tmpfs"),
        libc::MS_NOSUID | libc::MS_NOEXEC,
        Some("mode=0755"),
    )?;
    for bind in &devices {
        place(bind, &staged(&bind.target))?;
    }
    for (link, to) in &dev_links {
        symlink(link, to)?;
    }
    let shm = dev.join("shm");
    mkdir_all(&shm)?;
    mount(Some("tmpfs"), &shm, Some("tmpfs"), libc::MS_NOSUID | libc::MS_NODEV, Some("mode=1777"))?;
    for (name, to) in [
        ("fd", "/proc/self/fd"),
        ("stdin", "/proc/self/fd/0"),
        ("stdout", "/proc/self/fd/1"),
        ("stderr", "/proc/self/fd/2"),
    ] {
        std::os::unix::fs::symlink(to, dev.join(name))
            .map_err(|e| SandboxError::io("symlink /dev", &e))?;
    }
    let tmp = staged(Path::new("/tmp"));
    mkdir_all(&tmp)?;
    mount(Some("tmpfs"), &tmp, Some("tmpfs"), libc::MS_NOSUID | libc::MS_NODEV, Some("mode=1777"))?;
    for bind in &roots {
        place(bind, &staged(&bind.target))?;
    }
    for hidden in policy.masked.iter().map(PathBuf::as_path).chain(HOST_SECRETS.map(Path::new)) {
        let at = staged(hidden);
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.is_dir() => mount(
                Some("tmpfs"),
                &at,
                Some("tmpfs"),
                libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                Some("mode=0000"),
            )?,
            Ok(m) if m.is_file() => bind_fd_read_only(null, &at)?,
            _ => {}
        }
    }
    for fd in top.iter().chain(&devices).chain(&roots).map(|b| b.source).chain([null]) {
        close(fd);
    }

    std::env::set_current_dir(STAGING).map_err(|e| SandboxError::io("chdir new root", &e))?;
    // SAFETY: pivot_root(".", ".") stacks the old root under the new one at the same
    // place; both arguments are NUL-terminated literals.
    if unsafe { libc::syscall(libc::SYS_pivot_root, c".".as_ptr(), c".".as_ptr()) } != 0 {
        return Err(SandboxError::last_os("pivot_root"));
    }
    // SAFETY: detaches the old root, now mounted on "." (a NUL-terminated literal).
    if unsafe { libc::umount2(c".".as_ptr(), libc::MNT_DETACH) } != 0 {
        return Err(SandboxError::last_os("detach old root"));
    }
    std::env::set_current_dir("/").map_err(|e| SandboxError::io("chdir /", &e))?;
    mount(
        None,
        "/",
        None,
        libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV,
        None,
    )?;
    std::env::set_current_dir(&cwd).map_err(|e| SandboxError::io_at("chdir", &cwd, &e))?;
    Ok(visible)
}

/// Creates the mount point of `bind` at `at`, binds it, and remounts it read-only and
/// `nosuid` unless it is writable.
fn place(bind: &Bind, at: &Path) -> Result<(), SandboxError> {
    if bind.dir {
        mkdir_all(at)?;
    } else {
        if let Some(parent) = at.parent() {
            mkdir_all(parent)?;
        }
        if std::fs::symlink_metadata(at).is_err() {
            std::fs::File::create(at).map_err(|e| SandboxError::io_at("mount point", at, &e))?;
        }
    }
    let source = format!("/proc/self/fd/{}", bind.source);
    // Recursive: a user namespace may not bind a mount without the mounts locked beneath
    // it (EINVAL), which would uncover what they hide.
    mount(Some(&source), at, None, libc::MS_BIND | libc::MS_REC, None)
        .map_err(|e| SandboxError::other("bind", format!("{}: {e}", bind.target.display())))?;
    // A writable bind keeps the source's flags: `nosuid` would add nothing there, since
    // no-new-privs already makes set-id bits inert for the command.
    if bind.writable { Ok(()) } else { remount_read_only(at) }
}

/// Binds `source` read-only over the file `at` (a masked path).
fn bind_fd_read_only(source: i32, at: &Path) -> Result<(), SandboxError> {
    mount(Some(&format!("/proc/self/fd/{source}")), at, None, libc::MS_BIND, None)?;
    remount_read_only(at)
}

/// Remounts the bind at `at` read-only and `nosuid`, keeping the flags the kernel locks
/// for a user namespace.
fn remount_read_only(at: &Path) -> Result<(), SandboxError> {
    let path = cstring("remount", at.as_os_str().as_bytes())?;
    let mut st = std::mem::MaybeUninit::<libc::statvfs>::uninit();
    // SAFETY: statvfs fills the live out-struct for a NUL-terminated path.
    if unsafe { libc::statvfs(path.as_ptr(), st.as_mut_ptr()) } != 0 {
        return Err(SandboxError::last_os("statvfs"));
    }
    // SAFETY: statvfs succeeded, so the struct is initialised.
    let have = unsafe { st.assume_init() }.f_flag;
    let mut flags = libc::MS_REMOUNT | libc::MS_BIND | libc::MS_NOSUID | libc::MS_RDONLY;
    // A remount in a user namespace must keep every flag the original mount locked.
    for (st_flag, ms_flag) in [
        (libc::ST_RDONLY, libc::MS_RDONLY),
        (libc::ST_NODEV, libc::MS_NODEV),
        (libc::ST_NOEXEC, libc::MS_NOEXEC),
        (libc::ST_NOATIME, libc::MS_NOATIME),
        (libc::ST_NODIRATIME, libc::MS_NODIRATIME),
        (libc::ST_RELATIME, libc::MS_RELATIME),
    ] {
        if have & st_flag != 0 {
            flags |= ms_flag;
        }
    }
    mount(None, at, None, flags, None)
}

fn mount(
    source: Option<&str>,
    target: impl AsRef<Path>,
    fstype: Option<&str>,
    flags: libc::c_ulong,
    data: Option<&str>,
) -> Result<(), SandboxError> {
    let target = target.as_ref();
    let c = |s: &str| cstring("mount", s.as_bytes());
    let source = source.map(c).transpose()?;
    let fstype = fstype.map(c).transpose()?;
    let data = data.map(c).transpose()?;
    let at = cstring("mount", target.as_os_str().as_bytes())?;
    let p = |s: &Option<CString>| s.as_ref().map_or(ptr::null(), |s| s.as_ptr());
    // SAFETY: every pointer is null or a NUL-terminated string that outlives the call.
    let rc = unsafe { libc::mount(p(&source), at.as_ptr(), p(&fstype), flags, p(&data).cast()) };
    if rc != 0 {
        let e = io::Error::last_os_error();
        return Err(SandboxError::io_at("mount", target, &e));
    }
    Ok(())
}

fn mkdir_all(path: &Path) -> Result<(), SandboxError> {
    std::fs::create_dir_all(path).map_err(|e| SandboxError::io_at("mount point", path, &e))
}

fn open_path(path: &Path) -> Result<i32, SandboxError> {
    let c = cstring("open", path.as_os_str().as_bytes())?;
    // SAFETY: opens a NUL-terminated path as an O_PATH descriptor this function returns.
    let fd = unsafe { libc::open(c.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(SandboxError::io_at("open", path, &io::Error::last_os_error()));
    }
    Ok(fd)
}

/// In the monitor, once the init's maps are written: joins the init's user namespace, makes
/// a network namespace owned by it (only a down loopback), and sends that namespace to the
/// init. The monitor needs neither the host's user nor its network namespace afterwards.
fn make_network_namespace(init: libc::pid_t, channel: i32) -> Result<(), SandboxError> {
    let userns = open_namespace(&format!("/proc/{init}/ns/user"))?;
    // SAFETY: setns into the init's user namespace (the monitor, its creator, holds every
    // capability there), then unshare a network namespace; both move only this
    // single-threaded process. The descriptor is closed right after.
    unsafe {
        let joined = libc::setns(userns, libc::CLONE_NEWUSER);
        libc::close(userns);
        if joined != 0 {
            return Err(SandboxError::last_os("join user namespace"));
        }
        if libc::unshare(libc::CLONE_NEWNET) != 0 {
            return Err(SandboxError::last_os("unshare network namespace"));
        }
        // The kernel clears the parent-death signal on a credential change it deems a
        // privilege change; re-armed so the monitor still dies with the shim.
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0);
    }
    let netns = open_namespace("/proc/self/ns/net")?;
    let sent = send_fd(channel, netns);
    close(netns);
    sent
}

/// A namespace file opened for `setns` (which refuses `O_PATH` descriptors).
fn open_namespace(path: &str) -> Result<i32, SandboxError> {
    let c = cstring("open", path.as_bytes())?;
    // SAFETY: opens a NUL-terminated path; the descriptor is returned to the caller.
    let fd = unsafe { libc::open(c.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(SandboxError::io_at("open", Path::new(path), &io::Error::last_os_error()));
    }
    Ok(fd)
}

/// Bytes of control buffer for one descriptor.
fn fd_control_space() -> usize {
    // SAFETY: CMSG_SPACE only computes a size.
    unsafe { libc::CMSG_SPACE(std::mem::size_of::<i32>() as u32) as usize }
}

/// A message of one data byte (`iov`) with `control` (of [`fd_control_space`] bytes) for
/// one descriptor. Both buffers must outlive every use of the message.
fn fd_message(iov: &mut libc::iovec, control: &mut [u8]) -> libc::msghdr {
    // SAFETY: an all-zero msghdr is valid; the fields set below point at the callers' buffers.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = control.len() as _;
    msg
}

/// Sends `fd` over the `AF_UNIX` socket `channel` (`SCM_RIGHTS`).
fn send_fd(channel: i32, fd: i32) -> Result<(), SandboxError> {
    let mut byte = [0u8; 1];
    let mut iov = libc::iovec { iov_base: byte.as_mut_ptr().cast(), iov_len: 1 };
    let mut control = vec![0u8; fd_control_space()];
    let msg = fd_message(&mut iov, &mut control);
    // SAFETY: the control buffer holds one cmsghdr with room for one descriptor
    // (CMSG_SPACE above), so CMSG_FIRSTHDR is non-null and CMSG_DATA is in bounds.
    let sent = unsafe {
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        (*cmsg).cmsg_level = libc::SOL_SOCKET;
        (*cmsg).cmsg_type = libc::SCM_RIGHTS;
        (*cmsg).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<i32>() as u32) as _;
        std::ptr::write_unaligned(libc::CMSG_DATA(cmsg).cast::<i32>(), fd);
        libc::sendmsg(channel, &msg, 0)
    };
    if sent != 1 {
        return Err(SandboxError::last_os("send network namespace"));
    }
    Ok(())
}

/// Receives one descriptor sent by [`send_fd`].
fn receive_fd(channel: i32) -> Result<i32, SandboxError> {
    let mut byte = [0u8; 1];
    let mut iov = libc::iovec { iov_base: byte.as_mut_ptr().cast(), iov_len: 1 };
    let mut control = vec![0u8; fd_control_space()];
    let mut msg = fd_message(&mut iov, &mut control);
    // SAFETY: recvmsg fills the live buffers described by `msg`; the descriptor arrives
    // close-on-exec.
    let n = unsafe { libc::recvmsg(channel, &mut msg, libc::MSG_CMSG_CLOEXEC) };
    if n != 1 {
        return Err(SandboxError::other("receive network namespace", "the monitor sent none"));
    }
    // SAFETY: msg was filled by recvmsg; a present header of type SCM_RIGHTS carries at
    // least one descriptor.
    unsafe {
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        if cmsg.is_null()
            || (*cmsg).cmsg_level != libc::SOL_SOCKET
            || (*cmsg).cmsg_type != libc::SCM_RIGHTS
        {
            return Err(SandboxError::other("receive network namespace", "no descriptor"));
        }
        Ok(std::ptr::read_unaligned(libc::CMSG_DATA(cmsg).cast::<i32>()))
    }
}

fn socketpair() -> Result<(i32, i32), SandboxError> {
    let mut fds = [0; 2];
    // SAFETY: socketpair fills the two-element array.
    if unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC,
            0,
            fds.as_mut_ptr(),
        )
    } != 0
    {
        return Err(SandboxError::last_os("socketpair"));
    }
    Ok((fds[0], fds[1]))
}

fn write_maps(pid: libc::pid_t, uid: libc::uid_t, gid: libc::gid_t) -> Result<(), SandboxError> {
    write_file("setgroups", &format!("/proc/{pid}/setgroups"), "deny")?;
    write_file("uid_map", &format!("/proc/{pid}/uid_map"), &format!("{uid} {uid} 1\n"))?;
    write_file("gid_map", &format!("/proc/{pid}/gid_map"), &format!("{gid} {gid} 1\n"))
}

fn write_file(step: &'static str, path: &str, text: &str) -> Result<(), SandboxError> {
    std::fs::write(path, text).map_err(|e| SandboxError::io(step, &e))
}

fn cstring(step: &'static str, bytes: &[u8]) -> Result<CString, SandboxError> {
    CString::new(bytes).map_err(|_| SandboxError::other(step, "contains NUL"))
}

fn pipe() -> Result<(i32, i32), SandboxError> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills the two-element array.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(SandboxError::last_os("pipe"));
    }
    Ok((fds[0], fds[1]))
}

fn close(fd: i32) {
    // SAFETY: closes a descriptor this process created and no Rust object owns.
    unsafe { libc::close(fd) };
}

fn kill_and_reap(pid: libc::pid_t) {
    // SAFETY: kill and waitpid on the child cloned above; status is a live local.
    unsafe {
        libc::kill(pid, libc::SIGKILL);
        let mut status = 0;
        libc::waitpid(pid, &mut status, 0);
    }
}

fn wait_for(pid: libc::pid_t) -> i32 {
    loop {
        let mut status = 0;
        // SAFETY: waits for the child cloned above; status is a live local.
        let r = unsafe { libc::waitpid(pid, &mut status, 0) };
        if r == pid {
            return status;
        }
        if r < 0 && io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return 0;
        }
    }
}

/// Points fds 0-2 at `/dev/null`: the monitor holds no end of the command's stdio, so a
/// command closing its stdin or output is seen as such by the supervisor.
fn detach_stdio() {
    // SAFETY: opens /dev/null, dup2s it over 0-2 and closes the extra descriptor.
    unsafe {
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR | libc::O_CLOEXEC);
        if null >= 0 {
            for fd in 0..3 {
                libc::dup2(null, fd);
            }
            libc::close(null);
        }
    }
}

/// The monitor ignores what a terminal or a user sends its process group (hangup, ^C,
/// ^\, job control), so only the command decides how to react; SIGKILL still ends it.
fn ignore_terminal_signals() {
    for sig in [
        libc::SIGHUP,
        libc::SIGINT,
        libc::SIGQUIT,
        libc::SIGTERM,
        libc::SIGTSTP,
        libc::SIGTTIN,
        libc::SIGTTOU,
        libc::SIGPIPE,
        libc::SIGUSR1,
        libc::SIGUSR2,
    ] {
        // SAFETY: sets a disposition to SIG_IGN; no handler code is installed.
        unsafe { libc::signal(sig, libc::SIG_IGN) };
    }
}

fn exit(code: i32) -> ! {
    // SAFETY: exits without unwinding (the process is a fork of the shim).
    unsafe { libc::_exit(code) }
}

/// Ends the monitor by `signal`, as the command ended, with no core file.
fn die_by(signal: i32) -> ! {
    let no_core = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: setrlimit reads a live struct; signal/sigprocmask/kill change only this
    // process, restoring the default action of `signal` and raising it.
    unsafe {
        libc::setrlimit(libc::RLIMIT_CORE, &no_core);
        libc::signal(signal, libc::SIG_DFL);
        let mut set = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
        libc::sigemptyset(set.as_mut_ptr());
        libc::sigaddset(set.as_mut_ptr(), signal);
        libc::sigprocmask(libc::SIG_UNBLOCK, set.as_ptr(), ptr::null_mut());
        libc::kill(libc::getpid(), signal);
    }
    exit(128 + signal)
}
