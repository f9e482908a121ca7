//! The operating system's sandbox around a build of code nobody reviewed
//! (a drafted package's build scripts and macros, a Python or JavaScript
//! module run while componentize makes it a component). Two layers, both
//! unprivileged and both set up between fork and exec:
//!
//! - **Landlock** (Linux 5.13+): the build may read and run only the
//!   system's directories and the paths it is given, and write only the
//!   paths it is given; where the kernel has them (Landlock ABI 4+), TCP
//!   connects and binds are refused too.
//! - **A network namespace** of its own (in a user namespace of its own):
//!   no interface but a loopback that is down, so no socket of any kind
//!   reaches another machine or another process of this one.
//!
//! Landlock is required: where the kernel has none, a build of unreviewed
//! code is refused, naming why, rather than run unconfined. The network
//! needs one of the two layers.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// What a confined command may reach besides the system's directories.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Reach {
    /// Read (and run) only.
    pub(crate) read: Vec<PathBuf>,
    /// Read, write, create and remove.
    pub(crate) write: Vec<PathBuf>,
    /// Directories seen in the sandbox as other ones, `(seen, instead)`:
    /// where a tool keeps state it must not share with another build (a
    /// cache under the user's home, found through the password database
    /// whatever the environment says), a directory of the build's own is
    /// mounted over it. `seen` is made, empty and private, when missing.
    pub(crate) cover: Vec<(PathBuf, PathBuf)>,
}

/// Why a command could not be confined.
#[derive(Debug, thiserror::Error)]
pub enum JailError {
    /// The kernel has no Landlock.
    #[error(
        "this kernel has no Landlock (Linux 5.13 or later, enabled at boot: `lsm=landlock,...`), so seams cannot build code nobody reviewed where it reads only its package and writes only its output; seams refuses rather than build it unconfined"
    )]
    NoLandlock,
    /// Neither a network namespace nor Landlock's network rules.
    #[error(
        "this system allows no user namespaces (sysctl kernel.unprivileged_userns_clone or user.max_user_namespaces) and its Landlock is older than ABI 4, so seams cannot keep a build of code nobody reviewed off the network; it refuses rather than build it unconfined"
    )]
    NoNetworkIsolation,
    /// No user namespace, which the tool needs to get a cache of its own.
    #[error(
        "this system allows no user namespaces (sysctl kernel.unprivileged_userns_clone, user.max_user_namespaces, or AppArmor's restriction), and this tool (componentize-js's wizer) keeps compiled code in your home's cache, which a sandboxed build may not share; seams refuses rather than let one build's code reach another's"
    )]
    NoNamespaceToCover,
    /// A path to allow could not be opened.
    #[error("cannot confine the build to {}: {source}", path.display())]
    Path {
        /// The path.
        path: PathBuf,
        /// The cause.
        source: io::Error,
    },
    /// Landlock refused the rules.
    #[error("cannot set up the build's sandbox: {0}")]
    Landlock(io::Error),
}

/// The directories of the system every tool reads: programs, libraries,
/// configuration (the dynamic loader's cache, certificates), and what a
/// process reads of itself and the machine.
const SYSTEM_READ: [&str; 9] = [
    "/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin", "/etc", "/proc", "/sys",
];

/// Devices a tool opens: the null device (read and written), and the
/// random ones.
const DEVICES_READ: [&str; 3] = ["/dev/urandom", "/dev/random", "/dev/zero"];

// Landlock's ABI (linux/landlock.h).
const CREATE_RULESET_VERSION: u32 = 1 << 0;
const RULE_PATH_BENEATH: libc::c_int = 1;
const FS_EXECUTE: u64 = 1 << 0;
const FS_WRITE_FILE: u64 = 1 << 1;
const FS_READ_FILE: u64 = 1 << 2;
const FS_READ_DIR: u64 = 1 << 3;
const FS_TRUNCATE: u64 = 1 << 14;
const FS_IOCTL_DEV: u64 = 1 << 15;
const NET_BIND_TCP: u64 = 1 << 0;
const NET_CONNECT_TCP: u64 = 1 << 1;

#[repr(C)]
struct RulesetAttr {
    handled_access_fs: u64,
    handled_access_net: u64,
    scoped: u64,
}

#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: i32,
}

/// The Landlock ABI version the kernel has; 0 when it has none.
pub(crate) fn landlock_abi() -> i64 {
    // SAFETY: with a null attribute, size 0 and the version flag, the call
    // only answers the version.
    let abi = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<RulesetAttr>(),
            0usize,
            CREATE_RULESET_VERSION,
        )
    };
    abi.max(0)
}

/// Every filesystem right the ABI `abi` knows.
fn all_fs(abi: i64) -> u64 {
    let mut rights = (1u64 << 13) - 1; // ABI 1: execute .. make_sym
    if abi >= 2 {
        rights |= 1 << 13; // refer
    }
    if abi >= 3 {
        rights |= FS_TRUNCATE;
    }
    if abi >= 5 {
        rights |= FS_IOCTL_DEV;
    }
    rights
}

/// The rights that apply to a file rather than a directory.
fn file_rights(rights: u64) -> u64 {
    rights & (FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV)
}

/// A sandbox ready to be entered by a child: the Landlock ruleset (an open
/// descriptor, inherited across the fork), and the user and group ids to
/// map in the child's user namespace.
pub(crate) struct Jail {
    ruleset: OwnedFd,
    /// The bind mounts of [`Reach::cover`], as `(source, target)`.
    mounts: Vec<(CString, CString)>,
    uid_map: CString,
    gid_map: CString,
    /// Whether to enter namespaces: the system allows them (else
    /// Landlock's TCP rules stand in, [`Jail::on`]).
    namespaces: bool,
}

impl Jail {
    /// A sandbox that reaches `reach` and the system's directories.
    ///
    /// # Errors
    ///
    /// No Landlock, or a path that cannot be opened.
    pub(crate) fn new(reach: &Reach) -> Result<Jail, JailError> {
        Jail::on(landlock_abi(), namespaces_allowed(), reach)
    }

    /// [`Jail::new`] on a kernel whose Landlock is at `abi` (0: none) and
    /// that allows user namespaces or not: what seams does on a machine
    /// without them is tested here. Refusals are decided here, in seams's
    /// own process: what goes wrong between fork and exec reaches it only
    /// as an error number.
    fn on(abi: i64, namespaces: bool, reach: &Reach) -> Result<Jail, JailError> {
        if abi < 1 {
            return Err(JailError::NoLandlock);
        }
        if !namespaces && !reach.cover.is_empty() {
            return Err(JailError::NoNamespaceToCover);
        }
        if !namespaces && abi < 4 {
            return Err(JailError::NoNetworkIsolation);
        }
        let handled = all_fs(abi);
        let net = if abi >= 4 {
            NET_BIND_TCP | NET_CONNECT_TCP
        } else {
            0
        };
        let attr = RulesetAttr {
            handled_access_fs: handled,
            handled_access_net: net,
            scoped: 0,
        };
        let size = if abi >= 4 { 16usize } else { 8usize };
        // SAFETY: `attr` outlives the call and `size` covers only fields
        // this ABI knows.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_landlock_create_ruleset,
                &attr as *const RulesetAttr,
                size,
                0u32,
            )
        };
        if fd < 0 {
            return Err(JailError::Landlock(io::Error::last_os_error()));
        }
        // SAFETY: the call returned a new descriptor, owned from here.
        let ruleset = unsafe { OwnedFd::from_raw_fd(fd as i32) };
        let read = FS_EXECUTE | FS_READ_FILE | FS_READ_DIR;
        let mut rules: Vec<(PathBuf, u64, bool)> = Vec::new();
        for dir in SYSTEM_READ.iter().chain(&DEVICES_READ) {
            rules.push((PathBuf::from(dir), read, false));
        }
        rules.push((PathBuf::from("/dev/null"), read | FS_WRITE_FILE, false));
        for path in &reach.read {
            rules.push((path.clone(), read, true));
        }
        for path in &reach.write {
            rules.push((path.clone(), handled, true));
        }
        for (path, rights, required) in rules {
            match add_rule(&ruleset, &path, rights & handled) {
                Ok(()) => {}
                Err(e) if !required && e.kind() == io::ErrorKind::NotFound => {}
                Err(source) => return Err(JailError::Path { path, source }),
            }
        }
        let mut mounts = Vec::new();
        for (seen, instead) in &reach.cover {
            std::os::unix::fs::DirBuilderExt::mode(
                std::fs::DirBuilder::new().recursive(true),
                0o700,
            )
            .create(seen)
            .map_err(|source| JailError::Path {
                path: seen.clone(),
                source,
            })?;
            let c = |p: &Path| {
                CString::new(p.as_os_str().as_encoded_bytes()).map_err(|e| JailError::Path {
                    path: p.to_owned(),
                    source: io::Error::other(e),
                })
            };
            mounts.push((c(instead)?, c(seen)?));
        }
        let (uid, gid) = (rustix::process::getuid(), rustix::process::getgid());
        let map = |id: u32| CString::new(format!("{id} {id} 1\n")).expect("no NUL");
        Ok(Jail {
            ruleset,
            mounts,
            uid_map: map(uid.as_raw()),
            gid_map: map(gid.as_raw()),
            namespaces,
        })
    }

    /// Makes `command` enter the sandbox between fork and exec.
    pub(crate) fn confine(self, command: &mut Command) {
        // SAFETY: the closure makes system calls only (unshare, open,
        // write, close, prctl, landlock_restrict_self) on data prepared
        // before the fork; it allocates nothing.
        unsafe {
            command.pre_exec(move || self.enter());
        }
    }

    /// In the child: a network namespace (inside a user namespace, whose
    /// ids map to the caller's own), then no new privileges, then the
    /// Landlock ruleset.
    fn enter(&self) -> io::Result<()> {
        // SAFETY: plain system calls on valid pointers and descriptors.
        unsafe {
            if self.namespaces {
                let namespaces = libc::CLONE_NEWUSER | libc::CLONE_NEWNET | libc::CLONE_NEWNS;
                if libc::unshare(namespaces) != 0 {
                    return Err(io::Error::last_os_error());
                }
                write_proc(c"/proc/self/setgroups", c"deny")?;
                write_proc(c"/proc/self/uid_map", &self.uid_map)?;
                write_proc(c"/proc/self/gid_map", &self.gid_map)?;
                // Mounts made here stay in the build's own namespace.
                if libc::mount(
                    std::ptr::null(),
                    c"/".as_ptr(),
                    std::ptr::null(),
                    libc::MS_REC | libc::MS_PRIVATE,
                    std::ptr::null(),
                ) != 0
                {
                    return Err(io::Error::last_os_error());
                }
                for (source, target) in &self.mounts {
                    if libc::mount(
                        source.as_ptr(),
                        target.as_ptr(),
                        std::ptr::null(),
                        libc::MS_BIND,
                        std::ptr::null(),
                    ) != 0
                    {
                        return Err(io::Error::last_os_error());
                    }
                }
            }
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                return Err(io::Error::last_os_error());
            }
            if libc::syscall(
                libc::SYS_landlock_restrict_self,
                self.ruleset.as_raw_fd(),
                0u32,
            ) != 0
            {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(())
    }
}

/// Whether this system lets an unprivileged process make a user namespace
/// (and a network and mount namespace in it): tried once, on a child that
/// runs `true`.
fn namespaces_allowed() -> bool {
    static ALLOWED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ALLOWED.get_or_init(|| {
        let mut probe = Command::new("true");
        probe
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        // SAFETY: one system call between fork and exec.
        unsafe {
            probe.pre_exec(|| {
                let namespaces = libc::CLONE_NEWUSER | libc::CLONE_NEWNET | libc::CLONE_NEWNS;
                if libc::unshare(namespaces) == 0 {
                    Ok(())
                } else {
                    Err(io::Error::last_os_error())
                }
            });
        }
        probe.status().is_ok_and(|status| status.success())
    })
}

/// Writes `text` to the file `path` of /proc (between fork and exec).
///
/// # Safety
///
/// Only system calls: safe in a forked child.
unsafe fn write_proc(path: &std::ffi::CStr, text: &std::ffi::CStr) -> io::Result<()> {
    // SAFETY: valid C strings; the descriptor is closed before returning.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let bytes = text.to_bytes();
        let written = libc::write(fd, bytes.as_ptr().cast(), bytes.len());
        libc::close(fd);
        if written != bytes.len() as isize {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Adds a rule letting `rights` (those a file takes, when `path` is not a
/// directory) apply beneath `path`.
fn add_rule(ruleset: &OwnedFd, path: &Path, rights: u64) -> io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_PATH | libc::O_CLOEXEC)
        .open(path)?;
    let is_dir = file.metadata()?.is_dir();
    let attr = PathBeneathAttr {
        allowed_access: if is_dir { rights } else { file_rights(rights) },
        parent_fd: file.as_raw_fd(),
    };
    // SAFETY: `attr` and both descriptors are valid for the call.
    let done = unsafe {
        libc::syscall(
            libc::SYS_landlock_add_rule,
            ruleset.as_raw_fd(),
            RULE_PATH_BENEATH,
            &attr as *const PathBeneathAttr,
            0u32,
        )
    };
    if done != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn confined(reach: &Reach, script: &str) -> std::process::Output {
        confined_in(Jail::new(reach).unwrap(), script)
    }

    fn confined_in(jail: Jail, script: &str) -> std::process::Output {
        let mut command = Command::new("/bin/bash");
        command.args(["-c", script]);
        jail.confine(&mut command);
        command.output().unwrap()
    }

    #[test]
    fn without_landlock_or_namespaces_a_build_is_refused_or_kept_off_tcp() {
        assert!(
            namespaces_allowed(),
            "this machine allows user namespaces (FACTS.md)"
        );
        let refused = |abi: i64, namespaces: bool, reach: &Reach| {
            Jail::on(abi, namespaces, reach).err().unwrap()
        };
        // No Landlock: refused, saying why, before anything runs.
        let error = refused(0, true, &Reach::default());
        assert!(matches!(error, JailError::NoLandlock), "{error}");
        assert!(
            error
                .to_string()
                .contains("rather than build it unconfined")
        );
        // No user namespaces: with a Landlock too old for TCP rules, or for
        // a tool that needs a cache of its own, refused.
        let error = refused(3, false, &Reach::default());
        assert!(matches!(error, JailError::NoNetworkIsolation), "{error}");
        let cover = Reach {
            cover: vec![("/nonexistent/seen".into(), "/tmp".into())],
            ..Reach::default()
        };
        let error = refused(landlock_abi(), false, &cover);
        assert!(matches!(error, JailError::NoNamespaceToCover), "{error}");
        // Else Landlock's own TCP rules (ABI 4+) keep it off the network.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let jail = Jail::on(landlock_abi(), false, &Reach::default()).unwrap();
        let run = confined_in(
            jail,
            &format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected; echo ran"),
        );
        let stdout = String::from_utf8_lossy(&run.stdout);
        assert!(
            stdout.contains("ran") && !stdout.contains("connected"),
            "{run:?}"
        );
    }

    #[test]
    fn a_confined_command_reads_and_writes_only_what_it_is_given() {
        assert!(landlock_abi() >= 1, "this machine has Landlock (FACTS.md)");
        let dir = tempfile::tempdir().unwrap();
        let (given, out, secret) = (
            dir.path().join("given"),
            dir.path().join("out"),
            dir.path().join("secret"),
        );
        for d in [&given, &out, &secret] {
            std::fs::create_dir(d).unwrap();
        }
        std::fs::write(given.join("in.txt"), "input").unwrap();
        std::fs::write(secret.join("key"), "SECRET").unwrap();
        let reach = Reach {
            read: vec![given.clone()],
            write: vec![out.clone()],
            cover: Vec::new(),
        };
        let script = format!(
            "cat {g}/in.txt > {o}/copy.txt && echo ok; cat {s}/key; echo x > {s}/planted; echo x > {g}/planted; true",
            g = given.display(),
            o = out.display(),
            s = secret.display()
        );
        let run = confined(&reach, &script);
        let stdout = String::from_utf8_lossy(&run.stdout);
        assert!(stdout.contains("ok"), "{run:?}");
        assert!(!stdout.contains("SECRET"), "{run:?}");
        assert_eq!(
            std::fs::read_to_string(out.join("copy.txt")).unwrap(),
            "input"
        );
        assert!(!secret.join("planted").exists());
        assert!(!given.join("planted").exists());
        // No network: not even this machine's own listener.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let run = confined(
            &reach,
            &format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected"),
        );
        assert!(
            !String::from_utf8_lossy(&run.stdout).contains("connected"),
            "{run:?}"
        );
    }
}
