//! Memory sizes: reading one a person wrote (`512MiB`, `2G`), and how much a process holds.

/// Reads a size such as `512MiB`, `2G`, `100MB` or `1048576` (bytes). K, M, G, T and KiB, MiB, GiB,
/// TiB are powers of 1024; KB, MB, GB, TB powers of 1000.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let number: f64 = number
        .parse()
        .map_err(|_| format!("invalid size {t:?} (expected e.g. 512MiB, 2G, 100MB)"))?;
    let factor: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kib" => 1 << 10,
        "m" | "mib" => 1 << 20,
        "g" | "gib" => 1 << 30,
        "t" | "tib" => 1 << 40,
        "kb" => 1_000,
        "mb" => 1_000_000,
        "gb" => 1_000_000_000,
        "tb" => 1_000_000_000_000,
        other => {
            return Err(format!(
                "unknown size unit {other:?} in {t:?} (expected B, KiB, MiB, GiB, KB, MB, GB)"
            ));
        }
    };
    let bytes = number * factor as f64;
    if !bytes.is_finite() || bytes < 1.0 {
        return Err(format!("size {t:?} must be at least one byte"));
    }
    Ok(bytes as u64)
}

/// This process's resident memory in bytes (Linux; `None` elsewhere).
pub fn resident_bytes() -> Option<u64> {
    resident_bytes_in("/proc/self/statm")
}

/// The resident memory of the process `pid` in bytes (Linux; `None` elsewhere, or once it is gone).
pub fn resident_bytes_of(pid: u32) -> Option<u64> {
    resident_bytes_in(&format!("/proc/{pid}/statm"))
}

fn resident_bytes_in(statm: &str) -> Option<u64> {
    let statm = std::fs::read_to_string(statm).ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    // SAFETY: sysconf has no memory effects.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    Some(pages * u64::try_from(page).ok().filter(|p| *p > 0).unwrap_or(4096))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_in_binary_and_decimal_units() {
        assert_eq!(parse_size("512MiB"), Ok(512 << 20));
        assert_eq!(parse_size("512M"), Ok(512 << 20));
        assert_eq!(parse_size("2G"), Ok(2 << 30));
        assert_eq!(parse_size("1.5GiB"), Ok(3 << 29));
        assert_eq!(parse_size("100MB"), Ok(100_000_000));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size(" 64 kib "), Ok(64 << 10));
        assert!(parse_size("lots").is_err());
        assert!(parse_size("5 parsecs").is_err());
        assert!(parse_size("0").is_err());
    }

    #[test]
    fn a_process_resident_memory_is_read_by_pid() {
        let own = resident_bytes_of(std::process::id()).expect("/proc is readable on Linux");
        assert!(own > 1 << 20, "{own}");
        assert_eq!(resident_bytes_of(u32::MAX), None);
    }
}
