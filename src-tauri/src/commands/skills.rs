//! Skills for the composer's `/` palette and Settings → Skills: the built-ins and the
//! user's files (re-read when the folder changes), the files that were skipped and why,
//! and the folder itself.

use serde::Serialize;
use specta::Type;
use tauri::State;
use wyckoff_session::domain::agent::{SkillSet, SkillSource};

use crate::chat::ChatState;
use crate::commands::chat::services;
use crate::commands::error::CommandError;
use crate::state::AppState;

#[derive(Debug, Clone, PartialEq, Serialize, Type)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum SkillOrigin {
    Builtin,
    User { path: String },
}

#[derive(Debug, Clone, PartialEq, Serialize, Type)]
pub struct SkillView {
    pub name: String,
    pub description: String,
    pub origin: SkillOrigin,
}

#[derive(Debug, Clone, PartialEq, Serialize, Type)]
pub struct SkillWarningView {
    pub path: String,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Type)]
pub struct SkillsView {
    /// The folder user skills are read from (`$WYCKOFF_HOME/skills`).
    pub dir: String,
    pub skills: Vec<SkillView>,
    pub warnings: Vec<SkillWarningView>,
}

pub fn view_of(dir: &std::path::Path, set: SkillSet) -> SkillsView {
    SkillsView {
        dir: dir.display().to_string(),
        skills: set
            .skills
            .into_iter()
            .map(|s| SkillView {
                name: s.name,
                description: s.description,
                origin: match s.source {
                    SkillSource::Builtin => SkillOrigin::Builtin,
                    SkillSource::User { path } => SkillOrigin::User {
                        path: path.display().to_string(),
                    },
                },
            })
            .collect(),
        warnings: set
            .warnings
            .into_iter()
            .map(|w| SkillWarningView {
                path: w.path.display().to_string(),
                message: w.message,
            })
            .collect(),
    }
}

/// The skills in effect now (a changed file is read again).
#[tauri::command]
#[specta::specta]
pub async fn list_skills(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
) -> Result<SkillsView, CommandError> {
    let services = services(&state, &chat).await?;
    let catalog = services.skills();
    Ok(view_of(catalog.dir(), catalog.current()))
}

/// Creates the skills folder if needed and opens it in the file manager. The folder's
/// path comes back either way, so the page can show it when no file manager answers.
#[tauri::command]
#[specta::specta]
pub fn open_skills_folder(state: State<'_, AppState>) -> Result<String, CommandError> {
    let dir = state.home.skills_dir();
    std::fs::create_dir_all(&dir)
        .map_err(|e| CommandError::internal(format!("cannot create {}: {e}", dir.display())))?;
    let shown = dir.display().to_string();
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else if cfg!(windows) {
        "explorer"
    } else {
        "xdg-open"
    };
    match std::process::Command::new(opener).arg(&dir).spawn() {
        Ok(_) => Ok(shown),
        Err(e) => Err(CommandError::unavailable(format!(
            "no file manager answered ({opener}: {e}); the folder is {shown}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn the_view_names_each_skill_its_origin_and_each_skipped_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("weekly.md"),
            "---\nname: weekly\ndescription: 周复盘\n---\n复盘：{user_input}",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("Bad Name.md"),
            "---\nname: Bad Name\n---\nx",
        )
        .unwrap();
        let view = view_of(
            dir.path(),
            wyckoff_session::domain::agent::skills::load_skills(dir.path()),
        );
        let names: Vec<&str> = view.skills.iter().map(|s| s.name.as_str()).collect();
        assert!(
            names.contains(&"checkup") && names.contains(&"weekly"),
            "{names:?}"
        );
        let weekly = view.skills.iter().find(|s| s.name == "weekly").unwrap();
        assert_eq!(weekly.description, "周复盘");
        assert!(
            matches!(&weekly.origin, SkillOrigin::User { path } if path.ends_with("weekly.md"))
        );
        assert_eq!(view.warnings.len(), 1);
        assert!(view.warnings[0].path.ends_with("Bad Name.md"));
        assert_eq!(view.dir, dir.path().display().to_string());
    }
}
