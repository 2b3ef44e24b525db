//! The worker runtime: claim, run, finish, heartbeat, rescue, shutdown.
