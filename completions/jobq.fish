# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_jobq_global_optspecs
    string join \n url= config= o/output= q/quiet v/verbose h/help V/version
end

function __fish_jobq_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_jobq_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_jobq_using_subcommand
    set -l cmd (__fish_jobq_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c jobq -n "__fish_jobq_needs_command" -l url -d 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user\'s data directory]' -r
complete -c jobq -n "__fish_jobq_needs_command" -l config -d 'Config file (TOML) [default: ./jobq.toml, then the user config directory]' -r -F
complete -c jobq -n "__fish_jobq_needs_command" -s o -l output -d 'Output format' -r -f -a "table\t'Tables and sentences for people'
json\t'One JSON document'
ndjson\t'One JSON object per line (list)'
prometheus\t'Prometheus text exposition format (stats)'"
complete -c jobq -n "__fish_jobq_needs_command" -s q -l quiet -d 'Print only errors'
complete -c jobq -n "__fish_jobq_needs_command" -s v -l verbose -d 'Print more (repeat for debug logs)'
complete -c jobq -n "__fish_jobq_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c jobq -n "__fish_jobq_needs_command" -s V -l version -d 'Print version'
complete -c jobq -n "__fish_jobq_needs_command" -f -a "init" -d 'Write a commented jobq.toml here to start from'
complete -c jobq -n "__fish_jobq_needs_command" -f -a "enqueue" -d 'Put a job (or a file of jobs) on a queue'
complete -c jobq -n "__fish_jobq_needs_command" -f -a "flow" -d 'Enqueue a graph of jobs that wait for each other, all or none, from a JSON document'
complete -c jobq -n "__fish_jobq_needs_command" -f -a "batch" -d 'Enqueue a batch of jobs and a callback that runs once all of them have ended; show a batch'
complete -c jobq -n "__fish_jobq_needs_command" -f -a "worker" -d 'Run jobs: claim, run handlers, retry, heartbeat, rescue'
complete -c jobq -n "__fish_jobq_needs_command" -f -a "stats" -d 'Counts by queue and status'
complete -c jobq -n "__fish_jobq_needs_command" -f -a "list" -d 'List jobs, newest first'
complete -c jobq -n "__fish_jobq_needs_command" -f -a "show" -d 'Show one job in full: payload, meta, errors, times'
complete -c jobq -n "__fish_jobq_needs_command" -f -a "wait" -d 'Wait for a job to finish, with a progress bar; the exit code tells the outcome'
complete -c jobq -n "__fish_jobq_needs_command" -f -a "cancel" -d 'Cancel pending, running or waiting jobs'
complete -c jobq -n "__fish_jobq_needs_command" -f -a "resolve" -d 'Finish a waiting job from outside: succeed, fail, retry or discard it'
complete -c jobq -n "__fish_jobq_needs_command" -f -a "retry" -d 'Put finished jobs of any outcome back on their queue (attempts reset, errors kept)'
complete -c jobq -n "__fish_jobq_needs_command" -f -a "delete" -d 'Delete jobs for good, by id or by filter'
complete -c jobq -n "__fish_jobq_needs_command" -f -a "replay-dead" -d 'Put dead jobs back on their queue (attempts reset, errors kept)'
complete -c jobq -n "__fish_jobq_needs_command" -f -a "replay" -d 'Put dead jobs back on their queue (attempts reset, errors kept)'
complete -c jobq -n "__fish_jobq_needs_command" -f -a "cleanup" -d 'Delete finished jobs'
complete -c jobq -n "__fish_jobq_needs_command" -f -a "export" -d 'Write every job that matches, whole (state included), as NDJSON for `import`'
complete -c jobq -n "__fish_jobq_needs_command" -f -a "import" -d 'Restore jobs from `export` exactly (same ids, statuses, attempts, histories, times)'
complete -c jobq -n "__fish_jobq_needs_command" -f -a "copy" -d 'Copy (or move) every job that matches, whole, to another store'
complete -c jobq -n "__fish_jobq_needs_command" -f -a "bridge" -d 'Turn the messages of a RabbitMQ queue or a Kafka topic into jobs, acknowledging each once stored'
complete -c jobq -n "__fish_jobq_needs_command" -f -a "workers" -d 'List the workers that are running'
complete -c jobq -n "__fish_jobq_needs_command" -f -a "queues" -d 'Each queue with its counts, pauses and limits; each type with a limit or a block'
complete -c jobq -n "__fish_jobq_needs_command" -f -a "pause" -d 'Stop starting a queue\'s jobs (or one type\'s) on every worker; enqueueing goes on'
complete -c jobq -n "__fish_jobq_needs_command" -f -a "resume" -d 'Start a paused queue\'s (or type\'s) jobs again'
complete -c jobq -n "__fish_jobq_needs_command" -f -a "schedules" -d 'Show, trigger, pause and resume the configured schedules'
complete -c jobq -n "__fish_jobq_needs_command" -f -a "emit" -d 'Emit an event: enqueue the jobs the config subscribes to it, all or none'
complete -c jobq -n "__fish_jobq_needs_command" -f -a "serve" -d 'Serve the HTTP admin API, /metrics and /healthz'
complete -c jobq -n "__fish_jobq_needs_command" -f -a "inbox" -d 'List the Redis inbox items that could not become jobs'
complete -c jobq -n "__fish_jobq_needs_command" -f -a "migrate" -d 'Create or upgrade the store\'s schema'
complete -c jobq -n "__fish_jobq_needs_command" -f -a "doctor" -d 'Find what is wrong with the store and its jobs, and what to do about it'
complete -c jobq -n "__fish_jobq_needs_command" -f -a "autoscale" -d 'Work out how many workers a queue needs and hand the number to a program, or print it'
complete -c jobq -n "__fish_jobq_needs_command" -f -a "bench" -d 'Measure this store\'s throughput and latency on a throwaway queue'
complete -c jobq -n "__fish_jobq_needs_command" -f -a "completions" -d 'Print shell completions'
complete -c jobq -n "__fish_jobq_needs_command" -f -a "man" -d 'Print man pages (roff) into a folder, or jobq(1) on stdout'
complete -c jobq -n "__fish_jobq_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c jobq -n "__fish_jobq_using_subcommand init" -l url -d 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user\'s data directory]' -r
complete -c jobq -n "__fish_jobq_using_subcommand init" -l config -d 'Config file (TOML) [default: ./jobq.toml, then the user config directory]' -r -F
complete -c jobq -n "__fish_jobq_using_subcommand init" -s o -l output -d 'Output format' -r -f -a "table\t'Tables and sentences for people'
json\t'One JSON document'
ndjson\t'One JSON object per line (list)'
prometheus\t'Prometheus text exposition format (stats)'"
complete -c jobq -n "__fish_jobq_using_subcommand init" -l force -d 'Overwrite an existing jobq.toml'
complete -c jobq -n "__fish_jobq_using_subcommand init" -s q -l quiet -d 'Print only errors'
complete -c jobq -n "__fish_jobq_using_subcommand init" -s v -l verbose -d 'Print more (repeat for debug logs)'
complete -c jobq -n "__fish_jobq_using_subcommand init" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c jobq -n "__fish_jobq_using_subcommand init" -s V -l version -d 'Print version'
complete -c jobq -n "__fish_jobq_using_subcommand enqueue" -l queue -d 'Queue [default: default]' -r
complete -c jobq -n "__fish_jobq_using_subcommand enqueue" -l priority -d 'Priority; smaller runs first [default: 0]' -r
complete -c jobq -n "__fish_jobq_using_subcommand enqueue" -l delay -d 'Run no sooner than this from now, e.g. 30s, 10m, 2h' -r
complete -c jobq -n "__fish_jobq_using_subcommand enqueue" -l at -d 'Run no sooner than this time (RFC 3339 or Unix seconds)' -r
complete -c jobq -n "__fish_jobq_using_subcommand enqueue" -l max-attempts -d 'Runs allowed, the first included [default: 5, or [retry] max_attempts]' -r
complete -c jobq -n "__fish_jobq_using_subcommand enqueue" -l timeout -d 'Time-out for each run of this job, overriding its handler\'s, e.g. 30s' -r
complete -c jobq -n "__fish_jobq_using_subcommand enqueue" -l expires-in -d 'Never start the job once this long has passed, e.g. 10m: it ends expired instead [default: its type\'s expires_in, or never]' -r
complete -c jobq -n "__fish_jobq_using_subcommand enqueue" -l expires-at -d 'Never start the job at or after this time (RFC 3339 or Unix seconds): it ends expired instead' -r
complete -c jobq -n "__fish_jobq_using_subcommand enqueue" -l meta -d 'Meta entry (repeatable), e.g. --meta tenantId=42' -r
complete -c jobq -n "__fish_jobq_using_subcommand enqueue" -l unique-key -d 'While a live job with this key is in the queue, return it instead of adding another' -r
complete -c jobq -n "__fish_jobq_using_subcommand enqueue" -l unique-mode -d 'What to do when a live job holds the unique key: coalesce (return it), replace (update it if it has not started), keep-last (replace, or wait behind it while it runs), cancel-running (keep-last, and cancel it while it runs), debounce or throttle (each with its window) [default: its type\'s unique_mode, or coalesce]' -r
complete -c jobq -n "__fish_jobq_using_subcommand enqueue" -l debounce -d 'Debounce: replace the holder and put its run off to this long from now, e.g. 30s (implies --unique-mode debounce)' -r
complete -c jobq -n "__fish_jobq_using_subcommand enqueue" -l unique-running -d 'With --unique-mode replace or --debounce: what happens while the key\'s holder runs: coalesce (the default: the new job is dropped) or queue-behind (it waits for the running job to end; replace with queue-behind is keep-last)' -r
complete -c jobq -n "__fish_jobq_using_subcommand enqueue" -l max-wait -d 'With --debounce: never put a job off longer than this from its first enqueue, e.g. 5m' -r
complete -c jobq -n "__fish_jobq_using_subcommand enqueue" -l throttle -d 'Throttle: hold the key this long after its job was created, finished or not, e.g. 1m; an enqueue in that window is dropped (implies --unique-mode throttle)' -r
complete -c jobq -n "__fish_jobq_using_subcommand enqueue" -l id -d 'Job id [default: a new UUIDv7]' -r
complete -c jobq -n "__fish_jobq_using_subcommand enqueue" -l after -d 'Run after job ID has ended, and by RULE how: success (the default: cancelled if it ends otherwise), finish (however it ends) or failure (only if it ends dead or discarded); repeatable' -r
complete -c jobq -n "__fish_jobq_using_subcommand enqueue" -l join -d 'With several --after: all (run once every one is met, the default) or any (run at the first met; cancelled only once every one has broken)' -r
complete -c jobq -n "__fish_jobq_using_subcommand enqueue" -l file -d 'Enqueue every line of an NDJSON file (- for stdin) in bulk' -r -F
complete -c jobq -n "__fish_jobq_using_subcommand enqueue" -l type -d 'With --file: the type given to lines that are not jobq envelopes (their whole value becomes the payload)' -r
complete -c jobq -n "__fish_jobq_using_subcommand enqueue" -l url -d 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user\'s data directory]' -r
complete -c jobq -n "__fish_jobq_using_subcommand enqueue" -l config -d 'Config file (TOML) [default: ./jobq.toml, then the user config directory]' -r -F
complete -c jobq -n "__fish_jobq_using_subcommand enqueue" -s o -l output -d 'Output format' -r -f -a "table\t'Tables and sentences for people'
json\t'One JSON document'
ndjson\t'One JSON object per line (list)'
prometheus\t'Prometheus text exposition format (stats)'"
complete -c jobq -n "__fish_jobq_using_subcommand enqueue" -l wait -d 'Wait for the job to finish; the exit code tells how (0 succeeded, 4 dead, 5 cancelled, 6 discarded, 7 expired)'
complete -c jobq -n "__fish_jobq_using_subcommand enqueue" -s q -l quiet -d 'Print only errors'
complete -c jobq -n "__fish_jobq_using_subcommand enqueue" -s v -l verbose -d 'Print more (repeat for debug logs)'
complete -c jobq -n "__fish_jobq_using_subcommand enqueue" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c jobq -n "__fish_jobq_using_subcommand enqueue" -s V -l version -d 'Print version'
complete -c jobq -n "__fish_jobq_using_subcommand flow" -l url -d 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user\'s data directory]' -r
complete -c jobq -n "__fish_jobq_using_subcommand flow" -l config -d 'Config file (TOML) [default: ./jobq.toml, then the user config directory]' -r -F
complete -c jobq -n "__fish_jobq_using_subcommand flow" -s o -l output -d 'Output format' -r -f -a "table\t'Tables and sentences for people'
json\t'One JSON document'
ndjson\t'One JSON object per line (list)'
prometheus\t'Prometheus text exposition format (stats)'"
complete -c jobq -n "__fish_jobq_using_subcommand flow" -s q -l quiet -d 'Print only errors'
complete -c jobq -n "__fish_jobq_using_subcommand flow" -s v -l verbose -d 'Print more (repeat for debug logs)'
complete -c jobq -n "__fish_jobq_using_subcommand flow" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c jobq -n "__fish_jobq_using_subcommand flow" -s V -l version -d 'Print version'
complete -c jobq -n "__fish_jobq_using_subcommand batch; and not __fish_seen_subcommand_from show help" -l file -d 'The members: one job JSON per line, or - for stdin' -r -F
complete -c jobq -n "__fish_jobq_using_subcommand batch; and not __fish_seen_subcommand_from show help" -l then -d 'The callback\'s type: it runs once every member has ended, however it ended' -r
complete -c jobq -n "__fish_jobq_using_subcommand batch; and not __fish_seen_subcommand_from show help" -l then-payload -d 'The callback\'s payload: JSON, @FILE or - for stdin (default {})' -r
complete -c jobq -n "__fish_jobq_using_subcommand batch; and not __fish_seen_subcommand_from show help" -l on-failure -d 'A job that runs once, at the first member that ends dead or discarded' -r
complete -c jobq -n "__fish_jobq_using_subcommand batch; and not __fish_seen_subcommand_from show help" -l on-failure-payload -d 'The on-failure job\'s payload: JSON, @FILE or - for stdin (default {})' -r
complete -c jobq -n "__fish_jobq_using_subcommand batch; and not __fish_seen_subcommand_from show help" -l queue -d 'The queue of the callback and the on-failure job, and of members that name none' -r
complete -c jobq -n "__fish_jobq_using_subcommand batch; and not __fish_seen_subcommand_from show help" -l id -d 'The batch\'s id (the callback\'s); a new one by default' -r
complete -c jobq -n "__fish_jobq_using_subcommand batch; and not __fish_seen_subcommand_from show help" -l url -d 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user\'s data directory]' -r
complete -c jobq -n "__fish_jobq_using_subcommand batch; and not __fish_seen_subcommand_from show help" -l config -d 'Config file (TOML) [default: ./jobq.toml, then the user config directory]' -r -F
complete -c jobq -n "__fish_jobq_using_subcommand batch; and not __fish_seen_subcommand_from show help" -s o -l output -d 'Output format' -r -f -a "table\t'Tables and sentences for people'
json\t'One JSON document'
ndjson\t'One JSON object per line (list)'
prometheus\t'Prometheus text exposition format (stats)'"
complete -c jobq -n "__fish_jobq_using_subcommand batch; and not __fish_seen_subcommand_from show help" -s q -l quiet -d 'Print only errors'
complete -c jobq -n "__fish_jobq_using_subcommand batch; and not __fish_seen_subcommand_from show help" -s v -l verbose -d 'Print more (repeat for debug logs)'
complete -c jobq -n "__fish_jobq_using_subcommand batch; and not __fish_seen_subcommand_from show help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c jobq -n "__fish_jobq_using_subcommand batch; and not __fish_seen_subcommand_from show help" -s V -l version -d 'Print version'
complete -c jobq -n "__fish_jobq_using_subcommand batch; and not __fish_seen_subcommand_from show help" -f -a "show" -d 'Where a batch stands: its members counted by status, and its callback\'s status'
complete -c jobq -n "__fish_jobq_using_subcommand batch; and not __fish_seen_subcommand_from show help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c jobq -n "__fish_jobq_using_subcommand batch; and __fish_seen_subcommand_from show" -l url -d 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user\'s data directory]' -r
complete -c jobq -n "__fish_jobq_using_subcommand batch; and __fish_seen_subcommand_from show" -l config -d 'Config file (TOML) [default: ./jobq.toml, then the user config directory]' -r -F
complete -c jobq -n "__fish_jobq_using_subcommand batch; and __fish_seen_subcommand_from show" -s o -l output -d 'Output format' -r -f -a "table\t'Tables and sentences for people'
json\t'One JSON document'
ndjson\t'One JSON object per line (list)'
prometheus\t'Prometheus text exposition format (stats)'"
complete -c jobq -n "__fish_jobq_using_subcommand batch; and __fish_seen_subcommand_from show" -s q -l quiet -d 'Print only errors'
complete -c jobq -n "__fish_jobq_using_subcommand batch; and __fish_seen_subcommand_from show" -s v -l verbose -d 'Print more (repeat for debug logs)'
complete -c jobq -n "__fish_jobq_using_subcommand batch; and __fish_seen_subcommand_from show" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c jobq -n "__fish_jobq_using_subcommand batch; and __fish_seen_subcommand_from show" -s V -l version -d 'Print version'
complete -c jobq -n "__fish_jobq_using_subcommand batch; and __fish_seen_subcommand_from help" -f -a "show" -d 'Where a batch stands: its members counted by status, and its callback\'s status'
complete -c jobq -n "__fish_jobq_using_subcommand batch; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c jobq -n "__fish_jobq_using_subcommand worker" -l queue -d 'Queue to take jobs from (repeatable, or comma-separated) [default: [worker] queues, or default]' -r
complete -c jobq -n "__fish_jobq_using_subcommand worker" -s c -l concurrency -d 'Jobs run at once [default: [worker] concurrency, or 8]' -r
complete -c jobq -n "__fish_jobq_using_subcommand worker" -l max-jobs -d 'Exit after taking on N jobs (after finishing them)' -r
complete -c jobq -n "__fish_jobq_using_subcommand worker" -l max-memory -d 'Finish the running jobs and exit once resident memory exceeds SIZE, e.g. 512MiB or 2G' -r
complete -c jobq -n "__fish_jobq_using_subcommand worker" -l nice -d 'Lower the CPU priority of the worker and the programs it runs (0-19; negative needs root)' -r
complete -c jobq -n "__fish_jobq_using_subcommand worker" -l name -d 'Name shown by `jobq workers` [default: the host name]' -r
complete -c jobq -n "__fish_jobq_using_subcommand worker" -l log-format -d 'Log format: text for people, json (one object per line) for log shippers' -r -f -a "text\t'One line per event for people'
json\t'One JSON object per event'"
complete -c jobq -n "__fish_jobq_using_subcommand worker" -l kill-grace -d 'Time a stopped program gets between SIGTERM and SIGKILL' -r
complete -c jobq -n "__fish_jobq_using_subcommand worker" -l handler -d 'A handler for TYPE (`*`: every type without its own), added to the config file\'s or replacing its handler for TYPE: a program with its arguments (`./bin/send-mail --fast`), persistent:PROGRAM, builtin:NAME, an http(s):// URL, or an amqp(s):// or kafka:// target to publish to. Repeatable' -r
complete -c jobq -n "__fish_jobq_using_subcommand worker" -l url -d 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user\'s data directory]' -r
complete -c jobq -n "__fish_jobq_using_subcommand worker" -l config -d 'Config file (TOML) [default: ./jobq.toml, then the user config directory]' -r -F
complete -c jobq -n "__fish_jobq_using_subcommand worker" -s o -l output -d 'Output format' -r -f -a "table\t'Tables and sentences for people'
json\t'One JSON document'
ndjson\t'One JSON object per line (list)'
prometheus\t'Prometheus text exposition format (stats)'"
complete -c jobq -n "__fish_jobq_using_subcommand worker" -l burst -d 'Exit once no job is ready (after finishing the running ones)'
complete -c jobq -n "__fish_jobq_using_subcommand worker" -l reload-on-change -d 'Reload the config file whenever it changes on disk, as SIGHUP does'
complete -c jobq -n "__fish_jobq_using_subcommand worker" -s q -l quiet -d 'Print only errors'
complete -c jobq -n "__fish_jobq_using_subcommand worker" -s v -l verbose -d 'Print more (repeat for debug logs)'
complete -c jobq -n "__fish_jobq_using_subcommand worker" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c jobq -n "__fish_jobq_using_subcommand worker" -s V -l version -d 'Print version'
complete -c jobq -n "__fish_jobq_using_subcommand stats" -l queue -d 'Only this queue (repeatable or comma-separated)' -r
complete -c jobq -n "__fish_jobq_using_subcommand stats" -l watch -d 'Refresh every SECS seconds until interrupted' -r
complete -c jobq -n "__fish_jobq_using_subcommand stats" -l url -d 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user\'s data directory]' -r
complete -c jobq -n "__fish_jobq_using_subcommand stats" -l config -d 'Config file (TOML) [default: ./jobq.toml, then the user config directory]' -r -F
complete -c jobq -n "__fish_jobq_using_subcommand stats" -s o -l output -d 'Output format' -r -f -a "table\t'Tables and sentences for people'
json\t'One JSON document'
ndjson\t'One JSON object per line (list)'
prometheus\t'Prometheus text exposition format (stats)'"
complete -c jobq -n "__fish_jobq_using_subcommand stats" -s q -l quiet -d 'Print only errors'
complete -c jobq -n "__fish_jobq_using_subcommand stats" -s v -l verbose -d 'Print more (repeat for debug logs)'
complete -c jobq -n "__fish_jobq_using_subcommand stats" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c jobq -n "__fish_jobq_using_subcommand stats" -s V -l version -d 'Print version'
complete -c jobq -n "__fish_jobq_using_subcommand list" -l queue -d 'Only this queue (repeatable or comma-separated)' -r
complete -c jobq -n "__fish_jobq_using_subcommand list" -l type -d 'Only this job type (repeatable or comma-separated)' -r
complete -c jobq -n "__fish_jobq_using_subcommand list" -l status -d 'Only this status: blocked, pending, running, waiting, succeeded, dead, cancelled, discarded, expired (repeatable or comma-separated)' -r
complete -c jobq -n "__fish_jobq_using_subcommand list" -l since -d 'Created at or after: a duration ago (30m, 7d) or a time (RFC 3339)' -r
complete -c jobq -n "__fish_jobq_using_subcommand list" -l until -d 'Created before: a duration ago or a time' -r
complete -c jobq -n "__fish_jobq_using_subcommand list" -l limit -d 'At most this many jobs' -r
complete -c jobq -n "__fish_jobq_using_subcommand list" -l offset -d 'Skip this many jobs (for paging)' -r
complete -c jobq -n "__fish_jobq_using_subcommand list" -l after -d 'Only jobs after this one in the list: the next page after a page that ended with it (as fast however deep)' -r
complete -c jobq -n "__fish_jobq_using_subcommand list" -l url -d 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user\'s data directory]' -r
complete -c jobq -n "__fish_jobq_using_subcommand list" -l config -d 'Config file (TOML) [default: ./jobq.toml, then the user config directory]' -r -F
complete -c jobq -n "__fish_jobq_using_subcommand list" -s o -l output -d 'Output format' -r -f -a "table\t'Tables and sentences for people'
json\t'One JSON document'
ndjson\t'One JSON object per line (list)'
prometheus\t'Prometheus text exposition format (stats)'"
complete -c jobq -n "__fish_jobq_using_subcommand list" -s q -l quiet -d 'Print only errors'
complete -c jobq -n "__fish_jobq_using_subcommand list" -s v -l verbose -d 'Print more (repeat for debug logs)'
complete -c jobq -n "__fish_jobq_using_subcommand list" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c jobq -n "__fish_jobq_using_subcommand list" -s V -l version -d 'Print version'
complete -c jobq -n "__fish_jobq_using_subcommand show" -l url -d 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user\'s data directory]' -r
complete -c jobq -n "__fish_jobq_using_subcommand show" -l config -d 'Config file (TOML) [default: ./jobq.toml, then the user config directory]' -r -F
complete -c jobq -n "__fish_jobq_using_subcommand show" -s o -l output -d 'Output format' -r -f -a "table\t'Tables and sentences for people'
json\t'One JSON document'
ndjson\t'One JSON object per line (list)'
prometheus\t'Prometheus text exposition format (stats)'"
complete -c jobq -n "__fish_jobq_using_subcommand show" -s q -l quiet -d 'Print only errors'
complete -c jobq -n "__fish_jobq_using_subcommand show" -s v -l verbose -d 'Print more (repeat for debug logs)'
complete -c jobq -n "__fish_jobq_using_subcommand show" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c jobq -n "__fish_jobq_using_subcommand show" -s V -l version -d 'Print version'
complete -c jobq -n "__fish_jobq_using_subcommand wait" -l timeout -d 'Give up after this long, e.g. 30s or 5m (exit code 1) [default: wait as long as it takes]' -r
complete -c jobq -n "__fish_jobq_using_subcommand wait" -l url -d 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user\'s data directory]' -r
complete -c jobq -n "__fish_jobq_using_subcommand wait" -l config -d 'Config file (TOML) [default: ./jobq.toml, then the user config directory]' -r -F
complete -c jobq -n "__fish_jobq_using_subcommand wait" -s o -l output -d 'Output format' -r -f -a "table\t'Tables and sentences for people'
json\t'One JSON document'
ndjson\t'One JSON object per line (list)'
prometheus\t'Prometheus text exposition format (stats)'"
complete -c jobq -n "__fish_jobq_using_subcommand wait" -s q -l quiet -d 'Print only errors'
complete -c jobq -n "__fish_jobq_using_subcommand wait" -s v -l verbose -d 'Print more (repeat for debug logs)'
complete -c jobq -n "__fish_jobq_using_subcommand wait" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c jobq -n "__fish_jobq_using_subcommand wait" -s V -l version -d 'Print version'
complete -c jobq -n "__fish_jobq_using_subcommand cancel" -l queue -d 'Cancel every live job in this queue (repeatable or comma-separated)' -r
complete -c jobq -n "__fish_jobq_using_subcommand cancel" -l type -d 'Cancel every live job of this type (repeatable or comma-separated)' -r
complete -c jobq -n "__fish_jobq_using_subcommand cancel" -l status -d 'Only jobs in this status: pending, running or waiting (repeatable or comma-separated)' -r
complete -c jobq -n "__fish_jobq_using_subcommand cancel" -l url -d 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user\'s data directory]' -r
complete -c jobq -n "__fish_jobq_using_subcommand cancel" -l config -d 'Config file (TOML) [default: ./jobq.toml, then the user config directory]' -r -F
complete -c jobq -n "__fish_jobq_using_subcommand cancel" -s o -l output -d 'Output format' -r -f -a "table\t'Tables and sentences for people'
json\t'One JSON document'
ndjson\t'One JSON object per line (list)'
prometheus\t'Prometheus text exposition format (stats)'"
complete -c jobq -n "__fish_jobq_using_subcommand cancel" -l cascade -d 'Also cancel every job that waits for these (and those that wait for them, and so on) and has not ended, whatever its rule'
complete -c jobq -n "__fish_jobq_using_subcommand cancel" -s y -l yes -d 'Do not ask before cancelling by filter'
complete -c jobq -n "__fish_jobq_using_subcommand cancel" -s q -l quiet -d 'Print only errors'
complete -c jobq -n "__fish_jobq_using_subcommand cancel" -s v -l verbose -d 'Print more (repeat for debug logs)'
complete -c jobq -n "__fish_jobq_using_subcommand cancel" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c jobq -n "__fish_jobq_using_subcommand cancel" -s V -l version -d 'Print version'
complete -c jobq -n "__fish_jobq_using_subcommand resolve" -l result -d 'With --succeed: its result (JSON)' -r
complete -c jobq -n "__fish_jobq_using_subcommand resolve" -l fail -d 'The job failed for good (dead), with this error' -r
complete -c jobq -n "__fish_jobq_using_subcommand resolve" -l delay -d 'With --retry: not before this long from now, e.g. 30s, 10m [default: at once]' -r
complete -c jobq -n "__fish_jobq_using_subcommand resolve" -l discard -d 'Drop the job (discarded), with an optional reason' -r
complete -c jobq -n "__fish_jobq_using_subcommand resolve" -l url -d 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user\'s data directory]' -r
complete -c jobq -n "__fish_jobq_using_subcommand resolve" -l config -d 'Config file (TOML) [default: ./jobq.toml, then the user config directory]' -r -F
complete -c jobq -n "__fish_jobq_using_subcommand resolve" -s o -l output -d 'Output format' -r -f -a "table\t'Tables and sentences for people'
json\t'One JSON document'
ndjson\t'One JSON object per line (list)'
prometheus\t'Prometheus text exposition format (stats)'"
complete -c jobq -n "__fish_jobq_using_subcommand resolve" -l succeed -d 'The job succeeded'
complete -c jobq -n "__fish_jobq_using_subcommand resolve" -l retry -d 'Run the job again (the attempt it waited in counts as used)'
complete -c jobq -n "__fish_jobq_using_subcommand resolve" -s q -l quiet -d 'Print only errors'
complete -c jobq -n "__fish_jobq_using_subcommand resolve" -s v -l verbose -d 'Print more (repeat for debug logs)'
complete -c jobq -n "__fish_jobq_using_subcommand resolve" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c jobq -n "__fish_jobq_using_subcommand resolve" -s V -l version -d 'Print version'
complete -c jobq -n "__fish_jobq_using_subcommand retry" -l url -d 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user\'s data directory]' -r
complete -c jobq -n "__fish_jobq_using_subcommand retry" -l config -d 'Config file (TOML) [default: ./jobq.toml, then the user config directory]' -r -F
complete -c jobq -n "__fish_jobq_using_subcommand retry" -s o -l output -d 'Output format' -r -f -a "table\t'Tables and sentences for people'
json\t'One JSON document'
ndjson\t'One JSON object per line (list)'
prometheus\t'Prometheus text exposition format (stats)'"
complete -c jobq -n "__fish_jobq_using_subcommand retry" -s q -l quiet -d 'Print only errors'
complete -c jobq -n "__fish_jobq_using_subcommand retry" -s v -l verbose -d 'Print more (repeat for debug logs)'
complete -c jobq -n "__fish_jobq_using_subcommand retry" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c jobq -n "__fish_jobq_using_subcommand retry" -s V -l version -d 'Print version'
complete -c jobq -n "__fish_jobq_using_subcommand delete" -l queue -d 'Delete every job in this queue (repeatable or comma-separated)' -r
complete -c jobq -n "__fish_jobq_using_subcommand delete" -l type -d 'Delete every job of this type (repeatable or comma-separated)' -r
complete -c jobq -n "__fish_jobq_using_subcommand delete" -l status -d 'Only jobs in this status (repeatable or comma-separated)' -r
complete -c jobq -n "__fish_jobq_using_subcommand delete" -l older-than -d 'Only jobs created longer ago than this, e.g. 7d, 12h' -r
complete -c jobq -n "__fish_jobq_using_subcommand delete" -l url -d 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user\'s data directory]' -r
complete -c jobq -n "__fish_jobq_using_subcommand delete" -l config -d 'Config file (TOML) [default: ./jobq.toml, then the user config directory]' -r -F
complete -c jobq -n "__fish_jobq_using_subcommand delete" -s o -l output -d 'Output format' -r -f -a "table\t'Tables and sentences for people'
json\t'One JSON document'
ndjson\t'One JSON object per line (list)'
prometheus\t'Prometheus text exposition format (stats)'"
complete -c jobq -n "__fish_jobq_using_subcommand delete" -l force -d 'Delete running and waiting jobs too'
complete -c jobq -n "__fish_jobq_using_subcommand delete" -s y -l yes -d 'Do not ask before deleting by filter'
complete -c jobq -n "__fish_jobq_using_subcommand delete" -s q -l quiet -d 'Print only errors'
complete -c jobq -n "__fish_jobq_using_subcommand delete" -s v -l verbose -d 'Print more (repeat for debug logs)'
complete -c jobq -n "__fish_jobq_using_subcommand delete" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c jobq -n "__fish_jobq_using_subcommand delete" -s V -l version -d 'Print version'
complete -c jobq -n "__fish_jobq_using_subcommand replay-dead" -l queue -d 'Only dead jobs of this queue (repeatable or comma-separated)' -r
complete -c jobq -n "__fish_jobq_using_subcommand replay-dead" -l type -d 'Only dead jobs of this type (repeatable or comma-separated)' -r
complete -c jobq -n "__fish_jobq_using_subcommand replay-dead" -l id -d 'Only this job (repeatable)' -r
complete -c jobq -n "__fish_jobq_using_subcommand replay-dead" -l limit -d 'At most this many, oldest death first' -r
complete -c jobq -n "__fish_jobq_using_subcommand replay-dead" -l url -d 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user\'s data directory]' -r
complete -c jobq -n "__fish_jobq_using_subcommand replay-dead" -l config -d 'Config file (TOML) [default: ./jobq.toml, then the user config directory]' -r -F
complete -c jobq -n "__fish_jobq_using_subcommand replay-dead" -s o -l output -d 'Output format' -r -f -a "table\t'Tables and sentences for people'
json\t'One JSON document'
ndjson\t'One JSON object per line (list)'
prometheus\t'Prometheus text exposition format (stats)'"
complete -c jobq -n "__fish_jobq_using_subcommand replay-dead" -l dry-run -d 'Show what would be replayed without changing anything'
complete -c jobq -n "__fish_jobq_using_subcommand replay-dead" -l cascade -d 'Also bring back, blocked, the jobs that these jobs\' failure cancelled (and those that their cancellation cancelled, and so on), with their dependencies counted again'
complete -c jobq -n "__fish_jobq_using_subcommand replay-dead" -l print -d 'Print the replayed jobs as JSON lines on stdout'
complete -c jobq -n "__fish_jobq_using_subcommand replay-dead" -s y -l yes -d 'Do not ask before an unbounded replay (no --limit or --id)'
complete -c jobq -n "__fish_jobq_using_subcommand replay-dead" -s q -l quiet -d 'Print only errors'
complete -c jobq -n "__fish_jobq_using_subcommand replay-dead" -s v -l verbose -d 'Print more (repeat for debug logs)'
complete -c jobq -n "__fish_jobq_using_subcommand replay-dead" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c jobq -n "__fish_jobq_using_subcommand replay-dead" -s V -l version -d 'Print version'
complete -c jobq -n "__fish_jobq_using_subcommand replay" -l queue -d 'Only dead jobs of this queue (repeatable or comma-separated)' -r
complete -c jobq -n "__fish_jobq_using_subcommand replay" -l type -d 'Only dead jobs of this type (repeatable or comma-separated)' -r
complete -c jobq -n "__fish_jobq_using_subcommand replay" -l id -d 'Only this job (repeatable)' -r
complete -c jobq -n "__fish_jobq_using_subcommand replay" -l limit -d 'At most this many, oldest death first' -r
complete -c jobq -n "__fish_jobq_using_subcommand replay" -l url -d 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user\'s data directory]' -r
complete -c jobq -n "__fish_jobq_using_subcommand replay" -l config -d 'Config file (TOML) [default: ./jobq.toml, then the user config directory]' -r -F
complete -c jobq -n "__fish_jobq_using_subcommand replay" -s o -l output -d 'Output format' -r -f -a "table\t'Tables and sentences for people'
json\t'One JSON document'
ndjson\t'One JSON object per line (list)'
prometheus\t'Prometheus text exposition format (stats)'"
complete -c jobq -n "__fish_jobq_using_subcommand replay" -l dry-run -d 'Show what would be replayed without changing anything'
complete -c jobq -n "__fish_jobq_using_subcommand replay" -l cascade -d 'Also bring back, blocked, the jobs that these jobs\' failure cancelled (and those that their cancellation cancelled, and so on), with their dependencies counted again'
complete -c jobq -n "__fish_jobq_using_subcommand replay" -l print -d 'Print the replayed jobs as JSON lines on stdout'
complete -c jobq -n "__fish_jobq_using_subcommand replay" -s y -l yes -d 'Do not ask before an unbounded replay (no --limit or --id)'
complete -c jobq -n "__fish_jobq_using_subcommand replay" -s q -l quiet -d 'Print only errors'
complete -c jobq -n "__fish_jobq_using_subcommand replay" -s v -l verbose -d 'Print more (repeat for debug logs)'
complete -c jobq -n "__fish_jobq_using_subcommand replay" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c jobq -n "__fish_jobq_using_subcommand replay" -s V -l version -d 'Print version'
complete -c jobq -n "__fish_jobq_using_subcommand cleanup" -l older-than -d 'Only jobs that finished longer ago than this, e.g. 7d, 12h' -r
complete -c jobq -n "__fish_jobq_using_subcommand cleanup" -l status -d 'Only this terminal status: succeeded, dead, cancelled, discarded, expired (repeatable or comma-separated)' -r
complete -c jobq -n "__fish_jobq_using_subcommand cleanup" -l queue -d 'Only this queue (repeatable or comma-separated)' -r
complete -c jobq -n "__fish_jobq_using_subcommand cleanup" -l type -d 'Only this job type (repeatable or comma-separated)' -r
complete -c jobq -n "__fish_jobq_using_subcommand cleanup" -l keep-last -d 'Keep the newest N finished jobs of each queue and status; delete only older ones' -r
complete -c jobq -n "__fish_jobq_using_subcommand cleanup" -l url -d 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user\'s data directory]' -r
complete -c jobq -n "__fish_jobq_using_subcommand cleanup" -l config -d 'Config file (TOML) [default: ./jobq.toml, then the user config directory]' -r -F
complete -c jobq -n "__fish_jobq_using_subcommand cleanup" -s o -l output -d 'Output format' -r -f -a "table\t'Tables and sentences for people'
json\t'One JSON document'
ndjson\t'One JSON object per line (list)'
prometheus\t'Prometheus text exposition format (stats)'"
complete -c jobq -n "__fish_jobq_using_subcommand cleanup" -l dry-run -d 'Count what would be deleted without deleting'
complete -c jobq -n "__fish_jobq_using_subcommand cleanup" -s y -l yes -d 'Do not ask before deleting without --older-than'
complete -c jobq -n "__fish_jobq_using_subcommand cleanup" -s q -l quiet -d 'Print only errors'
complete -c jobq -n "__fish_jobq_using_subcommand cleanup" -s v -l verbose -d 'Print more (repeat for debug logs)'
complete -c jobq -n "__fish_jobq_using_subcommand cleanup" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c jobq -n "__fish_jobq_using_subcommand cleanup" -s V -l version -d 'Print version'
complete -c jobq -n "__fish_jobq_using_subcommand export" -l queue -d 'Only this queue (repeatable or comma-separated)' -r
complete -c jobq -n "__fish_jobq_using_subcommand export" -l type -d 'Only this job type (repeatable or comma-separated)' -r
complete -c jobq -n "__fish_jobq_using_subcommand export" -l status -d 'Only this status: blocked, pending, running, waiting, succeeded, dead, cancelled, discarded, expired (repeatable or comma-separated)' -r
complete -c jobq -n "__fish_jobq_using_subcommand export" -l since -d 'Created at or after: a duration ago (30m, 7d) or a time (RFC 3339)' -r
complete -c jobq -n "__fish_jobq_using_subcommand export" -l until -d 'Created before: a duration ago or a time' -r
complete -c jobq -n "__fish_jobq_using_subcommand export" -l file -d 'Write to this file instead of stdout (- for stdout)' -r -F
complete -c jobq -n "__fish_jobq_using_subcommand export" -l url -d 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user\'s data directory]' -r
complete -c jobq -n "__fish_jobq_using_subcommand export" -l config -d 'Config file (TOML) [default: ./jobq.toml, then the user config directory]' -r -F
complete -c jobq -n "__fish_jobq_using_subcommand export" -s o -l output -d 'Output format' -r -f -a "table\t'Tables and sentences for people'
json\t'One JSON document'
ndjson\t'One JSON object per line (list)'
prometheus\t'Prometheus text exposition format (stats)'"
complete -c jobq -n "__fish_jobq_using_subcommand export" -s q -l quiet -d 'Print only errors'
complete -c jobq -n "__fish_jobq_using_subcommand export" -s v -l verbose -d 'Print more (repeat for debug logs)'
complete -c jobq -n "__fish_jobq_using_subcommand export" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c jobq -n "__fish_jobq_using_subcommand export" -s V -l version -d 'Print version'
complete -c jobq -n "__fish_jobq_using_subcommand import" -l on-conflict -d 'A job whose id the store holds already: skip it, replace it, or import nothing' -r -f -a "skip\t'Leave the stored job as it is, and count it'
replace\t'Replace the stored job with the imported one'
fail\t'Import nothing if any id is held'"
complete -c jobq -n "__fish_jobq_using_subcommand import" -l url -d 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user\'s data directory]' -r
complete -c jobq -n "__fish_jobq_using_subcommand import" -l config -d 'Config file (TOML) [default: ./jobq.toml, then the user config directory]' -r -F
complete -c jobq -n "__fish_jobq_using_subcommand import" -s o -l output -d 'Output format' -r -f -a "table\t'Tables and sentences for people'
json\t'One JSON document'
ndjson\t'One JSON object per line (list)'
prometheus\t'Prometheus text exposition format (stats)'"
complete -c jobq -n "__fish_jobq_using_subcommand import" -l keep-running -d 'Keep running jobs running (for workers that still hold them)'
complete -c jobq -n "__fish_jobq_using_subcommand import" -l dry-run -d 'Say what would be imported, write nothing'
complete -c jobq -n "__fish_jobq_using_subcommand import" -s q -l quiet -d 'Print only errors'
complete -c jobq -n "__fish_jobq_using_subcommand import" -s v -l verbose -d 'Print more (repeat for debug logs)'
complete -c jobq -n "__fish_jobq_using_subcommand import" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c jobq -n "__fish_jobq_using_subcommand import" -s V -l version -d 'Print version'
complete -c jobq -n "__fish_jobq_using_subcommand copy" -l to -d 'The store to copy into (its schema is created or upgraded first)' -r
complete -c jobq -n "__fish_jobq_using_subcommand copy" -l queue -d 'Only this queue (repeatable or comma-separated)' -r
complete -c jobq -n "__fish_jobq_using_subcommand copy" -l type -d 'Only this job type (repeatable or comma-separated)' -r
complete -c jobq -n "__fish_jobq_using_subcommand copy" -l status -d 'Only this status: blocked, pending, running, waiting, succeeded, dead, cancelled, discarded, expired (repeatable or comma-separated)' -r
complete -c jobq -n "__fish_jobq_using_subcommand copy" -l since -d 'Created at or after: a duration ago (30m, 7d) or a time (RFC 3339)' -r
complete -c jobq -n "__fish_jobq_using_subcommand copy" -l until -d 'Created before: a duration ago or a time' -r
complete -c jobq -n "__fish_jobq_using_subcommand copy" -l url -d 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user\'s data directory]' -r
complete -c jobq -n "__fish_jobq_using_subcommand copy" -l config -d 'Config file (TOML) [default: ./jobq.toml, then the user config directory]' -r -F
complete -c jobq -n "__fish_jobq_using_subcommand copy" -s o -l output -d 'Output format' -r -f -a "table\t'Tables and sentences for people'
json\t'One JSON document'
ndjson\t'One JSON object per line (list)'
prometheus\t'Prometheus text exposition format (stats)'"
complete -c jobq -n "__fish_jobq_using_subcommand copy" -l resume -d 'Go on after an interrupted copy: skip the jobs the target holds already'
complete -c jobq -n "__fish_jobq_using_subcommand copy" -l move -d 'Delete from the source the jobs the target has committed (running jobs stay; live ones go last)'
complete -c jobq -n "__fish_jobq_using_subcommand copy" -l keep-running -d 'Keep running jobs running in the target'
complete -c jobq -n "__fish_jobq_using_subcommand copy" -s q -l quiet -d 'Print only errors'
complete -c jobq -n "__fish_jobq_using_subcommand copy" -s v -l verbose -d 'Print more (repeat for debug logs)'
complete -c jobq -n "__fish_jobq_using_subcommand copy" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c jobq -n "__fish_jobq_using_subcommand copy" -s V -l version -d 'Print version'
complete -c jobq -n "__fish_jobq_using_subcommand bridge" -l from -d 'The RabbitMQ queue to consume (amqp:// only)' -r
complete -c jobq -n "__fish_jobq_using_subcommand bridge" -l topic -d 'The Kafka topic to consume (kafka:// only)' -r
complete -c jobq -n "__fish_jobq_using_subcommand bridge" -l group -d 'The Kafka consumer group whose offsets the bridge commits (kafka:// only)' -r
complete -c jobq -n "__fish_jobq_using_subcommand bridge" -l to -d 'The jobq queue of messages that name none [default: default]' -r
complete -c jobq -n "__fish_jobq_using_subcommand bridge" -l type -d 'The job type of messages that are not envelopes (their whole body is the payload)' -r
complete -c jobq -n "__fish_jobq_using_subcommand bridge" -l max-in-flight -d 'Messages delivered and not yet acknowledged, at most' -r
complete -c jobq -n "__fish_jobq_using_subcommand bridge" -l connect-timeout -d 'How long the first connection to the broker may take' -r
complete -c jobq -n "__fish_jobq_using_subcommand bridge" -l name -d 'Name shown by `jobq workers` [default: the host name]' -r
complete -c jobq -n "__fish_jobq_using_subcommand bridge" -l log-format -d 'Log format: text for people, json (one object per line) for log shippers' -r -f -a "text\t'One line per event for people'
json\t'One JSON object per event'"
complete -c jobq -n "__fish_jobq_using_subcommand bridge" -l url -d 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user\'s data directory]' -r
complete -c jobq -n "__fish_jobq_using_subcommand bridge" -l config -d 'Config file (TOML) [default: ./jobq.toml, then the user config directory]' -r -F
complete -c jobq -n "__fish_jobq_using_subcommand bridge" -s o -l output -d 'Output format' -r -f -a "table\t'Tables and sentences for people'
json\t'One JSON document'
ndjson\t'One JSON object per line (list)'
prometheus\t'Prometheus text exposition format (stats)'"
complete -c jobq -n "__fish_jobq_using_subcommand bridge" -s q -l quiet -d 'Print only errors'
complete -c jobq -n "__fish_jobq_using_subcommand bridge" -s v -l verbose -d 'Print more (repeat for debug logs)'
complete -c jobq -n "__fish_jobq_using_subcommand bridge" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c jobq -n "__fish_jobq_using_subcommand bridge" -s V -l version -d 'Print version'
complete -c jobq -n "__fish_jobq_using_subcommand workers" -l url -d 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user\'s data directory]' -r
complete -c jobq -n "__fish_jobq_using_subcommand workers" -l config -d 'Config file (TOML) [default: ./jobq.toml, then the user config directory]' -r -F
complete -c jobq -n "__fish_jobq_using_subcommand workers" -s o -l output -d 'Output format' -r -f -a "table\t'Tables and sentences for people'
json\t'One JSON document'
ndjson\t'One JSON object per line (list)'
prometheus\t'Prometheus text exposition format (stats)'"
complete -c jobq -n "__fish_jobq_using_subcommand workers" -s q -l quiet -d 'Print only errors'
complete -c jobq -n "__fish_jobq_using_subcommand workers" -s v -l verbose -d 'Print more (repeat for debug logs)'
complete -c jobq -n "__fish_jobq_using_subcommand workers" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c jobq -n "__fish_jobq_using_subcommand workers" -s V -l version -d 'Print version'
complete -c jobq -n "__fish_jobq_using_subcommand queues" -l url -d 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user\'s data directory]' -r
complete -c jobq -n "__fish_jobq_using_subcommand queues" -l config -d 'Config file (TOML) [default: ./jobq.toml, then the user config directory]' -r -F
complete -c jobq -n "__fish_jobq_using_subcommand queues" -s o -l output -d 'Output format' -r -f -a "table\t'Tables and sentences for people'
json\t'One JSON document'
ndjson\t'One JSON object per line (list)'
prometheus\t'Prometheus text exposition format (stats)'"
complete -c jobq -n "__fish_jobq_using_subcommand queues" -s q -l quiet -d 'Print only errors'
complete -c jobq -n "__fish_jobq_using_subcommand queues" -s v -l verbose -d 'Print more (repeat for debug logs)'
complete -c jobq -n "__fish_jobq_using_subcommand queues" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c jobq -n "__fish_jobq_using_subcommand queues" -s V -l version -d 'Print version'
complete -c jobq -n "__fish_jobq_using_subcommand pause" -l type -d 'Only this job type\'s jobs in the queue' -r
complete -c jobq -n "__fish_jobq_using_subcommand pause" -l url -d 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user\'s data directory]' -r
complete -c jobq -n "__fish_jobq_using_subcommand pause" -l config -d 'Config file (TOML) [default: ./jobq.toml, then the user config directory]' -r -F
complete -c jobq -n "__fish_jobq_using_subcommand pause" -s o -l output -d 'Output format' -r -f -a "table\t'Tables and sentences for people'
json\t'One JSON document'
ndjson\t'One JSON object per line (list)'
prometheus\t'Prometheus text exposition format (stats)'"
complete -c jobq -n "__fish_jobq_using_subcommand pause" -s q -l quiet -d 'Print only errors'
complete -c jobq -n "__fish_jobq_using_subcommand pause" -s v -l verbose -d 'Print more (repeat for debug logs)'
complete -c jobq -n "__fish_jobq_using_subcommand pause" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c jobq -n "__fish_jobq_using_subcommand pause" -s V -l version -d 'Print version'
complete -c jobq -n "__fish_jobq_using_subcommand resume" -l type -d 'Only this job type\'s jobs in the queue' -r
complete -c jobq -n "__fish_jobq_using_subcommand resume" -l url -d 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user\'s data directory]' -r
complete -c jobq -n "__fish_jobq_using_subcommand resume" -l config -d 'Config file (TOML) [default: ./jobq.toml, then the user config directory]' -r -F
complete -c jobq -n "__fish_jobq_using_subcommand resume" -s o -l output -d 'Output format' -r -f -a "table\t'Tables and sentences for people'
json\t'One JSON document'
ndjson\t'One JSON object per line (list)'
prometheus\t'Prometheus text exposition format (stats)'"
complete -c jobq -n "__fish_jobq_using_subcommand resume" -s q -l quiet -d 'Print only errors'
complete -c jobq -n "__fish_jobq_using_subcommand resume" -s v -l verbose -d 'Print more (repeat for debug logs)'
complete -c jobq -n "__fish_jobq_using_subcommand resume" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c jobq -n "__fish_jobq_using_subcommand resume" -s V -l version -d 'Print version'
complete -c jobq -n "__fish_jobq_using_subcommand schedules; and not __fish_seen_subcommand_from next trigger pause resume help" -l url -d 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user\'s data directory]' -r
complete -c jobq -n "__fish_jobq_using_subcommand schedules; and not __fish_seen_subcommand_from next trigger pause resume help" -l config -d 'Config file (TOML) [default: ./jobq.toml, then the user config directory]' -r -F
complete -c jobq -n "__fish_jobq_using_subcommand schedules; and not __fish_seen_subcommand_from next trigger pause resume help" -s o -l output -d 'Output format' -r -f -a "table\t'Tables and sentences for people'
json\t'One JSON document'
ndjson\t'One JSON object per line (list)'
prometheus\t'Prometheus text exposition format (stats)'"
complete -c jobq -n "__fish_jobq_using_subcommand schedules; and not __fish_seen_subcommand_from next trigger pause resume help" -s q -l quiet -d 'Print only errors'
complete -c jobq -n "__fish_jobq_using_subcommand schedules; and not __fish_seen_subcommand_from next trigger pause resume help" -s v -l verbose -d 'Print more (repeat for debug logs)'
complete -c jobq -n "__fish_jobq_using_subcommand schedules; and not __fish_seen_subcommand_from next trigger pause resume help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c jobq -n "__fish_jobq_using_subcommand schedules; and not __fish_seen_subcommand_from next trigger pause resume help" -s V -l version -d 'Print version'
complete -c jobq -n "__fish_jobq_using_subcommand schedules; and not __fish_seen_subcommand_from next trigger pause resume help" -f -a "next" -d 'The next tick times of a schedule, computed (the store is not touched)'
complete -c jobq -n "__fish_jobq_using_subcommand schedules; and not __fish_seen_subcommand_from next trigger pause resume help" -f -a "trigger" -d 'Enqueue one run now, outside the tick sequence, and print its job id'
complete -c jobq -n "__fish_jobq_using_subcommand schedules; and not __fish_seen_subcommand_from next trigger pause resume help" -f -a "pause" -d 'Stop every worker from enqueueing the schedule\'s ticks (within a second; survives restarts)'
complete -c jobq -n "__fish_jobq_using_subcommand schedules; and not __fish_seen_subcommand_from next trigger pause resume help" -f -a "resume" -d 'Let the schedule\'s ticks be enqueued again'
complete -c jobq -n "__fish_jobq_using_subcommand schedules; and not __fish_seen_subcommand_from next trigger pause resume help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c jobq -n "__fish_jobq_using_subcommand schedules; and __fish_seen_subcommand_from next" -l count -d 'How many' -r
complete -c jobq -n "__fish_jobq_using_subcommand schedules; and __fish_seen_subcommand_from next" -l url -d 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user\'s data directory]' -r
complete -c jobq -n "__fish_jobq_using_subcommand schedules; and __fish_seen_subcommand_from next" -l config -d 'Config file (TOML) [default: ./jobq.toml, then the user config directory]' -r -F
complete -c jobq -n "__fish_jobq_using_subcommand schedules; and __fish_seen_subcommand_from next" -s o -l output -d 'Output format' -r -f -a "table\t'Tables and sentences for people'
json\t'One JSON document'
ndjson\t'One JSON object per line (list)'
prometheus\t'Prometheus text exposition format (stats)'"
complete -c jobq -n "__fish_jobq_using_subcommand schedules; and __fish_seen_subcommand_from next" -s q -l quiet -d 'Print only errors'
complete -c jobq -n "__fish_jobq_using_subcommand schedules; and __fish_seen_subcommand_from next" -s v -l verbose -d 'Print more (repeat for debug logs)'
complete -c jobq -n "__fish_jobq_using_subcommand schedules; and __fish_seen_subcommand_from next" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c jobq -n "__fish_jobq_using_subcommand schedules; and __fish_seen_subcommand_from next" -s V -l version -d 'Print version'
complete -c jobq -n "__fish_jobq_using_subcommand schedules; and __fish_seen_subcommand_from trigger" -l url -d 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user\'s data directory]' -r
complete -c jobq -n "__fish_jobq_using_subcommand schedules; and __fish_seen_subcommand_from trigger" -l config -d 'Config file (TOML) [default: ./jobq.toml, then the user config directory]' -r -F
complete -c jobq -n "__fish_jobq_using_subcommand schedules; and __fish_seen_subcommand_from trigger" -s o -l output -d 'Output format' -r -f -a "table\t'Tables and sentences for people'
json\t'One JSON document'
ndjson\t'One JSON object per line (list)'
prometheus\t'Prometheus text exposition format (stats)'"
complete -c jobq -n "__fish_jobq_using_subcommand schedules; and __fish_seen_subcommand_from trigger" -s q -l quiet -d 'Print only errors'
complete -c jobq -n "__fish_jobq_using_subcommand schedules; and __fish_seen_subcommand_from trigger" -s v -l verbose -d 'Print more (repeat for debug logs)'
complete -c jobq -n "__fish_jobq_using_subcommand schedules; and __fish_seen_subcommand_from trigger" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c jobq -n "__fish_jobq_using_subcommand schedules; and __fish_seen_subcommand_from trigger" -s V -l version -d 'Print version'
complete -c jobq -n "__fish_jobq_using_subcommand schedules; and __fish_seen_subcommand_from pause" -l url -d 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user\'s data directory]' -r
complete -c jobq -n "__fish_jobq_using_subcommand schedules; and __fish_seen_subcommand_from pause" -l config -d 'Config file (TOML) [default: ./jobq.toml, then the user config directory]' -r -F
complete -c jobq -n "__fish_jobq_using_subcommand schedules; and __fish_seen_subcommand_from pause" -s o -l output -d 'Output format' -r -f -a "table\t'Tables and sentences for people'
json\t'One JSON document'
ndjson\t'One JSON object per line (list)'
prometheus\t'Prometheus text exposition format (stats)'"
complete -c jobq -n "__fish_jobq_using_subcommand schedules; and __fish_seen_subcommand_from pause" -s q -l quiet -d 'Print only errors'
complete -c jobq -n "__fish_jobq_using_subcommand schedules; and __fish_seen_subcommand_from pause" -s v -l verbose -d 'Print more (repeat for debug logs)'
complete -c jobq -n "__fish_jobq_using_subcommand schedules; and __fish_seen_subcommand_from pause" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c jobq -n "__fish_jobq_using_subcommand schedules; and __fish_seen_subcommand_from pause" -s V -l version -d 'Print version'
complete -c jobq -n "__fish_jobq_using_subcommand schedules; and __fish_seen_subcommand_from resume" -l url -d 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user\'s data directory]' -r
complete -c jobq -n "__fish_jobq_using_subcommand schedules; and __fish_seen_subcommand_from resume" -l config -d 'Config file (TOML) [default: ./jobq.toml, then the user config directory]' -r -F
complete -c jobq -n "__fish_jobq_using_subcommand schedules; and __fish_seen_subcommand_from resume" -s o -l output -d 'Output format' -r -f -a "table\t'Tables and sentences for people'
json\t'One JSON document'
ndjson\t'One JSON object per line (list)'
prometheus\t'Prometheus text exposition format (stats)'"
complete -c jobq -n "__fish_jobq_using_subcommand schedules; and __fish_seen_subcommand_from resume" -l catch-up -d 'Also enqueue the ticks missed while paused, as its catch_up allows (default: skip them)'
complete -c jobq -n "__fish_jobq_using_subcommand schedules; and __fish_seen_subcommand_from resume" -s q -l quiet -d 'Print only errors'
complete -c jobq -n "__fish_jobq_using_subcommand schedules; and __fish_seen_subcommand_from resume" -s v -l verbose -d 'Print more (repeat for debug logs)'
complete -c jobq -n "__fish_jobq_using_subcommand schedules; and __fish_seen_subcommand_from resume" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c jobq -n "__fish_jobq_using_subcommand schedules; and __fish_seen_subcommand_from resume" -s V -l version -d 'Print version'
complete -c jobq -n "__fish_jobq_using_subcommand schedules; and __fish_seen_subcommand_from help" -f -a "next" -d 'The next tick times of a schedule, computed (the store is not touched)'
complete -c jobq -n "__fish_jobq_using_subcommand schedules; and __fish_seen_subcommand_from help" -f -a "trigger" -d 'Enqueue one run now, outside the tick sequence, and print its job id'
complete -c jobq -n "__fish_jobq_using_subcommand schedules; and __fish_seen_subcommand_from help" -f -a "pause" -d 'Stop every worker from enqueueing the schedule\'s ticks (within a second; survives restarts)'
complete -c jobq -n "__fish_jobq_using_subcommand schedules; and __fish_seen_subcommand_from help" -f -a "resume" -d 'Let the schedule\'s ticks be enqueued again'
complete -c jobq -n "__fish_jobq_using_subcommand schedules; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c jobq -n "__fish_jobq_using_subcommand emit" -l id -d 'The event\'s id: emitting it again enqueues nothing [default: a new UUIDv7]' -r
complete -c jobq -n "__fish_jobq_using_subcommand emit" -l meta -d 'Meta entry every job gets (repeatable), e.g. --meta tenantId=42' -r
complete -c jobq -n "__fish_jobq_using_subcommand emit" -l url -d 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user\'s data directory]' -r
complete -c jobq -n "__fish_jobq_using_subcommand emit" -l config -d 'Config file (TOML) [default: ./jobq.toml, then the user config directory]' -r -F
complete -c jobq -n "__fish_jobq_using_subcommand emit" -s o -l output -d 'Output format' -r -f -a "table\t'Tables and sentences for people'
json\t'One JSON document'
ndjson\t'One JSON object per line (list)'
prometheus\t'Prometheus text exposition format (stats)'"
complete -c jobq -n "__fish_jobq_using_subcommand emit" -l allow-none -d 'Accept an event nobody subscribes to (it becomes no job)'
complete -c jobq -n "__fish_jobq_using_subcommand emit" -s q -l quiet -d 'Print only errors'
complete -c jobq -n "__fish_jobq_using_subcommand emit" -s v -l verbose -d 'Print more (repeat for debug logs)'
complete -c jobq -n "__fish_jobq_using_subcommand emit" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c jobq -n "__fish_jobq_using_subcommand emit" -s V -l version -d 'Print version'
complete -c jobq -n "__fish_jobq_using_subcommand serve" -l listen -d 'Address to listen on, host:port [default: [serve] listen, else 127.0.0.1:8080]' -r
complete -c jobq -n "__fish_jobq_using_subcommand serve" -l tls-cert -d 'Serve HTTPS with this certificate chain (PEM); needs --tls-key' -r -F
complete -c jobq -n "__fish_jobq_using_subcommand serve" -l tls-key -d 'The private key of --tls-cert (PEM)' -r -F
complete -c jobq -n "__fish_jobq_using_subcommand serve" -l request-timeout -d 'Longest a request may take, its body included' -r
complete -c jobq -n "__fish_jobq_using_subcommand serve" -l log-format -d 'Log format' -r -f -a "text\t'One line per event for people'
json\t'One JSON object per event'"
complete -c jobq -n "__fish_jobq_using_subcommand serve" -l url -d 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user\'s data directory]' -r
complete -c jobq -n "__fish_jobq_using_subcommand serve" -l config -d 'Config file (TOML) [default: ./jobq.toml, then the user config directory]' -r -F
complete -c jobq -n "__fish_jobq_using_subcommand serve" -s o -l output -d 'Output format' -r -f -a "table\t'Tables and sentences for people'
json\t'One JSON document'
ndjson\t'One JSON object per line (list)'
prometheus\t'Prometheus text exposition format (stats)'"
complete -c jobq -n "__fish_jobq_using_subcommand serve" -s q -l quiet -d 'Print only errors'
complete -c jobq -n "__fish_jobq_using_subcommand serve" -s v -l verbose -d 'Print more (repeat for debug logs)'
complete -c jobq -n "__fish_jobq_using_subcommand serve" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c jobq -n "__fish_jobq_using_subcommand serve" -s V -l version -d 'Print version'
complete -c jobq -n "__fish_jobq_using_subcommand inbox" -s Q -l queue -d 'Only these queues (repeatable) [default: every queue]' -r
complete -c jobq -n "__fish_jobq_using_subcommand inbox" -l limit -d 'At most this many items per queue, oldest first' -r
complete -c jobq -n "__fish_jobq_using_subcommand inbox" -l url -d 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user\'s data directory]' -r
complete -c jobq -n "__fish_jobq_using_subcommand inbox" -l config -d 'Config file (TOML) [default: ./jobq.toml, then the user config directory]' -r -F
complete -c jobq -n "__fish_jobq_using_subcommand inbox" -s o -l output -d 'Output format' -r -f -a "table\t'Tables and sentences for people'
json\t'One JSON document'
ndjson\t'One JSON object per line (list)'
prometheus\t'Prometheus text exposition format (stats)'"
complete -c jobq -n "__fish_jobq_using_subcommand inbox" -l clear -d 'Delete the rejected items (of the queues named, or all) instead of listing them'
complete -c jobq -n "__fish_jobq_using_subcommand inbox" -s q -l quiet -d 'Print only errors'
complete -c jobq -n "__fish_jobq_using_subcommand inbox" -s v -l verbose -d 'Print more (repeat for debug logs)'
complete -c jobq -n "__fish_jobq_using_subcommand inbox" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c jobq -n "__fish_jobq_using_subcommand inbox" -s V -l version -d 'Print version'
complete -c jobq -n "__fish_jobq_using_subcommand migrate" -l url -d 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user\'s data directory]' -r
complete -c jobq -n "__fish_jobq_using_subcommand migrate" -l config -d 'Config file (TOML) [default: ./jobq.toml, then the user config directory]' -r -F
complete -c jobq -n "__fish_jobq_using_subcommand migrate" -s o -l output -d 'Output format' -r -f -a "table\t'Tables and sentences for people'
json\t'One JSON document'
ndjson\t'One JSON object per line (list)'
prometheus\t'Prometheus text exposition format (stats)'"
complete -c jobq -n "__fish_jobq_using_subcommand migrate" -l print -d 'Print the SQL of every migration for the configured store instead of applying it'
complete -c jobq -n "__fish_jobq_using_subcommand migrate" -s q -l quiet -d 'Print only errors'
complete -c jobq -n "__fish_jobq_using_subcommand migrate" -s v -l verbose -d 'Print more (repeat for debug logs)'
complete -c jobq -n "__fish_jobq_using_subcommand migrate" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c jobq -n "__fish_jobq_using_subcommand migrate" -s V -l version -d 'Print version'
complete -c jobq -n "__fish_jobq_using_subcommand doctor" -l ready-late -d 'Report a queue whose oldest ready job has waited this long while none of its jobs runs' -r
complete -c jobq -n "__fish_jobq_using_subcommand doctor" -l paused-for -d 'Report a queue (or type) paused for longer than this' -r
complete -c jobq -n "__fish_jobq_using_subcommand doctor" -l rescues -d 'Report jobs rescued from lost workers more than N times' -r
complete -c jobq -n "__fish_jobq_using_subcommand doctor" -l dead-letters -d 'Report a queue holding at least N dead jobs (0: any)' -r
complete -c jobq -n "__fish_jobq_using_subcommand doctor" -l wal-size -d 'SQLite: report a write-ahead log larger than this' -r
complete -c jobq -n "__fish_jobq_using_subcommand doctor" -l dead-rows -d 'PostgreSQL: report a jobq table with more dead rows than this (and over 20% of its live rows)' -r
complete -c jobq -n "__fish_jobq_using_subcommand doctor" -l url -d 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user\'s data directory]' -r
complete -c jobq -n "__fish_jobq_using_subcommand doctor" -l config -d 'Config file (TOML) [default: ./jobq.toml, then the user config directory]' -r -F
complete -c jobq -n "__fish_jobq_using_subcommand doctor" -s o -l output -d 'Output format' -r -f -a "table\t'Tables and sentences for people'
json\t'One JSON document'
ndjson\t'One JSON object per line (list)'
prometheus\t'Prometheus text exposition format (stats)'"
complete -c jobq -n "__fish_jobq_using_subcommand doctor" -s q -l quiet -d 'Print only errors'
complete -c jobq -n "__fish_jobq_using_subcommand doctor" -s v -l verbose -d 'Print more (repeat for debug logs)'
complete -c jobq -n "__fish_jobq_using_subcommand doctor" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c jobq -n "__fish_jobq_using_subcommand doctor" -s V -l version -d 'Print version'
complete -c jobq -n "__fish_jobq_using_subcommand autoscale" -l queue -d 'The queue to size workers for' -r
complete -c jobq -n "__fish_jobq_using_subcommand autoscale" -l min -d 'Never fewer workers than this' -r
complete -c jobq -n "__fish_jobq_using_subcommand autoscale" -l max -d 'Never more workers than this' -r
complete -c jobq -n "__fish_jobq_using_subcommand autoscale" -l target-latency -d 'How long a ready job may wait before it starts' -r
complete -c jobq -n "__fish_jobq_using_subcommand autoscale" -l concurrency -d 'Jobs one worker runs at once (its --concurrency)' -r
complete -c jobq -n "__fish_jobq_using_subcommand autoscale" -l exec -d 'Run this program with the number of workers as its argument (and in JOBQ_DESIRED_WORKERS) whenever it changes' -r -F
complete -c jobq -n "__fish_jobq_using_subcommand autoscale" -l cool-down -l cooldown -d 'Least time between two runs of the program' -r
complete -c jobq -n "__fish_jobq_using_subcommand autoscale" -l interval -d 'Time between evaluations' -r
complete -c jobq -n "__fish_jobq_using_subcommand autoscale" -l window -d 'How far back arrivals and run times are measured' -r
complete -c jobq -n "__fish_jobq_using_subcommand autoscale" -l url -d 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user\'s data directory]' -r
complete -c jobq -n "__fish_jobq_using_subcommand autoscale" -l config -d 'Config file (TOML) [default: ./jobq.toml, then the user config directory]' -r -F
complete -c jobq -n "__fish_jobq_using_subcommand autoscale" -s o -l output -d 'Output format' -r -f -a "table\t'Tables and sentences for people'
json\t'One JSON document'
ndjson\t'One JSON object per line (list)'
prometheus\t'Prometheus text exposition format (stats)'"
complete -c jobq -n "__fish_jobq_using_subcommand autoscale" -l print -d 'Print the number of workers at each evaluation instead'
complete -c jobq -n "__fish_jobq_using_subcommand autoscale" -l once -d 'Evaluate once and exit'
complete -c jobq -n "__fish_jobq_using_subcommand autoscale" -s q -l quiet -d 'Print only errors'
complete -c jobq -n "__fish_jobq_using_subcommand autoscale" -s v -l verbose -d 'Print more (repeat for debug logs)'
complete -c jobq -n "__fish_jobq_using_subcommand autoscale" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c jobq -n "__fish_jobq_using_subcommand autoscale" -s V -l version -d 'Print version'
complete -c jobq -n "__fish_jobq_using_subcommand bench" -l jobs -d 'Jobs worked off by the drain workload' -r
complete -c jobq -n "__fish_jobq_using_subcommand bench" -l bulk-jobs -d 'Jobs enqueued in bulk by the enqueue workload' -r
complete -c jobq -n "__fish_jobq_using_subcommand bench" -l single-jobs -d 'Jobs enqueued one at a time by the enqueue workload' -r
complete -c jobq -n "__fish_jobq_using_subcommand bench" -l producers -d 'Producers enqueueing those one-at-a-time jobs at once, each awaiting its own calls (as concurrent web requests do)' -r
complete -c jobq -n "__fish_jobq_using_subcommand bench" -l batch-size -d 'Jobs per call when enqueueing in bulk' -r
complete -c jobq -n "__fish_jobq_using_subcommand bench" -s c -l concurrency -d 'Handlers each worker runs at once [default: [worker] concurrency, or 8]' -r
complete -c jobq -n "__fish_jobq_using_subcommand bench" -l processes -d 'Run drain and steady with N `jobq worker` processes instead of one worker inside the bench; with enqueue, N worker processes work the one-at-a-time jobs off while they are enqueued' -r
complete -c jobq -n "__fish_jobq_using_subcommand bench" -l exec -d 'Run each drain and steady job with this program (no arguments) instead of the builtin noop' -r
complete -c jobq -n "__fish_jobq_using_subcommand bench" -l persistent -d 'Hand each drain and steady job to this program (no arguments) kept running, as a persistent handler, instead of the builtin noop' -r
complete -c jobq -n "__fish_jobq_using_subcommand bench" -l in-flight -d 'With --persistent: jobs one copy of the program holds at once' -r
complete -c jobq -n "__fish_jobq_using_subcommand bench" -l copies -d 'With --persistent: copies of the program each worker runs' -r
complete -c jobq -n "__fish_jobq_using_subcommand bench" -l rate -d 'Jobs per second enqueued by the steady workload' -r
complete -c jobq -n "__fish_jobq_using_subcommand bench" -l duration -d 'How long the steady workload enqueues' -r
complete -c jobq -n "__fish_jobq_using_subcommand bench" -l latency-jobs -d 'Jobs enqueued by the latency workload\'s producer process' -r
complete -c jobq -n "__fish_jobq_using_subcommand bench" -l spacing -d 'Pause between two of the latency producer\'s jobs' -r
complete -c jobq -n "__fish_jobq_using_subcommand bench" -l unique-mode -d 'Give each one-at-a-time job a unique key in this mode: coalesce, replace, debounce or throttle (with --unique-window)' -r
complete -c jobq -n "__fish_jobq_using_subcommand bench" -l unique-window -d 'The debounce or throttle window of --unique-mode' -r
complete -c jobq -n "__fish_jobq_using_subcommand bench" -l unique-keys -d 'How many keys the one-at-a-time jobs share, job i taking key i mod N [default: one per job]' -r
complete -c jobq -n "__fish_jobq_using_subcommand bench" -l queue -d 'Internal: the producer\'s queue' -r
complete -c jobq -n "__fish_jobq_using_subcommand bench" -l url -d 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user\'s data directory]' -r
complete -c jobq -n "__fish_jobq_using_subcommand bench" -l config -d 'Config file (TOML) [default: ./jobq.toml, then the user config directory]' -r -F
complete -c jobq -n "__fish_jobq_using_subcommand bench" -s o -l output -d 'Output format' -r -f -a "table\t'Tables and sentences for people'
json\t'One JSON document'
ndjson\t'One JSON object per line (list)'
prometheus\t'Prometheus text exposition format (stats)'"
complete -c jobq -n "__fish_jobq_using_subcommand bench" -l producer -d 'Internal: be the latency workload\'s producer process'
complete -c jobq -n "__fish_jobq_using_subcommand bench" -s q -l quiet -d 'Print only errors'
complete -c jobq -n "__fish_jobq_using_subcommand bench" -s v -l verbose -d 'Print more (repeat for debug logs)'
complete -c jobq -n "__fish_jobq_using_subcommand bench" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c jobq -n "__fish_jobq_using_subcommand bench" -s V -l version -d 'Print version'
complete -c jobq -n "__fish_jobq_using_subcommand completions" -l url -d 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user\'s data directory]' -r
complete -c jobq -n "__fish_jobq_using_subcommand completions" -l config -d 'Config file (TOML) [default: ./jobq.toml, then the user config directory]' -r -F
complete -c jobq -n "__fish_jobq_using_subcommand completions" -s o -l output -d 'Output format' -r -f -a "table\t'Tables and sentences for people'
json\t'One JSON document'
ndjson\t'One JSON object per line (list)'
prometheus\t'Prometheus text exposition format (stats)'"
complete -c jobq -n "__fish_jobq_using_subcommand completions" -s q -l quiet -d 'Print only errors'
complete -c jobq -n "__fish_jobq_using_subcommand completions" -s v -l verbose -d 'Print more (repeat for debug logs)'
complete -c jobq -n "__fish_jobq_using_subcommand completions" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c jobq -n "__fish_jobq_using_subcommand completions" -s V -l version -d 'Print version'
complete -c jobq -n "__fish_jobq_using_subcommand man" -l dir -d 'Write every page (jobq.1, jobq-enqueue.1, …) into this folder instead of printing jobq(1)' -r -F
complete -c jobq -n "__fish_jobq_using_subcommand man" -l url -d 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user\'s data directory]' -r
complete -c jobq -n "__fish_jobq_using_subcommand man" -l config -d 'Config file (TOML) [default: ./jobq.toml, then the user config directory]' -r -F
complete -c jobq -n "__fish_jobq_using_subcommand man" -s o -l output -d 'Output format' -r -f -a "table\t'Tables and sentences for people'
json\t'One JSON document'
ndjson\t'One JSON object per line (list)'
prometheus\t'Prometheus text exposition format (stats)'"
complete -c jobq -n "__fish_jobq_using_subcommand man" -s q -l quiet -d 'Print only errors'
complete -c jobq -n "__fish_jobq_using_subcommand man" -s v -l verbose -d 'Print more (repeat for debug logs)'
complete -c jobq -n "__fish_jobq_using_subcommand man" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c jobq -n "__fish_jobq_using_subcommand man" -s V -l version -d 'Print version'
complete -c jobq -n "__fish_jobq_using_subcommand help; and not __fish_seen_subcommand_from init enqueue flow batch worker stats list show wait cancel resolve retry delete replay-dead cleanup export import copy bridge workers queues pause resume schedules emit serve inbox migrate doctor autoscale bench completions man help" -f -a "init" -d 'Write a commented jobq.toml here to start from'
complete -c jobq -n "__fish_jobq_using_subcommand help; and not __fish_seen_subcommand_from init enqueue flow batch worker stats list show wait cancel resolve retry delete replay-dead cleanup export import copy bridge workers queues pause resume schedules emit serve inbox migrate doctor autoscale bench completions man help" -f -a "enqueue" -d 'Put a job (or a file of jobs) on a queue'
complete -c jobq -n "__fish_jobq_using_subcommand help; and not __fish_seen_subcommand_from init enqueue flow batch worker stats list show wait cancel resolve retry delete replay-dead cleanup export import copy bridge workers queues pause resume schedules emit serve inbox migrate doctor autoscale bench completions man help" -f -a "flow" -d 'Enqueue a graph of jobs that wait for each other, all or none, from a JSON document'
complete -c jobq -n "__fish_jobq_using_subcommand help; and not __fish_seen_subcommand_from init enqueue flow batch worker stats list show wait cancel resolve retry delete replay-dead cleanup export import copy bridge workers queues pause resume schedules emit serve inbox migrate doctor autoscale bench completions man help" -f -a "batch" -d 'Enqueue a batch of jobs and a callback that runs once all of them have ended; show a batch'
complete -c jobq -n "__fish_jobq_using_subcommand help; and not __fish_seen_subcommand_from init enqueue flow batch worker stats list show wait cancel resolve retry delete replay-dead cleanup export import copy bridge workers queues pause resume schedules emit serve inbox migrate doctor autoscale bench completions man help" -f -a "worker" -d 'Run jobs: claim, run handlers, retry, heartbeat, rescue'
complete -c jobq -n "__fish_jobq_using_subcommand help; and not __fish_seen_subcommand_from init enqueue flow batch worker stats list show wait cancel resolve retry delete replay-dead cleanup export import copy bridge workers queues pause resume schedules emit serve inbox migrate doctor autoscale bench completions man help" -f -a "stats" -d 'Counts by queue and status'
complete -c jobq -n "__fish_jobq_using_subcommand help; and not __fish_seen_subcommand_from init enqueue flow batch worker stats list show wait cancel resolve retry delete replay-dead cleanup export import copy bridge workers queues pause resume schedules emit serve inbox migrate doctor autoscale bench completions man help" -f -a "list" -d 'List jobs, newest first'
complete -c jobq -n "__fish_jobq_using_subcommand help; and not __fish_seen_subcommand_from init enqueue flow batch worker stats list show wait cancel resolve retry delete replay-dead cleanup export import copy bridge workers queues pause resume schedules emit serve inbox migrate doctor autoscale bench completions man help" -f -a "show" -d 'Show one job in full: payload, meta, errors, times'
complete -c jobq -n "__fish_jobq_using_subcommand help; and not __fish_seen_subcommand_from init enqueue flow batch worker stats list show wait cancel resolve retry delete replay-dead cleanup export import copy bridge workers queues pause resume schedules emit serve inbox migrate doctor autoscale bench completions man help" -f -a "wait" -d 'Wait for a job to finish, with a progress bar; the exit code tells the outcome'
complete -c jobq -n "__fish_jobq_using_subcommand help; and not __fish_seen_subcommand_from init enqueue flow batch worker stats list show wait cancel resolve retry delete replay-dead cleanup export import copy bridge workers queues pause resume schedules emit serve inbox migrate doctor autoscale bench completions man help" -f -a "cancel" -d 'Cancel pending, running or waiting jobs'
complete -c jobq -n "__fish_jobq_using_subcommand help; and not __fish_seen_subcommand_from init enqueue flow batch worker stats list show wait cancel resolve retry delete replay-dead cleanup export import copy bridge workers queues pause resume schedules emit serve inbox migrate doctor autoscale bench completions man help" -f -a "resolve" -d 'Finish a waiting job from outside: succeed, fail, retry or discard it'
complete -c jobq -n "__fish_jobq_using_subcommand help; and not __fish_seen_subcommand_from init enqueue flow batch worker stats list show wait cancel resolve retry delete replay-dead cleanup export import copy bridge workers queues pause resume schedules emit serve inbox migrate doctor autoscale bench completions man help" -f -a "retry" -d 'Put finished jobs of any outcome back on their queue (attempts reset, errors kept)'
complete -c jobq -n "__fish_jobq_using_subcommand help; and not __fish_seen_subcommand_from init enqueue flow batch worker stats list show wait cancel resolve retry delete replay-dead cleanup export import copy bridge workers queues pause resume schedules emit serve inbox migrate doctor autoscale bench completions man help" -f -a "delete" -d 'Delete jobs for good, by id or by filter'
complete -c jobq -n "__fish_jobq_using_subcommand help; and not __fish_seen_subcommand_from init enqueue flow batch worker stats list show wait cancel resolve retry delete replay-dead cleanup export import copy bridge workers queues pause resume schedules emit serve inbox migrate doctor autoscale bench completions man help" -f -a "replay-dead" -d 'Put dead jobs back on their queue (attempts reset, errors kept)'
complete -c jobq -n "__fish_jobq_using_subcommand help; and not __fish_seen_subcommand_from init enqueue flow batch worker stats list show wait cancel resolve retry delete replay-dead cleanup export import copy bridge workers queues pause resume schedules emit serve inbox migrate doctor autoscale bench completions man help" -f -a "cleanup" -d 'Delete finished jobs'
complete -c jobq -n "__fish_jobq_using_subcommand help; and not __fish_seen_subcommand_from init enqueue flow batch worker stats list show wait cancel resolve retry delete replay-dead cleanup export import copy bridge workers queues pause resume schedules emit serve inbox migrate doctor autoscale bench completions man help" -f -a "export" -d 'Write every job that matches, whole (state included), as NDJSON for `import`'
complete -c jobq -n "__fish_jobq_using_subcommand help; and not __fish_seen_subcommand_from init enqueue flow batch worker stats list show wait cancel resolve retry delete replay-dead cleanup export import copy bridge workers queues pause resume schedules emit serve inbox migrate doctor autoscale bench completions man help" -f -a "import" -d 'Restore jobs from `export` exactly (same ids, statuses, attempts, histories, times)'
complete -c jobq -n "__fish_jobq_using_subcommand help; and not __fish_seen_subcommand_from init enqueue flow batch worker stats list show wait cancel resolve retry delete replay-dead cleanup export import copy bridge workers queues pause resume schedules emit serve inbox migrate doctor autoscale bench completions man help" -f -a "copy" -d 'Copy (or move) every job that matches, whole, to another store'
complete -c jobq -n "__fish_jobq_using_subcommand help; and not __fish_seen_subcommand_from init enqueue flow batch worker stats list show wait cancel resolve retry delete replay-dead cleanup export import copy bridge workers queues pause resume schedules emit serve inbox migrate doctor autoscale bench completions man help" -f -a "bridge" -d 'Turn the messages of a RabbitMQ queue or a Kafka topic into jobs, acknowledging each once stored'
complete -c jobq -n "__fish_jobq_using_subcommand help; and not __fish_seen_subcommand_from init enqueue flow batch worker stats list show wait cancel resolve retry delete replay-dead cleanup export import copy bridge workers queues pause resume schedules emit serve inbox migrate doctor autoscale bench completions man help" -f -a "workers" -d 'List the workers that are running'
complete -c jobq -n "__fish_jobq_using_subcommand help; and not __fish_seen_subcommand_from init enqueue flow batch worker stats list show wait cancel resolve retry delete replay-dead cleanup export import copy bridge workers queues pause resume schedules emit serve inbox migrate doctor autoscale bench completions man help" -f -a "queues" -d 'Each queue with its counts, pauses and limits; each type with a limit or a block'
complete -c jobq -n "__fish_jobq_using_subcommand help; and not __fish_seen_subcommand_from init enqueue flow batch worker stats list show wait cancel resolve retry delete replay-dead cleanup export import copy bridge workers queues pause resume schedules emit serve inbox migrate doctor autoscale bench completions man help" -f -a "pause" -d 'Stop starting a queue\'s jobs (or one type\'s) on every worker; enqueueing goes on'
complete -c jobq -n "__fish_jobq_using_subcommand help; and not __fish_seen_subcommand_from init enqueue flow batch worker stats list show wait cancel resolve retry delete replay-dead cleanup export import copy bridge workers queues pause resume schedules emit serve inbox migrate doctor autoscale bench completions man help" -f -a "resume" -d 'Start a paused queue\'s (or type\'s) jobs again'
complete -c jobq -n "__fish_jobq_using_subcommand help; and not __fish_seen_subcommand_from init enqueue flow batch worker stats list show wait cancel resolve retry delete replay-dead cleanup export import copy bridge workers queues pause resume schedules emit serve inbox migrate doctor autoscale bench completions man help" -f -a "schedules" -d 'Show, trigger, pause and resume the configured schedules'
complete -c jobq -n "__fish_jobq_using_subcommand help; and not __fish_seen_subcommand_from init enqueue flow batch worker stats list show wait cancel resolve retry delete replay-dead cleanup export import copy bridge workers queues pause resume schedules emit serve inbox migrate doctor autoscale bench completions man help" -f -a "emit" -d 'Emit an event: enqueue the jobs the config subscribes to it, all or none'
complete -c jobq -n "__fish_jobq_using_subcommand help; and not __fish_seen_subcommand_from init enqueue flow batch worker stats list show wait cancel resolve retry delete replay-dead cleanup export import copy bridge workers queues pause resume schedules emit serve inbox migrate doctor autoscale bench completions man help" -f -a "serve" -d 'Serve the HTTP admin API, /metrics and /healthz'
complete -c jobq -n "__fish_jobq_using_subcommand help; and not __fish_seen_subcommand_from init enqueue flow batch worker stats list show wait cancel resolve retry delete replay-dead cleanup export import copy bridge workers queues pause resume schedules emit serve inbox migrate doctor autoscale bench completions man help" -f -a "inbox" -d 'List the Redis inbox items that could not become jobs'
complete -c jobq -n "__fish_jobq_using_subcommand help; and not __fish_seen_subcommand_from init enqueue flow batch worker stats list show wait cancel resolve retry delete replay-dead cleanup export import copy bridge workers queues pause resume schedules emit serve inbox migrate doctor autoscale bench completions man help" -f -a "migrate" -d 'Create or upgrade the store\'s schema'
complete -c jobq -n "__fish_jobq_using_subcommand help; and not __fish_seen_subcommand_from init enqueue flow batch worker stats list show wait cancel resolve retry delete replay-dead cleanup export import copy bridge workers queues pause resume schedules emit serve inbox migrate doctor autoscale bench completions man help" -f -a "doctor" -d 'Find what is wrong with the store and its jobs, and what to do about it'
complete -c jobq -n "__fish_jobq_using_subcommand help; and not __fish_seen_subcommand_from init enqueue flow batch worker stats list show wait cancel resolve retry delete replay-dead cleanup export import copy bridge workers queues pause resume schedules emit serve inbox migrate doctor autoscale bench completions man help" -f -a "autoscale" -d 'Work out how many workers a queue needs and hand the number to a program, or print it'
complete -c jobq -n "__fish_jobq_using_subcommand help; and not __fish_seen_subcommand_from init enqueue flow batch worker stats list show wait cancel resolve retry delete replay-dead cleanup export import copy bridge workers queues pause resume schedules emit serve inbox migrate doctor autoscale bench completions man help" -f -a "bench" -d 'Measure this store\'s throughput and latency on a throwaway queue'
complete -c jobq -n "__fish_jobq_using_subcommand help; and not __fish_seen_subcommand_from init enqueue flow batch worker stats list show wait cancel resolve retry delete replay-dead cleanup export import copy bridge workers queues pause resume schedules emit serve inbox migrate doctor autoscale bench completions man help" -f -a "completions" -d 'Print shell completions'
complete -c jobq -n "__fish_jobq_using_subcommand help; and not __fish_seen_subcommand_from init enqueue flow batch worker stats list show wait cancel resolve retry delete replay-dead cleanup export import copy bridge workers queues pause resume schedules emit serve inbox migrate doctor autoscale bench completions man help" -f -a "man" -d 'Print man pages (roff) into a folder, or jobq(1) on stdout'
complete -c jobq -n "__fish_jobq_using_subcommand help; and not __fish_seen_subcommand_from init enqueue flow batch worker stats list show wait cancel resolve retry delete replay-dead cleanup export import copy bridge workers queues pause resume schedules emit serve inbox migrate doctor autoscale bench completions man help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c jobq -n "__fish_jobq_using_subcommand help; and __fish_seen_subcommand_from batch" -f -a "show" -d 'Where a batch stands: its members counted by status, and its callback\'s status'
complete -c jobq -n "__fish_jobq_using_subcommand help; and __fish_seen_subcommand_from schedules" -f -a "next" -d 'The next tick times of a schedule, computed (the store is not touched)'
complete -c jobq -n "__fish_jobq_using_subcommand help; and __fish_seen_subcommand_from schedules" -f -a "trigger" -d 'Enqueue one run now, outside the tick sequence, and print its job id'
complete -c jobq -n "__fish_jobq_using_subcommand help; and __fish_seen_subcommand_from schedules" -f -a "pause" -d 'Stop every worker from enqueueing the schedule\'s ticks (within a second; survives restarts)'
complete -c jobq -n "__fish_jobq_using_subcommand help; and __fish_seen_subcommand_from schedules" -f -a "resume" -d 'Let the schedule\'s ticks be enqueued again'
