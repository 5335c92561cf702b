//! Giving a new file everything of the old one but its content: owner and group, extended
//! attributes (ACLs, SELinux labels, `user.*` tags), then the mode bits (last: `fchown`
//! clears the set-user-id bits, and an ACL sets the group bits).

use crate::sys;
use std::ffi::CStr;
use std::fs::{File, Metadata, Permissions};
use std::io;
use std::os::unix::fs::{MetadataExt, PermissionsExt};

/// What could not be copied; with `--force` these become warnings.
pub(crate) struct Lost(pub Vec<String>);

/// Copies owner, group, extended attributes and mode of `from` (whose metadata is `meta`)
/// to `to`. What cannot be copied is returned; an I/O error on `to` itself (it could not
/// be read back) is an error.
pub(crate) fn copy(from: &File, meta: &Metadata, to: &File) -> io::Result<Lost> {
    let mut lost = Vec::new();
    let now = to.metadata()?;
    // The owner and group: only when they differ, so that a user who owns the file (or may
    // not chown at all) never meets EPERM for ids that are already right.
    let uid = (now.uid() != meta.uid()).then_some(meta.uid());
    let gid = (now.gid() != meta.gid()).then_some(meta.gid());
    if (uid.is_some() || gid.is_some())
        && let Err(e) = std::os::unix::fs::fchown(to, uid, gid)
    {
        lost.push(format!(
            "owner and group (uid {} gid {}; the new file would be uid {} gid {}: {e})",
            meta.uid(),
            meta.gid(),
            now.uid(),
            now.gid()
        ));
    }
    copy_xattrs(from, to, &mut lost)?;
    if let Err(e) = to.set_permissions(Permissions::from_mode(meta.mode() & 0o7777)) {
        lost.push(format!("mode {:o} ({e})", meta.mode() & 0o7777));
    }
    Ok(Lost(lost))
}

fn copy_xattrs(from: &File, to: &File, lost: &mut Vec<String>) -> io::Result<()> {
    let names = match sys::xattr_names(from) {
        Ok(names) => names,
        // No extended attributes on this file system: nothing to copy.
        Err(e) if sys::xattrs_unsupported(&e) => return Ok(()),
        Err(e) => {
            lost.push(format!("extended attributes (they cannot be listed: {e})"));
            return Ok(());
        }
    };
    for name in names.split_inclusive(|&b| b == 0) {
        let Ok(name) = CStr::from_bytes_with_nul(name) else {
            continue;
        };
        let shown = name.to_string_lossy();
        let value = match sys::xattr_get(from, name) {
            Ok(Some(value)) => value,
            // Removed meanwhile.
            Ok(None) => continue,
            Err(e) => {
                lost.push(format!("extended attribute {shown} (unreadable: {e})"));
                continue;
            }
        };
        // Already there with the same value (an SELinux label or default ACL inherited from
        // the directory): nothing to do, and nothing that needs a privilege.
        if sys::xattr_get(to, name).ok().flatten().as_deref() == Some(&value[..]) {
            continue;
        }
        if let Err(e) = sys::xattr_set(to, name, &value) {
            lost.push(format!("extended attribute {shown} ({e})"));
        }
    }
    Ok(())
}
