//! The inbox: a list any client pushes envelopes to, which only the Redis store has. Every other store
//! answers `Unsupported` and changes nothing; Redis answers for an inbox that holds nothing rejected.
//! (What goes into an inbox and how it is ingested is `tests/it/redis.rs`'s.)

use jobq::store::{DynStore, StoreError, StoreKind};

pub(super) async fn only_the_redis_store_has_an_inbox(store: &DynStore) {
    let listed = store
        .rejected_inbox_items(&jobq::store::RejectedInbox { queues: &[], limit: 10 })
        .await;
    let cleared = store.clear_rejected_inbox_items(&["mail".to_string()]).await;
    if store.kind() == StoreKind::Redis {
        assert_eq!(listed.expect("rejected items"), []);
        assert_eq!(cleared.expect("clear"), 0);
    } else {
        for refused in [listed.map(drop), cleared.map(drop)] {
            match refused {
                Err(StoreError::Unsupported { store: kind, operation }) => {
                    assert_eq!(kind, store.kind());
                    assert_eq!(operation, "an inbox");
                }
                other => panic!("{:?} answered the inbox with {other:?}", store.kind()),
            }
        }
    }
}
