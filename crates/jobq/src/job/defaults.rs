//! [`TypeDefaults`]: what a job of a type gets when its producer does not say, as a configuration
//! gives it per type (`[handlers."TYPE"]`), for every producer that reads one.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::value::RawValue;

use super::{JobSpec, KeyTemplate, UniqueMode};
use crate::input::InvalidInput;

/// What a job of one type gets when its producer does not say.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TypeDefault {
    /// Runs allowed: the type's retry policy's, so that the store's rescue and the worker agree on
    /// when a job is used up.
    pub max_attempts: Option<u32>,
    /// An expiry this long after the job is enqueued.
    pub expires_in: Option<Duration>,
    /// The unique key, made from the job's fields, of a job that names none.
    pub unique: Option<KeyTemplate>,
    /// The unique mode of a job with a unique key that names none.
    pub unique_mode: Option<UniqueMode>,
}

/// [`TypeDefault`]s by job type.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TypeDefaults(BTreeMap<String, TypeDefault>);

impl TypeDefaults {
    /// Sets the defaults of `job_type`.
    pub fn set(&mut self, job_type: impl Into<String>, defaults: TypeDefault) {
        self.0.insert(job_type.into(), defaults);
    }

    /// Fills in what `spec` leaves to its type: attempts it does not name, an expiry when it names
    /// none (neither `expires_at` nor `expires_in`), its unique mode when it has a key and names no
    /// mode, and its unique key from the type's template when it names none (its payload is `raw` when given: see [`KeyTemplate::fill`]). A template
    /// naming a field the job lacks refuses it, naming the field.
    pub fn apply(&self, spec: &mut JobSpec, raw: Option<&RawValue>) -> Result<(), InvalidInput> {
        let Some(defaults) = self.0.get(&spec.job_type) else {
            return Ok(());
        };
        spec.max_attempts = spec.max_attempts.or(defaults.max_attempts);
        if spec.expires_at.is_none() && spec.expires_in.is_none() {
            spec.expires_in = defaults.expires_in;
        }
        if let (None, Some(template)) = (&spec.unique_key, &defaults.unique) {
            spec.unique_key = Some(template.fill(spec, raw)?);
        }
        if spec.unique_key.is_some() {
            spec.unique_mode = spec.unique_mode.or(defaults.unique_mode);
        }
        Ok(())
    }
}

impl FromIterator<(String, TypeDefault)> for TypeDefaults {
    fn from_iter<I: IntoIterator<Item = (String, TypeDefault)>>(types: I) -> Self {
        TypeDefaults(types.into_iter().collect())
    }
}
