//! Memory figures for the tools that can run out of it (`explore`): this
//! process's resident set, the machine's memory, a default limit, and
//! sizes as written on the command line (`3G`, `512M`).

/// Bytes in a kB as `/proc` writes it (KiB).
const KIB: u64 = 1024;

/// This process's resident set size in bytes (`VmRSS` of
/// `/proc/self/status`); `None` where there is no `/proc`.
pub fn resident_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    kib_field(&status, "VmRSS:").map(|kib| kib * KIB)
}

/// The machine's memory in bytes from `/proc/meminfo`: `(MemTotal,
/// MemAvailable)`.
pub fn machine_bytes() -> Option<(u64, u64)> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    Some((
        kib_field(&info, "MemTotal:")? * KIB,
        kib_field(&info, "MemAvailable:")? * KIB,
    ))
}

/// The value in kB of the line starting with `name` (`VmRSS:   1234 kB`).
fn kib_field(text: &str, name: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| l.strip_prefix(name))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// The limit when none is given, for a machine with `total` bytes of which
/// `available` are available: an eighth of the machine, and never more
/// than half of what is available now (the machine may be shared). 2 GiB
/// when `/proc/meminfo` cannot be read.
pub fn default_limit(machine: Option<(u64, u64)>) -> u64 {
    match machine {
        Some((total, available)) => (total / 8).min(available / 2),
        None => 2 << 30,
    }
}

/// A size in bytes as written on the command line: a number, optionally
/// with a fraction, and a unit `K`, `M`, `G` or `T` (powers of 1024; `B`,
/// `iB` and lower case accepted): `3G`, `2.5GiB`, `512m`, `1000000`.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let value: f64 = number
        .parse()
        .map_err(|_| format!("expected a size such as 3G or 512M, found {text:?}"))?;
    let scale: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        other => {
            return Err(format!(
                "unknown unit {other:?} in {text:?}: expected K, M, G or T"
            ))
        }
    };
    let bytes = value * scale as f64;
    if !(bytes >= 1.0 && bytes < u64::MAX as f64) {
        return Err(format!("{text:?} is not a size of at least 1 byte"));
    }
    Ok(bytes as u64)
}

/// `bytes` for people: `1.25 GiB`, `310 MiB`.
pub fn human(bytes: u64) -> String {
    let b = bytes as f64;
    if b >= (1u64 << 30) as f64 {
        format!("{:.2} GiB", b / (1u64 << 30) as f64)
    } else {
        format!("{:.0} MiB", b / (1u64 << 20) as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_size("3G"), Ok(3 << 30));
        assert_eq!(parse_size("2.5GiB"), Ok(5 << 29));
        assert_eq!(parse_size("512m"), Ok(512 << 20));
        assert_eq!(parse_size("1000"), Ok(1000));
        assert!(parse_size("0").is_err());
        assert!(parse_size("lots").is_err());
        assert!(parse_size("3X").is_err());
        assert!(parse_size("").is_err());
    }

    #[test]
    fn the_default_is_a_share_of_the_machine() {
        // 24 GB, nearly all available: an eighth.
        assert_eq!(default_limit(Some((24 << 30, 23 << 30))), 3 << 30);
        // Little available: half of it.
        assert_eq!(default_limit(Some((24 << 30, 2 << 30))), 1 << 30);
        assert_eq!(default_limit(None), 2 << 30);
    }

    #[test]
    fn proc_fields_are_read() {
        let status = "Name:\tx\nVmRSS:\t  123456 kB\nThreads:\t1\n";
        assert_eq!(kib_field(status, "VmRSS:"), Some(123456));
        assert_eq!(kib_field(status, "VmHWM:"), None);
        if cfg!(target_os = "linux") {
            assert!(resident_bytes().is_some_and(|b| b > 0));
            assert!(machine_bytes().is_some_and(|(t, a)| t > 0 && a <= t));
        }
    }
}
