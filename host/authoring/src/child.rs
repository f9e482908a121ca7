//! Commands run on someone else's behalf: a provider command, the build of
//! a drafted package. Each runs in a process group of its own, bounded in
//! time and address space, and the whole group is killed at the deadline
//! and once the command has exited, so that nothing it started outlives it
//! (a `sleep` left behind by a provider script, a compiler a build script
//! spawned). A group of its own is out of reach of the signals that stop
//! seams (Ctrl-C reaches the terminal's foreground group only): seams
//! kills the groups running when one of those stops it.

use std::io;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::Duration;

use rustix::process::{Pid, Signal, WaitId, WaitIdOptions};

/// What a command may spend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Bounds {
    /// Wall time, from the start; `None` waits as long as it takes.
    pub(crate) time: Option<Duration>,
    /// Memory of each of its processes, in bytes; `None` leaves the
    /// user's own limit.
    pub(crate) memory: Option<u64>,
    /// Which memory [`Bounds::memory`] counts.
    pub(crate) counted: Counted,
}

/// Which memory a bound counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Counted {
    /// The address space (`RLIMIT_AS`): what a process maps at all.
    AddressSpace,
    /// Private writable memory (`RLIMIT_DATA`): what a process can fill.
    /// For tools that embed a WebAssembly engine, which reserves tens of
    /// GiB of address space it never writes (V8 in componentize-js needs
    /// 64 GiB of it to start).
    Writable,
}

impl Bounds {
    /// No bounds but the user's own.
    pub(crate) const NONE: Bounds = Bounds {
        time: None,
        memory: None,
        counted: Counted::AddressSpace,
    };

    /// These bounds, counting `counted` memory.
    pub(crate) fn counting(self, counted: Counted) -> Bounds {
        Bounds { counted, ..self }
    }
}

/// The process groups running, for the signal action below: a slot holds
/// a group's id from its spawn until just before its leader is reaped
/// (until then the id names no other group). More at once go unnoted.
static RUNNING: [AtomicI32; 16] = [const { AtomicI32::new(0) }; 16];

/// Makes the signals that stop seams (Ctrl-C, `kill`, the terminal
/// closing) kill the groups running first, then stop seams as they would
/// have.
fn stop_groups_with_seams() {
    static INSTALL: std::sync::Once = std::sync::Once::new();
    INSTALL.call_once(|| {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        for signal in [SIGINT, SIGTERM, SIGHUP] {
            // SAFETY: the action makes only async-signal-safe calls: atomic
            // loads, kill, and the default action's emulation.
            let _ = unsafe {
                signal_hook::low_level::register(signal, move || {
                    for slot in &RUNNING {
                        if let Some(group) = Pid::from_raw(slot.load(Ordering::SeqCst)) {
                            let _ = rustix::process::kill_process_group(group, Signal::KILL);
                        }
                    }
                    let _ = signal_hook::low_level::emulate_default_handler(signal);
                })
            };
        }
    });
}

/// A command running within its [`Bounds`].
pub(crate) struct Bounded {
    child: Child,
    group: Pid,
    noted: Option<&'static AtomicI32>,
    done: mpsc::Sender<()>,
    watchdog: Option<JoinHandle<bool>>,
    /// Whether the leader was reaped; until then, dropping kills the group.
    reaped: bool,
}

/// How a bounded command ended.
#[derive(Debug)]
pub(crate) enum Ended {
    /// It exited on its own.
    Exited(ExitStatus),
    /// It was killed at its deadline.
    TimedOut,
}

impl Bounded {
    /// Starts `command` in a new process group within `bounds`.
    pub(crate) fn spawn(command: &mut Command, bounds: Bounds) -> io::Result<Bounded> {
        command.process_group(0);
        if let Some(bytes) = bounds.memory {
            use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
            let resource = match bounds.counted {
                Counted::AddressSpace => Resource::As,
                Counted::Writable => Resource::Data,
            };
            // Never above the user's own hard limit, which only root may
            // raise.
            let bytes = getrlimit(resource)
                .maximum
                .map_or(bytes, |hard| hard.min(bytes));
            // SAFETY: setrlimit is one system call, which is safe between
            // fork and exec.
            unsafe {
                command.pre_exec(move || {
                    let limit = Rlimit {
                        current: Some(bytes),
                        maximum: Some(bytes),
                    };
                    setrlimit(resource, limit).map_err(io::Error::from)
                });
            }
        }
        stop_groups_with_seams();
        let child = command.spawn()?;
        let group = Pid::from_child(&child);
        let noted = RUNNING.iter().find(|slot| {
            slot.compare_exchange(
                0,
                group.as_raw_nonzero().get(),
                Ordering::SeqCst,
                Ordering::SeqCst,
            )
            .is_ok()
        });
        let (done, wait) = mpsc::channel::<()>();
        let watchdog = std::thread::Builder::new()
            .name("seams-deadline".to_owned())
            .spawn(move || {
                let late = match bounds.time {
                    Some(time) => matches!(wait.recv_timeout(time), Err(RecvTimeoutError::Timeout)),
                    None => {
                        let _ = wait.recv();
                        false
                    }
                };
                if late {
                    let _ = rustix::process::kill_process_group(group, Signal::KILL);
                }
                late
            });
        let (watchdog, error) = match watchdog {
            Ok(watchdog) => (Some(watchdog), None),
            Err(e) => (None, Some(e)),
        };
        let running = Bounded {
            child,
            group,
            noted,
            done,
            watchdog,
            reaped: false,
        };
        // Without its watchdog, it is not run: dropping kills and reaps it.
        match error {
            None => Ok(running),
            Some(e) => Err(e),
        }
    }

    /// The child, to take its pipes.
    pub(crate) fn child(&mut self) -> &mut Child {
        &mut self.child
    }

    /// Waits for the command to end, then kills what is left of its group.
    pub(crate) fn wait(mut self) -> io::Result<Ended> {
        // Waited for but not reaped: until it is, its process id (the
        // group's) names no other process, so the group killed below is
        // this command's whatever happened since.
        loop {
            match rustix::process::waitid(
                WaitId::Pid(self.group),
                WaitIdOptions::EXITED | WaitIdOptions::NOWAIT,
            ) {
                Err(rustix::io::Errno::INTR) => {}
                Err(e) => return Err(e.into()),
                Ok(_) => break,
            }
        }
        let late = self.stop_watchdog();
        self.kill_group();
        let status = self.child.wait()?;
        self.reaped = true;
        Ok(if late {
            Ended::TimedOut
        } else {
            Ended::Exited(status)
        })
    }

    /// Kills the group, the leader not yet reaped, and forgets it.
    fn kill_group(&mut self) {
        let _ = rustix::process::kill_process_group(self.group, Signal::KILL);
        if let Some(slot) = self.noted.take() {
            slot.store(0, Ordering::SeqCst);
        }
    }

    /// Stops the watchdog; whether it had killed the group.
    fn stop_watchdog(&mut self) -> bool {
        let _ = self.done.send(());
        self.watchdog
            .take()
            .is_some_and(|watchdog| watchdog.join().unwrap_or(true))
    }
}

impl Drop for Bounded {
    /// A command given up on (its output unreadable, say) is killed, group
    /// and all, and reaped.
    fn drop(&mut self) {
        if !self.reaped {
            self.kill_group();
            self.stop_watchdog();
            let _ = self.child.wait();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Command {
        let mut command = Command::new("sh");
        command.args(["-c", script]);
        command
    }

    /// How `script` ends within `bounds`.
    fn run(script: &str, bounds: Bounds) -> Ended {
        Bounded::spawn(&mut sh(script), bounds)
            .unwrap()
            .wait()
            .unwrap()
    }

    const SECONDS: Bounds = Bounds {
        time: Some(Duration::from_secs(60)),
        memory: None,
        counted: Counted::AddressSpace,
    };

    /// Whether process `pid` is gone (or a zombie waiting for init),
    /// asked until it is, for up to ten seconds: a killed process is
    /// reaped by init on its own time.
    fn ends(pid: &str) -> bool {
        for _ in 0..1000 {
            match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
                Err(_) => return true,
                Ok(stat) if stat.rsplit(") ").next().is_some_and(|s| s.starts_with('Z')) => {
                    return true;
                }
                Ok(_) => std::thread::sleep(Duration::from_millis(10)),
            }
        }
        false
    }

    /// A script that starts a `sleep`, notes its pid in `dir`, and never
    /// ends.
    fn hanging(dir: &std::path::Path) -> String {
        format!(
            "sleep 600 & echo $! > {}/pid; exec sleep 600",
            dir.display()
        )
    }

    fn left_behind(dir: &std::path::Path) -> String {
        std::fs::read_to_string(dir.join("pid"))
            .unwrap()
            .trim()
            .to_owned()
    }

    #[test]
    fn a_command_that_exits_gives_its_status_and_takes_what_it_started_along() {
        let dir = tempfile::tempdir().unwrap();
        let script = format!("sleep 600 & echo $! > {}/pid; exit 3", dir.path().display());
        let ended = run(&script, SECONDS);
        assert!(
            matches!(ended, Ended::Exited(s) if s.code() == Some(3)),
            "{ended:?}"
        );
        assert!(
            ends(&left_behind(dir.path())),
            "the sleep it left was killed"
        );
    }

    #[test]
    fn any_limit_from_seams_toml_is_taken_without_overflow() {
        // `[propose] build_timeout` and `build_memory_mib` as large as TOML
        // allows: a deadline past the clock's end is no deadline.
        let bounds = Bounds {
            time: Some(Duration::from_secs(u64::MAX)),
            memory: Some(u64::MAX),
            counted: Counted::AddressSpace,
        };
        let ended = run("exit 0", bounds);
        assert!(
            matches!(ended, Ended::Exited(s) if s.success()),
            "{ended:?}"
        );
        let zero = Bounds {
            time: Some(Duration::ZERO),
            memory: None,
            counted: Counted::AddressSpace,
        };
        let ended = run("exec sleep 600", zero);
        assert!(matches!(ended, Ended::TimedOut), "{ended:?}");
    }

    #[test]
    fn a_command_past_its_deadline_is_killed_with_its_group() {
        let dir = tempfile::tempdir().unwrap();
        let script = hanging(dir.path());
        let bounds = Bounds {
            time: Some(Duration::from_millis(300)),
            memory: None,
            counted: Counted::AddressSpace,
        };
        let ended = run(&script, bounds);
        assert!(matches!(ended, Ended::TimedOut), "{ended:?}");
        assert!(ends(&left_behind(dir.path())));
    }

    #[test]
    fn a_command_given_up_on_is_killed_with_its_group() {
        let dir = tempfile::tempdir().unwrap();
        let script = hanging(dir.path());
        let running = Bounded::spawn(&mut sh(&script), SECONDS).unwrap();
        while !dir.path().join("pid").exists()
            || std::fs::read_to_string(dir.path().join("pid"))
                .unwrap()
                .trim()
                .is_empty()
        {
            std::thread::sleep(Duration::from_millis(10));
        }
        let leader = running.child.id().to_string();
        drop(running);
        assert!(ends(&left_behind(dir.path())));
        assert!(ends(&leader));
    }

    #[test]
    fn a_command_cannot_map_more_than_its_memory() {
        let bounds = |memory| Bounds {
            memory,
            ..Bounds::NONE
        };
        // 1 GiB of anonymous memory, asked for at once.
        let script = "exec python3 -c 'import mmap; mmap.mmap(-1, 1 << 30)' 2>/dev/null";
        let ended = run(script, bounds(None));
        assert!(
            matches!(ended, Ended::Exited(s) if s.success()),
            "{ended:?}"
        );
        let ended = run(script, bounds(Some(512 << 20)));
        assert!(
            matches!(ended, Ended::Exited(s) if !s.success()),
            "{ended:?}"
        );
    }
}
