
using namespace System.Management.Automation
using namespace System.Management.Automation.Language

Register-ArgumentCompleter -Native -CommandName 'jobq' -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)

    $commandElements = $commandAst.CommandElements
    $command = @(
        'jobq'
        for ($i = 1; $i -lt $commandElements.Count; $i++) {
            $element = $commandElements[$i]
            if ($element -isnot [StringConstantExpressionAst] -or
                $element.StringConstantType -ne [StringConstantType]::BareWord -or
                $element.Value.StartsWith('-') -or
                $element.Value -eq $wordToComplete) {
                break
        }
        $element.Value
    }) -join ';'

    $completions = @(switch ($command) {
        'jobq' {
            [CompletionResult]::new('--url', '--url', [CompletionResultType]::ParameterName, 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file (TOML) [default: ./jobq.toml, then the user config directory]')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('init', 'init', [CompletionResultType]::ParameterValue, 'Write a commented jobq.toml here to start from')
            [CompletionResult]::new('enqueue', 'enqueue', [CompletionResultType]::ParameterValue, 'Put a job (or a file of jobs) on a queue')
            [CompletionResult]::new('flow', 'flow', [CompletionResultType]::ParameterValue, 'Enqueue a graph of jobs that wait for each other, all or none, from a JSON document')
            [CompletionResult]::new('batch', 'batch', [CompletionResultType]::ParameterValue, 'Enqueue a batch of jobs and a callback that runs once all of them have ended; show a batch')
            [CompletionResult]::new('worker', 'worker', [CompletionResultType]::ParameterValue, 'Run jobs: claim, run handlers, retry, heartbeat, rescue')
            [CompletionResult]::new('stats', 'stats', [CompletionResultType]::ParameterValue, 'Counts by queue and status')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List jobs, newest first')
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'Show one job in full: payload, meta, errors, times')
            [CompletionResult]::new('wait', 'wait', [CompletionResultType]::ParameterValue, 'Wait for a job to finish, with a progress bar; the exit code tells the outcome')
            [CompletionResult]::new('cancel', 'cancel', [CompletionResultType]::ParameterValue, 'Cancel pending, running or waiting jobs')
            [CompletionResult]::new('resolve', 'resolve', [CompletionResultType]::ParameterValue, 'Finish a waiting job from outside: succeed, fail, retry or discard it')
            [CompletionResult]::new('retry', 'retry', [CompletionResultType]::ParameterValue, 'Put finished jobs of any outcome back on their queue (attempts reset, errors kept)')
            [CompletionResult]::new('delete', 'delete', [CompletionResultType]::ParameterValue, 'Delete jobs for good, by id or by filter')
            [CompletionResult]::new('replay-dead', 'replay-dead', [CompletionResultType]::ParameterValue, 'Put dead jobs back on their queue (attempts reset, errors kept)')
            [CompletionResult]::new('replay', 'replay', [CompletionResultType]::ParameterValue, 'Put dead jobs back on their queue (attempts reset, errors kept)')
            [CompletionResult]::new('cleanup', 'cleanup', [CompletionResultType]::ParameterValue, 'Delete finished jobs')
            [CompletionResult]::new('export', 'export', [CompletionResultType]::ParameterValue, 'Write every job that matches, whole (state included), as NDJSON for `import`')
            [CompletionResult]::new('import', 'import', [CompletionResultType]::ParameterValue, 'Restore jobs from `export` exactly (same ids, statuses, attempts, histories, times)')
            [CompletionResult]::new('copy', 'copy', [CompletionResultType]::ParameterValue, 'Copy (or move) every job that matches, whole, to another store')
            [CompletionResult]::new('bridge', 'bridge', [CompletionResultType]::ParameterValue, 'Turn the messages of a RabbitMQ queue or a Kafka topic into jobs, acknowledging each once stored')
            [CompletionResult]::new('workers', 'workers', [CompletionResultType]::ParameterValue, 'List the workers that are running')
            [CompletionResult]::new('queues', 'queues', [CompletionResultType]::ParameterValue, 'Each queue with its counts, pauses and limits; each type with a limit or a block')
            [CompletionResult]::new('pause', 'pause', [CompletionResultType]::ParameterValue, 'Stop starting a queue''s jobs (or one type''s) on every worker; enqueueing goes on')
            [CompletionResult]::new('resume', 'resume', [CompletionResultType]::ParameterValue, 'Start a paused queue''s (or type''s) jobs again')
            [CompletionResult]::new('schedules', 'schedules', [CompletionResultType]::ParameterValue, 'Show, trigger, pause and resume the configured schedules')
            [CompletionResult]::new('emit', 'emit', [CompletionResultType]::ParameterValue, 'Emit an event: enqueue the jobs the config subscribes to it, all or none')
            [CompletionResult]::new('serve', 'serve', [CompletionResultType]::ParameterValue, 'Serve the HTTP admin API, /metrics and /healthz')
            [CompletionResult]::new('inbox', 'inbox', [CompletionResultType]::ParameterValue, 'List the Redis inbox items that could not become jobs')
            [CompletionResult]::new('migrate', 'migrate', [CompletionResultType]::ParameterValue, 'Create or upgrade the store''s schema')
            [CompletionResult]::new('doctor', 'doctor', [CompletionResultType]::ParameterValue, 'Find what is wrong with the store and its jobs, and what to do about it')
            [CompletionResult]::new('autoscale', 'autoscale', [CompletionResultType]::ParameterValue, 'Work out how many workers a queue needs and hand the number to a program, or print it')
            [CompletionResult]::new('bench', 'bench', [CompletionResultType]::ParameterValue, 'Measure this store''s throughput and latency on a throwaway queue')
            [CompletionResult]::new('completions', 'completions', [CompletionResultType]::ParameterValue, 'Print shell completions')
            [CompletionResult]::new('man', 'man', [CompletionResultType]::ParameterValue, 'Print man pages (roff) into a folder, or jobq(1) on stdout')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'jobq;init' {
            [CompletionResult]::new('--url', '--url', [CompletionResultType]::ParameterName, 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file (TOML) [default: ./jobq.toml, then the user config directory]')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--force', '--force', [CompletionResultType]::ParameterName, 'Overwrite an existing jobq.toml')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'jobq;enqueue' {
            [CompletionResult]::new('--queue', '--queue', [CompletionResultType]::ParameterName, 'Queue [default: default]')
            [CompletionResult]::new('--priority', '--priority', [CompletionResultType]::ParameterName, 'Priority; smaller runs first [default: 0]')
            [CompletionResult]::new('--delay', '--delay', [CompletionResultType]::ParameterName, 'Run no sooner than this from now, e.g. 30s, 10m, 2h')
            [CompletionResult]::new('--at', '--at', [CompletionResultType]::ParameterName, 'Run no sooner than this time (RFC 3339 or Unix seconds)')
            [CompletionResult]::new('--max-attempts', '--max-attempts', [CompletionResultType]::ParameterName, 'Runs allowed, the first included [default: 5, or [retry] max_attempts]')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Time-out for each run of this job, overriding its handler''s, e.g. 30s')
            [CompletionResult]::new('--expires-in', '--expires-in', [CompletionResultType]::ParameterName, 'Never start the job once this long has passed, e.g. 10m: it ends expired instead [default: its type''s expires_in, or never]')
            [CompletionResult]::new('--expires-at', '--expires-at', [CompletionResultType]::ParameterName, 'Never start the job at or after this time (RFC 3339 or Unix seconds): it ends expired instead')
            [CompletionResult]::new('--meta', '--meta', [CompletionResultType]::ParameterName, 'Meta entry (repeatable), e.g. --meta tenantId=42')
            [CompletionResult]::new('--unique-key', '--unique-key', [CompletionResultType]::ParameterName, 'While a live job with this key is in the queue, return it instead of adding another')
            [CompletionResult]::new('--unique-mode', '--unique-mode', [CompletionResultType]::ParameterName, 'What to do when a live job holds the unique key: coalesce (return it), replace (update it if it has not started), keep-last (replace, or wait behind it while it runs), cancel-running (keep-last, and cancel it while it runs), debounce or throttle (each with its window) [default: its type''s unique_mode, or coalesce]')
            [CompletionResult]::new('--debounce', '--debounce', [CompletionResultType]::ParameterName, 'Debounce: replace the holder and put its run off to this long from now, e.g. 30s (implies --unique-mode debounce)')
            [CompletionResult]::new('--unique-running', '--unique-running', [CompletionResultType]::ParameterName, 'With --unique-mode replace or --debounce: what happens while the key''s holder runs: coalesce (the default: the new job is dropped) or queue-behind (it waits for the running job to end; replace with queue-behind is keep-last)')
            [CompletionResult]::new('--max-wait', '--max-wait', [CompletionResultType]::ParameterName, 'With --debounce: never put a job off longer than this from its first enqueue, e.g. 5m')
            [CompletionResult]::new('--throttle', '--throttle', [CompletionResultType]::ParameterName, 'Throttle: hold the key this long after its job was created, finished or not, e.g. 1m; an enqueue in that window is dropped (implies --unique-mode throttle)')
            [CompletionResult]::new('--id', '--id', [CompletionResultType]::ParameterName, 'Job id [default: a new UUIDv7]')
            [CompletionResult]::new('--after', '--after', [CompletionResultType]::ParameterName, 'Run after job ID has ended, and by RULE how: success (the default: cancelled if it ends otherwise), finish (however it ends) or failure (only if it ends dead or discarded); repeatable')
            [CompletionResult]::new('--join', '--join', [CompletionResultType]::ParameterName, 'With several --after: all (run once every one is met, the default) or any (run at the first met; cancelled only once every one has broken)')
            [CompletionResult]::new('--file', '--file', [CompletionResultType]::ParameterName, 'Enqueue every line of an NDJSON file (- for stdin) in bulk')
            [CompletionResult]::new('--type', '--type', [CompletionResultType]::ParameterName, 'With --file: the type given to lines that are not jobq envelopes (their whole value becomes the payload)')
            [CompletionResult]::new('--url', '--url', [CompletionResultType]::ParameterName, 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file (TOML) [default: ./jobq.toml, then the user config directory]')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--wait', '--wait', [CompletionResultType]::ParameterName, 'Wait for the job to finish; the exit code tells how (0 succeeded, 4 dead, 5 cancelled, 6 discarded, 7 expired)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'jobq;flow' {
            [CompletionResult]::new('--url', '--url', [CompletionResultType]::ParameterName, 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file (TOML) [default: ./jobq.toml, then the user config directory]')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'jobq;batch' {
            [CompletionResult]::new('--file', '--file', [CompletionResultType]::ParameterName, 'The members: one job JSON per line, or - for stdin')
            [CompletionResult]::new('--then', '--then', [CompletionResultType]::ParameterName, 'The callback''s type: it runs once every member has ended, however it ended')
            [CompletionResult]::new('--then-payload', '--then-payload', [CompletionResultType]::ParameterName, 'The callback''s payload: JSON, @FILE or - for stdin (default {})')
            [CompletionResult]::new('--on-failure', '--on-failure', [CompletionResultType]::ParameterName, 'A job that runs once, at the first member that ends dead or discarded')
            [CompletionResult]::new('--on-failure-payload', '--on-failure-payload', [CompletionResultType]::ParameterName, 'The on-failure job''s payload: JSON, @FILE or - for stdin (default {})')
            [CompletionResult]::new('--queue', '--queue', [CompletionResultType]::ParameterName, 'The queue of the callback and the on-failure job, and of members that name none')
            [CompletionResult]::new('--id', '--id', [CompletionResultType]::ParameterName, 'The batch''s id (the callback''s); a new one by default')
            [CompletionResult]::new('--url', '--url', [CompletionResultType]::ParameterName, 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file (TOML) [default: ./jobq.toml, then the user config directory]')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'Where a batch stands: its members counted by status, and its callback''s status')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'jobq;batch;show' {
            [CompletionResult]::new('--url', '--url', [CompletionResultType]::ParameterName, 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file (TOML) [default: ./jobq.toml, then the user config directory]')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'jobq;batch;help' {
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'Where a batch stands: its members counted by status, and its callback''s status')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'jobq;batch;help;show' {
            break
        }
        'jobq;batch;help;help' {
            break
        }
        'jobq;worker' {
            [CompletionResult]::new('--queue', '--queue', [CompletionResultType]::ParameterName, 'Queue to take jobs from (repeatable, or comma-separated) [default: [worker] queues, or default]')
            [CompletionResult]::new('-c', '-c', [CompletionResultType]::ParameterName, 'Jobs run at once [default: [worker] concurrency, or 8]')
            [CompletionResult]::new('--concurrency', '--concurrency', [CompletionResultType]::ParameterName, 'Jobs run at once [default: [worker] concurrency, or 8]')
            [CompletionResult]::new('--max-jobs', '--max-jobs', [CompletionResultType]::ParameterName, 'Exit after taking on N jobs (after finishing them)')
            [CompletionResult]::new('--max-memory', '--max-memory', [CompletionResultType]::ParameterName, 'Finish the running jobs and exit once resident memory exceeds SIZE, e.g. 512MiB or 2G')
            [CompletionResult]::new('--nice', '--nice', [CompletionResultType]::ParameterName, 'Lower the CPU priority of the worker and the programs it runs (0-19; negative needs root)')
            [CompletionResult]::new('--name', '--name', [CompletionResultType]::ParameterName, 'Name shown by `jobq workers` [default: the host name]')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'Log format: text for people, json (one object per line) for log shippers')
            [CompletionResult]::new('--kill-grace', '--kill-grace', [CompletionResultType]::ParameterName, 'Time a stopped program gets between SIGTERM and SIGKILL')
            [CompletionResult]::new('--handler', '--handler', [CompletionResultType]::ParameterName, 'A handler for TYPE (`*`: every type without its own), added to the config file''s or replacing its handler for TYPE: a program with its arguments (`./bin/send-mail --fast`), persistent:PROGRAM, builtin:NAME, an http(s):// URL, or an amqp(s):// or kafka:// target to publish to. Repeatable')
            [CompletionResult]::new('--url', '--url', [CompletionResultType]::ParameterName, 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file (TOML) [default: ./jobq.toml, then the user config directory]')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--burst', '--burst', [CompletionResultType]::ParameterName, 'Exit once no job is ready (after finishing the running ones)')
            [CompletionResult]::new('--reload-on-change', '--reload-on-change', [CompletionResultType]::ParameterName, 'Reload the config file whenever it changes on disk, as SIGHUP does')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'jobq;stats' {
            [CompletionResult]::new('--queue', '--queue', [CompletionResultType]::ParameterName, 'Only this queue (repeatable or comma-separated)')
            [CompletionResult]::new('--watch', '--watch', [CompletionResultType]::ParameterName, 'Refresh every SECS seconds until interrupted')
            [CompletionResult]::new('--url', '--url', [CompletionResultType]::ParameterName, 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file (TOML) [default: ./jobq.toml, then the user config directory]')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'jobq;list' {
            [CompletionResult]::new('--queue', '--queue', [CompletionResultType]::ParameterName, 'Only this queue (repeatable or comma-separated)')
            [CompletionResult]::new('--type', '--type', [CompletionResultType]::ParameterName, 'Only this job type (repeatable or comma-separated)')
            [CompletionResult]::new('--status', '--status', [CompletionResultType]::ParameterName, 'Only this status: blocked, pending, running, waiting, succeeded, dead, cancelled, discarded, expired (repeatable or comma-separated)')
            [CompletionResult]::new('--since', '--since', [CompletionResultType]::ParameterName, 'Created at or after: a duration ago (30m, 7d) or a time (RFC 3339)')
            [CompletionResult]::new('--until', '--until', [CompletionResultType]::ParameterName, 'Created before: a duration ago or a time')
            [CompletionResult]::new('--limit', '--limit', [CompletionResultType]::ParameterName, 'At most this many jobs')
            [CompletionResult]::new('--offset', '--offset', [CompletionResultType]::ParameterName, 'Skip this many jobs (for paging)')
            [CompletionResult]::new('--after', '--after', [CompletionResultType]::ParameterName, 'Only jobs after this one in the list: the next page after a page that ended with it (as fast however deep)')
            [CompletionResult]::new('--url', '--url', [CompletionResultType]::ParameterName, 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file (TOML) [default: ./jobq.toml, then the user config directory]')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'jobq;show' {
            [CompletionResult]::new('--url', '--url', [CompletionResultType]::ParameterName, 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file (TOML) [default: ./jobq.toml, then the user config directory]')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'jobq;wait' {
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Give up after this long, e.g. 30s or 5m (exit code 1) [default: wait as long as it takes]')
            [CompletionResult]::new('--url', '--url', [CompletionResultType]::ParameterName, 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file (TOML) [default: ./jobq.toml, then the user config directory]')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'jobq;cancel' {
            [CompletionResult]::new('--queue', '--queue', [CompletionResultType]::ParameterName, 'Cancel every live job in this queue (repeatable or comma-separated)')
            [CompletionResult]::new('--type', '--type', [CompletionResultType]::ParameterName, 'Cancel every live job of this type (repeatable or comma-separated)')
            [CompletionResult]::new('--status', '--status', [CompletionResultType]::ParameterName, 'Only jobs in this status: pending, running or waiting (repeatable or comma-separated)')
            [CompletionResult]::new('--url', '--url', [CompletionResultType]::ParameterName, 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file (TOML) [default: ./jobq.toml, then the user config directory]')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--cascade', '--cascade', [CompletionResultType]::ParameterName, 'Also cancel every job that waits for these (and those that wait for them, and so on) and has not ended, whatever its rule')
            [CompletionResult]::new('-y', '-y', [CompletionResultType]::ParameterName, 'Do not ask before cancelling by filter')
            [CompletionResult]::new('--yes', '--yes', [CompletionResultType]::ParameterName, 'Do not ask before cancelling by filter')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'jobq;resolve' {
            [CompletionResult]::new('--result', '--result', [CompletionResultType]::ParameterName, 'With --succeed: its result (JSON)')
            [CompletionResult]::new('--fail', '--fail', [CompletionResultType]::ParameterName, 'The job failed for good (dead), with this error')
            [CompletionResult]::new('--delay', '--delay', [CompletionResultType]::ParameterName, 'With --retry: not before this long from now, e.g. 30s, 10m [default: at once]')
            [CompletionResult]::new('--discard', '--discard', [CompletionResultType]::ParameterName, 'Drop the job (discarded), with an optional reason')
            [CompletionResult]::new('--url', '--url', [CompletionResultType]::ParameterName, 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file (TOML) [default: ./jobq.toml, then the user config directory]')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--succeed', '--succeed', [CompletionResultType]::ParameterName, 'The job succeeded')
            [CompletionResult]::new('--retry', '--retry', [CompletionResultType]::ParameterName, 'Run the job again (the attempt it waited in counts as used)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'jobq;retry' {
            [CompletionResult]::new('--url', '--url', [CompletionResultType]::ParameterName, 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file (TOML) [default: ./jobq.toml, then the user config directory]')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'jobq;delete' {
            [CompletionResult]::new('--queue', '--queue', [CompletionResultType]::ParameterName, 'Delete every job in this queue (repeatable or comma-separated)')
            [CompletionResult]::new('--type', '--type', [CompletionResultType]::ParameterName, 'Delete every job of this type (repeatable or comma-separated)')
            [CompletionResult]::new('--status', '--status', [CompletionResultType]::ParameterName, 'Only jobs in this status (repeatable or comma-separated)')
            [CompletionResult]::new('--older-than', '--older-than', [CompletionResultType]::ParameterName, 'Only jobs created longer ago than this, e.g. 7d, 12h')
            [CompletionResult]::new('--url', '--url', [CompletionResultType]::ParameterName, 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file (TOML) [default: ./jobq.toml, then the user config directory]')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--force', '--force', [CompletionResultType]::ParameterName, 'Delete running and waiting jobs too')
            [CompletionResult]::new('-y', '-y', [CompletionResultType]::ParameterName, 'Do not ask before deleting by filter')
            [CompletionResult]::new('--yes', '--yes', [CompletionResultType]::ParameterName, 'Do not ask before deleting by filter')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'jobq;replay-dead' {
            [CompletionResult]::new('--queue', '--queue', [CompletionResultType]::ParameterName, 'Only dead jobs of this queue (repeatable or comma-separated)')
            [CompletionResult]::new('--type', '--type', [CompletionResultType]::ParameterName, 'Only dead jobs of this type (repeatable or comma-separated)')
            [CompletionResult]::new('--id', '--id', [CompletionResultType]::ParameterName, 'Only this job (repeatable)')
            [CompletionResult]::new('--limit', '--limit', [CompletionResultType]::ParameterName, 'At most this many, oldest death first')
            [CompletionResult]::new('--url', '--url', [CompletionResultType]::ParameterName, 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file (TOML) [default: ./jobq.toml, then the user config directory]')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'Show what would be replayed without changing anything')
            [CompletionResult]::new('--cascade', '--cascade', [CompletionResultType]::ParameterName, 'Also bring back, blocked, the jobs that these jobs'' failure cancelled (and those that their cancellation cancelled, and so on), with their dependencies counted again')
            [CompletionResult]::new('--print', '--print', [CompletionResultType]::ParameterName, 'Print the replayed jobs as JSON lines on stdout')
            [CompletionResult]::new('-y', '-y', [CompletionResultType]::ParameterName, 'Do not ask before an unbounded replay (no --limit or --id)')
            [CompletionResult]::new('--yes', '--yes', [CompletionResultType]::ParameterName, 'Do not ask before an unbounded replay (no --limit or --id)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'jobq;replay' {
            [CompletionResult]::new('--queue', '--queue', [CompletionResultType]::ParameterName, 'Only dead jobs of this queue (repeatable or comma-separated)')
            [CompletionResult]::new('--type', '--type', [CompletionResultType]::ParameterName, 'Only dead jobs of this type (repeatable or comma-separated)')
            [CompletionResult]::new('--id', '--id', [CompletionResultType]::ParameterName, 'Only this job (repeatable)')
            [CompletionResult]::new('--limit', '--limit', [CompletionResultType]::ParameterName, 'At most this many, oldest death first')
            [CompletionResult]::new('--url', '--url', [CompletionResultType]::ParameterName, 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file (TOML) [default: ./jobq.toml, then the user config directory]')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'Show what would be replayed without changing anything')
            [CompletionResult]::new('--cascade', '--cascade', [CompletionResultType]::ParameterName, 'Also bring back, blocked, the jobs that these jobs'' failure cancelled (and those that their cancellation cancelled, and so on), with their dependencies counted again')
            [CompletionResult]::new('--print', '--print', [CompletionResultType]::ParameterName, 'Print the replayed jobs as JSON lines on stdout')
            [CompletionResult]::new('-y', '-y', [CompletionResultType]::ParameterName, 'Do not ask before an unbounded replay (no --limit or --id)')
            [CompletionResult]::new('--yes', '--yes', [CompletionResultType]::ParameterName, 'Do not ask before an unbounded replay (no --limit or --id)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'jobq;cleanup' {
            [CompletionResult]::new('--older-than', '--older-than', [CompletionResultType]::ParameterName, 'Only jobs that finished longer ago than this, e.g. 7d, 12h')
            [CompletionResult]::new('--status', '--status', [CompletionResultType]::ParameterName, 'Only this terminal status: succeeded, dead, cancelled, discarded, expired (repeatable or comma-separated)')
            [CompletionResult]::new('--queue', '--queue', [CompletionResultType]::ParameterName, 'Only this queue (repeatable or comma-separated)')
            [CompletionResult]::new('--type', '--type', [CompletionResultType]::ParameterName, 'Only this job type (repeatable or comma-separated)')
            [CompletionResult]::new('--keep-last', '--keep-last', [CompletionResultType]::ParameterName, 'Keep the newest N finished jobs of each queue and status; delete only older ones')
            [CompletionResult]::new('--url', '--url', [CompletionResultType]::ParameterName, 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file (TOML) [default: ./jobq.toml, then the user config directory]')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'Count what would be deleted without deleting')
            [CompletionResult]::new('-y', '-y', [CompletionResultType]::ParameterName, 'Do not ask before deleting without --older-than')
            [CompletionResult]::new('--yes', '--yes', [CompletionResultType]::ParameterName, 'Do not ask before deleting without --older-than')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'jobq;export' {
            [CompletionResult]::new('--queue', '--queue', [CompletionResultType]::ParameterName, 'Only this queue (repeatable or comma-separated)')
            [CompletionResult]::new('--type', '--type', [CompletionResultType]::ParameterName, 'Only this job type (repeatable or comma-separated)')
            [CompletionResult]::new('--status', '--status', [CompletionResultType]::ParameterName, 'Only this status: blocked, pending, running, waiting, succeeded, dead, cancelled, discarded, expired (repeatable or comma-separated)')
            [CompletionResult]::new('--since', '--since', [CompletionResultType]::ParameterName, 'Created at or after: a duration ago (30m, 7d) or a time (RFC 3339)')
            [CompletionResult]::new('--until', '--until', [CompletionResultType]::ParameterName, 'Created before: a duration ago or a time')
            [CompletionResult]::new('--file', '--file', [CompletionResultType]::ParameterName, 'Write to this file instead of stdout (- for stdout)')
            [CompletionResult]::new('--url', '--url', [CompletionResultType]::ParameterName, 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file (TOML) [default: ./jobq.toml, then the user config directory]')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'jobq;import' {
            [CompletionResult]::new('--on-conflict', '--on-conflict', [CompletionResultType]::ParameterName, 'A job whose id the store holds already: skip it, replace it, or import nothing')
            [CompletionResult]::new('--url', '--url', [CompletionResultType]::ParameterName, 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file (TOML) [default: ./jobq.toml, then the user config directory]')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--keep-running', '--keep-running', [CompletionResultType]::ParameterName, 'Keep running jobs running (for workers that still hold them)')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'Say what would be imported, write nothing')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'jobq;copy' {
            [CompletionResult]::new('--to', '--to', [CompletionResultType]::ParameterName, 'The store to copy into (its schema is created or upgraded first)')
            [CompletionResult]::new('--queue', '--queue', [CompletionResultType]::ParameterName, 'Only this queue (repeatable or comma-separated)')
            [CompletionResult]::new('--type', '--type', [CompletionResultType]::ParameterName, 'Only this job type (repeatable or comma-separated)')
            [CompletionResult]::new('--status', '--status', [CompletionResultType]::ParameterName, 'Only this status: blocked, pending, running, waiting, succeeded, dead, cancelled, discarded, expired (repeatable or comma-separated)')
            [CompletionResult]::new('--since', '--since', [CompletionResultType]::ParameterName, 'Created at or after: a duration ago (30m, 7d) or a time (RFC 3339)')
            [CompletionResult]::new('--until', '--until', [CompletionResultType]::ParameterName, 'Created before: a duration ago or a time')
            [CompletionResult]::new('--url', '--url', [CompletionResultType]::ParameterName, 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file (TOML) [default: ./jobq.toml, then the user config directory]')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--resume', '--resume', [CompletionResultType]::ParameterName, 'Go on after an interrupted copy: skip the jobs the target holds already')
            [CompletionResult]::new('--move', '--move', [CompletionResultType]::ParameterName, 'Delete from the source the jobs the target has committed (running jobs stay; live ones go last)')
            [CompletionResult]::new('--keep-running', '--keep-running', [CompletionResultType]::ParameterName, 'Keep running jobs running in the target')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'jobq;bridge' {
            [CompletionResult]::new('--from', '--from', [CompletionResultType]::ParameterName, 'The RabbitMQ queue to consume (amqp:// only)')
            [CompletionResult]::new('--topic', '--topic', [CompletionResultType]::ParameterName, 'The Kafka topic to consume (kafka:// only)')
            [CompletionResult]::new('--group', '--group', [CompletionResultType]::ParameterName, 'The Kafka consumer group whose offsets the bridge commits (kafka:// only)')
            [CompletionResult]::new('--to', '--to', [CompletionResultType]::ParameterName, 'The jobq queue of messages that name none [default: default]')
            [CompletionResult]::new('--type', '--type', [CompletionResultType]::ParameterName, 'The job type of messages that are not envelopes (their whole body is the payload)')
            [CompletionResult]::new('--max-in-flight', '--max-in-flight', [CompletionResultType]::ParameterName, 'Messages delivered and not yet acknowledged, at most')
            [CompletionResult]::new('--connect-timeout', '--connect-timeout', [CompletionResultType]::ParameterName, 'How long the first connection to the broker may take')
            [CompletionResult]::new('--name', '--name', [CompletionResultType]::ParameterName, 'Name shown by `jobq workers` [default: the host name]')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'Log format: text for people, json (one object per line) for log shippers')
            [CompletionResult]::new('--url', '--url', [CompletionResultType]::ParameterName, 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file (TOML) [default: ./jobq.toml, then the user config directory]')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'jobq;workers' {
            [CompletionResult]::new('--url', '--url', [CompletionResultType]::ParameterName, 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file (TOML) [default: ./jobq.toml, then the user config directory]')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'jobq;queues' {
            [CompletionResult]::new('--url', '--url', [CompletionResultType]::ParameterName, 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file (TOML) [default: ./jobq.toml, then the user config directory]')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'jobq;pause' {
            [CompletionResult]::new('--type', '--type', [CompletionResultType]::ParameterName, 'Only this job type''s jobs in the queue')
            [CompletionResult]::new('--url', '--url', [CompletionResultType]::ParameterName, 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file (TOML) [default: ./jobq.toml, then the user config directory]')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'jobq;resume' {
            [CompletionResult]::new('--type', '--type', [CompletionResultType]::ParameterName, 'Only this job type''s jobs in the queue')
            [CompletionResult]::new('--url', '--url', [CompletionResultType]::ParameterName, 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file (TOML) [default: ./jobq.toml, then the user config directory]')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'jobq;schedules' {
            [CompletionResult]::new('--url', '--url', [CompletionResultType]::ParameterName, 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file (TOML) [default: ./jobq.toml, then the user config directory]')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('next', 'next', [CompletionResultType]::ParameterValue, 'The next tick times of a schedule, computed (the store is not touched)')
            [CompletionResult]::new('trigger', 'trigger', [CompletionResultType]::ParameterValue, 'Enqueue one run now, outside the tick sequence, and print its job id')
            [CompletionResult]::new('pause', 'pause', [CompletionResultType]::ParameterValue, 'Stop every worker from enqueueing the schedule''s ticks (within a second; survives restarts)')
            [CompletionResult]::new('resume', 'resume', [CompletionResultType]::ParameterValue, 'Let the schedule''s ticks be enqueued again')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'jobq;schedules;next' {
            [CompletionResult]::new('--count', '--count', [CompletionResultType]::ParameterName, 'How many')
            [CompletionResult]::new('--url', '--url', [CompletionResultType]::ParameterName, 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file (TOML) [default: ./jobq.toml, then the user config directory]')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'jobq;schedules;trigger' {
            [CompletionResult]::new('--url', '--url', [CompletionResultType]::ParameterName, 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file (TOML) [default: ./jobq.toml, then the user config directory]')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'jobq;schedules;pause' {
            [CompletionResult]::new('--url', '--url', [CompletionResultType]::ParameterName, 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file (TOML) [default: ./jobq.toml, then the user config directory]')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'jobq;schedules;resume' {
            [CompletionResult]::new('--url', '--url', [CompletionResultType]::ParameterName, 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file (TOML) [default: ./jobq.toml, then the user config directory]')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--catch-up', '--catch-up', [CompletionResultType]::ParameterName, 'Also enqueue the ticks missed while paused, as its catch_up allows (default: skip them)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'jobq;schedules;help' {
            [CompletionResult]::new('next', 'next', [CompletionResultType]::ParameterValue, 'The next tick times of a schedule, computed (the store is not touched)')
            [CompletionResult]::new('trigger', 'trigger', [CompletionResultType]::ParameterValue, 'Enqueue one run now, outside the tick sequence, and print its job id')
            [CompletionResult]::new('pause', 'pause', [CompletionResultType]::ParameterValue, 'Stop every worker from enqueueing the schedule''s ticks (within a second; survives restarts)')
            [CompletionResult]::new('resume', 'resume', [CompletionResultType]::ParameterValue, 'Let the schedule''s ticks be enqueued again')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'jobq;schedules;help;next' {
            break
        }
        'jobq;schedules;help;trigger' {
            break
        }
        'jobq;schedules;help;pause' {
            break
        }
        'jobq;schedules;help;resume' {
            break
        }
        'jobq;schedules;help;help' {
            break
        }
        'jobq;emit' {
            [CompletionResult]::new('--id', '--id', [CompletionResultType]::ParameterName, 'The event''s id: emitting it again enqueues nothing [default: a new UUIDv7]')
            [CompletionResult]::new('--meta', '--meta', [CompletionResultType]::ParameterName, 'Meta entry every job gets (repeatable), e.g. --meta tenantId=42')
            [CompletionResult]::new('--url', '--url', [CompletionResultType]::ParameterName, 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file (TOML) [default: ./jobq.toml, then the user config directory]')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--allow-none', '--allow-none', [CompletionResultType]::ParameterName, 'Accept an event nobody subscribes to (it becomes no job)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'jobq;serve' {
            [CompletionResult]::new('--listen', '--listen', [CompletionResultType]::ParameterName, 'Address to listen on, host:port [default: [serve] listen, else 127.0.0.1:8080]')
            [CompletionResult]::new('--tls-cert', '--tls-cert', [CompletionResultType]::ParameterName, 'Serve HTTPS with this certificate chain (PEM); needs --tls-key')
            [CompletionResult]::new('--tls-key', '--tls-key', [CompletionResultType]::ParameterName, 'The private key of --tls-cert (PEM)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Longest a request may take, its body included')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'Log format')
            [CompletionResult]::new('--url', '--url', [CompletionResultType]::ParameterName, 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file (TOML) [default: ./jobq.toml, then the user config directory]')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'jobq;inbox' {
            [CompletionResult]::new('-Q', '-Q ', [CompletionResultType]::ParameterName, 'Only these queues (repeatable) [default: every queue]')
            [CompletionResult]::new('--queue', '--queue', [CompletionResultType]::ParameterName, 'Only these queues (repeatable) [default: every queue]')
            [CompletionResult]::new('--limit', '--limit', [CompletionResultType]::ParameterName, 'At most this many items per queue, oldest first')
            [CompletionResult]::new('--url', '--url', [CompletionResultType]::ParameterName, 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file (TOML) [default: ./jobq.toml, then the user config directory]')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--clear', '--clear', [CompletionResultType]::ParameterName, 'Delete the rejected items (of the queues named, or all) instead of listing them')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'jobq;migrate' {
            [CompletionResult]::new('--url', '--url', [CompletionResultType]::ParameterName, 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file (TOML) [default: ./jobq.toml, then the user config directory]')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--print', '--print', [CompletionResultType]::ParameterName, 'Print the SQL of every migration for the configured store instead of applying it')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'jobq;doctor' {
            [CompletionResult]::new('--ready-late', '--ready-late', [CompletionResultType]::ParameterName, 'Report a queue whose oldest ready job has waited this long while none of its jobs runs')
            [CompletionResult]::new('--paused-for', '--paused-for', [CompletionResultType]::ParameterName, 'Report a queue (or type) paused for longer than this')
            [CompletionResult]::new('--rescues', '--rescues', [CompletionResultType]::ParameterName, 'Report jobs rescued from lost workers more than N times')
            [CompletionResult]::new('--dead-letters', '--dead-letters', [CompletionResultType]::ParameterName, 'Report a queue holding at least N dead jobs (0: any)')
            [CompletionResult]::new('--wal-size', '--wal-size', [CompletionResultType]::ParameterName, 'SQLite: report a write-ahead log larger than this')
            [CompletionResult]::new('--dead-rows', '--dead-rows', [CompletionResultType]::ParameterName, 'PostgreSQL: report a jobq table with more dead rows than this (and over 20% of its live rows)')
            [CompletionResult]::new('--url', '--url', [CompletionResultType]::ParameterName, 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file (TOML) [default: ./jobq.toml, then the user config directory]')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'jobq;autoscale' {
            [CompletionResult]::new('--queue', '--queue', [CompletionResultType]::ParameterName, 'The queue to size workers for')
            [CompletionResult]::new('--min', '--min', [CompletionResultType]::ParameterName, 'Never fewer workers than this')
            [CompletionResult]::new('--max', '--max', [CompletionResultType]::ParameterName, 'Never more workers than this')
            [CompletionResult]::new('--target-latency', '--target-latency', [CompletionResultType]::ParameterName, 'How long a ready job may wait before it starts')
            [CompletionResult]::new('--concurrency', '--concurrency', [CompletionResultType]::ParameterName, 'Jobs one worker runs at once (its --concurrency)')
            [CompletionResult]::new('--exec', '--exec', [CompletionResultType]::ParameterName, 'Run this program with the number of workers as its argument (and in JOBQ_DESIRED_WORKERS) whenever it changes')
            [CompletionResult]::new('--cool-down', '--cool-down', [CompletionResultType]::ParameterName, 'Least time between two runs of the program')
            [CompletionResult]::new('--cooldown', '--cooldown', [CompletionResultType]::ParameterName, 'Least time between two runs of the program')
            [CompletionResult]::new('--interval', '--interval', [CompletionResultType]::ParameterName, 'Time between evaluations')
            [CompletionResult]::new('--window', '--window', [CompletionResultType]::ParameterName, 'How far back arrivals and run times are measured')
            [CompletionResult]::new('--url', '--url', [CompletionResultType]::ParameterName, 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file (TOML) [default: ./jobq.toml, then the user config directory]')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--print', '--print', [CompletionResultType]::ParameterName, 'Print the number of workers at each evaluation instead')
            [CompletionResult]::new('--once', '--once', [CompletionResultType]::ParameterName, 'Evaluate once and exit')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'jobq;bench' {
            [CompletionResult]::new('--jobs', '--jobs', [CompletionResultType]::ParameterName, 'Jobs worked off by the drain workload')
            [CompletionResult]::new('--bulk-jobs', '--bulk-jobs', [CompletionResultType]::ParameterName, 'Jobs enqueued in bulk by the enqueue workload')
            [CompletionResult]::new('--single-jobs', '--single-jobs', [CompletionResultType]::ParameterName, 'Jobs enqueued one at a time by the enqueue workload')
            [CompletionResult]::new('--producers', '--producers', [CompletionResultType]::ParameterName, 'Producers enqueueing those one-at-a-time jobs at once, each awaiting its own calls (as concurrent web requests do)')
            [CompletionResult]::new('--batch-size', '--batch-size', [CompletionResultType]::ParameterName, 'Jobs per call when enqueueing in bulk')
            [CompletionResult]::new('-c', '-c', [CompletionResultType]::ParameterName, 'Handlers each worker runs at once [default: [worker] concurrency, or 8]')
            [CompletionResult]::new('--concurrency', '--concurrency', [CompletionResultType]::ParameterName, 'Handlers each worker runs at once [default: [worker] concurrency, or 8]')
            [CompletionResult]::new('--processes', '--processes', [CompletionResultType]::ParameterName, 'Run drain and steady with N `jobq worker` processes instead of one worker inside the bench; with enqueue, N worker processes work the one-at-a-time jobs off while they are enqueued')
            [CompletionResult]::new('--exec', '--exec', [CompletionResultType]::ParameterName, 'Run each drain and steady job with this program (no arguments) instead of the builtin noop')
            [CompletionResult]::new('--persistent', '--persistent', [CompletionResultType]::ParameterName, 'Hand each drain and steady job to this program (no arguments) kept running, as a persistent handler, instead of the builtin noop')
            [CompletionResult]::new('--in-flight', '--in-flight', [CompletionResultType]::ParameterName, 'With --persistent: jobs one copy of the program holds at once')
            [CompletionResult]::new('--copies', '--copies', [CompletionResultType]::ParameterName, 'With --persistent: copies of the program each worker runs')
            [CompletionResult]::new('--rate', '--rate', [CompletionResultType]::ParameterName, 'Jobs per second enqueued by the steady workload')
            [CompletionResult]::new('--duration', '--duration', [CompletionResultType]::ParameterName, 'How long the steady workload enqueues')
            [CompletionResult]::new('--latency-jobs', '--latency-jobs', [CompletionResultType]::ParameterName, 'Jobs enqueued by the latency workload''s producer process')
            [CompletionResult]::new('--spacing', '--spacing', [CompletionResultType]::ParameterName, 'Pause between two of the latency producer''s jobs')
            [CompletionResult]::new('--unique-mode', '--unique-mode', [CompletionResultType]::ParameterName, 'Give each one-at-a-time job a unique key in this mode: coalesce, replace, debounce or throttle (with --unique-window)')
            [CompletionResult]::new('--unique-window', '--unique-window', [CompletionResultType]::ParameterName, 'The debounce or throttle window of --unique-mode')
            [CompletionResult]::new('--unique-keys', '--unique-keys', [CompletionResultType]::ParameterName, 'How many keys the one-at-a-time jobs share, job i taking key i mod N [default: one per job]')
            [CompletionResult]::new('--queue', '--queue', [CompletionResultType]::ParameterName, 'Internal: the producer''s queue')
            [CompletionResult]::new('--url', '--url', [CompletionResultType]::ParameterName, 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file (TOML) [default: ./jobq.toml, then the user config directory]')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--producer', '--producer', [CompletionResultType]::ParameterName, 'Internal: be the latency workload''s producer process')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'jobq;completions' {
            [CompletionResult]::new('--url', '--url', [CompletionResultType]::ParameterName, 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file (TOML) [default: ./jobq.toml, then the user config directory]')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'jobq;man' {
            [CompletionResult]::new('--dir', '--dir', [CompletionResultType]::ParameterName, 'Write every page (jobq.1, jobq-enqueue.1, …) into this folder instead of printing jobq(1)')
            [CompletionResult]::new('--url', '--url', [CompletionResultType]::ParameterName, 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file (TOML) [default: ./jobq.toml, then the user config directory]')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Print more (repeat for debug logs)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'jobq;help' {
            [CompletionResult]::new('init', 'init', [CompletionResultType]::ParameterValue, 'Write a commented jobq.toml here to start from')
            [CompletionResult]::new('enqueue', 'enqueue', [CompletionResultType]::ParameterValue, 'Put a job (or a file of jobs) on a queue')
            [CompletionResult]::new('flow', 'flow', [CompletionResultType]::ParameterValue, 'Enqueue a graph of jobs that wait for each other, all or none, from a JSON document')
            [CompletionResult]::new('batch', 'batch', [CompletionResultType]::ParameterValue, 'Enqueue a batch of jobs and a callback that runs once all of them have ended; show a batch')
            [CompletionResult]::new('worker', 'worker', [CompletionResultType]::ParameterValue, 'Run jobs: claim, run handlers, retry, heartbeat, rescue')
            [CompletionResult]::new('stats', 'stats', [CompletionResultType]::ParameterValue, 'Counts by queue and status')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List jobs, newest first')
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'Show one job in full: payload, meta, errors, times')
            [CompletionResult]::new('wait', 'wait', [CompletionResultType]::ParameterValue, 'Wait for a job to finish, with a progress bar; the exit code tells the outcome')
            [CompletionResult]::new('cancel', 'cancel', [CompletionResultType]::ParameterValue, 'Cancel pending, running or waiting jobs')
            [CompletionResult]::new('resolve', 'resolve', [CompletionResultType]::ParameterValue, 'Finish a waiting job from outside: succeed, fail, retry or discard it')
            [CompletionResult]::new('retry', 'retry', [CompletionResultType]::ParameterValue, 'Put finished jobs of any outcome back on their queue (attempts reset, errors kept)')
            [CompletionResult]::new('delete', 'delete', [CompletionResultType]::ParameterValue, 'Delete jobs for good, by id or by filter')
            [CompletionResult]::new('replay-dead', 'replay-dead', [CompletionResultType]::ParameterValue, 'Put dead jobs back on their queue (attempts reset, errors kept)')
            [CompletionResult]::new('cleanup', 'cleanup', [CompletionResultType]::ParameterValue, 'Delete finished jobs')
            [CompletionResult]::new('export', 'export', [CompletionResultType]::ParameterValue, 'Write every job that matches, whole (state included), as NDJSON for `import`')
            [CompletionResult]::new('import', 'import', [CompletionResultType]::ParameterValue, 'Restore jobs from `export` exactly (same ids, statuses, attempts, histories, times)')
            [CompletionResult]::new('copy', 'copy', [CompletionResultType]::ParameterValue, 'Copy (or move) every job that matches, whole, to another store')
            [CompletionResult]::new('bridge', 'bridge', [CompletionResultType]::ParameterValue, 'Turn the messages of a RabbitMQ queue or a Kafka topic into jobs, acknowledging each once stored')
            [CompletionResult]::new('workers', 'workers', [CompletionResultType]::ParameterValue, 'List the workers that are running')
            [CompletionResult]::new('queues', 'queues', [CompletionResultType]::ParameterValue, 'Each queue with its counts, pauses and limits; each type with a limit or a block')
            [CompletionResult]::new('pause', 'pause', [CompletionResultType]::ParameterValue, 'Stop starting a queue''s jobs (or one type''s) on every worker; enqueueing goes on')
            [CompletionResult]::new('resume', 'resume', [CompletionResultType]::ParameterValue, 'Start a paused queue''s (or type''s) jobs again')
            [CompletionResult]::new('schedules', 'schedules', [CompletionResultType]::ParameterValue, 'Show, trigger, pause and resume the configured schedules')
            [CompletionResult]::new('emit', 'emit', [CompletionResultType]::ParameterValue, 'Emit an event: enqueue the jobs the config subscribes to it, all or none')
            [CompletionResult]::new('serve', 'serve', [CompletionResultType]::ParameterValue, 'Serve the HTTP admin API, /metrics and /healthz')
            [CompletionResult]::new('inbox', 'inbox', [CompletionResultType]::ParameterValue, 'List the Redis inbox items that could not become jobs')
            [CompletionResult]::new('migrate', 'migrate', [CompletionResultType]::ParameterValue, 'Create or upgrade the store''s schema')
            [CompletionResult]::new('doctor', 'doctor', [CompletionResultType]::ParameterValue, 'Find what is wrong with the store and its jobs, and what to do about it')
            [CompletionResult]::new('autoscale', 'autoscale', [CompletionResultType]::ParameterValue, 'Work out how many workers a queue needs and hand the number to a program, or print it')
            [CompletionResult]::new('bench', 'bench', [CompletionResultType]::ParameterValue, 'Measure this store''s throughput and latency on a throwaway queue')
            [CompletionResult]::new('completions', 'completions', [CompletionResultType]::ParameterValue, 'Print shell completions')
            [CompletionResult]::new('man', 'man', [CompletionResultType]::ParameterValue, 'Print man pages (roff) into a folder, or jobq(1) on stdout')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'jobq;help;init' {
            break
        }
        'jobq;help;enqueue' {
            break
        }
        'jobq;help;flow' {
            break
        }
        'jobq;help;batch' {
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'Where a batch stands: its members counted by status, and its callback''s status')
            break
        }
        'jobq;help;batch;show' {
            break
        }
        'jobq;help;worker' {
            break
        }
        'jobq;help;stats' {
            break
        }
        'jobq;help;list' {
            break
        }
        'jobq;help;show' {
            break
        }
        'jobq;help;wait' {
            break
        }
        'jobq;help;cancel' {
            break
        }
        'jobq;help;resolve' {
            break
        }
        'jobq;help;retry' {
            break
        }
        'jobq;help;delete' {
            break
        }
        'jobq;help;replay-dead' {
            break
        }
        'jobq;help;cleanup' {
            break
        }
        'jobq;help;export' {
            break
        }
        'jobq;help;import' {
            break
        }
        'jobq;help;copy' {
            break
        }
        'jobq;help;bridge' {
            break
        }
        'jobq;help;workers' {
            break
        }
        'jobq;help;queues' {
            break
        }
        'jobq;help;pause' {
            break
        }
        'jobq;help;resume' {
            break
        }
        'jobq;help;schedules' {
            [CompletionResult]::new('next', 'next', [CompletionResultType]::ParameterValue, 'The next tick times of a schedule, computed (the store is not touched)')
            [CompletionResult]::new('trigger', 'trigger', [CompletionResultType]::ParameterValue, 'Enqueue one run now, outside the tick sequence, and print its job id')
            [CompletionResult]::new('pause', 'pause', [CompletionResultType]::ParameterValue, 'Stop every worker from enqueueing the schedule''s ticks (within a second; survives restarts)')
            [CompletionResult]::new('resume', 'resume', [CompletionResultType]::ParameterValue, 'Let the schedule''s ticks be enqueued again')
            break
        }
        'jobq;help;schedules;next' {
            break
        }
        'jobq;help;schedules;trigger' {
            break
        }
        'jobq;help;schedules;pause' {
            break
        }
        'jobq;help;schedules;resume' {
            break
        }
        'jobq;help;emit' {
            break
        }
        'jobq;help;serve' {
            break
        }
        'jobq;help;inbox' {
            break
        }
        'jobq;help;migrate' {
            break
        }
        'jobq;help;doctor' {
            break
        }
        'jobq;help;autoscale' {
            break
        }
        'jobq;help;bench' {
            break
        }
        'jobq;help;completions' {
            break
        }
        'jobq;help;man' {
            break
        }
        'jobq;help;help' {
            break
        }
    })

    $completions.Where{ $_.CompletionText -like "$wordToComplete*" } |
        Sort-Object -Property ListItemText
}
