//! One measured run: a child process, its wall time and its peak memory
//! as the OS counted it (`wait4`).

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
    let log_file = std::fs::File::create(log).expect("a log file");
    let mut command = Command::new(exe);
    command
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log_file);
    for (key, value) in env {
        command.env(key, value);
    }
    let start = Instant::now();
    let child = command.spawn().expect("the benchmark can run itself");
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
    Cost {
        wall,
        peak: usage.ru_maxrss as u64 * 1024,
        ok: waited == pid && libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
    }
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
