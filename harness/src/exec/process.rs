//! The adapters' processes: every live process group, killed whole after a failure, at
//! the end and on SIGINT/SIGTERM; on Linux, descendants that left the group (`setsid`)
//! and were re-parented to us (a child subreaper) are found and killed too.

use std::sync::Mutex;
use std::thread;
use std::time::Duration;

/// The adapters' processes: the pid (= process group id) of every running `sh -c CMD`,
/// and whether the process is stopping (then no adapter starts any more).
pub(super) struct Live {
    pub(super) groups: Vec<u32>,
    pub(super) stopping: bool,
}

static LIVE: Mutex<Live> = Mutex::new(Live {
    groups: Vec::new(),
    stopping: false,
});

/// Whether [`adopt_orphans`] made this process a child subreaper.
static ADOPTING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

pub(super) fn live() -> std::sync::MutexGuard<'static, Live> {
    LIVE.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Kill the process group of every running [`ExecAdapter`](super::ExecAdapter) (and, after
/// [`adopt_orphans`], every descendant re-parented to this process), and start no
/// adapter any more: for a SIGINT/SIGTERM handler that then exits.
pub fn kill_all_adapters() {
    let mut live = live();
    live.stopping = true;
    let groups = std::mem::take(&mut live.groups);
    for &pid in &groups {
        kill_group(pid);
    }
    reap_adopted(&[], &groups);
}

/// Whether [`kill_all_adapters`] ran: a signal handler is ending the process, and a run
/// that finished meanwhile (its adapters killed under it) must not report or exit first.
pub fn stopping() -> bool {
    live().stopping
}

/// On Linux, make this process a child subreaper (`PR_SET_CHILD_SUBREAPER`): an
/// adapter's descendant that leaves the process group (`setsid`) and loses its parent is
/// re-parented here instead of to init, and is killed and reaped whenever an adapter is
/// killed or finishes. For a program whose only children are adapters (the `airlock`
/// binary): every other child of this process is treated as an adapter's orphan.
/// Elsewhere, and for a descendant that is still the child of a living process outside
/// the adapter's group, only the group kill applies.
///
/// # Errors
///
/// When the kernel refuses.
pub fn adopt_orphans() -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        rustix::process::set_child_subreaper(Some(rustix::process::getpid()))?;
        ADOPTING.store(true, std::sync::atomic::Ordering::SeqCst);
    }
    Ok(())
}

/// After [`adopt_orphans`]: kill and reap every process re-parented to this one (a
/// descendant that left its group with `setsid` and lost its parent), for a program
/// whose children are all done with, such as `airlock mcp proxy` once its server is gone.
pub fn reap_orphans() {
    reap_adopted(&[], &[]);
}

pub(super) fn kill_group(pid: u32) {
    #[cfg(unix)]
    if let Some(pid) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
}

/// After [`adopt_orphans`]: kill (with their groups) and reap every child of this
/// process that is not a running adapter's shell (`running`), until none is left and the
/// `killed` groups are empty: a dying process hands its orphans over, so this repeats,
/// for at most about two seconds.
pub(super) fn reap_adopted(running: &[u32], killed: &[u32]) {
    if !ADOPTING.load(std::sync::atomic::Ordering::SeqCst) {
        return;
    }
    #[cfg(target_os = "linux")]
    {
        use rustix::process::{kill_process, kill_process_group, waitpid, Pid, Signal};
        let me = rustix::process::getpid().as_raw_nonzero().get();
        let pid = |raw: u32| i32::try_from(raw).ok().and_then(Pid::from_raw);
        for _ in 0..200 {
            let orphans: Vec<i32> = children_of(me)
                .into_iter()
                .filter(|child| !running.iter().any(|r| i64::from(*r) == i64::from(*child)))
                .collect();
            for child in &orphans {
                let Some(child) = Pid::from_raw(*child) else {
                    continue;
                };
                let _ = kill_process_group(child, Signal::KILL);
                let _ = kill_process(child, Signal::KILL);
                let _ = waitpid(Some(child), rustix::process::WaitOptions::empty());
            }
            let groups_alive = killed
                .iter()
                .filter_map(|&g| pid(g))
                .any(|g| rustix::process::test_kill_process_group(g).is_ok());
            if orphans.is_empty() && !groups_alive {
                return;
            }
            thread::sleep(Duration::from_millis(10));
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (running, killed);
}

/// The pids whose parent is `parent`, from `/proc/*/stat`.
#[cfg(target_os = "linux")]
fn children_of(parent: i32) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            let ppid = std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|stat| {
                    // `pid (comm) state ppid …`; comm may hold spaces and parentheses.
                    let rest = &stat[stat.rfind(')')? + 1..];
                    rest.split_whitespace().nth(1)?.parse::<i32>().ok()
                });
            ppid == Some(parent)
        })
        .collect()
}

/// An adapter's shell was reaped: its group is no longer live; its orphans, if any were
/// adopted, are killed and reaped.
pub(super) fn forget(pid: u32) {
    let mut live = live();
    live.groups.retain(|&p| p != pid);
    reap_adopted(&live.groups, &[pid]);
}
