#!/usr/bin/env python3
"""A handler that does nothing and succeeds: what the kit itself costs per job, for benchmarks."""

from jobq_handler import run

run(lambda job: None)
