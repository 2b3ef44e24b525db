//! The store conformance suite.
