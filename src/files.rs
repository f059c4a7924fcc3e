//! The files the tools write (counterexamples, regressions, JSON summaries,
//! HTML pages): each is written whole to a temporary file in its own
//! directory and then renamed into place, so that a reader (another shard,
//! `cargo test`, `replay`) sees the old file or the new one, never a part
//! or a mix. A counterexample takes a name no other run can take
//! ([`write_new`]); a summary or page replaces its file ([`replace`]).
//! Destinations are checked before the work ([`check_dir`],
//! [`check_file`]), and every error names the path.

use std::fs::OpenOptions;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// A name for a temporary file in `dir` no other process or thread uses:
/// `.NAME.tmp-PID-N-NANOS` (created with `create_new`, so a clash fails
/// instead of sharing the file).
fn temp_path(dir: &Path, name: &str) -> PathBuf {
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    dir.join(format!(".{name}.tmp-{}-{n}-{nanos}", std::process::id()))
}

/// The directory `path` is in (`.` for a bare file name).
fn parent_of(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Write `bytes` to a new temporary file in `dir`, flushed to disk; its path.
fn write_temp(dir: &Path, name: &str, bytes: &[u8]) -> io::Result<PathBuf> {
    let tmp = temp_path(dir, name);
    let written = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)
        .and_then(|mut f| {
            f.write_all(bytes)?;
            f.sync_all()
        });
    match written {
        Ok(()) => Ok(tmp),
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e)
        }
    }
}

/// Whether files can be created in `dir`, an existing directory: a probe
/// file is created and removed (this finds a read-only file system, and a
/// directory the user may not write, where permission bits do not tell it
/// for root).
fn probe_dir(dir: &Path) -> io::Result<()> {
    let probe = temp_path(dir, "probe");
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)?;
    std::fs::remove_file(&probe)
}

/// Check, before the work, that files can be saved in `dir` (created when
/// it is saved to, with its missing parents): its nearest existing ancestor
/// is a directory files can be created in. The error names the path.
pub fn check_dir(dir: &Path) -> Result<(), String> {
    let mut existing = dir;
    while !existing.as_os_str().is_empty() && !existing.exists() {
        existing = parent_of(existing);
    }
    if existing.as_os_str().is_empty() {
        existing = Path::new(".");
    }
    if !existing.is_dir() {
        return Err(format!(
            "{}: cannot save there: {} is not a directory",
            dir.display(),
            existing.display()
        ));
    }
    probe_dir(existing).map_err(|e| {
        format!(
            "{}: cannot save there: cannot create a file in {}: {e}",
            dir.display(),
            existing.display()
        )
    })
}

/// Check, before the work, that `path` can be written by [`replace`]: it is
/// not a directory, its directory exists and files can be created in it (or
/// it is an existing device or pipe, written in place). The error names the
/// path and says what it is for (`what`: `the summary`).
pub fn check_file(path: &Path, what: &str) -> Result<(), String> {
    let fail = |why: String| format!("{}: cannot write {what}: {why}", path.display());
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => return Err(fail("it is a directory".to_string())),
        Ok(m) if !m.is_file() => {
            // A device or a pipe (`/dev/null`, `/dev/stdout`): written in place.
            return OpenOptions::new()
                .write(true)
                .open(path)
                .map(drop)
                .map_err(|e| fail(e.to_string()));
        }
        _ => {}
    }
    let dir = parent_of(path);
    if !dir.is_dir() {
        return Err(fail(format!(
            "the directory {} does not exist",
            dir.display()
        )));
    }
    probe_dir(dir).map_err(|e| fail(format!("cannot create a file in {}: {e}", dir.display())))
}

/// Write `bytes` to `path`, replacing what is there at once: a temporary
/// file in the same directory, renamed over `path`. A `path` that is a
/// device or a pipe is written in place.
pub fn replace(path: &Path, bytes: &[u8]) -> io::Result<()> {
    if std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
        let mut f = OpenOptions::new().write(true).open(path)?;
        f.write_all(bytes)?;
        return f.flush();
    }
    let name = path
        .file_name()
        .map_or_else(|| "out".into(), |n| n.to_string_lossy().into_owned());
    let tmp = write_temp(parent_of(path), &name, bytes)?;
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

/// Where [`write_new`] put the bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Saved {
    /// The file.
    pub path: PathBuf,
    /// `false` when a file of that name with the same bytes was already
    /// there (another shard or run found the same thing): it is kept.
    pub new: bool,
}

/// Save `bytes` in `dir` (created if missing) as `STEM.EXT`, or, when a
/// file of that name with other bytes is there, `STEM-2.EXT`, `STEM-3.EXT`,
/// ...: never over another file, whatever other processes save at the same
/// time. The bytes go to a temporary file first, which is then linked to
/// the name (a hard link fails if the name is taken: no two writers get
/// it); where hard links are not supported, the name is claimed with
/// `create_new` and the temporary file renamed onto it.
pub fn write_new(dir: &Path, stem: &str, ext: &str, bytes: &[u8]) -> io::Result<Saved> {
    std::fs::create_dir_all(dir)?;
    let tmp = write_temp(dir, stem, bytes)?;
    let result = claim(dir, stem, ext, bytes, &tmp);
    let _ = std::fs::remove_file(&tmp);
    result
}

fn claim(dir: &Path, stem: &str, ext: &str, bytes: &[u8], tmp: &Path) -> io::Result<Saved> {
    for n in 1..=10_000u32 {
        let name = if n == 1 {
            format!("{stem}.{ext}")
        } else {
            format!("{stem}-{n}.{ext}")
        };
        let path = dir.join(name);
        match std::fs::hard_link(tmp, &path) {
            Ok(()) => return Ok(Saved { path, new: true }),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                if std::fs::read(&path).is_ok_and(|there| there == bytes) {
                    return Ok(Saved { path, new: false });
                }
            }
            Err(_) => match OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(_) => {
                    // Claimed (empty for an instant); the bytes arrive whole.
                    let copy = write_temp(dir, stem, bytes)?;
                    std::fs::rename(&copy, &path)?;
                    return Ok(Saved { path, new: true });
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    if std::fs::read(&path).is_ok_and(|there| there == bytes) {
                        return Ok(Saved { path, new: false });
                    }
                }
                Err(e) => return Err(e),
            },
        }
    }
    Err(io::Error::other(format!(
        "{}: 10 000 files named {stem}*.{ext} are there already",
        dir.display()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("scopecheck-files-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch dir");
        dir
    }

    #[test]
    fn new_files_never_replace_another() {
        let dir = scratch("new");
        let a = write_new(&dir, "cx", "trace", b"a\n").expect("saved");
        assert_eq!(
            (a.path.file_name().unwrap(), a.new),
            ("cx.trace".as_ref(), true)
        );
        let same = write_new(&dir, "cx", "trace", b"a\n").expect("saved");
        assert_eq!(
            same,
            Saved {
                path: a.path.clone(),
                new: false
            }
        );
        let b = write_new(&dir, "cx", "trace", b"b\n").expect("saved");
        assert_eq!(b.path.file_name().unwrap(), "cx-2.trace");
        assert_eq!(std::fs::read(&a.path).unwrap(), b"a\n");
        assert_eq!(std::fs::read(&b.path).unwrap(), b"b\n");
        // No temporary file is left.
        let names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 2, "{names:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn destinations_are_checked_with_the_path() {
        let dir = scratch("check");
        assert!(check_dir(&dir.join("a/b/c")).is_ok(), "created later");
        let file = dir.join("f");
        std::fs::write(&file, "x").unwrap();
        let e = check_dir(&file.join("sub")).unwrap_err();
        assert!(
            e.contains("is not a directory") && e.contains("f/sub"),
            "{e}"
        );
        let e = check_file(&dir.join("nodir/s.json"), "the summary").unwrap_err();
        assert!(
            e.contains("nodir/s.json") && e.contains("does not exist"),
            "{e}"
        );
        let e = check_file(&dir, "the summary").unwrap_err();
        assert!(e.contains("is a directory"), "{e}");
        assert!(check_file(&dir.join("s.json"), "the summary").is_ok());
        replace(&dir.join("s.json"), b"1").unwrap();
        replace(&dir.join("s.json"), b"2").unwrap();
        assert_eq!(std::fs::read(dir.join("s.json")).unwrap(), b"2");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
