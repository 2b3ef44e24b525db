#!/usr/bin/env php
<?php
// A handler that does nothing and succeeds: what the kit itself costs per job, for benchmarks.

require __DIR__ . '/jobq_handler.php';

Jobq\run(fn (array $job) => null);
