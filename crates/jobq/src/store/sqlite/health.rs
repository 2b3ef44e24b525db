//! What `jobq doctor` checks of a SQLite store beyond its jobs: the file system under the database
//! (SQLite's locks do not hold on a network file system, so two machines' writers can corrupt it:
//! <https://www.sqlite.org/useovernet.html>) and the size of its write-ahead log (a log that is never
//! checkpointed back, because a reader never ends, grows with every write and slows every read).
//!
//! Both are facts about files, read with `statfs` and `stat`; nothing is written.

use std::path::{Path, PathBuf};

use crate::store::{Finding, Health, Severity};

/// The store's findings for the database file at `path`.
pub(super) fn findings(path: &Path, health: &Health) -> Vec<Finding> {
    let Ok(path) = std::path::absolute(path) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if let Some(fs) = network_file_system(&path) {
        out.push(Finding::new(
            "sqlite-network-fs",
            Severity::Error,
            format!(
                "the SQLite database {} is on a network file system ({fs}), where SQLite's locks do not hold",
                path.display()
            ),
            "move the database to a local disk, or use a server store (postgres://, mysql://, redis://) \
             for workers on several machines"
                .into(),
        ));
    }
    let wal = wal_path(&path);
    if let Ok(meta) = std::fs::metadata(&wal)
        && meta.len() > health.sqlite_wal_bytes
    {
        out.push(
            Finding::new(
                "sqlite-wal-large",
                Severity::Warning,
                format!(
                    "the write-ahead log {} is {} bytes, over the limit of {} bytes: something keeps it \
                         from being checkpointed",
                    wal.display(),
                    meta.len(),
                    health.sqlite_wal_bytes
                ),
                "look for a process that holds a read transaction open on the database (a long \
                     export, a stuck sqlite3 shell); once it ends the next checkpoint shrinks the log"
                    .into(),
            )
            .count(meta.len()),
        );
    }
    out
}

/// The write-ahead log beside a database file: its name with `-wal` appended.
fn wal_path(db: &Path) -> PathBuf {
    let mut name = db.as_os_str().to_owned();
    name.push("-wal");
    PathBuf::from(name)
}

/// The kind of network file system the database's folder is on, if it is on one.
#[cfg(target_os = "linux")]
fn network_file_system(db: &Path) -> Option<&'static str> {
    use std::os::unix::ffi::OsStrExt;
    // The folder, which exists even before the first write creates the file.
    let dir = db
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let c_path = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    let mut stat: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c_path` is a NUL-terminated path and `stat` a buffer of the type statfs fills.
    if unsafe { libc::statfs(c_path.as_ptr(), &mut stat) } != 0 {
        return None;
    }
    // Magic numbers are 32 bits; where `f_type` is a signed 32-bit field the cast sign-extends.
    network_fs_name(stat.f_type as u64 & 0xFFFF_FFFF)
}

/// Elsewhere the file system's kind is not read.
#[cfg(not(target_os = "linux"))]
fn network_file_system(_db: &Path) -> Option<&'static str> {
    None
}

/// The name of a network file system by its `statfs` magic number (linux/magic.h). FUSE is not
/// among them: it is as often local (an encrypted home, a container's overlay) as remote.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn network_fs_name(magic: u64) -> Option<&'static str> {
    Some(match magic {
        0x6969 => "NFS",
        0x517B => "SMB",
        0xFE53_4D42 => "SMB2",
        0xFF53_4D42 => "CIFS",
        0x5346_414F => "AFS",
        0x7375_7245 => "Coda",
        0x564C => "NCP",
        0x0102_1997 => "9P",
        0x00C3_6400 => "CephFS",
        0x0BD0_0BD0 => "Lustre",
        0x6B41_4653 => "kAFS",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn network_file_systems_are_named_by_their_magic_number() {
        assert_eq!(network_fs_name(0x6969), Some("NFS"));
        assert_eq!(network_fs_name(0xFF53_4D42), Some("CIFS"));
        assert_eq!(network_fs_name(0xFE53_4D42), Some("SMB2"));
        assert_eq!(network_fs_name(0x517B), Some("SMB"));
        // ext4, tmpfs, overlayfs, FUSE
        for local in [0xEF53, 0x0102_1994, 0x794C_7630, 0x6573_5546] {
            assert_eq!(network_fs_name(local), None, "{local:#x}");
        }
    }

    #[test]
    fn the_log_sits_beside_the_database() {
        assert_eq!(wal_path(Path::new("/d/jobs.db")), PathBuf::from("/d/jobs.db-wal"));
    }

    #[test]
    fn a_local_database_with_a_small_log_is_healthy() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("jobs.db");
        std::fs::write(&db, b"").unwrap();
        std::fs::write(wal_path(&db), vec![0u8; 4096]).unwrap();
        assert_eq!(findings(&db, &Health::default()), []);
        let strict = Health {
            sqlite_wal_bytes: 1024,
            ..Health::default()
        };
        let found = findings(&db, &strict);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].code, "sqlite-wal-large");
        assert_eq!(found[0].count, Some(4096));
    }
}
