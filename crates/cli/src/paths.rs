//! Where iogauge will write, checked before any work (a usage error, exit 2): an output
//! directory (`calibrate --csv DIR`, the directory of `report`/`export -o FILE`) must be
//! writable and on a filesystem that stores files, and nothing iogauge creates goes on the
//! kernel's own filesystems (/proc, /sys, cgroupfs…). Found after a whole calibration, such a
//! path cost the measurement (issue #25 row 8). A leaf, as `usage`.

use crate::usage::UsageError;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// Refuses `path` (given as `flag VALUE`) when it is, or would be created, on one of the
/// kernel's filesystems (procfs, sysfs, debugfs, cgroupfs…).
pub fn check_not_kernel(flag: &str, path: &Path) -> Result<(), UsageError> {
    match iogauge_probe::fs_of_nearest(path) {
        Ok((_, fs)) if fs.is_kernel_interface() => Err(UsageError(format!(
            "{flag} {}: on {}, the kernel's interface, not storage; choose a path on a disk",
            path.display(),
            fs.name
        ))),
        _ => Ok(()),
    }
}

/// Refuses an existing directory `dir` that files cannot be created in, for `flag VALUE`
/// (`shown`): on a kernel filesystem, on a read-only mount, or not writable by this user.
pub fn check_output_dir(flag: &str, shown: &Path, dir: &Path) -> Result<(), UsageError> {
    let fail = |why: String| {
        Err(UsageError(format!(
            "{flag} {}: {why}; choose a directory you can write to",
            shown.display()
        )))
    };
    if let Ok(fs) = iogauge_probe::fs_of(dir) {
        if fs.is_kernel_interface() {
            return fail(format!(
                "{} is on {}, the kernel's interface, where no file can be made",
                dir.display(),
                fs.name
            ));
        }
    }
    let Ok(c) = CString::new(dir.as_os_str().as_bytes()) else {
        return fail("the path contains a NUL byte".into());
    };
    // SAFETY: `c` is a valid NUL-terminated path that outlives the call.
    if unsafe { libc::access(c.as_ptr(), libc::W_OK | libc::X_OK) } == 0 {
        return Ok(());
    }
    match std::io::Error::last_os_error().raw_os_error() {
        Some(libc::EROFS) => fail(format!("{} is on a read-only filesystem", dir.display())),
        Some(libc::EACCES | libc::EPERM) => fail(format!(
            "{} is not writable by this user (uid {})",
            dir.display(),
            // SAFETY: getuid has no preconditions.
            unsafe { libc::getuid() }
        )),
        // Anything else (a directory gone meanwhile) shows when it is written.
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    #[test]
    fn kernel_filesystems_and_plain_directories() {
        let e = super::check_not_kernel("--csv", Path::new("/proc/x/y")).unwrap_err();
        assert!(e.0.contains("--csv /proc/x/y: on proc"), "{}", e.0);
        let e =
            super::check_output_dir("--csv", Path::new("/sys/x"), Path::new("/sys")).unwrap_err();
        assert!(e.0.contains("on sysfs"), "{}", e.0);
        let d = tempfile::tempdir().unwrap();
        assert!(super::check_not_kernel("--csv", &d.path().join("x")).is_ok());
        assert!(super::check_output_dir("--csv", d.path(), d.path()).is_ok());
    }
}
