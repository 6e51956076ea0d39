//! `gatehouse-desktop`: the reviewer's desktop app. It runs the engine and
//! the HTTP server in-process on a free loopback port (agents reach it as
//! they would reach `gatehouse serve`), opens the UI in a window signed in
//! with a reviewer token made for this run, and adds what a browser tab
//! cannot: a tray with the pending count, a notification per new sync
//! gate, a global shortcut, one instance, a remembered window. The rules
//! all live in the engine; this crate only wires them to the desktop.

// No console window beside the app on Windows release builds.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

mod alerts;
mod backend;
mod tray;
mod window;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Mutex;
use std::time::Instant;

use anyhow::{Context, Result};
use clap::Parser;
use tauri::{AppHandle, Manager, RunEvent, Runtime};
use tauri_plugin_global_shortcut::{GlobalShortcutExt, ShortcutState};
use tauri_plugin_window_state::StateFlags;

use crate::backend::Backend;

/// The shortcut that brings the window up from anywhere.
const SHORTCUT: &str = "CmdOrCtrl+Shift+G";

/// Gatehouse's desktop app: review agents' gates in a native window.
#[derive(Debug, Parser)]
#[command(version, about)]
struct Cli {
    /// The SQLite database. [default: <data dir>/gatehouse/gatehouse.db, as for `gatehouse`]
    #[arg(long, env = "GATEHOUSE_DB", value_name = "PATH")]
    db: Option<PathBuf>,
    /// On first start (no database yet), do not start the two welcome runs
    /// (orchestrated runs with the scripted provider, waiting for a review).
    #[arg(long, env = "GATEHOUSE_NO_WELCOME")]
    no_welcome: bool,
}

fn main() -> ExitCode {
    let started = Instant::now();
    let filter = tracing_subscriber::EnvFilter::try_from_env("GATEHOUSE_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).init();
    let cli = Cli::parse();
    match run(cli, started) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli, started: Instant) -> Result<()> {
    let db = backend::db_path(cli.db)?;
    let app = tauri::Builder::default()
        // First, so a second launch only brings this one's window up and
        // exits before it opens the database.
        .plugin(tauri_plugin_single_instance::init(|app, _args, _cwd| window::bring_up(app)))
        .plugin(
            tauri_plugin_window_state::Builder::new()
                .with_state_flags(StateFlags::SIZE | StateFlags::POSITION | StateFlags::MAXIMIZED)
                .build(),
        )
        .plugin(tauri_plugin_notification::init())
        .plugin(
            tauri_plugin_global_shortcut::Builder::new()
                .with_handler(|app, _shortcut, event| {
                    if event.state == ShortcutState::Pressed {
                        window::bring_up(app);
                    }
                })
                .build(),
        )
        .setup(move |app| Ok(setup(app.handle(), db.clone(), !cli.no_welcome, started)?))
        .build(tauri::generate_context!())
        .context("cannot start the desktop app")?;
    app.run(|app, event| {
        if let RunEvent::Exit = event {
            if let Some(backend) = app.try_state::<Running>().and_then(|r| r.0.lock().ok()?.take()) {
                backend.stop();
            }
        }
    });
    Ok(())
}

/// The backend while the app runs; taken and stopped at exit.
struct Running(Mutex<Option<Backend>>);

fn setup<R: Runtime>(app: &AppHandle<R>, db: PathBuf, welcome: bool, started: Instant) -> Result<()> {
    let resources = app.path().resource_dir().ok();
    let backend = Backend::start(db, backend::bundled_ui(resources.as_deref()), welcome)?;
    // Before anyone learns the address: a SIGTERM from then on quits
    // cleanly (the exit is handled after setup, once `Running` is managed).
    quit_on_signal(app, &backend);
    // Scripts and tests read this line to find the server.
    println!("Gatehouse listening on http://{} (database {})", backend.addr, backend.db.display());
    let _ = std::io::stdout().flush();
    if let Err(e) = wire(app, &backend, started) {
        // The window's token must not outlive a failed start.
        backend.stop();
        return Err(e);
    }
    app.manage(Running(Mutex::new(Some(backend))));
    Ok(())
}

/// The window, the shortcut, the tray, notifications and quitting.
fn wire<R: Runtime>(app: &AppHandle<R>, backend: &Backend, started: Instant) -> Result<()> {
    window::open(app, &backend.window_url(), started)?;

    let shortcut = match app.global_shortcut().register(SHORTCUT) {
        Ok(()) => Some(SHORTCUT),
        Err(e) => {
            tracing::warn!(error = %e, "cannot register the global shortcut {SHORTCUT}; the tray and a second launch still bring the window up");
            None
        }
    };
    // A desktop without a tray still has the window, the shortcut and notifications.
    let tray = tray::Tray::build(app, shortcut).inspect_err(|e| tracing::warn!(error = %e, "no tray icon")).ok();
    let addr = backend.addr;
    alerts::open_gates_on_click(app, move |id| format!("http://{addr}/#gate={id}"));
    alerts::follow(app.clone(), backend.engine.clone(), tray).context("cannot follow the engine's events")?;
    Ok(())
}

/// Ctrl-C or SIGTERM quits like the tray's Quit, so the token is revoked.
/// The token is revoked first, so it cannot outlive the app even if the
/// window's teardown never finishes.
fn quit_on_signal<R: Runtime>(app: &AppHandle<R>, backend: &Backend) {
    let app = app.clone();
    let revoke = backend.revoker();
    backend.spawn(async move {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            let Ok(mut term) = signal(SignalKind::terminate()) else { return };
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
        }
        #[cfg(not(unix))]
        if tokio::signal::ctrl_c().await.is_err() {
            return;
        }
        let _ = tokio::task::spawn_blocking(revoke).await;
        app.exit(0);
    });
}
