//! Which process owns a running turn or background task. The app and the CLI may use one
//! data home at the same time: at start-up each marks *unfinished* work as interrupted,
//! which must only touch work whose owner is gone — never a turn or task another live
//! process is still running.
//!
//! Each process holds an exclusive lock on `run/<owner>.lock` for its lifetime. The OS
//! drops the lock when the process dies (even on `kill -9`), so "can I take the lock" is
//! an exact liveness test that needs no PID bookkeeping or platform calls.

use std::collections::HashMap;
use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::DataHome;

/// This process's lease: held (locked) until dropped.
#[derive(Debug)]
pub struct ProcessLease {
    owner: String,
    path: PathBuf,
    _file: File,
}

fn run_dir(home: &DataHome) -> PathBuf {
    home.root().join("run")
}

fn lock_path(home: &DataHome, owner: &str) -> Option<PathBuf> {
    // Owners are ours (`<pid>-<nanos>`); anything else is not a path we open.
    let safe = !owner.is_empty() && owner.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
    safe.then(|| run_dir(home).join(format!("{owner}.lock")))
}

/// One lease per data home for the whole process (see [`ProcessLease::for_process`]).
static LEASES: Mutex<Option<HashMap<PathBuf, Arc<ProcessLease>>>> = Mutex::new(None);

impl ProcessLease {
    /// This process's lease on `home`, taken on first use and held until the process
    /// exits: work begun by services that were since rebuilt keeps a live owner.
    pub fn for_process(home: &DataHome) -> std::io::Result<Arc<ProcessLease>> {
        let mut guard = LEASES.lock().unwrap_or_else(|p| p.into_inner());
        let map = guard.get_or_insert_with(HashMap::new);
        if let Some(lease) = map.get(home.root()) {
            return Ok(lease.clone());
        }
        let lease = Arc::new(ProcessLease::acquire(home)?);
        map.insert(home.root().to_path_buf(), lease.clone());
        Ok(lease)
    }

    /// Takes a new lease in `home` (creating `run/`).
    pub fn acquire(home: &DataHome) -> std::io::Result<ProcessLease> {
        std::fs::create_dir_all(run_dir(home))?;
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let owner = format!("{}-{nanos}", std::process::id());
        let path = run_dir(home).join(format!("{owner}.lock"));
        let file = OpenOptions::new()
            .create(true)
            .truncate(true)
            .write(true)
            .open(&path)?;
        file.lock()?;
        Ok(ProcessLease {
            owner,
            path,
            _file: file,
        })
    }

    /// The owner id stored with this process's turns and tasks.
    pub fn owner(&self) -> &str {
        &self.owner
    }
}

/// Gives up this process's lease on `home` (a daemon stopping cleanly, its work ended and
/// recorded): the lock file goes now, not at the next start-up's liveness check. Use
/// only when nothing this process started on `home` still runs.
pub fn release(home: &DataHome) {
    let lease = LEASES
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .as_mut()
        .and_then(|map| map.remove(home.root()));
    if let Some(lease) = lease {
        // Still shared (a service not yet dropped): the file goes anyway, the process is
        // leaving; the later drop finds it gone.
        let _ = std::fs::remove_file(&lease.path);
    }
}

impl Drop for ProcessLease {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// True while the process that took `owner`'s lease is running. Unknown, malformed or
/// released owners are not alive (their work was interrupted); a dead owner's lock file
/// is removed.
pub fn is_alive(home: &DataHome, owner: &str) -> bool {
    let Some(path) = lock_path(home, owner) else {
        return false;
    };
    let Ok(file) = OpenOptions::new().write(true).open(&path) else {
        return false;
    };
    match file.try_lock() {
        Ok(()) => {
            drop(file);
            let _ = std::fs::remove_file(&path);
            false
        }
        Err(TryLockError::WouldBlock) => true,
        Err(TryLockError::Error(e)) => {
            tracing::warn!(owner, "cannot test the lease {}: {e}", path.display());
            // When in doubt, do not mark another process's work interrupted.
            true
        }
    }
}

/// [`is_alive`] for a home given by path (what other crates hold).
pub fn is_alive_at(root: &Path, owner: &str) -> bool {
    is_alive(&DataHome::new(root), owner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_lease_is_alive_and_a_released_one_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let home = DataHome::new(dir.path());
        let lease = ProcessLease::acquire(&home).unwrap();
        let owner = lease.owner().to_owned();
        assert!(owner.starts_with(&format!("{}-", std::process::id())));
        assert!(is_alive(&home, &owner));
        let other = ProcessLease::acquire(&home).unwrap();
        assert_ne!(other.owner(), owner);
        drop(lease);
        assert!(!is_alive(&home, &owner));
        assert!(is_alive(&home, other.owner()));
    }

    #[test]
    fn a_released_process_lease_leaves_no_lock_file() {
        let dir = tempfile::tempdir().unwrap();
        let home = DataHome::new(dir.path());
        let lease = ProcessLease::for_process(&home).unwrap();
        let path = lease.path.clone();
        assert!(path.is_file());
        release(&home);
        assert!(!path.exists());
        drop(lease);
        // The next use takes a new one.
        let again = ProcessLease::for_process(&home).unwrap();
        assert_ne!(again.owner(), "");
        assert!(again.path.is_file());
        release(&home);
    }

    #[test]
    fn a_lock_file_left_by_a_dead_process_is_not_alive_and_is_cleaned() {
        let dir = tempfile::tempdir().unwrap();
        let home = DataHome::new(dir.path());
        std::fs::create_dir_all(run_dir(&home)).unwrap();
        let stale = run_dir(&home).join("4242-1.lock");
        std::fs::write(&stale, "").unwrap();
        assert!(!is_alive(&home, "4242-1"));
        assert!(!stale.exists());
    }

    #[test]
    fn the_process_lease_is_one_per_home() {
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        let (ha, hb) = (DataHome::new(a.path()), DataHome::new(b.path()));
        let first = ProcessLease::for_process(&ha).unwrap();
        assert_eq!(
            ProcessLease::for_process(&ha).unwrap().owner(),
            first.owner()
        );
        drop(first);
        // still held: the process keeps it
        let again = ProcessLease::for_process(&ha).unwrap();
        assert!(is_alive(&ha, again.owner()));
        assert_ne!(
            ProcessLease::for_process(&hb).unwrap().owner(),
            again.owner()
        );
    }

    #[test]
    fn unknown_or_malformed_owners_are_not_alive() {
        let dir = tempfile::tempdir().unwrap();
        let home = DataHome::new(dir.path());
        for owner in ["", "../etc/passwd", "a/b", "nobody-1"] {
            assert!(!is_alive(&home, owner), "{owner}");
        }
    }
}
