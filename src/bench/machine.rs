//! The machine a bench ran on: CPU model, core count and load, read from `/proc` (Linux); elsewhere
//! the model is `unknown` and the load empty.

use serde::Serialize;

/// The machine a bench ran on.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Machine {
    /// CPU model name.
    pub cpu: String,
    /// Logical cores.
    pub cores: usize,
    /// Load average (1, 5, 15 minutes) when the bench started: figures taken under load say little.
    pub load_before: Vec<f64>,
    /// Load average when it ended.
    pub load_after: Vec<f64>,
}

impl Machine {
    /// Reads the machine now (`load_after` stays empty until the bench ends).
    pub fn read() -> Machine {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let (cpu, cores) = parse_cpuinfo(&cpuinfo);
        let cores = if cores > 0 {
            cores
        } else {
            std::thread::available_parallelism().map(usize::from).unwrap_or(1)
        };
        Machine {
            cpu: cpu.unwrap_or_else(|| "unknown".into()),
            cores,
            load_before: load_average(),
            load_after: Vec::new(),
        }
    }
}

/// The 1, 5 and 15 minute load averages, empty where `/proc/loadavg` does not exist.
pub fn load_average() -> Vec<f64> {
    std::fs::read_to_string("/proc/loadavg")
        .map(|text| text.split_whitespace().take(3).filter_map(|v| v.parse().ok()).collect())
        .unwrap_or_default()
}

/// The first `model name` and the number of `processor` entries.
fn parse_cpuinfo(text: &str) -> (Option<String>, usize) {
    let mut model = None;
    let mut cores = 0;
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        match key.trim() {
            "processor" => cores += 1,
            "model name" if model.is_none() => model = Some(value.trim().to_string()),
            _ => {}
        }
    }
    (model, cores)
}

/// The peak resident memory (`VmHWM`) of a process, in bytes, while it exists.
pub fn peak_rss(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line
        .trim_start_matches("VmHWM:")
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kib * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpuinfo_gives_the_model_and_the_cores() {
        let text = "processor\t: 0\nmodel name\t: AMD EPYC 7B13\nflags\t\t: fpu\n\nprocessor\t: 1\nmodel name\t: AMD EPYC 7B13\n";
        assert_eq!(parse_cpuinfo(text), (Some("AMD EPYC 7B13".to_string()), 2));
        assert_eq!(parse_cpuinfo(""), (None, 0));
    }

    #[test]
    fn this_process_has_a_peak_rss() {
        if cfg!(target_os = "linux") {
            assert!(peak_rss(std::process::id()).is_some_and(|b| b > 0));
        }
    }
}
