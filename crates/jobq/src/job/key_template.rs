//! [`KeyTemplate`]: a unique key made from the job it is for, as a type's config gives it
//! (`unique = "{type}:{meta.tenantId}:{payload.order.id}"`).

use std::fmt;
use std::str::FromStr;

use serde_json::Value;
use serde_json::value::RawValue;

use super::{JobSpec, MAX_UNIQUE_KEY_BYTES};
use crate::input::{Input, InvalidInput};

/// A unique key with fields of the job in braces: `{type}`, `{queue}`, `{meta.KEY}`, or
/// `{payload.A.B}` (object keys from the top of the payload; a string is taken as it is, a number or
/// a boolean as its JSON text). `{{` and `}}` stand for braces. A field the job lacks (or that holds
/// an object, an array or null) refuses the job, naming the field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyTemplate {
    text: String,
    parts: Vec<Part>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Text(String),
    Type,
    Queue,
    Meta(String),
    Payload(Vec<String>),
}

impl KeyTemplate {
    /// The key for `spec`; its payload is `raw` when given (a bulk line's payload kept as its text),
    /// else `spec.payload`.
    pub fn fill(&self, spec: &JobSpec, raw: Option<&RawValue>) -> Result<String, InvalidInput> {
        let missing = |field: String| {
            InvalidInput::new(
                Input::UniqueKey,
                format!("unique key {}: the job has no {field}", self.text),
            )
        };
        let parsed;
        let payload = match raw {
            Some(raw) => {
                parsed = serde_json::from_str::<Value>(raw.get()).unwrap_or(Value::Null);
                &parsed
            }
            None => &spec.payload,
        };
        let mut key = String::new();
        for part in &self.parts {
            match part {
                Part::Text(text) => key.push_str(text),
                Part::Type => key.push_str(&spec.job_type),
                Part::Queue => key.push_str(spec.queue.as_deref().unwrap_or(super::DEFAULT_QUEUE)),
                Part::Meta(name) => match spec.meta.get(name) {
                    Some(value) => key.push_str(value),
                    None => return Err(missing(format!("meta.{name}"))),
                },
                Part::Payload(path) => {
                    let field = || format!("payload.{}", path.join("."));
                    let mut at = payload;
                    for name in path {
                        at = at.get(name).ok_or_else(|| missing(field()))?;
                    }
                    match at {
                        Value::String(s) => key.push_str(s),
                        Value::Number(n) => key.push_str(&n.to_string()),
                        Value::Bool(b) => key.push_str(&b.to_string()),
                        _ => return Err(missing(format!("{} (a string, number or boolean)", field()))),
                    }
                }
            }
        }
        if key.is_empty() || key.len() > MAX_UNIQUE_KEY_BYTES {
            return Err(InvalidInput::new(
                Input::UniqueKey,
                format!(
                    "unique key {} makes a key of {} bytes (1 to {MAX_UNIQUE_KEY_BYTES})",
                    self.text,
                    key.len()
                ),
            ));
        }
        Ok(key)
    }
}

impl FromStr for KeyTemplate {
    type Err = String;

    /// Reads a template; the error is the sentence alone (the caller names the key it came from).
    fn from_str(text: &str) -> Result<Self, String> {
        let mut parts = Vec::new();
        let mut literal = String::new();
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '{' if chars.peek() == Some(&'{') => {
                    chars.next();
                    literal.push('{');
                }
                '}' if chars.peek() == Some(&'}') => {
                    chars.next();
                    literal.push('}');
                }
                '}' => return Err(format!("{text:?}: a }} without its {{ (write }}}} for a brace)")),
                '{' => {
                    let mut name = String::new();
                    loop {
                        match chars.next() {
                            Some('}') => break,
                            Some(c) => name.push(c),
                            None => return Err(format!("{text:?}: {{{name} is not closed")),
                        }
                    }
                    if !literal.is_empty() {
                        parts.push(Part::Text(std::mem::take(&mut literal)));
                    }
                    parts.push(field(text, &name)?);
                }
                c => literal.push(c),
            }
        }
        if !literal.is_empty() {
            parts.push(Part::Text(literal));
        }
        if parts.is_empty() {
            return Err("an empty unique key template".into());
        }
        Ok(KeyTemplate {
            text: text.to_string(),
            parts,
        })
    }
}

/// One `{…}` of a template.
fn field(text: &str, name: &str) -> Result<Part, String> {
    let unknown =
        || format!("{text:?}: unknown field {{{name}}} (use {{type}}, {{queue}}, {{meta.KEY}} or {{payload.PATH}})");
    match name.split_once('.') {
        None if name == "type" => Ok(Part::Type),
        None if name == "queue" => Ok(Part::Queue),
        Some(("meta", key)) if !key.is_empty() => Ok(Part::Meta(key.to_string())),
        Some(("payload", path)) if path.split('.').all(|k| !k.is_empty()) => {
            Ok(Part::Payload(path.split('.').map(str::to_string).collect()))
        }
        _ => Err(unknown()),
    }
}

impl fmt::Display for KeyTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn job() -> JobSpec {
        JobSpec::new("order.sync", json!({"order": {"id": 42, "ref": "A-7"}, "rush": true}))
            .queue("orders")
            .meta("tenantId", "t9")
    }

    #[test]
    fn a_template_takes_the_job_s_fields() {
        let t: KeyTemplate = "{type}:{meta.tenantId}:{payload.order.id}".parse().unwrap();
        assert_eq!(t.fill(&job(), None).unwrap(), "order.sync:t9:42");
        let t: KeyTemplate = "{queue}/{payload.order.ref}/{payload.rush}{{x}}".parse().unwrap();
        assert_eq!(t.fill(&job(), None).unwrap(), "orders/A-7/true{x}");
        let raw = RawValue::from_string(r#"{"order":{"id":"x1"}}"#.into()).unwrap();
        let t: KeyTemplate = "{payload.order.id}".parse().unwrap();
        assert_eq!(t.fill(&job(), Some(&raw)).unwrap(), "x1", "a bulk line's raw payload");
    }

    #[test]
    fn a_field_the_job_lacks_refuses_it_by_name() {
        for (template, field) in [
            ("{payload.accountId}", "payload.accountId"),
            ("{meta.region}", "meta.region"),
            ("{payload.order}", "payload.order (a string, number or boolean)"),
        ] {
            let t: KeyTemplate = template.parse().unwrap();
            let refused = t.fill(&job(), None).unwrap_err();
            assert_eq!(refused.input, Input::UniqueKey);
            assert!(
                refused.reason.ends_with(&format!("the job has no {field}")),
                "{refused}"
            );
        }
    }

    #[test]
    fn a_template_that_cannot_be_read_says_why() {
        for (text, says) in [
            ("{payload}", "unknown field"),
            ("{user.id}", "unknown field"),
            ("{payload.a..b}", "unknown field"),
            ("{type", "is not closed"),
            ("a}b", "without its"),
            ("", "empty"),
        ] {
            let refused = text.parse::<KeyTemplate>().unwrap_err();
            assert!(refused.contains(says), "{text:?}: {refused}");
        }
    }
}
