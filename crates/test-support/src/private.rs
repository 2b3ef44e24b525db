//! What the tests that start a server of their own (to restart it without touching the shared one)
//! need: a free port, and a folder the server's own user may write when the tests run as root
//! (PostgreSQL and MariaDB refuse to run as root).

use std::process::Command;

use tempfile::TempDir;

/// A TCP port on 127.0.0.1 that nothing listens on right now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Whether the tests run as root, so a server they start must run as its own user.
pub fn running_as_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// A fresh temporary folder for a server's files, handed to `service_user` when running as root.
pub fn server_dir(prefix: &str, service_user: &str) -> TempDir {
    let dir = tempfile::Builder::new().prefix(prefix).tempdir().unwrap();
    if running_as_root() {
        let status = Command::new("chown")
            .arg(format!("{service_user}:"))
            .arg(dir.path())
            .status()
            .unwrap();
        assert!(
            status.success(),
            "chown of {} to {service_user} failed",
            dir.path().display()
        );
    }
    dir
}
