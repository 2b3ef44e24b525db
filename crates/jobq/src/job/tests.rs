//! The job model's unit tests: envelope reading, validation, the job JSON.

use std::time::Duration;

use serde_json::{Value, json};

use super::*;

const NOW: UnixMillis = UnixMillis(1_800_000_000_000);

fn valid(spec: JobSpec) -> NewJob {
    NewJob::validate(spec, NOW, &Limits::default()).unwrap()
}

#[test]
fn php_style_envelope_is_read_with_seconds() {
    let line = r#"{"v":1,"jobId":"a1","jobType":"mail.send","payload":{"to":"x@y"},"meta":{"tenantId":"t9"},"attempt":2,"maxAttempts":7,"createdAt":1700000000}"#;
    let spec = JobSpec::from_json_line(line, None).unwrap();
    assert_eq!(spec.id.as_deref(), Some("a1"));
    assert_eq!(spec.job_type, "mail.send");
    assert_eq!(spec.payload, json!({"to":"x@y"}));
    assert_eq!(spec.meta.get("tenantId").map(String::as_str), Some("t9"));
    assert_eq!(spec.max_attempts, Some(7));
    assert_eq!(spec.created_at, Some(UnixMillis(1_700_000_000_000)));
}

#[test]
fn envelope_times_accept_millis_and_rfc3339() {
    let spec = JobSpec::from_json_line(
        r#"{"v":1,"jobType":"t","runAt":"2023-11-14T22:13:20Z","createdAt":1700000000123}"#,
        None,
    )
    .unwrap();
    assert_eq!(spec.run_at, Some(UnixMillis(1_700_000_000_000)));
    assert_eq!(spec.created_at, Some(UnixMillis(1_700_000_000_123)));
}

#[test]
fn envelope_without_job_id_gets_a_uuid_v7() {
    let spec = JobSpec::from_json_line(r#"{"v":1,"jobType":"t","payload":null}"#, None).unwrap();
    assert_eq!(spec.id, None);
    let job = valid(spec);
    let uuid = uuid::Uuid::parse_str(job.id.as_str()).unwrap();
    assert_eq!(uuid.get_version_num(), 7);
}

#[test]
fn job_type_with_job_id_but_no_v_is_an_envelope() {
    let spec = JobSpec::from_json_line(r#"{"jobId":"k","jobType":"t","payload":3}"#, None).unwrap();
    assert_eq!((spec.id.as_deref(), spec.payload), (Some("k"), json!(3)));
}

#[test]
fn non_envelope_becomes_payload_of_default_type() {
    for line in [r#"{"user":5}"#, "42", r#""hello""#, "[1,2]", r#"{"jobType":"x"}"#] {
        let spec = JobSpec::from_json_line(line, Some("legacy")).unwrap();
        assert_eq!(spec.job_type, "legacy");
        assert_eq!(spec.payload, serde_json::from_str::<Value>(line).unwrap());
    }
}

#[test]
fn non_envelope_without_default_type_is_refused_with_a_hint() {
    let err = JobSpec::from_json_line(r#"{"user":5}"#, None).unwrap_err().reason;
    assert!(err.contains("--type"), "{err}");
    let err = JobSpec::from_json_line(r#"{"jobType":"x"}"#, None).unwrap_err().reason;
    assert!(err.contains("\"v\":1"), "{err}");
}

#[test]
fn bad_envelope_fields_are_named() {
    let cases = [
        (r#"{"v":2,"jobType":"t"}"#, "version"),
        (r#"{"v":1,"jobType":5}"#, "jobType"),
        (r#"{"v":1,"jobType":"t","priority":"high"}"#, "priority"),
        (r#"{"v":1,"jobType":"t","meta":{"a":{"b":1}}}"#, "meta.a"),
        (r#"{"v":1,"jobType":"t","runAt":"tomorrow"}"#, "runAt"),
        ("{not json", "invalid JSON"),
    ];
    for (line, needle) in cases {
        let err = JobSpec::from_json_line(line, None).unwrap_err().reason;
        assert!(err.contains(needle), "{line}: {err}");
    }
}

#[test]
fn meta_numbers_and_bools_become_strings() {
    let spec = JobSpec::from_json_line(r#"{"v":1,"jobType":"t","meta":{"n":5,"b":true}}"#, None).unwrap();
    assert_eq!(spec.meta.get("n").map(String::as_str), Some("5"));
    assert_eq!(spec.meta.get("b").map(String::as_str), Some("true"));
}

/// The shapes PHP's `json_encode` (and other dynamic languages) give the envelope's fields, each read
/// on purpose: an empty `meta` array is empty meta, numbers written as text are numbers, times come as
/// seconds (whole or not, as numbers or text) or RFC 3339, and a payload is kept exactly as written.
#[test]
fn envelope_fields_in_the_shapes_dynamic_languages_write_them() {
    let php = r#"{"v":1,"jobId":"p1","jobType":"mail.send","payload":[],"meta":[],"attempt":"0","maxAttempts":"7","createdAt":1733400000}"#;
    for (spec, raw) in [
        (JobSpec::from_json_line(php, None).unwrap(), None),
        JobSpec::from_json_line_raw(php, None).unwrap(),
    ] {
        assert!(spec.meta.is_empty());
        assert_eq!(spec.max_attempts, Some(7));
        assert_eq!(spec.created_at, Some(UnixMillis(1_733_400_000_000)));
        let payload = raw.map_or(spec.payload.to_string(), |raw| raw.get().to_string());
        assert_eq!(payload, "[]", "an empty payload array stays an array");
    }
    let spec = JobSpec::from_json_line(
        r#"{"v":"1","jobType":"t","priority":"-2","timeoutMs":" 3000 ","uniqueKey":42,"createdAt":1733400000.25,"runAt":"1733400060"}"#,
        None,
    )
    .unwrap();
    assert_eq!((spec.priority, spec.timeout_ms), (Some(-2), Some(3000)));
    assert_eq!(spec.unique_key.as_deref(), Some("42"));
    assert_eq!(spec.created_at, Some(UnixMillis(1_733_400_000_250)));
    assert_eq!(spec.run_at, Some(UnixMillis(1_733_400_060_000)));
    let spec = JobSpec::from_json_line(
        r#"{"v":1,"jobType":"t","runAt":"2024-12-05T12:00:00+00:00","meta":{"tenantId":7,"gone":null}}"#,
        None,
    )
    .unwrap();
    assert_eq!(spec.run_at, Some(UnixMillis(1_733_400_000_000)));
    assert_eq!(spec.meta, [("tenantId".to_string(), "7".to_string())].into());
}

#[test]
fn envelope_fields_that_stay_refused_name_themselves() {
    let cases = [
        (r#"{"v":1,"jobType":"t","meta":["a"]}"#, "meta must be an object"),
        (r#"{"v":1,"jobType":"t","meta":"x"}"#, "meta must be an object"),
        (r#"{"v":1,"jobType":"t","maxAttempts":"7.5"}"#, "maxAttempts"),
        (r#"{"v":1,"jobType":"t","priority":true}"#, "priority"),
        (
            r#"{"v":1,"jobType":"t","createdAt":"2024-12-05 12:00:00"}"#,
            "createdAt",
        ),
        (r#"{"v":"2","jobType":"t"}"#, "version"),
        (r#"{"v":1,"jobType":"t","uniqueKey":["k"]}"#, "uniqueKey"),
    ];
    for (line, needle) in cases {
        let err = JobSpec::from_json_line(line, None).unwrap_err().reason;
        assert!(err.contains(needle), "{line}: {err}");
        assert!(JobSpec::from_json_line_raw(line, None).is_err(), "{line}");
    }
}

#[test]
fn validation_fills_defaults() {
    let job = valid(JobSpec::new("t", json!({"a": [1, 2]})));
    assert_eq!(job.queue, "default");
    assert_eq!(job.priority, 0);
    assert_eq!(job.max_attempts, DEFAULT_MAX_ATTEMPTS);
    assert_eq!(job.run_at, NOW);
    assert_eq!(job.created_at, NOW);
    assert_eq!(job.payload.get(), r#"{"a":[1,2]}"#);
    let delayed = valid(JobSpec::new("t", json!(null)).delay(Duration::from_secs(30)));
    assert_eq!(delayed.run_at, UnixMillis(NOW.0 + 30_000));
}

#[test]
fn validation_refuses_bad_values() {
    let limits = Limits {
        max_payload_bytes: 10,
        ..Limits::default()
    };
    let cases: Vec<(JobSpec, &str)> = vec![
        (JobSpec::new("", json!(1)), "type must not be empty"),
        (JobSpec::new("t".repeat(129), json!(1)), "at most 128"),
        (JobSpec::new("t", json!(1)).queue("bad queue"), "invalid queue name"),
        (JobSpec::new("t", json!(1)).queue("q".repeat(65)), "invalid queue name"),
        (JobSpec::new("t", json!("0123456789")), "over the limit"),
        (JobSpec::new("t", json!(1)).id(""), "must not be empty"),
        (JobSpec::new("t", json!(1)).id("x".repeat(129)), "at most 128"),
        (JobSpec::new("t", json!(1)).max_attempts(0), "at least 1"),
        (JobSpec::new("t", json!(1)).unique_key(""), "unique key"),
    ];
    for (spec, needle) in cases {
        let err = NewJob::validate(spec.clone(), NOW, &limits).unwrap_err();
        assert!(err.contains(needle), "{spec:?}: {err}");
    }
    assert!(validate_queue("mail.high:eu-1_b").is_ok());
}

#[test]
fn job_json_round_trips_through_the_lenient_reader() {
    let new = valid(
        JobSpec::new("img.resize", json!({"w": 100}))
            .id("j1")
            .queue("media")
            .priority(-3)
            .max_attempts(9)
            .unique_key("u1")
            .timeout(Duration::from_secs(5))
            .meta("tenantId", "t1")
            .run_at(UnixMillis(1_800_000_060_000)),
    );
    let job = Job {
        id: new.id.clone(),
        queue: new.queue.clone(),
        job_type: new.job_type.clone(),
        payload: new.payload.clone(),
        meta: new.meta.clone(),
        priority: new.priority,
        status: JobStatus::Dead,
        attempt: 9,
        max_attempts: new.max_attempts,
        run_at: new.run_at,
        unique_key: new.unique_key.clone(),
        unique_mode: crate::job::UniqueMode::Coalesce,
        timeout_ms: new.timeout_ms,
        expires_at: new.expires_at,
        progress: Some(Progress {
            percent: 40,
            message: Some("half".into()),
        }),
        result: None,
        errors: vec![JobError {
            attempt: 9,
            at: NOW,
            error: "boom".into(),
        }],
        created_at: new.created_at,
        started_at: Some(NOW),
        finished_at: Some(NOW),
        heartbeat_at: None,
        worker_id: None,
        snoozes: 0,
        has_dependencies: false,
        join: Join::All,
        deps: Vec::new(),
    };
    let text = serde_json::to_string(&job).unwrap();
    assert!(
        text.starts_with(r#"{"v":1,"jobId":"j1","jobType":"img.resize","queue":"media""#),
        "{text}"
    );
    let back = valid(JobSpec::from_json_line(&text, None).unwrap());
    assert_eq!(back.id, new.id);
    assert_eq!(back.queue, new.queue);
    assert_eq!(back.payload.get(), new.payload.get());
    assert_eq!(back.meta, new.meta);
    assert_eq!(back.priority, new.priority);
    assert_eq!(back.max_attempts, new.max_attempts);
    assert_eq!(back.run_at, new.run_at);
    assert_eq!(back.unique_key, new.unique_key);
    assert_eq!(back.timeout_ms, new.timeout_ms);
    assert_eq!(back.created_at, new.created_at);
    let envelope = serde_json::to_value(job.envelope()).unwrap();
    assert_eq!(envelope["attempt"], json!(9));
    assert!(envelope.get("status").is_none());
}

#[test]
fn raw_line_reading_matches_the_general_path() {
    let lines = [
        r#"{"v":1,"jobId":"a1","jobType":"mail.send","payload":{"to":"x@y","n":[1,2]},"meta":{"tenantId":"t9"},"maxAttempts":7,"createdAt":1700000000}"#,
        r#"{"v":1,"jobType":"t","payload":{"msg":"hello world"}}"#,
        r#"{"jobId":"k","jobType":"t"}"#,
        r#"{"v":1,"jobType":"t","queue":"q1","priority":-2,"runAt":"2023-11-14T22:13:20Z","uniqueKey":"u","timeoutMs":500}"#,
        r#"{"user":5}"#,
        "42",
    ];
    for line in lines {
        let general = valid(JobSpec::from_json_line(line, Some("legacy")).unwrap());
        let (spec, raw) = JobSpec::from_json_line_raw(line, Some("legacy")).unwrap();
        let fast = NewJob::check_with(spec, raw, NOW, &Limits::default()).unwrap();
        assert_eq!(fast.payload.get(), general.payload.get(), "{line}");
        assert_eq!(
            (
                &fast.queue,
                &fast.job_type,
                &fast.meta,
                fast.priority,
                fast.max_attempts
            ),
            (
                &general.queue,
                &general.job_type,
                &general.meta,
                general.priority,
                general.max_attempts
            ),
            "{line}"
        );
        assert_eq!(
            (fast.run_at, fast.created_at, &fast.unique_key),
            (general.run_at, general.created_at, &general.unique_key)
        );
    }
    // Errors come from the general path, with its messages.
    assert!(
        JobSpec::from_json_line_raw(r#"{"v":2,"jobType":"t"}"#, None)
            .unwrap_err()
            .reason
            .contains("version")
    );
    assert!(
        JobSpec::from_json_line_raw(r#"{"v":null,"jobType":"t"}"#, None)
            .unwrap_err()
            .reason
            .contains("version")
    );
    // The raw payload counts against the size limit like any other.
    let (spec, raw) = JobSpec::from_json_line_raw(r#"{"v":1,"jobType":"t","payload":"0123456789"}"#, None).unwrap();
    let limits = Limits {
        max_payload_bytes: 10,
        ..Limits::default()
    };
    assert!(
        NewJob::check_with(spec, raw, NOW, &limits)
            .unwrap_err()
            .reason
            .contains("over the limit")
    );
}

#[test]
fn status_words_round_trip() {
    for st in JobStatus::ALL {
        assert_eq!(st.as_str().parse::<JobStatus>().unwrap(), st);
    }
    assert!("done".parse::<JobStatus>().unwrap_err().contains("unknown status"));
}

#[test]
fn whole_numbers_written_as_floats_are_read_only_within_range() {
    let spec = JobSpec::from_json_line(r#"{"v":1,"jobType":"t","timeoutMs":3e3,"priority":-2.0}"#, None).unwrap();
    assert_eq!((spec.timeout_ms, spec.priority), (Some(3000), Some(-2)));
    for line in [
        r#"{"v":1,"jobType":"t","timeoutMs":18446744073709551616}"#,
        r#"{"v":1,"jobType":"t","timeoutMs":1e30}"#,
        r#"{"v":1,"jobType":"t","priority":-1e30}"#,
    ] {
        let err = JobSpec::from_json_line(line, None).unwrap_err();
        assert!(err.reason.contains("in range"), "{line}: {err}");
    }
}

#[test]
fn a_job_that_waited_carries_its_dependencies_ends_and_a_large_result_by_its_size() {
    use super::{Edge, EdgeState};
    let mut job = super::test_job("report", "{}");
    assert!(serde_json::to_value(job.envelope()).unwrap().get("deps").is_none());
    let edge = |id: &str, result: String| Edge {
        job_id: JobId::from_stored(id.into()),
        job_type: Some("extract".into()),
        queue: Some("default".into()),
        status: Some(JobStatus::Succeeded),
        on: super::DependOn::Success,
        state: EdgeState::Met,
        result: Some(serde_json::value::RawValue::from_string(result).unwrap()),
    };
    let large = format!("\"{}\"", "x".repeat(super::DEPENDENCY_RESULT_CAP));
    job.has_dependencies = true;
    job.deps = vec![edge("a", r#"{"rows":3}"#.into()), edge("b", large.clone())];
    let envelope = serde_json::to_value(job.envelope()).unwrap();
    assert_eq!(
        envelope["deps"][0],
        json!({"jobId": "a", "jobType": "extract", "queue": "default", "status": "succeeded",
               "on": "success", "state": "met", "result": {"rows": 3}})
    );
    assert_eq!(envelope["deps"][1]["result"], Value::Null);
    assert_eq!(envelope["deps"][1]["resultBytes"], json!(large.len()));
    // The job JSON (show, list, export) is not the envelope: no `deps` there.
    assert!(serde_json::to_value(&job).unwrap().get("deps").is_none());
}
