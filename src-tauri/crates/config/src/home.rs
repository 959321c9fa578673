use std::path::{Path, PathBuf};

/// The data home: `$WYCKOFF_HOME`, default `~/.wyckoff`. Everything the app writes lives
/// below it (database, settings, scratchpads, logs) except secrets, which live in the
/// OS keychain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataHome {
    root: PathBuf,
}

impl DataHome {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        DataHome { root: root.into() }
    }

    /// Resolves the home from `WYCKOFF_HOME`, falling back to `~/.wyckoff`.
    pub fn from_env() -> Self {
        Self::resolve(
            std::env::var_os("WYCKOFF_HOME"),
            std::env::var_os("HOME").or_else(|| std::env::var_os("USERPROFILE")),
        )
    }

    fn resolve(
        wyckoff_home: Option<std::ffi::OsString>,
        user_home: Option<std::ffi::OsString>,
    ) -> Self {
        match wyckoff_home.filter(|v| !v.is_empty()) {
            Some(dir) => DataHome::new(dir),
            None => {
                let base = user_home
                    .map(PathBuf::from)
                    .unwrap_or_else(|| PathBuf::from("."));
                DataHome::new(base.join(".wyckoff"))
            }
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }
    pub fn db_path(&self) -> PathBuf {
        self.root.join("wyckoff.db")
    }
    pub fn settings_path(&self) -> PathBuf {
        self.root.join(crate::settings::SETTINGS_FILE)
    }
    pub fn logs_dir(&self) -> PathBuf {
        self.root.join("logs")
    }
    pub fn scratchpad_dir(&self) -> PathBuf {
        self.root.join("scratchpad")
    }
    pub fn tool_results_dir(&self) -> PathBuf {
        self.root.join("tool-results")
    }
    pub fn skills_dir(&self) -> PathBuf {
        self.root.join("skills")
    }

    /// Creates the home and its sub-directories (owner-only on Unix: the folder holds
    /// conversations and portfolio data).
    pub fn ensure(&self) -> std::io::Result<()> {
        for dir in [
            self.root.clone(),
            self.logs_dir(),
            self.scratchpad_dir(),
            self.tool_results_dir(),
            self.skills_dir(),
        ] {
            std::fs::create_dir_all(&dir)?;
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&self.root, std::fs::Permissions::from_mode(0o700))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_wins_and_default_is_dot_wyckoff() {
        let h = DataHome::resolve(Some("/tmp/wh".into()), Some("/home/u".into()));
        assert_eq!(h.root(), Path::new("/tmp/wh"));
        let d = DataHome::resolve(None, Some("/home/u".into()));
        assert_eq!(d.root(), Path::new("/home/u/.wyckoff"));
        let empty = DataHome::resolve(Some("".into()), Some("/home/u".into()));
        assert_eq!(empty.root(), Path::new("/home/u/.wyckoff"));
        assert_eq!(d.db_path(), Path::new("/home/u/.wyckoff/wyckoff.db"));
    }

    #[test]
    fn ensure_creates_subdirectories() {
        let tmp = tempfile::tempdir().unwrap();
        let h = DataHome::new(tmp.path().join("home"));
        h.ensure().unwrap();
        assert!(h.logs_dir().is_dir());
        assert!(h.scratchpad_dir().is_dir());
        assert!(h.tool_results_dir().is_dir());
    }
}
