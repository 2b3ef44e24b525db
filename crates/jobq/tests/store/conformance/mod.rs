//! The store conformance suite: the `Store` contract (`src/store/mod.rs`) as executable cases, run
//! against every backend.
//!
//! Each behaviour is written once, as `async fn case(store: &DynStore)` in the module of its area, and
//! named by the sentence it checks (`claim_is_exclusive`). `store_tests!` expands the whole list once per
//! backend into `conformance::<store>::<case>`, so `cargo test --test it sqlite::` runs one backend and
//! `cargo test --test it claim_` one area across all. A new backend is one line in the macro's
//! `every_store` list (`crates/test-support/src/lib.rs`) plus its fixture in `support` (River's
//! `riverdrivertest.Exercise`, ripgrep's `rgtest!`); the worker tests get it too.
//!
//! Cases pass fixed instants (`support::jobs::T0` and offsets) wherever the contract takes `now`, so
//! back-off, rescue and cleanup are exact; nothing sleeps. Every case gets a fresh, migrated store of its
//! own. A case that is not listed in the `cases` at the bottom is unused code, which `clippy -D warnings`
//! refuses, so the list cannot silently fall behind the cases.
//!
//! Where a store may answer `StoreError::Unsupported`: the inbox, on every store but Redis
//! (`inbox::only_the_redis_store_has_an_inbox` checks that answer). A backend that cannot do something
//! is listed here and its case checks for that answer, rather than skipping.

mod across_queues;
mod cancel;
mod claim;
mod cleanup;
mod delete;
mod dependencies;
mod enqueue;
mod events;
mod expiry;
mod finish_and_claim;
mod flow;
mod health;
mod import;
mod import_edges;
mod inbox;
mod lease;
mod read;
mod replay;
mod rescue;
mod resolve;
mod retry;
mod schedules;
mod schema;
mod spawn;
mod unique_modes;
mod workers;

use crate::support::store_tests;

// Each case gets a fresh, migrated store of its own, dropped (and its sandbox removed) when it returns.
store_tests! {
    run |case, fixture| case(fixture().await.store()).await;
    stores every_store
    cases {
        enqueue::enqueue_returns_created_in_input_order,
        enqueue::enqueue_stores_every_field,
        enqueue::enqueue_duplicate_id_is_left_alone,
        enqueue::enqueue_large_batch,
        enqueue::concurrent_producers_get_the_answers_of_their_own_jobs,
        enqueue::unique_key_coalesces_while_live,
        enqueue::unique_key_frees_once_terminal,
        enqueue::unique_keys_are_per_queue,
        enqueue::unique_key_coalesces_within_one_batch,
        unique_modes::replace_changes_a_holder_that_has_not_started,
        unique_modes::replace_leaves_a_started_holder_alone,
        unique_modes::debounce_puts_the_holder_off_but_never_past_its_longest_wait,
        unique_modes::throttle_holds_the_key_for_its_window_finished_or_not,
        unique_modes::every_mode_answers_duplicate_for_an_id_that_exists,
        unique_modes::a_batch_mixing_modes_is_answered_in_order,
        unique_modes::racing_producers_and_workers_never_replace_a_started_job,
        unique_modes::racing_producers_and_workers_never_debounce_a_started_job,
        unique_modes::racing_producers_take_one_throttle_window_once,
        unique_modes::keep_last_queues_one_job_behind_a_running_holder,
        unique_modes::debounce_with_queue_behind_debounces_the_job_behind_a_running_holder,
        unique_modes::racing_producers_and_workers_never_run_two_keep_last_jobs_at_once,
        unique_modes::cancel_running_asks_the_running_holder_to_stop_and_runs_after_it,
        unique_modes::racing_producers_and_workers_never_run_two_cancel_running_jobs_at_once,
        unique_modes::racing_producers_and_workers_never_run_two_queued_behind_debounces_at_once,
        dependencies::a_dependent_is_blocked_until_its_dependency_succeeds,
        dependencies::a_dependency_that_ends_against_the_rule_cancels_its_dependent,
        dependencies::each_rule_runs_its_dependent_on_the_ends_it_names,
        dependencies::a_dependent_waits_for_every_dependency,
        dependencies::a_job_that_waits_for_any_runs_at_the_first_met_edge,
        dependencies::a_job_that_waits_for_any_is_cancelled_once_every_edge_broke,
        dependencies::a_job_that_waits_for_any_resolves_ended_dependencies_at_enqueue,
        dependencies::a_dependency_on_an_unknown_job_refuses_the_whole_batch,
        dependencies::a_dependency_that_has_ended_is_resolved_at_once,
        dependencies::dependencies_may_name_jobs_of_the_same_batch,
        dependencies::a_broken_dependency_cancels_down_the_chain,
        dependencies::an_outcome_written_twice_resolves_its_edges_once,
        dependencies::blocked_jobs_are_listed_by_status,
        dependencies::a_cancelled_dependency_cancels_or_runs_its_dependents_by_rule,
        dependencies::a_blocked_job_cancelled_resolves_its_own_dependents,
        dependencies::a_deleted_dependency_counts_as_cancelled,
        dependencies::a_resolved_dependency_releases_its_dependents,
        dependencies::a_retried_dependency_keeps_its_dependents_waiting,
        dependencies::a_dependency_rescued_dead_cancels_its_dependents,
        dependencies::an_edge_met_stays_met_whatever_becomes_of_its_dependency,
        dependencies::a_job_a_replay_brings_back_keeps_what_its_cancel_met,
        across_queues::a_dependency_in_another_queue_releases_its_dependent,
        across_queues::a_dependency_in_another_queue_that_fails_cancels_down_the_chain,
        across_queues::a_dependency_in_another_queue_that_has_ended_is_resolved_at_once,
        across_queues::a_batch_may_wait_back_and_forth_between_queues,
        across_queues::cleanup_keeps_a_dependency_until_its_dependent_in_another_queue_has_ended,
        across_queues::jobs_written_again_under_the_same_ids_do_not_take_their_former_selves_ends,
        across_queues::a_replay_with_cascade_brings_back_what_the_failure_cancelled_in_other_queues,
        dependencies::an_import_that_replaces_a_dependency_hands_its_dependents_over,
        import_edges::imported_edges_wait_for_dependencies_imported_after_their_dependents,
        import_edges::an_imported_edge_to_a_job_that_ended_is_resolved_by_its_end,
        import_edges::an_imported_edge_to_a_job_the_store_lacks_breaks_as_a_deletion_does,
        import_edges::imported_edges_keep_their_states_and_join,
        dependencies::edges_name_both_sides_with_their_states_and_results,
        dependencies::a_deleted_dependent_leaves_its_dependencies_edges,
        dependencies::a_dependency_releases_whichever_jobs_wait_for_it_when_it_ends,
        dependencies::edges_of_a_job_after_many_others_read_every_end,
        dependencies::cleanup_keeps_a_finished_job_until_the_jobs_that_wait_for_it_have_ended,
        dependencies::a_blocked_job_that_waits_for_nothing_alive_is_found_stranded,
        dependencies::a_replay_with_cascade_brings_back_what_the_failure_cancelled,
        spawn::children_are_written_with_the_outcome_and_only_under_its_lease,
        spawn::a_child_whose_id_is_taken_is_not_written_again,
        spawn::an_await_blocks_the_job_until_its_children_have_ended,
        spawn::an_await_of_children_that_have_ended_runs_the_job_again_at_once,
        spawn::a_child_may_go_to_another_queue_where_the_store_allows_it,
        spawn::a_stale_outcome_beside_the_current_one_writes_no_child,
        spawn::children_may_wait_for_their_siblings_and_the_parent_awaits_them_all,
        claim::claim_orders_by_priority_then_run_at,
        claim::claim_ignores_future_run_at,
        claim::claim_respects_limit,
        claim::claim_only_from_named_queues,
        claim::claim_skips_excluded_types,
        claim::claim_sets_running_attempt_worker_and_times,
        claim::claim_is_exclusive,
        flow::paused_queue_starts_nothing_until_resumed,
        flow::paused_type_holds_only_its_jobs_in_that_queue,
        flow::blocks_hold_a_type_or_one_partition_until_they_run_out,
        flow::global_concurrency_counts_running_jobs_across_workers,
        flow::concurrency_per_partition_is_a_lane_per_key,
        flow::rate_bucket_allows_a_burst_then_spreads_starts,
        flow::claims_within_the_limits_count_against_them,
        flow::limited_jobs_are_passed_over_in_priority_order,
        flow::concurrent_limited_claims_never_exceed_the_limit,
        flow::recorded_limits_read_back_as_written,
        flow::snooze_gives_the_attempt_back_and_counts,
        finish_and_claim::finish_and_claim_writes_the_outcomes_then_claims,
        finish_and_claim::finish_and_claim_takes_the_slots_its_outcomes_free,
        finish_and_claim::finish_and_claim_keeps_a_lowered_limit,
        finish_and_claim::finish_and_claim_respects_partitioned_lanes,
        finish_and_claim::concurrent_finish_and_claims_never_exceed_the_limit,
        lease::heartbeat_records_time_and_progress,
        lease::heartbeat_reports_cancelled,
        lease::heartbeat_reports_lost,
        lease::finish_applies_only_to_current_lease,
        lease::finish_succeeded_records_result,
        lease::finish_records_progress_reported_with_it,
        lease::finish_retry_schedules_pending_with_error,
        lease::finish_dead_records_error,
        lease::finish_discarded_records_reason,
        lease::finish_waiting_parks_the_job,
        lease::retried_job_is_claimable_at_its_run_at_with_the_next_attempt,
        lease::error_history_is_capped,
        lease::release_does_not_use_an_attempt,
        lease::release_is_fenced_like_finish,
        lease::batches_answer_each_lease_on_its_own,
        rescue::rescue_returns_stale_jobs_with_worker_lost,
        rescue::rescue_kills_when_attempts_used_up,
        rescue::rescue_leaves_fresh_heartbeats_alone,
        rescue::rescue_respects_limit,
        rescue::concurrent_rescues_never_rescue_one_job_twice,
        cancel::cancel_pending_running_and_waiting,
        cancel::cancel_leaves_terminal_jobs_alone,
        cancel::cancel_by_filter,
        cancel::cancel_by_filter_reaches_every_job_of_a_large_queue,
        cancel::cancelled_running_job_tells_its_worker,
        cancel::cancel_answers_each_id_once_in_input_order,
        replay::replay_dead_resets_attempt_keeping_errors,
        replay::replay_dead_by_ids_queue_type_and_limit,
        replay::replay_ignores_non_dead_jobs,
        replay::replay_brings_back_one_live_job_per_unique_key,
        replay::replay_dry_run_names_exactly_the_jobs_a_replay_moves,
        expiry::a_retry_keeps_the_expiry_unless_it_brings_its_own,
        expiry::a_claim_never_starts_a_job_past_its_expiry_by_the_store_clock,
        expiry::expire_ends_unstarted_jobs_past_their_expiry_and_resolves_their_dependents,
        expiry::a_started_job_is_not_expired_and_its_retry_keeps_the_expiry,
        expiry::a_limited_claim_never_starts_a_job_past_its_expiry,
        cleanup::cleanup_touches_only_terminal_jobs_older_than_cutoff,
        cleanup::cleanup_by_status_and_queue,
        cleanup::cleanup_dry_run_counts_without_deleting,
        cleanup::cleanup_limit_bounds_one_call,
        cleanup::expired_jobs_are_cleaned_up_by_their_status,
        cleanup::cleanup_by_type_and_excluding_types,
        cleanup::cleanup_keeps_the_newest_of_each_queue_and_status,
        cleanup::a_queue_cleanup_emptied_is_found_again_after_its_next_enqueue,
        read::stats_counts_by_queue_and_status,
        read::stats_filtered_by_queue,
        read::list_filters_by_queue_type_status_and_creation_time,
        read::list_is_newest_first_with_pagination,
        read::list_pages_on_after_a_cursor_in_list_order,
        read::get_returns_none_for_unknown_id,
        workers::register_worker_upserts,
        workers::a_bridge_registers_with_its_source_and_counts,
        workers::workers_lists_the_seen_and_forgetting_removes_the_unseen,
        workers::unregister_worker_removes_it,
        schema::migrate_is_idempotent,
        schema::info_describes_the_store,
        schema::close_is_the_last_call_and_may_be_made_twice,
        schema::sql_tables_say_where_an_application_finds_the_jobs,
        inbox::only_the_redis_store_has_an_inbox,
        schedules::schedules_are_recorded_once_from_their_first_sighting,
        schedules::a_tick_is_enqueued_once_and_never_again_even_after_its_job_is_gone,
        schedules::racing_fires_enqueue_each_tick_once,
        schedules::overlap_rules_hold_ticks_back_while_the_last_job_lives,
        schedules::paused_schedules_fire_nothing_and_a_resume_may_skip_what_was_missed,
        schedules::a_tick_of_an_unrecorded_schedule_is_unknown,
        schedules::restored_schedules_read_back_as_written_and_fire_on_from_there,
        events::an_emit_enqueues_every_job_of_its_event_once,
        events::racing_emits_of_one_id_enqueue_its_jobs_once,
        events::nothing_is_expanded_when_no_event_waits,
        resolve::resolve_finishes_a_waiting_job_each_way,
        resolve::resolve_answers_not_waiting_and_changes_nothing,
        resolve::resolve_answers_each_input_in_order_as_if_one_after_another,
        resolve::resolve_with_an_attempt_applies_only_to_that_attempt,
        resolve::resolve_racing_resolves_of_one_job_apply_once,
        resolve::resolve_frees_the_unique_key_of_a_finished_job_and_keeps_a_retried_ones,
        resolve::resolve_keeps_the_error_history_capped,
        delete::delete_removes_jobs_of_every_status_but_refuses_held_ones,
        delete::delete_answers_each_input_in_order_as_if_one_after_another,
        delete::delete_forced_takes_a_running_jobs_lease_and_its_outcome_is_ignored,
        delete::delete_gives_up_the_unique_key,
        delete::delete_matching_selects_by_queue_type_status_and_creation_time,
        delete::delete_matching_deletes_in_bounded_batches,
        retry::retry_puts_every_finished_status_back_to_pending,
        retry::retry_leaves_live_and_unknown_jobs_as_they_are,
        retry::retry_leaves_a_job_whose_unique_key_a_live_job_holds,
        import::import_writes_every_status_exactly_and_in_its_place,
        import::import_skips_or_replaces_held_ids_and_a_dry_run_writes_nothing,
        import::import_leaves_out_a_live_job_whose_unique_key_a_live_job_holds,
        health::often_rescued_finds_jobs_lost_at_least_n_times,
        health::often_rescued_leaves_finished_jobs_out,
        health::queue_load_counts_arrivals_finished_runs_and_the_backlog_of_a_window,
        health::throughput_counts_finished_jobs_per_queue_bucket_and_status,
        health::health_findings_say_what_to_do,
    }
}

// SQLite opened as a one-shot command opens it reads pages of jobs and imports on connections of its
// own, outside sqlx (`src/store/sqlite/direct.rs`): the cases of both, again on such a store.
store_tests! {
    run |case, fixture| case(fixture().await.store()).await;
    stores { sqlite_one_shot => support::sqlite_one_shot_store }
    cases {
        read::list_filters_by_queue_type_status_and_creation_time,
        read::list_is_newest_first_with_pagination,
        read::list_pages_on_after_a_cursor_in_list_order,
        import::import_writes_every_status_exactly_and_in_its_place,
        import::import_skips_or_replaces_held_ids_and_a_dry_run_writes_nothing,
        import::import_leaves_out_a_live_job_whose_unique_key_a_live_job_holds,
    }
}
