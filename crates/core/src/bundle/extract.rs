//! Unpacking a bundle into its folder: every entry must stay inside it, links
//! are refused, the unpacked size is capped whatever the archive claims, and
//! the folder is replaced in one rename, so a failed install (a full disk, a
//! damaged archive) leaves the previous version in place and no half folder.

use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::path::Path;

use super::{Archive, BundleError};

/// The most an unpacked bundle may take (bundles with `node_modules` reach a few hundred MB).
pub(super) const MAX_UNPACKED: u64 = 4 << 30;
/// The most entries a bundle may have.
const MAX_ENTRIES: usize = 500_000;
/// Unix file types in the upper bits of an entry's mode.
const TYPE_MASK: u32 = 0o170_000;
const SYMLINK: u32 = 0o120_000;

/// Unpacks `zip` (read from `archive`, which errors name) into `into`
/// (created, or replaced when it exists), making
/// `executable` (a path inside the bundle) runnable even when the archive lost
/// its mode bits, and adding `record` (a file name and its contents: what the
/// host keeps about the install), written over any entry of that name.
pub(super) fn unpack(
    zip: Archive,
    archive: &Path,
    into: &Path,
    executable: Option<&str>,
    record: (&str, &[u8]),
) -> Result<(), BundleError> {
    let parent = into.parent().expect("a bundle folder has a parent");
    let leaf = into.file_name().expect("a bundle folder has a name").to_string_lossy().into_owned();
    fs::create_dir_all(parent).map_err(|source| BundleError::Write { path: parent.to_path_buf(), source })?;
    let staging = parent.join(format!(".{leaf}.unpacking-{}", std::process::id()));
    let _ = fs::remove_dir_all(&staging);
    let (record_name, contents) = record;
    let unpacked = unpack_all(zip, archive, &staging)
        .and_then(|()| match executable {
            Some(entry) => make_executable(&staging.join(entry)),
            None => Ok(()),
        })
        .and_then(|()| {
            let path = staging.join(record_name);
            fs::write(&path, contents).map_err(|source| BundleError::Write { path, source })
        });
    if let Err(e) = unpacked {
        let _ = fs::remove_dir_all(&staging);
        return Err(e);
    }
    let previous = parent.join(format!(".{leaf}.previous-{}", std::process::id()));
    let had_previous = into.exists();
    if had_previous {
        fs::rename(into, &previous).map_err(|source| BundleError::Write { path: into.to_path_buf(), source })?;
    }
    if let Err(source) = fs::rename(&staging, into) {
        if had_previous {
            let _ = fs::rename(&previous, into);
        }
        let _ = fs::remove_dir_all(&staging);
        return Err(BundleError::Write { path: into.to_path_buf(), source });
    }
    if had_previous {
        let _ = fs::remove_dir_all(&previous);
    }
    Ok(())
}

fn unpack_all(mut zip: Archive, archive: &Path, into: &Path) -> Result<(), BundleError> {
    if zip.len() > MAX_ENTRIES {
        return Err(BundleError::TooLarge { file: archive.to_path_buf(), what: format!("{} entries", zip.len()) });
    }
    let write_error = |path: &Path| {
        let path = path.to_path_buf();
        move |source| BundleError::Write { path, source }
    };
    fs::create_dir_all(into).map_err(write_error(into))?;
    let mut total: u64 = 0;
    for index in 0..zip.len() {
        let mut entry = zip.by_index(index).map_err(|e| super::damaged(archive, e))?;
        let name = entry.name().to_owned();
        let relative = entry.enclosed_name().ok_or_else(|| BundleError::UnsafeEntry {
            entry: name.clone(),
            reason: "its path leads outside the bundle folder",
        })?;
        let mode = entry.unix_mode().unwrap_or(0);
        if mode & TYPE_MASK == SYMLINK {
            return Err(BundleError::UnsafeEntry { entry: name, reason: "it is a symbolic link" });
        }
        let target = into.join(&relative);
        if entry.is_dir() {
            fs::create_dir_all(&target).map_err(write_error(&target))?;
            continue;
        }
        if let Some(dir) = target.parent() {
            fs::create_dir_all(dir).map_err(write_error(dir))?;
        }
        let mut out = File::create(&target).map_err(write_error(&target))?;
        // The declared size may lie: count what actually comes out.
        let room = MAX_UNPACKED - total;
        let written = io::copy(&mut (&mut entry).take(room + 1), &mut out).map_err(|e| match e.kind() {
            io::ErrorKind::InvalidData | io::ErrorKind::UnexpectedEof => super::damaged(archive, e),
            _ => BundleError::Write { path: target.clone(), source: e },
        })?;
        if written > room {
            return Err(BundleError::TooLarge {
                file: archive.to_path_buf(),
                what: format!("more than {} GiB unpacked", MAX_UNPACKED >> 30),
            });
        }
        total += written;
        out.flush().and_then(|()| out.sync_all()).map_err(write_error(&target))?;
        set_mode(&target, mode)?;
    }
    Ok(())
}

#[cfg(unix)]
fn set_mode(path: &Path, mode: u32) -> Result<(), BundleError> {
    use std::os::unix::fs::PermissionsExt;
    let runnable = mode & 0o111 != 0;
    let permissions = fs::Permissions::from_mode(if runnable { 0o755 } else { 0o644 });
    fs::set_permissions(path, permissions).map_err(|source| BundleError::Write { path: path.to_path_buf(), source })
}

#[cfg(not(unix))]
fn set_mode(_path: &Path, _mode: u32) -> Result<(), BundleError> {
    Ok(())
}

fn make_executable(path: &Path) -> Result<(), BundleError> {
    set_mode(path, 0o755)
}
