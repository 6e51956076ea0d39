//! Files only their owner may read: the database (and SQLite's `-wal` and
//! `-shm` beside it), secrets such as the admin token and the audit key,
//! and exports. Each holds payloads, decisions or credentials, so it is
//! created 0600 in a 0700 directory whatever the process's umask.

use std::fs::{DirBuilder, OpenOptions};
use std::io::{self, Write};
use std::path::Path;

/// Creates `dir` (and missing parents) readable only by its owner (0700).
/// An existing directory is left as it is: it may be shared (`/tmp`, the
/// working directory) and is not Gatehouse's to tighten.
pub fn create_private_dir(dir: &Path) -> io::Result<()> {
    if dir.as_os_str().is_empty() || dir.is_dir() {
        return Ok(());
    }
    let mut builder = DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)?;
    // The umask only removes bits, but say it outright rather than rely on that.
    set_mode(dir, 0o700)
}

/// Writes `bytes` to `path` atomically (a private temporary file beside it,
/// synced, then renamed over it), readable only by its owner (0600). The
/// directory is created private when missing ([`create_private_dir`]).
pub fn write_private_file(path: &Path, bytes: &[u8]) -> io::Result<()> {
    if let Some(dir) = path.parent() {
        create_private_dir(dir)?;
    }
    let name = path.file_name().ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not a file path"))?;
    let mut staged_name = std::ffi::OsString::from(".");
    staged_name.push(name);
    staged_name.push(format!(".{}.tmp", std::process::id()));
    let staged = path.with_file_name(staged_name);
    let written = (|| {
        let mut file = create_private(&staged)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&staged, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&staged);
    }
    written
}

/// Creates (or truncates) `path` for writing, readable only by its owner
/// (0600, an existing file tightened too): for files written as a stream,
/// such as an export, where [`write_private_file`] would hold it all in memory.
pub fn create_private_file(path: &Path) -> io::Result<std::fs::File> {
    let file = create_private(path)?;
    file.set_len(0)?;
    Ok(file)
}

/// Tightens an existing `path` to its owner alone: a file to 0600, a
/// directory to 0700. A missing one is not an error.
pub fn restrict_to_owner(path: &Path) -> io::Result<()> {
    let mode = match std::fs::metadata(path) {
        Ok(meta) if meta.is_dir() => 0o700,
        Ok(_) => 0o600,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    set_mode(path, mode)
}

fn create_private(path: &Path) -> io::Result<std::fs::File> {
    let mut options = OpenOptions::new();
    options.write(true).create(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let file = options.open(path)?;
    // `mode` applies only when the file is new; an existing one is tightened here.
    #[cfg(unix)]
    file.set_permissions(std::os::unix::fs::PermissionsExt::from_mode(0o600))?;
    Ok(file)
}

#[cfg(unix)]
fn set_mode(path: &Path, mode: u32) -> io::Result<()> {
    std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(mode))
}

#[cfg(not(unix))]
fn set_mode(_path: &Path, _mode: u32) -> io::Result<()> {
    Ok(())
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn a_private_file_replaces_a_readable_one_with_mode_0600() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nested").join("secret");
        write_private_file(&path, b"one").unwrap();
        assert_eq!((mode(&path), mode(path.parent().unwrap())), (0o600, 0o700));

        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        write_private_file(&path, b"two").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        assert_eq!(mode(&path), 0o600);
        let left: Vec<_> = std::fs::read_dir(path.parent().unwrap()).unwrap().collect();
        assert_eq!(left.len(), 1, "no staged file is left behind");
    }

    #[test]
    fn a_streamed_private_file_is_truncated_and_tightened() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("export.json");
        std::fs::write(&path, b"a longer old content").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).unwrap();
        let mut file = create_private_file(&path).unwrap();
        file.write_all(b"new").unwrap();
        drop(file);
        assert_eq!(std::fs::read(&path).unwrap(), b"new");
        assert_eq!(mode(&path), 0o600);
    }
}
