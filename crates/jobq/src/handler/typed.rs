//! A handler of one [`JobType`]: the payload decoded once, before the handler's code runs. A payload
//! that does not decode fails the job for good (a retry would read the same bytes), with an error
//! that names the type and what serde found.

use std::future::Future;
use std::marker::PhantomData;

use async_trait::async_trait;

use super::{Handler, JobContext, Outcome};
use crate::job::{Job, JobType, decode_typed};

/// The handler [`crate::worker::WorkerBuilder::handle`] makes of a closure over a [`JobType`].
pub struct TypedHandler<T, F> {
    f: F,
    payload: PhantomData<fn() -> T>,
}

impl<T, F> TypedHandler<T, F> {
    /// A handler that decodes each job's payload as `T` and calls `f` with it.
    pub fn new(f: F) -> TypedHandler<T, F> {
        TypedHandler {
            f,
            payload: PhantomData,
        }
    }
}

#[async_trait]
impl<T, F, Fut> Handler for TypedHandler<T, F>
where
    T: JobType,
    F: Fn(T, JobContext) -> Fut + Send + Sync,
    Fut: Future<Output = Outcome> + Send,
{
    async fn run(&self, job: &Job, cx: &JobContext) -> Outcome {
        match decode_typed::<T>(job.payload.get()) {
            Ok(payload) => (self.f)(payload, cx.clone()).await,
            Err(e) => Outcome::fail(e),
        }
    }
}
