//! One measured run: a child process, its wall time and its peak memory
//! as the OS counted it.
//!
//! The peak is the child's own high-water mark (`VmHWM`, which it reports
//! as it ends), not `wait4`'s `ru_maxrss`: exec keeps the high-water mark
//! of the address space it replaces, which under `posix_spawn` (vfork) is
//! this benchmark's, so `ru_maxrss` never reads below the benchmark's own
//! resident size (28 MB here, half of a small run's true peak).

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What one run cost.
#[derive(Debug, Clone, Copy, Default)]
pub struct Cost {
    /// From start to exit.
    pub wall: Duration,
    /// Peak resident memory in bytes.
    pub peak: u64,
    /// Whether it exited 0.
    pub ok: bool,
}

/// Runs this binary with `args` (a child mode), stopped after `limit`;
/// stderr is kept in `log` for when it fails.
pub fn run_self(args: &[&str], env: &[(&str, &Path)], limit: Duration, log: &Path) -> Cost {
    let exe = std::env::current_exe().expect("the benchmark's own path");
    run(&exe, args, env, limit, log)
}

/// As [`run_self`], of the build of this benchmark at `exe`.
pub fn run(exe: &Path, args: &[&str], env: &[(&str, &Path)], limit: Duration, log: &Path) -> Cost {
    let log_file = std::fs::File::create(log).expect("a log file");
    let mut command = Command::new(exe);
    command
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(log_file);
    for (key, value) in env {
        command.env(key, value);
    }
    let start = Instant::now();
    let mut child = command.spawn().expect("the benchmark can run itself");
    let mut reported = child.stdout.take().expect("a piped stdout");
    let pid = child.id() as libc::pid_t;
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watch = done.clone();
    // The watchdog kills a run that takes too long (at 1000 copies a run
    // may not end in reasonable time).
    std::thread::spawn(move || {
        let until = Instant::now() + limit;
        while Instant::now() < until {
            if watch.load(std::sync::atomic::Ordering::Relaxed) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        // SAFETY: signalling our own child, not yet reaped (the flag is
        // set only after wait4 returns).
        unsafe {
            libc::kill(pid, libc::SIGKILL);
        }
    });
    let mut status = 0;
    // SAFETY: a zeroed rusage is a valid value to be filled in.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `pid` is our child, not yet waited for; the pointers are
    // valid for the call.
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    let wall = start.elapsed();
    std::mem::forget(child);
    let mut report = String::new();
    let _ = std::io::Read::read_to_string(&mut reported, &mut report);
    Cost {
        wall,
        // A run killed before it could report: the OS's (higher) count.
        peak: own_peak(&report).unwrap_or(usage.ru_maxrss as u64 * 1024),
        ok: waited == pid && libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
    }
}

/// Writes out everything waiting to be written to `dir`'s file system,
/// before a measured run: each starts from a file system with nothing to
/// write back. The floor writes its files without syncing them, and the
/// `syncfs` of the generate measured after it would otherwise write them
/// out on the generate's time (as it would the deletions of the files of
/// the run before).
pub fn settle(dir: &Path) {
    if let Ok(dir) = std::fs::File::open(dir) {
        // SAFETY: a valid descriptor, open for the call.
        unsafe { libc::syncfs(std::os::fd::AsRawFd::as_raw_fd(&dir)) };
    }
}

/// The line a measured run ends with on stdout: its peak resident bytes.
const PEAK: &str = "peak-bytes ";

/// Tells the benchmark this process's peak resident memory (its address
/// space's high-water mark), on stdout; called as a measured run ends.
pub fn report_own_peak() {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    if let Some(kib) = vm_hwm_kib(&status) {
        println!("{PEAK}{}", kib * 1024);
    }
}

/// `VmHWM` of a `/proc/PID/status` text, in KiB.
fn vm_hwm_kib(status: &str) -> Option<u64> {
    let line = status.lines().find_map(|l| l.strip_prefix("VmHWM:"))?;
    line.trim().strip_suffix("kB")?.trim().parse().ok()
}

/// The peak a run reported, if it did.
fn own_peak(stdout: &str) -> Option<u64> {
    stdout
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix(PEAK)?.parse().ok())
}

/// The soft limit on open files most systems give a user (systemd's
/// default): each measured run is held to it. A generate at expense x300
/// once ran out of descriptors under it, while this machine's limit of
/// 20,000 hid that from the benchmark.
pub const USUAL_OPEN_FILES: u64 = 1024;

/// Lowers this process's soft limit on open files to
/// [`USUAL_OPEN_FILES`] when it is higher.
pub fn usual_open_file_limit() {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: the pointer is valid for the call, which fills it in.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return;
    }
    if limit.rlim_cur > USUAL_OPEN_FILES {
        limit.rlim_cur = USUAL_OPEN_FILES;
        // SAFETY: the pointer is valid for the call, which only reads it.
        unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) };
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_run_s_own_peak_is_read_from_what_it_reports() {
        let status =
            "Name:\tseams-bench\nVmPeak:\t  900 kB\nVmHWM:\t   28412 kB\nVmRSS:\t 100 kB\n";
        assert_eq!(super::vm_hwm_kib(status), Some(28412));
        assert_eq!(super::vm_hwm_kib("VmRSS:\t 100 kB\n"), None);
        assert_eq!(super::own_peak("noise\npeak-bytes 4096\n"), Some(4096));
        assert_eq!(super::own_peak("peak-bytes x\n"), None);
        assert_eq!(super::own_peak(""), None);
    }

    #[test]
    fn this_process_knows_its_own_peak() {
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        let kib = super::vm_hwm_kib(&status).unwrap();
        assert!(kib > 0);
    }

    #[test]
    fn a_measured_run_is_held_to_the_usual_open_file_limit() {
        super::usual_open_file_limit();
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: the pointer is valid for the call, which fills it in.
        assert_eq!(
            unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) },
            0
        );
        assert!(
            limit.rlim_cur <= super::USUAL_OPEN_FILES,
            "{}",
            limit.rlim_cur
        );
    }
}
