//! Shared test fixtures.
