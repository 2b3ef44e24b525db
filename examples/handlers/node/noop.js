#!/usr/bin/env node
'use strict';
// A handler that does nothing and succeeds: what the kit itself costs per job, for benchmarks.

require('./jobq-handler').run(async () => undefined);
