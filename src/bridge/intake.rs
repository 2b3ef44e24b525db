//! What a broker message becomes: a job, read with the leniency of `enqueue --file` (an envelope as it
//! is; anything else the payload of `--type`, or refused), or the one-line reason it cannot be one.

use jobq::error::InvalidInput;
use jobq::job::{JobSpec, Limits, NewJob, TypeDefaults};
use jobq::time::UnixMillis;

/// How a bridge turns messages into jobs.
#[derive(Debug, Clone, Default)]
pub struct Intake {
    /// The queue of messages that name none (`--to`); `default` when unset.
    pub queue: Option<String>,
    /// The type of messages that are not envelopes (`--type`); without one they are refused.
    pub default_type: Option<String>,
    /// What the configured handlers give a job of their type that does not say (attempts, expiry),
    /// as `enqueue` gives it.
    pub type_defaults: TypeDefaults,
    /// Payload size and default attempts.
    pub limits: Limits,
}

impl Intake {
    /// The job a message body stands for. `message_id` is the broker's own name for the message (an
    /// AMQP `message-id`, a Kafka topic, partition and offset): it becomes the id of a job whose
    /// envelope names none, so that the broker's redelivery of a message already stored finds its job
    /// and adds no other.
    pub fn job(&self, body: &[u8], message_id: Option<&str>, now: UnixMillis) -> Result<NewJob, String> {
        let text = std::str::from_utf8(body).map_err(|e| format!("the message is not UTF-8 text: {e}"))?;
        let text = text.trim();
        if text.is_empty() {
            return Err("the message is empty".into());
        }
        let (mut spec, raw) = JobSpec::from_json_line_raw(text, self.default_type.as_deref()).map_err(reason)?;
        if spec.id.is_none() {
            spec.id = message_id.map(str::to_owned);
        }
        spec.queue = spec.queue.or_else(|| self.queue.clone());
        self.type_defaults.apply(&mut spec, raw.as_deref()).map_err(reason)?;
        NewJob::check_with(spec, raw, now, &self.limits).map_err(reason)
    }
}

fn reason(e: InvalidInput) -> String {
    e.reason
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> UnixMillis {
        UnixMillis(1_700_000_000_000)
    }

    #[test]
    fn an_envelope_keeps_its_own_id_queue_and_type() {
        let intake = Intake {
            queue: Some("bridged".into()),
            ..Intake::default()
        };
        let body = br#"{"v":1,"jobId":"order-7","jobType":"order.ship","queue":"orders","payload":{"n":7}}"#;
        let job = intake.job(body, Some("amqp-message-9"), now()).unwrap();
        assert_eq!(job.id.as_str(), "order-7");
        assert_eq!(job.queue, "orders");
        assert_eq!(job.job_type, "order.ship");
        assert_eq!(job.payload.get(), r#"{"n":7}"#);
    }

    #[test]
    fn an_envelope_without_id_or_queue_takes_the_message_id_and_the_bridge_queue() {
        let intake = Intake {
            queue: Some("bridged".into()),
            ..Intake::default()
        };
        let job = intake.job(br#"{"v":1,"jobType":"a.b"}"#, Some("m-1"), now()).unwrap();
        assert_eq!(job.id.as_str(), "m-1");
        assert_eq!(job.queue, "bridged");
        let job = intake.job(br#"{"v":1,"jobType":"a.b"}"#, None, now()).unwrap();
        assert_eq!(job.id.as_str().len(), 36, "a fresh UUIDv7");
    }

    #[test]
    fn anything_else_is_the_payload_of_the_default_type_or_refused() {
        let mut intake = Intake::default();
        let refused = intake.job(br#"{"to":"ana"}"#, None, now()).unwrap_err();
        assert!(refused.contains("not a jobq envelope"), "{refused}");
        intake.default_type = Some("legacy.mail".into());
        let job = intake.job(br#"{"to":"ana"}"#, None, now()).unwrap();
        assert_eq!(
            (job.job_type.as_str(), job.payload.get()),
            ("legacy.mail", r#"{"to":"ana"}"#)
        );
        assert_eq!(job.queue, "default");
    }

    #[test]
    fn bodies_that_are_not_json_text_are_refused_with_a_reason() {
        let intake = Intake {
            default_type: Some("t".into()),
            ..Intake::default()
        };
        assert!(intake.job(b"\xff\xfe", None, now()).unwrap_err().contains("not UTF-8"));
        assert!(intake.job(b"  ", None, now()).unwrap_err().contains("empty"));
        assert!(intake.job(b"hello", None, now()).unwrap_err().contains("invalid JSON"));
        let too_long = "x".repeat(200);
        let refused = intake.job(b"{}", Some(&too_long), now()).unwrap_err();
        assert!(refused.contains("job id"), "{refused}");
    }

    #[test]
    fn a_job_without_attempts_or_expiry_takes_its_handlers() {
        let intake = Intake {
            type_defaults: [(
                "mail.send".to_string(),
                jobq::job::TypeDefault {
                    max_attempts: Some(9),
                    expires_in: Some(std::time::Duration::from_secs(60)),
                    unique: None,
                    unique_mode: None,
                },
            )]
            .into_iter()
            .collect(),
            ..Intake::default()
        };
        let job = intake.job(br#"{"v":1,"jobType":"mail.send"}"#, None, now()).unwrap();
        assert_eq!(job.max_attempts, 9);
        assert_eq!(job.expires_at, Some(now().plus(std::time::Duration::from_secs(60))));
    }
}
