//! A run's workspace: the one directory its agents' file tools may touch.
//! `create_artifact(path, content)`, `read_artifact(path)` and
//! `code_search(query, path_glob)` work inside it and nowhere else:
//!
//! - a path is relative, plain (no `..`, no drive or root) and at most
//!   [`MAX_PATH`] bytes; every directory on the way must be a real
//!   directory inside the workspace and the file itself not a symbolic
//!   link, so neither a crafted name nor a link planted in the workspace
//!   reaches outside it;
//! - an artifact holds at most [`MAX_ARTIFACT`] bytes of UTF-8 text, and the
//!   workspace at most [`MAX_FILES`] files;
//! - a search reads text files under [`MAX_ARTIFACT`] bytes, skips hidden
//!   ones, and returns at most the hits asked for (up to [`MAX_HITS`]).
//!
//! Every refusal is worded for the model that made the call.

use std::fs;
use std::io::{Read, Write};
use std::path::{Component, Path, PathBuf};

use serde::Serialize;

/// The longest relative path.
pub const MAX_PATH: usize = 512;
/// The largest artifact, in bytes.
pub const MAX_ARTIFACT: usize = 1024 * 1024;
/// The most files a workspace holds.
pub const MAX_FILES: usize = 2_000;
/// The most hits one search returns.
pub const MAX_HITS: usize = 200;

/// A directory an agent's file tools are confined to.
#[derive(Debug, Clone)]
pub struct Workspace {
    root: PathBuf,
}

/// One line a search found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Hit {
    /// The file, relative to the workspace, with `/` separators.
    pub path: String,
    /// The line number, from 1.
    pub line: usize,
    /// The line, trimmed and cut to 200 characters.
    pub text: String,
}

impl Workspace {
    /// The workspace at `root`, created if missing.
    pub fn open(root: impl Into<PathBuf>) -> std::io::Result<Self> {
        let root = root.into();
        fs::create_dir_all(&root)?;
        Ok(Self { root: root.canonicalize()? })
    }

    /// Its directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Writes `content` at `path` (directories made as needed); the bytes written.
    pub fn create_artifact(&self, path: &str, content: &str) -> Result<usize, String> {
        if content.len() > MAX_ARTIFACT {
            return Err(format!("the content is {} bytes; an artifact holds at most {MAX_ARTIFACT}", content.len()));
        }
        let relative = plain(path)?;
        let target = self.root.join(&relative);
        let exists = target.symlink_metadata().is_ok();
        if !exists && self.count_files() >= MAX_FILES {
            return Err(format!("the workspace already holds {MAX_FILES} files; overwrite one instead"));
        }
        let parent = self.parent_dir(&relative, true)?;
        let file = parent.join(relative.file_name().ok_or_else(|| format!("`{path}` names no file"))?);
        refuse_link(&file, path)?;
        // Written beside it and renamed over it: a reader never sees half a file.
        let mut staged = tempfile::NamedTempFile::new_in(&parent).map_err(|e| io_error(path, &e))?;
        staged.write_all(content.as_bytes()).map_err(|e| io_error(path, &e))?;
        staged.persist(&file).map_err(|e| io_error(path, &e.error))?;
        Ok(content.len())
    }

    /// The text at `path`.
    pub fn read_artifact(&self, path: &str) -> Result<String, String> {
        let relative = plain(path)?;
        let parent = self.parent_dir(&relative, false)?;
        let file = parent.join(relative.file_name().ok_or_else(|| format!("`{path}` names no file"))?);
        refuse_link(&file, path)?;
        let meta = fs::metadata(&file).map_err(|_| format!("there is no artifact `{path}`"))?;
        if !meta.is_file() {
            return Err(format!("`{path}` is a directory, not an artifact"));
        }
        if meta.len() > MAX_ARTIFACT as u64 {
            return Err(format!("`{path}` is {} bytes; artifacts are read up to {MAX_ARTIFACT}", meta.len()));
        }
        let mut text = String::new();
        fs::File::open(&file)
            .and_then(|mut f| f.read_to_string(&mut text))
            .map_err(|_| format!("`{path}` is not UTF-8 text"))?;
        Ok(text)
    }

    /// Lines holding `query` (case-insensitive), in files whose path holds
    /// `path_part` when given; at most `limit` hits, in path order.
    pub fn code_search(&self, query: &str, path_part: Option<&str>, limit: usize) -> Result<Vec<Hit>, String> {
        let needle = query.trim().to_lowercase();
        if needle.is_empty() {
            return Err("`query` is required: the text to look for".to_owned());
        }
        let limit = limit.clamp(1, MAX_HITS);
        let mut files = Vec::new();
        self.walk(&self.root, &mut files);
        files.sort();
        let mut hits = Vec::new();
        for file in files {
            let shown = self.shown(&file);
            if path_part.is_some_and(|part| !shown.contains(part)) {
                continue;
            }
            let Ok(text) = fs::read_to_string(&file) else { continue };
            for (i, line) in text.lines().enumerate() {
                if line.to_lowercase().contains(&needle) {
                    hits.push(Hit { path: shown.clone(), line: i + 1, text: line.trim().chars().take(200).collect() });
                    if hits.len() == limit {
                        return Ok(hits);
                    }
                }
            }
        }
        Ok(hits)
    }

    /// The directory `relative`'s file goes in, each step a real directory
    /// inside the workspace (made when `create`).
    fn parent_dir(&self, relative: &Path, create: bool) -> Result<PathBuf, String> {
        let shown = relative.to_string_lossy();
        let mut dir = self.root.clone();
        let Some(parent) = relative.parent() else { return Ok(dir) };
        for part in parent.components() {
            dir.push(part);
            match dir.symlink_metadata() {
                Ok(meta) if meta.file_type().is_symlink() => {
                    return Err(format!("`{shown}` goes through a link; artifacts stay inside the workspace"))
                }
                Ok(meta) if !meta.is_dir() => return Err(format!("`{shown}` goes through a file, not a directory")),
                Ok(_) => {}
                Err(_) if create => fs::create_dir(&dir).map_err(|e| io_error(&shown, &e))?,
                Err(_) => return Err(format!("there is no artifact `{shown}`")),
            }
        }
        Ok(dir)
    }

    fn walk(&self, dir: &Path, files: &mut Vec<PathBuf>) {
        let Ok(entries) = fs::read_dir(dir) else { return };
        for entry in entries.flatten() {
            if entry.file_name().to_string_lossy().starts_with('.') {
                continue;
            }
            let Ok(kind) = entry.file_type() else { continue };
            if kind.is_dir() {
                self.walk(&entry.path(), files);
            } else if kind.is_file() && entry.metadata().is_ok_and(|m| m.len() <= MAX_ARTIFACT as u64) {
                files.push(entry.path());
            }
        }
    }

    fn count_files(&self) -> usize {
        let mut files = Vec::new();
        self.walk(&self.root, &mut files);
        files.len()
    }

    fn shown(&self, file: &Path) -> String {
        let relative = file.strip_prefix(&self.root).unwrap_or(file);
        relative.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/")
    }
}

/// `path` as a plain relative path, or why it is not one.
fn plain(path: &str) -> Result<PathBuf, String> {
    let trimmed = path.trim();
    if trimmed.is_empty() {
        return Err("`path` is required: a file name inside the workspace".to_owned());
    }
    if trimmed.len() > MAX_PATH {
        return Err(format!("`path` is {} bytes long; at most {MAX_PATH}", trimmed.len()));
    }
    if trimmed.contains('\0') || trimmed.contains('\\') {
        return Err(format!("`{trimmed}` holds a character paths here may not (NUL or backslash)"));
    }
    let mut out = PathBuf::new();
    for part in Path::new(trimmed).components() {
        match part {
            Component::Normal(name) => out.push(name),
            Component::CurDir => {}
            Component::ParentDir | Component::RootDir | Component::Prefix(_) => {
                return Err(format!(
                    "`{trimmed}` leaves the workspace: give a path inside it, without `..` or a leading `/`"
                ))
            }
        }
    }
    if out.as_os_str().is_empty() {
        return Err(format!("`{trimmed}` names no file"));
    }
    Ok(out)
}

fn refuse_link(file: &Path, shown: &str) -> Result<(), String> {
    match file.symlink_metadata() {
        Ok(meta) if meta.file_type().is_symlink() => {
            Err(format!("`{shown}` is a link; artifacts stay inside the workspace"))
        }
        _ => Ok(()),
    }
}

fn io_error(path: &str, e: &std::io::Error) -> String {
    format!("`{path}` could not be written ({})", e.kind())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn workspace() -> (tempfile::TempDir, Workspace) {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::open(dir.path().join("run-1")).unwrap();
        (dir, ws)
    }

    #[test]
    fn an_artifact_is_written_in_its_directories_and_read_back() {
        let (_dir, ws) = workspace();
        assert_eq!(ws.create_artifact("src/app/main.rs", "fn main() {}\n"), Ok(13));
        assert_eq!(ws.read_artifact("./src/app/main.rs").unwrap(), "fn main() {}\n");
        ws.create_artifact("src/app/main.rs", "fn main() { run() }\n").unwrap();
        assert_eq!(ws.read_artifact("src/app/main.rs").unwrap(), "fn main() { run() }\n", "overwritten whole");
        assert_eq!(ws.read_artifact("src/nope.rs").unwrap_err(), "there is no artifact `src/nope.rs`");
        assert_eq!(ws.read_artifact("src").unwrap_err(), "`src` is a directory, not an artifact");
    }

    #[test]
    fn paths_leaving_the_workspace_are_refused() {
        let (dir, ws) = workspace();
        for path in ["../escape.txt", "/etc/passwd", "a/../../b", "a\\..\\b", ""] {
            assert!(ws.create_artifact(path, "x").is_err(), "{path} must be refused");
        }
        assert!(!dir.path().join("escape.txt").exists());
        assert_eq!(
            ws.read_artifact("../run-1/x").unwrap_err(),
            "`../run-1/x` leaves the workspace: give a path inside it, without `..` or a leading `/`"
        );
    }

    #[test]
    fn a_link_planted_in_the_workspace_leads_nowhere() {
        let (dir, ws) = workspace();
        let outside = dir.path().join("outside");
        fs::create_dir(&outside).unwrap();
        fs::write(outside.join("secret.txt"), "key").unwrap();
        std::os::unix::fs::symlink(&outside, ws.root().join("docs")).unwrap();
        std::os::unix::fs::symlink(outside.join("secret.txt"), ws.root().join("secret.txt")).unwrap();
        assert_eq!(
            ws.read_artifact("docs/secret.txt").unwrap_err(),
            "`docs/secret.txt` goes through a link; artifacts stay inside the workspace"
        );
        assert_eq!(
            ws.read_artifact("secret.txt").unwrap_err(),
            "`secret.txt` is a link; artifacts stay inside the workspace"
        );
        assert!(ws.create_artifact("docs/new.txt", "x").is_err());
        assert!(ws.create_artifact("secret.txt", "overwrite").is_err());
        assert_eq!(fs::read_to_string(outside.join("secret.txt")).unwrap(), "key");
        assert!(!outside.join("new.txt").exists());
    }

    #[test]
    fn size_limits_hold() {
        let (_dir, ws) = workspace();
        let big = "x".repeat(MAX_ARTIFACT + 1);
        assert!(ws.create_artifact("big.txt", &big).unwrap_err().contains("at most"));
        assert!(ws.create_artifact(&"a".repeat(MAX_PATH + 1), "x").unwrap_err().contains("at most 512"));
    }

    #[test]
    fn code_search_finds_lines_in_path_order_within_a_path_filter() {
        let (_dir, ws) = workspace();
        ws.create_artifact("src/b.rs", "fn parse() {}\n// TODO: parse faster\n").unwrap();
        ws.create_artifact("src/a.rs", "use parse;\n").unwrap();
        ws.create_artifact("docs/notes.md", "Parse the input\n").unwrap();
        ws.create_artifact(".hidden/x.rs", "parse\n").unwrap();
        let hits = ws.code_search("PARSE", None, 10).unwrap();
        let found: Vec<(String, usize)> = hits.iter().map(|h| (h.path.clone(), h.line)).collect();
        assert_eq!(
            found,
            [("docs/notes.md".into(), 1), ("src/a.rs".into(), 1), ("src/b.rs".into(), 1), ("src/b.rs".into(), 2)]
        );
        assert_eq!(ws.code_search("parse", Some("src/"), 2).unwrap().len(), 2, "the limit holds");
        assert_eq!(ws.code_search("parse", Some(".rs"), 10).unwrap().len(), 3, "hidden files are skipped");
        assert_eq!(ws.code_search("  ", None, 10).unwrap_err(), "`query` is required: the text to look for");
    }
}
