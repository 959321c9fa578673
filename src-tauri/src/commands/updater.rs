//! Signed self-update of the AppImage: check the endpoints (tauri.conf.json's, in order: the
//! mirror, then the project's releases), download with progress, verify the minisign
//! signature against the public key built into the app, replace the AppImage, restart.
//!
//! Nothing is installed unless the signature verifies, and the signature must name the
//! version the manifest announces (`requireSignedVersion`), so a manifest cannot pair a new
//! version number with an older signed release. A refusal is an outcome the window shows in
//! words, not an error: the running version goes on as it was.
//!
//! A build made without endpoints (the repository's config carries none: they are set at
//! release time, see docs/release.md) says "no update server configured" instead of checking.
//! `WYCKOFF_UPDATE_ENDPOINTS` (URLs separated by spaces) replaces the configured endpoints, for
//! a private mirror. `WYCKOFF_UPDATE_PUBKEY` replaces the public key in debug builds only, so
//! the end-to-end test can sign with a key of its own; a release build trusts only its own.

use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use specta::Type;
use tauri::ipc::Channel;
use tauri::{AppHandle, Manager, State};
use tauri_plugin_updater::{Error as UpdaterError, Update, UpdaterExt};
use tauri_specta::Event;

use crate::commands::error::CommandError;

/// What a check found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct UpdateCheck {
    pub current_version: String,
    /// False when this build names no update server (none in its config, none in
    /// `WYCKOFF_UPDATE_ENDPOINTS`): nothing was asked, and `available` is empty.
    pub server_configured: bool,
    /// Only this install kind replaces itself; a .deb is the package manager's to update.
    pub can_install: bool,
    /// Why `can_install` is false, in words.
    pub install_note: Option<String>,
    pub available: Option<AvailableUpdate>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct AvailableUpdate {
    pub version: String,
    /// The release notes as the manifest gives them (Markdown or plain text).
    pub notes: Option<String>,
    /// RFC 3339, when the manifest dates the release.
    pub date: Option<String>,
}

/// Download progress for the window's bar.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum UpdateProgress {
    Downloading {
        downloaded: u64,
        /// The size the server gave, if it gave one.
        total: Option<u64>,
    },
    Verifying,
}

/// Why a download was refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Refusal {
    /// The bytes do not match the signature under this app's public key (altered, or signed
    /// with another key).
    BadSignature,
    /// The signature names another version than the manifest announces.
    VersionMismatch { signed: String },
    /// The signature names no version.
    UnsignedVersion,
    /// The manifest's signature field is not a minisign signature.
    Malformed,
}

/// How an install ended when nothing failed on the way.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum UpdateInstall {
    /// The new AppImage is in place: it runs from the next start (`restart_app`).
    Installed { version: String },
    /// The signature did not verify: nothing was installed. `reason` is the same in English
    /// (for the log and bug reports); the window words `why` in the user's language.
    Refused {
        version: String,
        why: Refusal,
        reason: String,
    },
    /// The endpoints announce nothing newer any more (or another version than the one shown).
    NoLongerAvailable,
}

/// Emitted when a check (the automatic one or the user's) finds a newer version than the
/// last one announced, so the window can show it outside Settings.
#[derive(Debug, Clone, Serialize, Deserialize, Type, Event)]
pub struct UpdateFound {
    pub check: UpdateCheck,
}

/// The newest version a check found while the app runs, for a window that opens (or
/// reloads) after the check: it asks [`pending_update`] and then listens for [`UpdateFound`].
#[derive(Default)]
pub struct PendingUpdate(Mutex<Option<UpdateCheck>>);

impl PendingUpdate {
    /// Keeps what a check found; tells the window when it is a version not told before.
    /// A check that finds nothing newer clears it.
    pub fn remember(&self, app: &AppHandle, check: &UpdateCheck) {
        let fresh = {
            let Ok(mut held) = self.0.lock() else {
                return;
            };
            let fresh = newly_announced(held.as_ref(), check);
            *held = check.available.is_some().then(|| check.clone());
            fresh
        };
        if fresh
            && let Err(e) = (UpdateFound {
                check: check.clone(),
            })
            .emit(app)
        {
            tracing::warn!("cannot emit update_found: {e}");
        }
    }

    fn get(&self) -> Option<UpdateCheck> {
        self.0.lock().ok().and_then(|held| held.clone())
    }
}

/// Whether `now` announces a version the window was not told of: a newer version than the
/// one held (or the first one), not the same one found again by the next day's check.
fn newly_announced(held: Option<&UpdateCheck>, now: &UpdateCheck) -> bool {
    let version = |c: &UpdateCheck| c.available.as_ref().map(|a| a.version.clone());
    match version(now) {
        None => false,
        Some(v) => held.and_then(version).as_ref() != Some(&v),
    }
}

/// What the checks so far found: a newer version, or nothing.
#[tauri::command]
#[specta::specta]
pub fn pending_update(pending: State<'_, PendingUpdate>) -> Option<UpdateCheck> {
    pending.get()
}

/// Asks the endpoints whether a newer version exists.
#[tauri::command]
#[specta::specta]
pub async fn check_for_update(app: AppHandle) -> Result<UpdateCheck, CommandError> {
    let check = check(&app).await?;
    app.state::<PendingUpdate>().remember(&app, &check);
    Ok(check)
}

/// One check against the endpoints; the automatic check's too.
pub async fn check(app: &AppHandle) -> Result<UpdateCheck, CommandError> {
    let (server_configured, update) = match find_update(app).await? {
        Found::NoServer => (false, None),
        Found::Nothing => (true, None),
        Found::Update(u) => (true, Some(u)),
    };
    let (can_install, install_note) = install_kind();
    Ok(UpdateCheck {
        current_version: app.package_info().version.to_string(),
        server_configured,
        can_install,
        install_note,
        available: update.map(|u| AvailableUpdate {
            version: u.version.clone(),
            notes: u.body.clone(),
            date: u
                .raw_json
                .get("pub_date")
                .and_then(|d| d.as_str())
                .map(str::to_owned),
        }),
    })
}

/// Downloads `version` (the one the window showed), verifies its signature and replaces the
/// running AppImage with it. The manifest is read again, so what is installed is what the
/// endpoints announce now, and only if it is still the version the user agreed to.
#[tauri::command]
#[specta::specta]
pub async fn install_update(
    app: AppHandle,
    version: String,
    on_progress: Channel<UpdateProgress>,
) -> Result<UpdateInstall, CommandError> {
    let (can_install, install_note) = install_kind();
    if !can_install {
        return Err(CommandError::invalid(install_note.unwrap_or_default()));
    }
    let update = match find_update(&app).await? {
        Found::Update(update) => *update,
        Found::Nothing => return Ok(UpdateInstall::NoLongerAvailable),
        Found::NoServer => return Err(CommandError::invalid(NO_SERVER)),
    };
    if update.version != version {
        return Ok(UpdateInstall::NoLongerAvailable);
    }
    let mut downloaded = 0u64;
    let bytes = update
        .download(
            |chunk, total| {
                downloaded += chunk as u64;
                send(
                    &on_progress,
                    UpdateProgress::Downloading { downloaded, total },
                );
            },
            || send(&on_progress, UpdateProgress::Verifying),
        )
        .await;
    let bytes = match bytes {
        Ok(bytes) => bytes,
        Err(e) => return refusal_or_error(&update, e),
    };
    match update.install(&bytes) {
        Ok(()) => {
            tracing::info!(version = %update.version, "update installed; it runs from the next start");
            Ok(UpdateInstall::Installed {
                version: update.version,
            })
        }
        Err(e) => refusal_or_error(&update, e),
    }
}

/// Starts the installed version (the app exits and starts again from the AppImage).
#[tauri::command]
#[specta::specta]
pub fn restart_app(app: AppHandle) {
    app.restart();
}

fn send(channel: &Channel<UpdateProgress>, event: UpdateProgress) {
    if let Err(e) = channel.send(event) {
        tracing::debug!("update progress channel closed: {e}");
    }
}

/// Said when neither the build nor the environment names an update server.
pub const NO_SERVER: &str = "no update server configured: this build was made without update \
     endpoints (they are set at release time); WYCKOFF_UPDATE_ENDPOINTS can name one";

enum Found {
    NoServer,
    Nothing,
    Update(Box<Update>),
}

async fn find_update(app: &AppHandle) -> Result<Found, CommandError> {
    let mut builder = app.updater_builder();
    if let Some(endpoints) = std::env::var("WYCKOFF_UPDATE_ENDPOINTS")
        .ok()
        .filter(|s| !s.trim().is_empty())
    {
        let urls = endpoints
            .split_whitespace()
            .map(|u| {
                u.parse().map_err(|e| {
                    CommandError::invalid(format!("WYCKOFF_UPDATE_ENDPOINTS: {u}: {e}"))
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        builder = builder
            .endpoints(urls)
            .map_err(|e| CommandError::invalid(format!("WYCKOFF_UPDATE_ENDPOINTS: {e}")))?;
    }
    #[cfg(debug_assertions)]
    if let Some(key) = std::env::var("WYCKOFF_UPDATE_PUBKEY")
        .ok()
        .filter(|s| !s.trim().is_empty())
    {
        builder = builder.pubkey(key.trim());
    }
    let updater = match builder.build() {
        Ok(updater) => updater,
        Err(UpdaterError::EmptyEndpoints) => return Ok(Found::NoServer),
        Err(e) => {
            return Err(CommandError::internal(format!(
                "the updater cannot start: {e}"
            )));
        }
    };
    match updater.check().await {
        Ok(Some(update)) => Ok(Found::Update(Box::new(update))),
        Ok(None) => Ok(Found::Nothing),
        Err(e) => Err(CommandError::unavailable(format!(
            "could not reach the update server: {}",
            describe(&e)
        ))),
    }
}

/// A signature that does not verify (or names another version) is a refusal; anything else
/// (the network, the disk) is an error.
fn refusal_or_error(update: &Update, e: UpdaterError) -> Result<UpdateInstall, CommandError> {
    if let Some((why, reason)) = signature_refusal(&e) {
        tracing::warn!(version = %update.version, "update refused: {reason}");
        return Ok(UpdateInstall::Refused {
            version: update.version.clone(),
            why,
            reason,
        });
    }
    Err(match e {
        UpdaterError::Reqwest(_) | UpdaterError::Network(_) => CommandError::unavailable(format!(
            "could not download version {}: {}",
            update.version,
            describe(&e)
        )),
        _ => CommandError::internal(format!(
            "could not install version {}: {}",
            update.version,
            describe(&e)
        )),
    })
}

/// Why a signature was refused and the same in words, or `None` when the error is not about
/// the signature.
fn signature_refusal(e: &UpdaterError) -> Option<(Refusal, String)> {
    match e {
        UpdaterError::Minisign(m) => Some((
            Refusal::BadSignature,
            format!(
                "the download's signature does not verify against this app's public key ({m}); \
                 it may have been altered, so it was not installed"
            ),
        )),
        UpdaterError::Base64(_) | UpdaterError::SignatureUtf8(_) => Some((
            Refusal::Malformed,
            "the manifest's signature is not a minisign signature; nothing was installed".into(),
        )),
        UpdaterError::SignedVersionMismatch { signed, announced } => Some((
            Refusal::VersionMismatch {
                signed: signed.clone(),
            },
            format!(
                "the download is signed as version {signed} but the manifest announces \
                 {announced}; nothing was installed"
            ),
        )),
        UpdaterError::MissingSignedVersion => Some((
            Refusal::UnsignedVersion,
            "the download's signature does not name its version; nothing was installed".into(),
        )),
        _ => None,
    }
}

/// An error in words, with its source (reqwest's own `Display` leaves out the cause).
fn describe(e: &UpdaterError) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// Only an AppImage replaces itself: `APPIMAGE` is set by its runtime to the image's path.
fn install_kind() -> (bool, Option<String>) {
    if std::env::var_os("APPIMAGE").is_some() {
        (true, None)
    } else {
        (
            false,
            Some(
                "this copy was not started from the AppImage: update it the way it was installed \
                 (apt for the .deb, a new build from source)"
                    .into(),
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_version_is_announced_once() {
        let check = |v: Option<&str>| UpdateCheck {
            current_version: "0.1.0".into(),
            server_configured: true,
            can_install: true,
            install_note: None,
            available: v.map(|v| AvailableUpdate {
                version: v.into(),
                notes: None,
                date: None,
            }),
        };
        // (held before, found now) -> told
        let cases = [
            (None, None, false),
            (None, Some("0.2.0"), true),
            (Some("0.2.0"), Some("0.2.0"), false),
            (Some("0.2.0"), Some("0.3.0"), true),
            (Some("0.2.0"), None, false),
        ];
        for (held, now, told) in cases {
            let held = held.map(|v| check(Some(v)));
            assert_eq!(
                newly_announced(held.as_ref(), &check(now)),
                told,
                "{held:?} then {now:?}"
            );
        }
    }

    #[test]
    fn signature_failures_are_refusals_and_the_rest_are_errors() {
        let mismatch = UpdaterError::SignedVersionMismatch {
            signed: "0.1.0".into(),
            announced: "0.2.0".into(),
        };
        let (why, reason) = signature_refusal(&mismatch).unwrap();
        assert_eq!(
            why,
            Refusal::VersionMismatch {
                signed: "0.1.0".into()
            }
        );
        assert!(reason.contains("signed as version 0.1.0"), "{reason}");
        assert!(reason.contains("announces 0.2.0"), "{reason}");
        assert_eq!(
            signature_refusal(&UpdaterError::MissingSignedVersion).map(|r| r.0),
            Some(Refusal::UnsignedVersion)
        );
        assert_eq!(
            signature_refusal(&UpdaterError::SignatureUtf8("x".into())).map(|r| r.0),
            Some(Refusal::Malformed)
        );
        assert!(signature_refusal(&UpdaterError::ReleaseNotFound).is_none());
        assert!(signature_refusal(&UpdaterError::InvalidUpdaterFormat).is_none());
    }
}
