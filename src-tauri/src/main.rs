//! `gatehouse-desktop`: the reviewer's desktop app. It runs the engine and
//! the HTTP server in-process on a free loopback port (agents reach it as
//! they would reach `gatehouse serve`), or connects to a team server
//! instead; opens the UI in a window signed in with a reviewer token, and
//! adds what a browser tab cannot: a tray with the pending count, a
//! notification per new sync gate, a global shortcut, one instance, a
//! remembered window, a connection page. The rules all live in the
//! engine; this crate only wires them to the desktop.

// No console window beside the app on Windows release builds.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

mod alerts;
mod backend;
mod connection;
mod downloads;
mod memory;
mod tray;
mod window;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result};
use clap::Parser;
use tauri::{AppHandle, Manager, RunEvent, Runtime};
use tauri_plugin_global_shortcut::{GlobalShortcutExt, ShortcutState};
use tauri_plugin_window_state::StateFlags;

use crate::connection::{page, Connection};

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
    /// The operator's tools that team runs may grant their agents, as for `gatehouse serve
    /// --team-tools`: a YAML or JSON toolbox file (workspaces, web_search, mcp_servers, commands),
    /// checked and connected when this computer's server starts; a bad file's tools are left out
    /// and the window says why (the file and the line or field at fault).
    #[arg(long, env = "GATEHOUSE_TEAM_TOOLS", value_name = "FILE")]
    team_tools: Option<PathBuf>,
}

fn main() -> ExitCode {
    let started = Instant::now();
    memory::tune();
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
    let welcome = !cli.no_welcome;
    let team_tools = cli.team_tools;
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
        .plugin(tauri_plugin_dialog::init())
        // Links that would take the window away open in the browser (`window`).
        .plugin(tauri_plugin_opener::init())
        .plugin(
            tauri_plugin_global_shortcut::Builder::new()
                .with_handler(|app, _shortcut, event| {
                    if event.state == ShortcutState::Pressed {
                        window::bring_up(app);
                    }
                })
                .build(),
        )
        // The connection page, from the UI build the app found at setup.
        .register_uri_scheme_protocol(page::SCHEME, |ctx, request| {
            let dist = ctx.app_handle().try_state::<UiDir>().and_then(|d| d.0.clone());
            page::respond(dist.as_deref(), request.uri().path())
        })
        .invoke_handler(tauri::generate_handler![
            page::connection_status,
            page::connect_team,
            page::use_this_computer,
            page::forget_team,
            page::show_reviews
        ])
        .setup(move |app| Ok(setup(app.handle(), db.clone(), welcome, team_tools.clone(), started)?))
        .build(tauri::generate_context!())
        .context("cannot start the desktop app")?;
    app.run(|app, event| {
        if let RunEvent::Exit = event {
            if let Some(connection) = connection::of(app) {
                connection.stop();
            }
        }
    });
    Ok(())
}

/// The UI build the connection page comes from.
struct UiDir(Option<PathBuf>);

fn setup<R: Runtime>(
    app: &AppHandle<R>,
    db: PathBuf,
    welcome: bool,
    team_tools: Option<PathBuf>,
    started: Instant,
) -> Result<()> {
    let resources = app.path().resource_dir().ok();
    let ui_dir = backend::bundled_ui(resources.as_deref());
    app.manage(UiDir(ui_dir.clone().or_else(gatehouse_server::ui::find_ui_dir)));
    let config_dir = app.path().app_config_dir().context("the app's config directory")?;
    let launch = connection::Launch { db, ui_dir, welcome, team_tools };
    let connection = Arc::new(Connection::new(launch, &config_dir, &app.config().identifier)?);
    app.manage(Arc::clone(&connection));
    // Tray first: the follower started with the server shows its count there.
    let shortcut = match app.global_shortcut().register(SHORTCUT) {
        Ok(()) => Some(SHORTCUT),
        Err(e) => {
            tracing::warn!(error = %e, "cannot register the global shortcut {SHORTCUT}; the tray and a second launch still bring the window up");
            None
        }
    };
    // A desktop without a tray still has the window, the shortcut and notifications.
    match tray::Tray::build(app, shortcut) {
        Ok(tray) => {
            app.manage(tray);
        }
        Err(e) => tracing::warn!(error = %e, "no tray icon"),
    }
    // Before anyone learns the address (printed as the server starts): a
    // SIGTERM from then on quits cleanly, revoking the window's token.
    quit_on_signal(app, &connection);
    let (server, notice) = tauri::async_runtime::block_on(connection.start(app))?;
    if let Err(e) = window::open(app, &server.window_url(notice), &server.label(), started) {
        // The window's token must not outlive a failed start.
        connection.stop();
        return Err(e);
    }
    let gates = Arc::clone(&connection);
    alerts::open_gates_on_click(app, move |link| {
        gates.current().map(|server| match link {
            alerts::Link::Gate(id) => server.gate_url(id),
            alerts::Link::View(view) => server.view_url(view),
        })
    });
    Ok(())
}

/// Ctrl-C or SIGTERM quits like the tray's Quit, so the token is revoked.
/// The token is revoked first, so it cannot outlive the app even if the
/// window's teardown never finishes.
fn quit_on_signal<R: Runtime>(app: &AppHandle<R>, connection: &Arc<Connection>) {
    let app = app.clone();
    let connection = Arc::clone(connection);
    // Registered here and now, not when the task first runs.
    #[cfg(unix)]
    let signals = tauri::async_runtime::block_on(async {
        use tokio::signal::unix::{signal, SignalKind};
        Ok::<_, std::io::Error>((signal(SignalKind::terminate())?, signal(SignalKind::interrupt())?))
    });
    tauri::async_runtime::spawn(async move {
        #[cfg(unix)]
        {
            let Ok((mut term, mut interrupt)) = signals else { return };
            tokio::select! {
                _ = interrupt.recv() => {}
                _ = term.recv() => {}
            }
        }
        #[cfg(not(unix))]
        if tokio::signal::ctrl_c().await.is_err() {
            return;
        }
        let _ = tauri::async_runtime::spawn_blocking(move || connection.stop()).await;
        app.exit(0);
    });
}
