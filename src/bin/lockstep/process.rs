//! The processes `lockstep record` starts (one real lock service each), and the one machinery
//! that stops them all and removes their temporary folder on every way out, whatever the
//! product: when a [`Process`] is dropped (a normal end, an error, a panic that unwinds), from a
//! signal handler on Ctrl-C, `SIGTERM` or `SIGHUP`, and by the kernel if the recorder dies any
//! other way (each child asks for `SIGKILL` when its parent goes).

use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicI32, AtomicPtr, Ordering};

/// One slot per process that may be running, read by the signal handler. A handler may only
/// do async-signal-safe work, so the process ids live in atomics, not behind a lock.
const SLOTS: usize = 16;
static RUNNING: [AtomicI32; SLOTS] = [const { AtomicI32::new(0) }; SLOTS];

/// The temporary folder of the recording under way, for the signal handler to remove (a C
/// string leaked while the folder exists, or null).
static FOLDER: AtomicPtr<libc::c_char> = AtomicPtr::new(std::ptr::null_mut());

extern "C" fn on_signal(signal: libc::c_int) {
    for slot in &RUNNING {
        let pid = slot.load(Ordering::SeqCst);
        if pid > 0 {
            // SIGKILL, not SIGTERM: a process the recorder stopped (an outage) would not act on
            // SIGTERM until it is continued.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, std::ptr::null_mut(), 0);
            }
        }
    }
    // The data (tens of megabytes for etcd, mostly a preallocated log) is removed by `rm`: only
    // fork, exec and wait are safe to call here, not the standard library's file system.
    let folder = FOLDER.load(Ordering::SeqCst);
    if !folder.is_null() {
        unsafe {
            let rm = c"/bin/rm".as_ptr();
            let argv = [rm, c"-rf".as_ptr(), folder, std::ptr::null()];
            let pid = libc::fork();
            if pid == 0 {
                libc::execv(rm, argv.as_ptr());
                libc::_exit(127);
            }
            if pid > 0 {
                libc::waitpid(pid, std::ptr::null_mut(), 0);
            }
        }
    }
    unsafe { libc::_exit(128 + signal) };
}

/// Installs the handler that stops every started process when the recorder is interrupted.
fn install_signal_handlers() {
    let handler = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
    for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        unsafe { libc::signal(signal, handler) };
    }
}

/// A folder under the system's temporary folder, removed when dropped.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(label: &str) -> Result<TempDir, String> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let path =
            std::env::temp_dir().join(format!("lockstep-{label}-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&path)
            .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
        if let Ok(c) = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()) {
            let old = FOLDER.swap(c.into_raw(), Ordering::SeqCst);
            if !old.is_null() {
                drop(unsafe { std::ffi::CString::from_raw(old) });
            }
        }
        Ok(TempDir(path))
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let old = FOLDER.swap(std::ptr::null_mut(), Ordering::SeqCst);
        if !old.is_null() {
            drop(unsafe { std::ffi::CString::from_raw(old) });
        }
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A free loopback port: bound once to port 0 and let go, so a service can bind it next.
pub fn free_port() -> Result<u16, String> {
    let listener =
        TcpListener::bind("127.0.0.1:0").map_err(|e| format!("no free loopback port: {e}"))?;
    listener
        .local_addr()
        .map(|a| a.port())
        .map_err(|e| format!("no free loopback port: {e}"))
}

/// One started service process, its output in a log file; killed and waited for when dropped.
pub struct Process {
    child: Child,
    slot: usize,
    log: PathBuf,
}

impl Process {
    /// Starts `command` with its output in `log`. `install` says how to get the program when
    /// it cannot be run. Call from the thread that will drop it, normally the main thread: the
    /// child's request to die with its parent follows the thread that started it.
    pub fn spawn(mut command: Command, log: &Path, install: &str) -> Result<Process, String> {
        install_signal_handlers();
        let slot = RUNNING
            .iter()
            .position(|s| s.load(Ordering::SeqCst) == 0)
            .ok_or("too many service processes at once")?;
        let log_file = std::fs::File::create(log)
            .map_err(|e| format!("cannot create {}: {e}", log.display()))?;
        let log_err = log_file
            .try_clone()
            .map_err(|e| format!("cannot create {}: {e}", log.display()))?;
        command
            .stdin(Stdio::null())
            .stdout(log_file)
            .stderr(log_err);
        // The kernel kills the child if the recorder dies in a way no handler sees (SIGKILL).
        unsafe {
            command.pre_exec(|| {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let program = command.get_program().to_string_lossy().into_owned();
        let child = command
            .spawn()
            .map_err(|e| format!("cannot start {program} ({e}): {install}"))?;
        RUNNING[slot].store(child.id() as i32, Ordering::SeqCst);
        Ok(Process {
            child,
            slot,
            log: log.to_path_buf(),
        })
    }

    /// The process's exit status if it has ended.
    pub fn exited(&mut self) -> Option<std::process::ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// The last lines of the process's log, for an error message.
    pub fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(3)..].join(" / ")
    }

    /// Stops the process where it stands (an outage: it answers nothing until continued), or
    /// continues it.
    pub fn pause(&self, stop: bool) {
        let signal = if stop { libc::SIGSTOP } else { libc::SIGCONT };
        unsafe { libc::kill(self.child.id() as i32, signal) };
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        RUNNING[self.slot].store(0, Ordering::SeqCst);
    }
}
