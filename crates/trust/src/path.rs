//! Where a path really is.

use std::io;
use std::path::{Component, Path, PathBuf};

/// Where `p` really is: absolute, the symlinks in its existing part resolved, the rest (to be
/// created) appended with `.` and `..` taken lexically. Two spellings of one directory (a
/// symlink, `a/../b`) resolve alike.
pub fn resolve(p: &Path) -> io::Result<PathBuf> {
    let abs = std::path::absolute(p)?;
    let parts: Vec<Component> = abs.components().collect();
    for keep in (1..=parts.len()).rev() {
        let head: PathBuf = parts[..keep].iter().collect();
        match head.canonicalize() {
            Ok(mut real) => {
                for c in &parts[keep..] {
                    match c {
                        Component::ParentDir => {
                            real.pop();
                        }
                        Component::Normal(n) => real.push(n),
                        _ => {}
                    }
                }
                return Ok(real);
            }
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
                ) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(abs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolve_follows_symlinks_in_the_existing_part_only() {
        let base = tempfile::tempdir().unwrap();
        let base = base.path();
        std::fs::create_dir_all(base.join("real/sub")).unwrap();
        std::os::unix::fs::symlink(base.join("real"), base.join("link")).unwrap();
        let real = base.canonicalize().unwrap().join("real");
        assert_eq!(resolve(&base.join("link")).unwrap(), real);
        assert_eq!(
            resolve(&base.join("link/new/x")).unwrap(),
            real.join("new/x")
        );
        assert_eq!(
            resolve(&base.join("link/new/../y")).unwrap(),
            real.join("y")
        );
        assert_eq!(resolve(&base.join("real/sub/..")).unwrap(), real);
    }
}
