//! Declares the app's own commands, so each needs a capability
//! (`capabilities/connection.json` grants them to the connection page only).

fn main() {
    relr();
    let commands = &["connection_status", "connect_team", "use_this_computer", "forget_team", "show_reviews"];
    tauri_build::try_build(
        tauri_build::Attributes::new().app_manifest(tauri_build::AppManifest::new().commands(commands)),
    )
    .expect("the Tauri build step");
}

/// Packs the app's relative relocations (RELR, `-z pack-relative-relocs`):
/// the loader then reads 40 kB instead of a 1.9 MB table at every start,
/// about 4 MB less resident at idle (docs/benchmarks.md, "Desktop app").
/// Such a binary needs glibc 2.36 or later, so only when linking against
/// one: a native Linux build whose glibc defines `GLIBC_ABI_DT_RELR`.
fn relr() {
    let env = |name: &str| std::env::var(name).unwrap_or_default();
    if env("CARGO_CFG_TARGET_OS") != "linux" || env("CARGO_CFG_TARGET_ENV") != "gnu" || env("HOST") != env("TARGET") {
        return;
    }
    let libc = ["/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu", "/lib64", "/usr/lib64", "/usr/lib", "/lib"]
        .iter()
        .map(|dir| std::path::Path::new(dir).join("libc.so.6"))
        .find(|path| path.is_file());
    let supported = libc
        .and_then(|path| std::fs::read(path).ok())
        .is_some_and(|bytes| bytes.windows(17).any(|w| w == b"GLIBC_ABI_DT_RELR"));
    if supported {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}
