//! Exports from the page (a run's or a session's recording) leave it as
//! downloads of files the page made itself (`blob:` URLs); in the app each
//! one ends in the system's save dialog. WebKit writes the file into a
//! staging directory of the app's own, the dialog (on top of the window)
//! asks where it goes, suggesting the page's file name, and the file is
//! moved there; cancelled, it is deleted. The page gets no IPC for this
//! (its server, this computer's or a team's, never does): it only starts a
//! download. Downloads of anything else are refused, so no page can drop
//! files on the reviewer's disk.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use tauri::webview::DownloadEvent;
use tauri::{AppHandle, Manager, Runtime, Url, Webview};
use tauri_plugin_dialog::{DialogExt, MessageDialogKind};

/// The window's download handler: see the module's documentation.
pub fn handler<R: Runtime>(app: AppHandle<R>) -> impl Fn(Webview<R>, DownloadEvent<'_>) -> bool + Send + Sync {
    // Where each download in flight is being staged, by URL.
    let staged: Arc<Mutex<HashMap<String, PathBuf>>> = Arc::default();
    move |webview, event| match event {
        DownloadEvent::Requested { url, destination } => {
            if !takes(&url) {
                tracing::warn!(scheme = url.scheme(), "refused a download of something the page did not make");
                return false;
            }
            let Some(dir) = staging_dir(&app) else { return false };
            let name = suggested_name(destination);
            let path = dir.join(&name);
            staged.lock().unwrap_or_else(|e| e.into_inner()).insert(url.to_string(), path.clone());
            *destination = path;
            true
        }
        DownloadEvent::Finished { url, success, .. } => {
            let path = staged.lock().unwrap_or_else(|e| e.into_inner()).remove(url.as_str());
            if let Some(path) = path {
                if success {
                    ask_where(&app, &webview, path);
                } else {
                    tracing::warn!("an export failed while WebKit wrote it");
                    discard(&path);
                }
            }
            true
        }
        _ => true,
    }
}

/// A fresh directory under the app's cache directory for one download.
fn staging_dir<R: Runtime>(app: &AppHandle<R>) -> Option<PathBuf> {
    let base = match app.path().app_cache_dir() {
        Ok(base) => base.join("exports"),
        Err(e) => {
            tracing::warn!(error = %e, "no cache directory to stage an export in");
            return None;
        }
    };
    let made = std::fs::create_dir_all(&base).and_then(|()| tempdir_in(&base));
    match made {
        Ok(dir) => Some(dir),
        Err(e) => {
            tracing::warn!(error = %e, dir = %base.display(), "cannot stage an export");
            None
        }
    }
}

/// A new, empty directory in `base` that no other download shares (kept:
/// the download's own handler removes it once the file has gone).
fn tempdir_in(base: &Path) -> std::io::Result<PathBuf> {
    Ok(tempfile::Builder::new().prefix("export-").tempdir_in(base)?.keep())
}

/// The file name the page gave (WebKit's suggestion, in its default
/// destination), reduced to one plain name.
fn suggested_name(destination: &Path) -> String {
    destination
        .file_name()
        .and_then(|n| n.to_str())
        .map(|n| n.replace(['/', '\\'], "_"))
        .filter(|n| !n.is_empty() && n != "." && n != "..")
        .unwrap_or_else(|| "gatehouse-export.json".into())
}

/// Shows the save dialog for a staged file, over the window that made it,
/// and moves it where the reviewer chose, or deletes it when they cancel.
fn ask_where<R: Runtime>(app: &AppHandle<R>, webview: &Webview<R>, staged: PathBuf) {
    let name = staged.file_name().and_then(|n| n.to_str()).unwrap_or("gatehouse-export.json").to_owned();
    let mut dialog = app
        .dialog()
        .file()
        .set_title("Save recording")
        .set_file_name(&name)
        .add_filter("Gatehouse recording", &["json"]);
    if let Some(folder) = dirs::download_dir().or_else(dirs::home_dir) {
        dialog = dialog.set_directory(folder);
    }
    dialog = dialog.set_parent(&webview.window());
    let app = app.clone();
    dialog.save_file(move |chosen| {
        let target = chosen.and_then(|c| c.into_path().ok());
        match target {
            Some(target) => match move_file(&staged, &target) {
                Ok(()) => tracing::info!(file = %target.display(), "saved an export"),
                Err(e) => {
                    tracing::warn!(error = %e, file = %target.display(), "cannot save an export");
                    app.dialog()
                        .message(format!("Cannot save {}: {e}", target.display()))
                        .title("Gatehouse")
                        .kind(MessageDialogKind::Error)
                        .show(|_| {});
                    discard(&staged);
                }
            },
            None => discard(&staged),
        }
    });
}

/// Moves `from` to `to`, copying when they are on different file systems.
fn move_file(from: &Path, to: &Path) -> std::io::Result<()> {
    if std::fs::rename(from, to).is_ok() {
        remove_parent(from);
        return Ok(());
    }
    std::fs::copy(from, to)?;
    discard(from);
    Ok(())
}

/// Deletes a staged file and its directory.
fn discard(path: &Path) {
    let _ = std::fs::remove_file(path);
    remove_parent(path);
}

fn remove_parent(path: &Path) {
    if let Some(dir) = path.parent() {
        let _ = std::fs::remove_dir(dir);
    }
}

/// Whether the handler takes a download of `url`: only files the page made.
fn takes(url: &Url) -> bool {
    url.scheme() == "blob"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn taken(url: &str) -> bool {
        takes(&Url::parse(url).unwrap())
    }

    #[test]
    fn only_files_the_page_made_are_taken() {
        assert!(taken("blob:http://127.0.0.1:4100/6a3e0c1b-1f1e-4c55-9d1e-0d3f6a1b2c3d"));
        assert!(!taken("http://127.0.0.1:4100/api/hitl/runs/run_1/recording"));
        assert!(!taken("https://example.com/payload.sh"));
        assert!(!taken("data:application/json,{}"));
    }

    #[test]
    fn the_suggested_name_is_one_plain_file_name() {
        assert_eq!(suggested_name(Path::new("/home/a/Downloads/gatehouse-run-x.json")), "gatehouse-run-x.json");
        assert_eq!(suggested_name(Path::new("/home/a/Downloads/..")), "gatehouse-export.json");
        assert_eq!(suggested_name(Path::new("/")), "gatehouse-export.json");
    }

    #[test]
    fn each_download_gets_its_own_staging_directory_and_is_cleaned_up() {
        let base = tempfile::tempdir().unwrap();
        let (a, b) = (tempdir_in(base.path()).unwrap(), tempdir_in(base.path()).unwrap());
        assert_ne!(a, b);
        let staged = a.join("r.json");
        std::fs::write(&staged, "{}").unwrap();
        let target = base.path().join("saved.json");
        move_file(&staged, &target).unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "{}");
        assert!(!a.exists(), "the staging directory is removed");
        let other = b.join("r.json");
        std::fs::write(&other, "{}").unwrap();
        discard(&other);
        assert!(!b.exists());
    }
}
