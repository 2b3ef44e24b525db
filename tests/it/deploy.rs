//! The deployment examples of `examples/deploy/`: each parses, outwaits a graceful stop with jobq's
//! defaults (the supervisor's SIGKILL must come after `shutdown_timeout` and twice the kill grace),
//! and carries a config that jobq loads. The systemd units also go through `systemd-analyze verify`
//! where it is installed.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use jobq::handler::DEFAULT_KILL_GRACE;
use jobq::worker::WorkerSettings;
use jobq_cli::config::{Config, Overrides};
use serde_yaml_ng::Value;

fn deploy(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/deploy").join(path)
}

fn read(path: &str) -> String {
    std::fs::read_to_string(deploy(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// How long a graceful stop may take with the defaults: `shutdown_timeout`, then the kill grace for
/// stopped jobs and at most one more for persistent handlers' programs.
fn graceful_stop() -> Duration {
    WorkerSettings::default().shutdown_timeout + 2 * DEFAULT_KILL_GRACE
}

fn seconds(text: &str) -> Duration {
    jobq::time::parse_duration(text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

/// Loads a jobq config from its text, as a worker given `--config` would.
fn loads(text: &str) -> Config {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("jobq.toml");
    std::fs::write(&path, text).unwrap();
    let overrides = Overrides {
        config: Some(path),
        ..Default::default()
    };
    let env = |name: &str| (name == "JOBQ_URL").then(|| "postgres://jobq:secret@postgres:5432/jobq".to_string());
    Config::load_with(&overrides, env).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// The `[Service]` settings of a unit file, last one winning as systemd reads them.
fn service_settings(unit: &str) -> std::collections::HashMap<String, String> {
    let mut section = "";
    let mut settings = std::collections::HashMap::new();
    for line in unit.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if line.starts_with('[') {
            section = line;
        } else if section == "[Service]"
            && let Some((key, value)) = line.split_once('=')
        {
            settings.insert(key.trim().to_string(), value.trim().to_string());
        }
    }
    settings
}

#[test]
fn the_systemd_units_verify_and_outwait_a_graceful_stop() {
    let analyze = Command::new("systemd-analyze")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    for name in ["jobq-worker.service", "jobq-worker@.service"] {
        let unit = read(&format!("systemd/{name}"));
        let service = service_settings(&unit);
        assert_eq!(service.get("KillMode").map(String::as_str), Some("mixed"), "{name}");
        assert_eq!(service.get("KillSignal").map(String::as_str), Some("SIGTERM"), "{name}");
        let stop = seconds(&service["TimeoutStopSec"]);
        assert!(
            stop > graceful_stop(),
            "{name}: TimeoutStopSec {stop:?} <= {:?}",
            graceful_stop()
        );
        assert!(service["ExecStart"].contains("jobq worker"), "{name}");
        assert!(service.contains_key("Restart"), "{name}");
        if !analyze {
            eprintln!("systemd-analyze is not installed: {name} was parsed, not verified");
            continue;
        }
        // Verified as installed, with the binary this build made in place of /usr/local/bin/jobq.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name.replace("@.", "@test."));
        std::fs::write(&path, unit.replace("/usr/local/bin/jobq", env!("CARGO_BIN_EXE_jobq"))).unwrap();
        let out = Command::new("systemd-analyze")
            .args(["verify", "--man=no"])
            .arg(&path)
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success() && said.trim().is_empty(), "{name}: {said}");
    }
}

#[test]
fn compose_runs_workers_on_postgres_and_outwaits_a_graceful_stop() {
    let compose: Value = serde_yaml_ng::from_str(&read("docker-compose.yml")).unwrap();
    let services = &compose["services"];
    assert!(
        services["postgres"]["image"]
            .as_str()
            .is_some_and(|i| i.starts_with("postgres"))
    );
    let worker = &services["worker"];
    assert_eq!(worker["deploy"]["replicas"].as_u64(), Some(2), "{worker:?}");
    let stop = seconds(worker["stop_grace_period"].as_str().unwrap());
    assert!(stop > graceful_stop(), "stop_grace_period {stop:?}");
    let env = serde_yaml_ng::to_string(&worker["environment"]).unwrap();
    assert!(env.contains("JOBQ_URL") && env.contains("postgres://"), "{env}");
    assert_eq!(
        worker["depends_on"]["postgres"]["condition"].as_str(),
        Some("service_healthy")
    );
    // The config it mounts is the one beside it, and jobq loads it.
    let mounts = serde_yaml_ng::to_string(&worker["volumes"]).unwrap();
    assert!(mounts.contains("./jobq.toml:/etc/jobq/jobq.toml"), "{mounts}");
    let config = loads(&read("jobq.toml"));
    assert!(config.handlers.contains_key("hello"));
    assert!(read("Dockerfile").contains("cargo install"));
}

#[test]
fn the_kubernetes_deployment_outwaits_a_graceful_stop() {
    let text = read("kubernetes/worker.yaml");
    let docs: Vec<Value> = serde_yaml_ng::Deserializer::from_str(&text)
        .map(|d| serde::Deserialize::deserialize(d).unwrap())
        .filter(|v: &Value| !v.is_null())
        .collect();
    let kind = |k: &str| {
        docs.iter()
            .find(|d| d["kind"].as_str() == Some(k))
            .unwrap_or_else(|| panic!("no {k} in worker.yaml"))
    };
    let deployment = kind("Deployment");
    let pod = &deployment["spec"]["template"]["spec"];
    let grace = pod["terminationGracePeriodSeconds"].as_u64().unwrap();
    assert!(
        Duration::from_secs(grace) > graceful_stop(),
        "terminationGracePeriodSeconds {grace}"
    );
    let container = &pod["containers"][0];
    let args = serde_yaml_ng::to_string(&container["args"]).unwrap();
    assert!(args.contains("worker"), "{args}");
    let url = container["env"]
        .as_sequence()
        .unwrap()
        .iter()
        .find(|e| e["name"].as_str() == Some("JOBQ_URL"))
        .expect("JOBQ_URL in the container's environment");
    let secret = &url["valueFrom"]["secretKeyRef"];
    assert_eq!(secret["name"], kind("Secret")["metadata"]["name"]);
    let config_map = kind("ConfigMap");
    let config = loads(config_map["data"]["jobq.toml"].as_str().unwrap());
    assert!(config.handlers.contains_key("hello"));
}
