//! A handler described rather than built: [`HandlerSpec`] says what runs a job type ([`HandlerKind`])
//! and with which options. The application turns its config file and `--handler` flags into specs;
//! the worker builds each spec into a [`Handler`] at start and on a reload, and compares specs to
//! tell a changed handler from the same one described again.

use std::any::Any;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use super::{Handler, PersistentOptions};
use crate::retry::RetryPolicy;
use crate::store::Limit;

/// Snoozes a job may take before a snooze counts as a retry, unless its type says otherwise.
pub const DEFAULT_MAX_SNOOZES: u32 = 100;

/// The builtin handler names.
pub const BUILTINS: [&str; 4] = ["noop", "sleep", "echo", "fail"];

/// Where a handler's work is done (new kinds of handler may come).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum HandlerKind {
    /// Run a program per job.
    Exec {
        /// Program and arguments.
        argv: Vec<String>,
    },
    /// Keep a program running and hand it jobs as lines.
    Persistent {
        /// Program and arguments.
        argv: Vec<String>,
        /// Copies, jobs per copy, and when a copy is replaced.
        options: PersistentOptions,
    },
    /// POST the envelope.
    Http {
        /// Endpoint.
        url: String,
        /// Variable holding the HMAC-SHA256 key, if signing.
        secret_env: Option<String>,
    },
    /// One of the built-in handlers.
    Builtin {
        /// `noop`, `sleep`, `echo` or `fail`.
        name: String,
    },
    /// A kind the library does not know, built by the application that described it (`jobq`'s
    /// `publish` handlers).
    Custom(CustomKind),
}

/// A handler as described, with its options resolved.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct HandlerSpec {
    /// What runs the job.
    pub kind: HandlerKind,
    /// Time-out per run.
    pub timeout: Option<Duration>,
    /// Per-type concurrency limit in one worker.
    pub concurrency: Option<u32>,
    /// Longest wait in `waiting` before the worker retries the job (or, out of attempts, kills it).
    pub wait_timeout: Option<Duration>,
    /// Retry policy for this type.
    pub retry: RetryPolicy,
    /// Cluster-wide limits on this type (`global_concurrency`, `rate`, `partition`), if any.
    pub limit: Option<Limit>,
    /// Snoozes before a snooze counts as a retry.
    pub max_snoozes: u32,
    /// The expiry a job of this type gets when its producer gives none: this long after it is
    /// enqueued (applied by the producers that read the config: `jobq enqueue`, `jobq serve`, the
    /// bridges).
    pub expires_in: Option<Duration>,
    /// Whether each retry of a job of this type gets a new expiry, `expires_in` after its run time
    /// (applied by the worker), instead of keeping the one it was enqueued with.
    pub expires_per_attempt: bool,
    /// The unique key a job of this type gets when its producer gives none, made from its fields
    /// (applied by the same producers as `expires_in`).
    pub unique: Option<crate::job::KeyTemplate>,
    /// What an enqueue of a job of this type with a unique key does when a live job holds the key,
    /// when its producer does not say (applied by the same producers as `expires_in`).
    pub unique_mode: Option<crate::job::UniqueMode>,
}

impl HandlerSpec {
    /// A spec of `kind` with no time-out, no limits, `retry` and the default snoozes.
    pub fn new(kind: HandlerKind, retry: RetryPolicy) -> HandlerSpec {
        HandlerSpec {
            kind,
            timeout: None,
            concurrency: None,
            wait_timeout: None,
            retry,
            limit: None,
            max_snoozes: DEFAULT_MAX_SNOOZES,
            expires_in: None,
            unique: None,
            unique_mode: None,
            expires_per_attempt: false,
        }
    }
}

/// Builds the handlers of a kind the library does not know. The application implements it and puts
/// it in a spec as [`HandlerKind::Custom`]; the worker calls it wherever it builds the other kinds.
pub trait HandlerFactory: Any + fmt::Debug + Send + Sync {
    /// The key a config table names the kind with (`publish`), for messages.
    fn name(&self) -> &str;

    /// Whether `other` is a factory of the same type that builds the same handler: a reload keeps a
    /// handler whose factory did not change, and builds the others again. Most implementations are
    /// `other.downcast_ref::<Self>() == Some(self)`.
    fn same_as(&self, other: &dyn Any) -> bool;

    /// Builds the handler for `job_type`, or says (naming the type) why it cannot.
    fn build(&self, job_type: &str) -> crate::Result<Arc<dyn Handler>>;
}

/// A [`HandlerFactory`] in a [`HandlerKind`], compared with [`HandlerFactory::same_as`].
#[derive(Debug, Clone)]
pub struct CustomKind(Arc<dyn HandlerFactory>);

impl CustomKind {
    /// The kind a factory builds.
    pub fn new(factory: impl HandlerFactory + 'static) -> CustomKind {
        CustomKind(Arc::new(factory))
    }

    /// The factory.
    pub fn factory(&self) -> &dyn HandlerFactory {
        &*self.0
    }
}

impl PartialEq for CustomKind {
    fn eq(&self, other: &CustomKind) -> bool {
        let other: &dyn Any = &*other.0;
        self.0.same_as(other)
    }
}

impl Eq for CustomKind {}
