//! Declares the app's own commands, so each needs a capability
//! (`capabilities/connection.json` grants them to the connection page only).

fn main() {
    let commands = &["connection_status", "connect_team", "use_this_computer", "forget_team", "show_reviews"];
    tauri_build::try_build(
        tauri_build::Attributes::new().app_manifest(tauri_build::AppManifest::new().commands(commands)),
    )
    .expect("the Tauri build step");
}
