//! The tray icon: the pending-gate count in its label, tooltip and menu
//! (the tooltip also names the server reviewed), and the way back to the
//! window (Open), to the connection page (Connection…) or out of the app (Quit).

use anyhow::{Context, Result};
use tauri::menu::{Menu, MenuItem, PredefinedMenuItem};
use tauri::tray::{MouseButton, MouseButtonState, TrayIcon, TrayIconBuilder, TrayIconEvent};
use tauri::{AppHandle, Runtime};

use crate::window;

/// The tray and the menu line showing the count.
pub struct Tray<R: Runtime> {
    icon: TrayIcon<R>,
    count_line: MenuItem<R>,
}

impl<R: Runtime> Tray<R> {
    /// Builds the tray; `shortcut` is shown beside Open when registered.
    pub fn build(app: &AppHandle<R>, shortcut: Option<&str>) -> Result<Self> {
        let count_line = MenuItem::with_id(app, "pending", pending_text(0), false, None::<&str>)?;
        let open = MenuItem::with_id(app, "open", "Open Gatehouse", true, shortcut)?;
        let connection = MenuItem::with_id(app, "connection", "Connection…", true, None::<&str>)?;
        let quit = MenuItem::with_id(app, "quit", "Quit Gatehouse", true, None::<&str>)?;
        let separator = PredefinedMenuItem::separator(app)?;
        let menu = Menu::with_items(app, &[&count_line, &separator, &open, &connection, &quit])?;
        let mut builder = TrayIconBuilder::with_id("gatehouse")
            .tooltip("Gatehouse: no pending gates")
            .menu(&menu)
            .show_menu_on_left_click(false)
            .on_menu_event(|app, event| match event.id.as_ref() {
                "open" => window::bring_up(app),
                "connection" => window::show_connection_page(app),
                "quit" => app.exit(0),
                _ => {}
            })
            .on_tray_icon_event(|tray, event| {
                if let TrayIconEvent::Click { button: MouseButton::Left, button_state: MouseButtonState::Up, .. } =
                    event
                {
                    window::bring_up(tray.app_handle());
                }
            });
        if let Some(icon) = app.default_window_icon() {
            builder = builder.icon(icon.clone());
        }
        let icon = builder.build(app).context("cannot create the tray icon")?;
        Ok(Self { icon, count_line })
    }

    /// Shows `count` pending gates on the server called `server`.
    pub fn show_pending(&self, count: u64, server: &str) {
        let text = pending_text(count);
        let label = (count > 0).then(|| count.to_string());
        let shown = self
            .count_line
            .set_text(&text)
            .and_then(|()| self.icon.set_tooltip(Some(format!("Gatehouse ({server}): {text}"))))
            .and_then(|()| self.icon.set_title(label));
        if let Err(e) = shown {
            tracing::warn!(error = %e, "cannot update the tray");
        }
    }
}

impl<R: Runtime> Tray<R> {
    /// Says the server called `server` refused the app's token: the count
    /// is no longer followed until the reviewer gives a new one.
    pub fn show_refused(&self, server: &str) {
        let shown = self
            .count_line
            .set_text(REFUSED)
            .and_then(|()| {
                self.icon.set_tooltip(Some(format!("Gatehouse ({server}): the server refused this app's token")))
            })
            .and_then(|()| self.icon.set_title(Some("!")));
        if let Err(e) = shown {
            tracing::warn!(error = %e, "cannot update the tray");
        }
    }
}

/// The count line once the server refused the token.
pub const REFUSED: &str = "Token refused: see Connection…";

/// "No pending gates", "1 pending gate", "12 pending gates".
pub fn pending_text(count: u64) -> String {
    match count {
        0 => "No pending gates".to_owned(),
        1 => "1 pending gate".to_owned(),
        n => format!("{n} pending gates"),
    }
}

#[cfg(test)]
mod tests {
    use super::pending_text;

    #[test]
    fn the_count_reads_as_english() {
        assert_eq!(pending_text(0), "No pending gates");
        assert_eq!(pending_text(1), "1 pending gate");
        assert_eq!(pending_text(12), "12 pending gates");
    }
}
