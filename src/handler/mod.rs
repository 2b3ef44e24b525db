//! Handlers: what runs a job (exec, http, builtin, Rust).
