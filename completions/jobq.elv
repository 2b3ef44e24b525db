
use builtin;
use str;

set edit:completion:arg-completer[jobq] = {|@words|
    fn spaces {|n|
        builtin:repeat $n ' ' | str:join ''
    }
    fn cand {|text desc|
        edit:complex-candidate $text &display=$text' '(spaces (- 14 (wcswidth $text)))$desc
    }
    var command = 'jobq'
    for word $words[1..-1] {
        if (str:has-prefix $word '-') {
            break
        }
        set command = $command';'$word
    }
    var completions = [
        &'jobq'= {
            cand --url 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]'
            cand --config 'Config file (TOML) [default: ./jobq.toml, then the user config directory]'
            cand -o 'Output format'
            cand --output 'Output format'
            cand -q 'Print only errors'
            cand --quiet 'Print only errors'
            cand -v 'Print more (repeat for debug logs)'
            cand --verbose 'Print more (repeat for debug logs)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand init 'Write a commented jobq.toml here to start from'
            cand enqueue 'Put a job (or a file of jobs) on a queue'
            cand flow 'Enqueue a graph of jobs that wait for each other, all or none, from a JSON document'
            cand batch 'Enqueue a batch of jobs and a callback that runs once all of them have ended; show a batch'
            cand worker 'Run jobs: claim, run handlers, retry, heartbeat, rescue'
            cand stats 'Counts by queue and status'
            cand list 'List jobs, newest first'
            cand show 'Show one job in full: payload, meta, errors, times'
            cand wait 'Wait for a job to finish, with a progress bar; the exit code tells the outcome'
            cand cancel 'Cancel pending, running or waiting jobs'
            cand resolve 'Finish a waiting job from outside: succeed, fail, retry or discard it'
            cand retry 'Put finished jobs of any outcome back on their queue (attempts reset, errors kept)'
            cand delete 'Delete jobs for good, by id or by filter'
            cand replay-dead 'Put dead jobs back on their queue (attempts reset, errors kept)'
            cand replay 'Put dead jobs back on their queue (attempts reset, errors kept)'
            cand cleanup 'Delete finished jobs'
            cand export 'Write every job that matches, whole (state included), as NDJSON for `import`'
            cand import 'Restore jobs from `export` exactly (same ids, statuses, attempts, histories, times)'
            cand copy 'Copy (or move) every job that matches, whole, to another store'
            cand bridge 'Turn the messages of a RabbitMQ queue or a Kafka topic into jobs, acknowledging each once stored'
            cand workers 'List the workers that are running'
            cand queues 'Each queue with its counts, pauses and limits; each type with a limit or a block'
            cand pause 'Stop starting a queue''s jobs (or one type''s) on every worker; enqueueing goes on'
            cand resume 'Start a paused queue''s (or type''s) jobs again'
            cand schedules 'Show, trigger, pause and resume the configured schedules'
            cand emit 'Emit an event: enqueue the jobs the config subscribes to it, all or none'
            cand serve 'Serve the HTTP admin API, /metrics and /healthz'
            cand inbox 'List the Redis inbox items that could not become jobs'
            cand migrate 'Create or upgrade the store''s schema'
            cand doctor 'Find what is wrong with the store and its jobs, and what to do about it'
            cand autoscale 'Work out how many workers a queue needs and hand the number to a program, or print it'
            cand bench 'Measure this store''s throughput and latency on a throwaway queue'
            cand completions 'Print shell completions'
            cand man 'Print man pages (roff) into a folder, or jobq(1) on stdout'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'jobq;init'= {
            cand --url 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]'
            cand --config 'Config file (TOML) [default: ./jobq.toml, then the user config directory]'
            cand -o 'Output format'
            cand --output 'Output format'
            cand --force 'Overwrite an existing jobq.toml'
            cand -q 'Print only errors'
            cand --quiet 'Print only errors'
            cand -v 'Print more (repeat for debug logs)'
            cand --verbose 'Print more (repeat for debug logs)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'jobq;enqueue'= {
            cand --queue 'Queue [default: default]'
            cand --priority 'Priority; smaller runs first [default: 0]'
            cand --delay 'Run no sooner than this from now, e.g. 30s, 10m, 2h'
            cand --at 'Run no sooner than this time (RFC 3339 or Unix seconds)'
            cand --max-attempts 'Runs allowed, the first included [default: 5, or [retry] max_attempts]'
            cand --timeout 'Time-out for each run of this job, overriding its handler''s, e.g. 30s'
            cand --expires-in 'Never start the job once this long has passed, e.g. 10m: it ends expired instead [default: its type''s expires_in, or never]'
            cand --expires-at 'Never start the job at or after this time (RFC 3339 or Unix seconds): it ends expired instead'
            cand --meta 'Meta entry (repeatable), e.g. --meta tenantId=42'
            cand --unique-key 'While a live job with this key is in the queue, return it instead of adding another'
            cand --unique-mode 'What to do when a live job holds the unique key: coalesce (return it), replace (update it if it has not started), keep-last (replace, or wait behind it while it runs), cancel-running (keep-last, and cancel it while it runs), debounce or throttle (each with its window) [default: its type''s unique_mode, or coalesce]'
            cand --debounce 'Debounce: replace the holder and put its run off to this long from now, e.g. 30s (implies --unique-mode debounce)'
            cand --unique-running 'With --unique-mode replace or --debounce: what happens while the key''s holder runs: coalesce (the default: the new job is dropped) or queue-behind (it waits for the running job to end; replace with queue-behind is keep-last)'
            cand --max-wait 'With --debounce: never put a job off longer than this from its first enqueue, e.g. 5m'
            cand --throttle 'Throttle: hold the key this long after its job was created, finished or not, e.g. 1m; an enqueue in that window is dropped (implies --unique-mode throttle)'
            cand --id 'Job id [default: a new UUIDv7]'
            cand --after 'Run after job ID has ended, and by RULE how: success (the default: cancelled if it ends otherwise), finish (however it ends) or failure (only if it ends dead or discarded); repeatable'
            cand --join 'With several --after: all (run once every one is met, the default) or any (run at the first met; cancelled only once every one has broken)'
            cand --file 'Enqueue every line of an NDJSON file (- for stdin) in bulk'
            cand --type 'With --file: the type given to lines that are not jobq envelopes (their whole value becomes the payload)'
            cand --url 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]'
            cand --config 'Config file (TOML) [default: ./jobq.toml, then the user config directory]'
            cand -o 'Output format'
            cand --output 'Output format'
            cand --wait 'Wait for the job to finish; the exit code tells how (0 succeeded, 4 dead, 5 cancelled, 6 discarded, 7 expired)'
            cand -q 'Print only errors'
            cand --quiet 'Print only errors'
            cand -v 'Print more (repeat for debug logs)'
            cand --verbose 'Print more (repeat for debug logs)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'jobq;flow'= {
            cand --url 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]'
            cand --config 'Config file (TOML) [default: ./jobq.toml, then the user config directory]'
            cand -o 'Output format'
            cand --output 'Output format'
            cand -q 'Print only errors'
            cand --quiet 'Print only errors'
            cand -v 'Print more (repeat for debug logs)'
            cand --verbose 'Print more (repeat for debug logs)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'jobq;batch'= {
            cand --file 'The members: one job JSON per line, or - for stdin'
            cand --then 'The callback''s type: it runs once every member has ended, however it ended'
            cand --then-payload 'The callback''s payload: JSON, @FILE or - for stdin (default {})'
            cand --on-failure 'A job that runs once, at the first member that ends dead or discarded'
            cand --on-failure-payload 'The on-failure job''s payload: JSON, @FILE or - for stdin (default {})'
            cand --queue 'The queue of the callback and the on-failure job, and of members that name none'
            cand --id 'The batch''s id (the callback''s); a new one by default'
            cand --url 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]'
            cand --config 'Config file (TOML) [default: ./jobq.toml, then the user config directory]'
            cand -o 'Output format'
            cand --output 'Output format'
            cand -q 'Print only errors'
            cand --quiet 'Print only errors'
            cand -v 'Print more (repeat for debug logs)'
            cand --verbose 'Print more (repeat for debug logs)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand show 'Where a batch stands: its members counted by status, and its callback''s status'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'jobq;batch;show'= {
            cand --url 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]'
            cand --config 'Config file (TOML) [default: ./jobq.toml, then the user config directory]'
            cand -o 'Output format'
            cand --output 'Output format'
            cand -q 'Print only errors'
            cand --quiet 'Print only errors'
            cand -v 'Print more (repeat for debug logs)'
            cand --verbose 'Print more (repeat for debug logs)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'jobq;batch;help'= {
            cand show 'Where a batch stands: its members counted by status, and its callback''s status'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'jobq;batch;help;show'= {
        }
        &'jobq;batch;help;help'= {
        }
        &'jobq;worker'= {
            cand --queue 'Queue to take jobs from (repeatable, or comma-separated) [default: [worker] queues, or default]'
            cand -c 'Jobs run at once [default: [worker] concurrency, or 8]'
            cand --concurrency 'Jobs run at once [default: [worker] concurrency, or 8]'
            cand --max-jobs 'Exit after taking on N jobs (after finishing them)'
            cand --max-memory 'Finish the running jobs and exit once resident memory exceeds SIZE, e.g. 512MiB or 2G'
            cand --nice 'Lower the CPU priority of the worker and the programs it runs (0-19; negative needs root)'
            cand --name 'Name shown by `jobq workers` [default: the host name]'
            cand --log-format 'Log format: text for people, json (one object per line) for log shippers'
            cand --kill-grace 'Time a stopped program gets between SIGTERM and SIGKILL'
            cand --handler 'A handler for TYPE (`*`: every type without its own), added to the config file''s or replacing its handler for TYPE: a program with its arguments (`./bin/send-mail --fast`), persistent:PROGRAM, builtin:NAME, an http(s):// URL, or an amqp(s):// or kafka:// target to publish to. Repeatable'
            cand --url 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]'
            cand --config 'Config file (TOML) [default: ./jobq.toml, then the user config directory]'
            cand -o 'Output format'
            cand --output 'Output format'
            cand --burst 'Exit once no job is ready (after finishing the running ones)'
            cand --reload-on-change 'Reload the config file whenever it changes on disk, as SIGHUP does'
            cand -q 'Print only errors'
            cand --quiet 'Print only errors'
            cand -v 'Print more (repeat for debug logs)'
            cand --verbose 'Print more (repeat for debug logs)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'jobq;stats'= {
            cand --queue 'Only this queue (repeatable or comma-separated)'
            cand --watch 'Refresh every SECS seconds until interrupted'
            cand --url 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]'
            cand --config 'Config file (TOML) [default: ./jobq.toml, then the user config directory]'
            cand -o 'Output format'
            cand --output 'Output format'
            cand -q 'Print only errors'
            cand --quiet 'Print only errors'
            cand -v 'Print more (repeat for debug logs)'
            cand --verbose 'Print more (repeat for debug logs)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'jobq;list'= {
            cand --queue 'Only this queue (repeatable or comma-separated)'
            cand --type 'Only this job type (repeatable or comma-separated)'
            cand --status 'Only this status: blocked, pending, running, waiting, succeeded, dead, cancelled, discarded, expired (repeatable or comma-separated)'
            cand --since 'Created at or after: a duration ago (30m, 7d) or a time (RFC 3339)'
            cand --until 'Created before: a duration ago or a time'
            cand --limit 'At most this many jobs'
            cand --offset 'Skip this many jobs (for paging)'
            cand --after 'Only jobs after this one in the list: the next page after a page that ended with it (as fast however deep)'
            cand --url 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]'
            cand --config 'Config file (TOML) [default: ./jobq.toml, then the user config directory]'
            cand -o 'Output format'
            cand --output 'Output format'
            cand -q 'Print only errors'
            cand --quiet 'Print only errors'
            cand -v 'Print more (repeat for debug logs)'
            cand --verbose 'Print more (repeat for debug logs)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'jobq;show'= {
            cand --url 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]'
            cand --config 'Config file (TOML) [default: ./jobq.toml, then the user config directory]'
            cand -o 'Output format'
            cand --output 'Output format'
            cand -q 'Print only errors'
            cand --quiet 'Print only errors'
            cand -v 'Print more (repeat for debug logs)'
            cand --verbose 'Print more (repeat for debug logs)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'jobq;wait'= {
            cand --timeout 'Give up after this long, e.g. 30s or 5m (exit code 1) [default: wait as long as it takes]'
            cand --url 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]'
            cand --config 'Config file (TOML) [default: ./jobq.toml, then the user config directory]'
            cand -o 'Output format'
            cand --output 'Output format'
            cand -q 'Print only errors'
            cand --quiet 'Print only errors'
            cand -v 'Print more (repeat for debug logs)'
            cand --verbose 'Print more (repeat for debug logs)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'jobq;cancel'= {
            cand --queue 'Cancel every live job in this queue (repeatable or comma-separated)'
            cand --type 'Cancel every live job of this type (repeatable or comma-separated)'
            cand --status 'Only jobs in this status: pending, running or waiting (repeatable or comma-separated)'
            cand --url 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]'
            cand --config 'Config file (TOML) [default: ./jobq.toml, then the user config directory]'
            cand -o 'Output format'
            cand --output 'Output format'
            cand --cascade 'Also cancel every job that waits for these (and those that wait for them, and so on) and has not ended, whatever its rule'
            cand -y 'Do not ask before cancelling by filter'
            cand --yes 'Do not ask before cancelling by filter'
            cand -q 'Print only errors'
            cand --quiet 'Print only errors'
            cand -v 'Print more (repeat for debug logs)'
            cand --verbose 'Print more (repeat for debug logs)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'jobq;resolve'= {
            cand --result 'With --succeed: its result (JSON)'
            cand --fail 'The job failed for good (dead), with this error'
            cand --delay 'With --retry: not before this long from now, e.g. 30s, 10m [default: at once]'
            cand --discard 'Drop the job (discarded), with an optional reason'
            cand --url 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]'
            cand --config 'Config file (TOML) [default: ./jobq.toml, then the user config directory]'
            cand -o 'Output format'
            cand --output 'Output format'
            cand --succeed 'The job succeeded'
            cand --retry 'Run the job again (the attempt it waited in counts as used)'
            cand -q 'Print only errors'
            cand --quiet 'Print only errors'
            cand -v 'Print more (repeat for debug logs)'
            cand --verbose 'Print more (repeat for debug logs)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'jobq;retry'= {
            cand --url 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]'
            cand --config 'Config file (TOML) [default: ./jobq.toml, then the user config directory]'
            cand -o 'Output format'
            cand --output 'Output format'
            cand -q 'Print only errors'
            cand --quiet 'Print only errors'
            cand -v 'Print more (repeat for debug logs)'
            cand --verbose 'Print more (repeat for debug logs)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'jobq;delete'= {
            cand --queue 'Delete every job in this queue (repeatable or comma-separated)'
            cand --type 'Delete every job of this type (repeatable or comma-separated)'
            cand --status 'Only jobs in this status (repeatable or comma-separated)'
            cand --older-than 'Only jobs created longer ago than this, e.g. 7d, 12h'
            cand --url 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]'
            cand --config 'Config file (TOML) [default: ./jobq.toml, then the user config directory]'
            cand -o 'Output format'
            cand --output 'Output format'
            cand --force 'Delete running and waiting jobs too'
            cand -y 'Do not ask before deleting by filter'
            cand --yes 'Do not ask before deleting by filter'
            cand -q 'Print only errors'
            cand --quiet 'Print only errors'
            cand -v 'Print more (repeat for debug logs)'
            cand --verbose 'Print more (repeat for debug logs)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'jobq;replay-dead'= {
            cand --queue 'Only dead jobs of this queue (repeatable or comma-separated)'
            cand --type 'Only dead jobs of this type (repeatable or comma-separated)'
            cand --id 'Only this job (repeatable)'
            cand --limit 'At most this many, oldest death first'
            cand --url 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]'
            cand --config 'Config file (TOML) [default: ./jobq.toml, then the user config directory]'
            cand -o 'Output format'
            cand --output 'Output format'
            cand --dry-run 'Show what would be replayed without changing anything'
            cand --cascade 'Also bring back, blocked, the jobs that these jobs'' failure cancelled (and those that their cancellation cancelled, and so on), with their dependencies counted again'
            cand --print 'Print the replayed jobs as JSON lines on stdout'
            cand -y 'Do not ask before an unbounded replay (no --limit or --id)'
            cand --yes 'Do not ask before an unbounded replay (no --limit or --id)'
            cand -q 'Print only errors'
            cand --quiet 'Print only errors'
            cand -v 'Print more (repeat for debug logs)'
            cand --verbose 'Print more (repeat for debug logs)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'jobq;replay'= {
            cand --queue 'Only dead jobs of this queue (repeatable or comma-separated)'
            cand --type 'Only dead jobs of this type (repeatable or comma-separated)'
            cand --id 'Only this job (repeatable)'
            cand --limit 'At most this many, oldest death first'
            cand --url 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]'
            cand --config 'Config file (TOML) [default: ./jobq.toml, then the user config directory]'
            cand -o 'Output format'
            cand --output 'Output format'
            cand --dry-run 'Show what would be replayed without changing anything'
            cand --cascade 'Also bring back, blocked, the jobs that these jobs'' failure cancelled (and those that their cancellation cancelled, and so on), with their dependencies counted again'
            cand --print 'Print the replayed jobs as JSON lines on stdout'
            cand -y 'Do not ask before an unbounded replay (no --limit or --id)'
            cand --yes 'Do not ask before an unbounded replay (no --limit or --id)'
            cand -q 'Print only errors'
            cand --quiet 'Print only errors'
            cand -v 'Print more (repeat for debug logs)'
            cand --verbose 'Print more (repeat for debug logs)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'jobq;cleanup'= {
            cand --older-than 'Only jobs that finished longer ago than this, e.g. 7d, 12h'
            cand --status 'Only this terminal status: succeeded, dead, cancelled, discarded, expired (repeatable or comma-separated)'
            cand --queue 'Only this queue (repeatable or comma-separated)'
            cand --type 'Only this job type (repeatable or comma-separated)'
            cand --keep-last 'Keep the newest N finished jobs of each queue and status; delete only older ones'
            cand --url 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]'
            cand --config 'Config file (TOML) [default: ./jobq.toml, then the user config directory]'
            cand -o 'Output format'
            cand --output 'Output format'
            cand --dry-run 'Count what would be deleted without deleting'
            cand -y 'Do not ask before deleting without --older-than'
            cand --yes 'Do not ask before deleting without --older-than'
            cand -q 'Print only errors'
            cand --quiet 'Print only errors'
            cand -v 'Print more (repeat for debug logs)'
            cand --verbose 'Print more (repeat for debug logs)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'jobq;export'= {
            cand --queue 'Only this queue (repeatable or comma-separated)'
            cand --type 'Only this job type (repeatable or comma-separated)'
            cand --status 'Only this status: blocked, pending, running, waiting, succeeded, dead, cancelled, discarded, expired (repeatable or comma-separated)'
            cand --since 'Created at or after: a duration ago (30m, 7d) or a time (RFC 3339)'
            cand --until 'Created before: a duration ago or a time'
            cand --file 'Write to this file instead of stdout (- for stdout)'
            cand --url 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]'
            cand --config 'Config file (TOML) [default: ./jobq.toml, then the user config directory]'
            cand -o 'Output format'
            cand --output 'Output format'
            cand -q 'Print only errors'
            cand --quiet 'Print only errors'
            cand -v 'Print more (repeat for debug logs)'
            cand --verbose 'Print more (repeat for debug logs)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'jobq;import'= {
            cand --on-conflict 'A job whose id the store holds already: skip it, replace it, or import nothing'
            cand --url 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]'
            cand --config 'Config file (TOML) [default: ./jobq.toml, then the user config directory]'
            cand -o 'Output format'
            cand --output 'Output format'
            cand --keep-running 'Keep running jobs running (for workers that still hold them)'
            cand --dry-run 'Say what would be imported, write nothing'
            cand -q 'Print only errors'
            cand --quiet 'Print only errors'
            cand -v 'Print more (repeat for debug logs)'
            cand --verbose 'Print more (repeat for debug logs)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'jobq;copy'= {
            cand --to 'The store to copy into (its schema is created or upgraded first)'
            cand --queue 'Only this queue (repeatable or comma-separated)'
            cand --type 'Only this job type (repeatable or comma-separated)'
            cand --status 'Only this status: blocked, pending, running, waiting, succeeded, dead, cancelled, discarded, expired (repeatable or comma-separated)'
            cand --since 'Created at or after: a duration ago (30m, 7d) or a time (RFC 3339)'
            cand --until 'Created before: a duration ago or a time'
            cand --url 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]'
            cand --config 'Config file (TOML) [default: ./jobq.toml, then the user config directory]'
            cand -o 'Output format'
            cand --output 'Output format'
            cand --resume 'Go on after an interrupted copy: skip the jobs the target holds already'
            cand --move 'Delete from the source the jobs the target has committed (running jobs stay; live ones go last)'
            cand --keep-running 'Keep running jobs running in the target'
            cand -q 'Print only errors'
            cand --quiet 'Print only errors'
            cand -v 'Print more (repeat for debug logs)'
            cand --verbose 'Print more (repeat for debug logs)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'jobq;bridge'= {
            cand --from 'The RabbitMQ queue to consume (amqp:// only)'
            cand --topic 'The Kafka topic to consume (kafka:// only)'
            cand --group 'The Kafka consumer group whose offsets the bridge commits (kafka:// only)'
            cand --to 'The jobq queue of messages that name none [default: default]'
            cand --type 'The job type of messages that are not envelopes (their whole body is the payload)'
            cand --max-in-flight 'Messages delivered and not yet acknowledged, at most'
            cand --connect-timeout 'How long the first connection to the broker may take'
            cand --name 'Name shown by `jobq workers` [default: the host name]'
            cand --log-format 'Log format: text for people, json (one object per line) for log shippers'
            cand --url 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]'
            cand --config 'Config file (TOML) [default: ./jobq.toml, then the user config directory]'
            cand -o 'Output format'
            cand --output 'Output format'
            cand -q 'Print only errors'
            cand --quiet 'Print only errors'
            cand -v 'Print more (repeat for debug logs)'
            cand --verbose 'Print more (repeat for debug logs)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'jobq;workers'= {
            cand --url 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]'
            cand --config 'Config file (TOML) [default: ./jobq.toml, then the user config directory]'
            cand -o 'Output format'
            cand --output 'Output format'
            cand -q 'Print only errors'
            cand --quiet 'Print only errors'
            cand -v 'Print more (repeat for debug logs)'
            cand --verbose 'Print more (repeat for debug logs)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'jobq;queues'= {
            cand --url 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]'
            cand --config 'Config file (TOML) [default: ./jobq.toml, then the user config directory]'
            cand -o 'Output format'
            cand --output 'Output format'
            cand -q 'Print only errors'
            cand --quiet 'Print only errors'
            cand -v 'Print more (repeat for debug logs)'
            cand --verbose 'Print more (repeat for debug logs)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'jobq;pause'= {
            cand --type 'Only this job type''s jobs in the queue'
            cand --url 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]'
            cand --config 'Config file (TOML) [default: ./jobq.toml, then the user config directory]'
            cand -o 'Output format'
            cand --output 'Output format'
            cand -q 'Print only errors'
            cand --quiet 'Print only errors'
            cand -v 'Print more (repeat for debug logs)'
            cand --verbose 'Print more (repeat for debug logs)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'jobq;resume'= {
            cand --type 'Only this job type''s jobs in the queue'
            cand --url 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]'
            cand --config 'Config file (TOML) [default: ./jobq.toml, then the user config directory]'
            cand -o 'Output format'
            cand --output 'Output format'
            cand -q 'Print only errors'
            cand --quiet 'Print only errors'
            cand -v 'Print more (repeat for debug logs)'
            cand --verbose 'Print more (repeat for debug logs)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'jobq;schedules'= {
            cand --url 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]'
            cand --config 'Config file (TOML) [default: ./jobq.toml, then the user config directory]'
            cand -o 'Output format'
            cand --output 'Output format'
            cand -q 'Print only errors'
            cand --quiet 'Print only errors'
            cand -v 'Print more (repeat for debug logs)'
            cand --verbose 'Print more (repeat for debug logs)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand next 'The next tick times of a schedule, computed (the store is not touched)'
            cand trigger 'Enqueue one run now, outside the tick sequence, and print its job id'
            cand pause 'Stop every worker from enqueueing the schedule''s ticks (within a second; survives restarts)'
            cand resume 'Let the schedule''s ticks be enqueued again'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'jobq;schedules;next'= {
            cand --count 'How many'
            cand --url 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]'
            cand --config 'Config file (TOML) [default: ./jobq.toml, then the user config directory]'
            cand -o 'Output format'
            cand --output 'Output format'
            cand -q 'Print only errors'
            cand --quiet 'Print only errors'
            cand -v 'Print more (repeat for debug logs)'
            cand --verbose 'Print more (repeat for debug logs)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'jobq;schedules;trigger'= {
            cand --url 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]'
            cand --config 'Config file (TOML) [default: ./jobq.toml, then the user config directory]'
            cand -o 'Output format'
            cand --output 'Output format'
            cand -q 'Print only errors'
            cand --quiet 'Print only errors'
            cand -v 'Print more (repeat for debug logs)'
            cand --verbose 'Print more (repeat for debug logs)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'jobq;schedules;pause'= {
            cand --url 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]'
            cand --config 'Config file (TOML) [default: ./jobq.toml, then the user config directory]'
            cand -o 'Output format'
            cand --output 'Output format'
            cand -q 'Print only errors'
            cand --quiet 'Print only errors'
            cand -v 'Print more (repeat for debug logs)'
            cand --verbose 'Print more (repeat for debug logs)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'jobq;schedules;resume'= {
            cand --url 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]'
            cand --config 'Config file (TOML) [default: ./jobq.toml, then the user config directory]'
            cand -o 'Output format'
            cand --output 'Output format'
            cand --catch-up 'Also enqueue the ticks missed while paused, as its catch_up allows (default: skip them)'
            cand -q 'Print only errors'
            cand --quiet 'Print only errors'
            cand -v 'Print more (repeat for debug logs)'
            cand --verbose 'Print more (repeat for debug logs)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'jobq;schedules;help'= {
            cand next 'The next tick times of a schedule, computed (the store is not touched)'
            cand trigger 'Enqueue one run now, outside the tick sequence, and print its job id'
            cand pause 'Stop every worker from enqueueing the schedule''s ticks (within a second; survives restarts)'
            cand resume 'Let the schedule''s ticks be enqueued again'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'jobq;schedules;help;next'= {
        }
        &'jobq;schedules;help;trigger'= {
        }
        &'jobq;schedules;help;pause'= {
        }
        &'jobq;schedules;help;resume'= {
        }
        &'jobq;schedules;help;help'= {
        }
        &'jobq;emit'= {
            cand --id 'The event''s id: emitting it again enqueues nothing [default: a new UUIDv7]'
            cand --meta 'Meta entry every job gets (repeatable), e.g. --meta tenantId=42'
            cand --url 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]'
            cand --config 'Config file (TOML) [default: ./jobq.toml, then the user config directory]'
            cand -o 'Output format'
            cand --output 'Output format'
            cand --allow-none 'Accept an event nobody subscribes to (it becomes no job)'
            cand -q 'Print only errors'
            cand --quiet 'Print only errors'
            cand -v 'Print more (repeat for debug logs)'
            cand --verbose 'Print more (repeat for debug logs)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'jobq;serve'= {
            cand --listen 'Address to listen on, host:port [default: [serve] listen, else 127.0.0.1:8080]'
            cand --tls-cert 'Serve HTTPS with this certificate chain (PEM); needs --tls-key'
            cand --tls-key 'The private key of --tls-cert (PEM)'
            cand --request-timeout 'Longest a request may take, its body included'
            cand --log-format 'Log format'
            cand --url 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]'
            cand --config 'Config file (TOML) [default: ./jobq.toml, then the user config directory]'
            cand -o 'Output format'
            cand --output 'Output format'
            cand -q 'Print only errors'
            cand --quiet 'Print only errors'
            cand -v 'Print more (repeat for debug logs)'
            cand --verbose 'Print more (repeat for debug logs)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'jobq;inbox'= {
            cand -Q 'Only these queues (repeatable) [default: every queue]'
            cand --queue 'Only these queues (repeatable) [default: every queue]'
            cand --limit 'At most this many items per queue, oldest first'
            cand --url 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]'
            cand --config 'Config file (TOML) [default: ./jobq.toml, then the user config directory]'
            cand -o 'Output format'
            cand --output 'Output format'
            cand --clear 'Delete the rejected items (of the queues named, or all) instead of listing them'
            cand -q 'Print only errors'
            cand --quiet 'Print only errors'
            cand -v 'Print more (repeat for debug logs)'
            cand --verbose 'Print more (repeat for debug logs)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'jobq;migrate'= {
            cand --url 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]'
            cand --config 'Config file (TOML) [default: ./jobq.toml, then the user config directory]'
            cand -o 'Output format'
            cand --output 'Output format'
            cand --print 'Print the SQL of every migration for the configured store instead of applying it'
            cand -q 'Print only errors'
            cand --quiet 'Print only errors'
            cand -v 'Print more (repeat for debug logs)'
            cand --verbose 'Print more (repeat for debug logs)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'jobq;doctor'= {
            cand --ready-late 'Report a queue whose oldest ready job has waited this long while none of its jobs runs'
            cand --paused-for 'Report a queue (or type) paused for longer than this'
            cand --rescues 'Report jobs rescued from lost workers more than N times'
            cand --dead-letters 'Report a queue holding at least N dead jobs (0: any)'
            cand --wal-size 'SQLite: report a write-ahead log larger than this'
            cand --dead-rows 'PostgreSQL: report a jobq table with more dead rows than this (and over 20% of its live rows)'
            cand --url 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]'
            cand --config 'Config file (TOML) [default: ./jobq.toml, then the user config directory]'
            cand -o 'Output format'
            cand --output 'Output format'
            cand -q 'Print only errors'
            cand --quiet 'Print only errors'
            cand -v 'Print more (repeat for debug logs)'
            cand --verbose 'Print more (repeat for debug logs)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'jobq;autoscale'= {
            cand --queue 'The queue to size workers for'
            cand --min 'Never fewer workers than this'
            cand --max 'Never more workers than this'
            cand --target-latency 'How long a ready job may wait before it starts'
            cand --concurrency 'Jobs one worker runs at once (its --concurrency)'
            cand --exec 'Run this program with the number of workers as its argument (and in JOBQ_DESIRED_WORKERS) whenever it changes'
            cand --cool-down 'Least time between two runs of the program'
            cand --cooldown 'Least time between two runs of the program'
            cand --interval 'Time between evaluations'
            cand --window 'How far back arrivals and run times are measured'
            cand --url 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]'
            cand --config 'Config file (TOML) [default: ./jobq.toml, then the user config directory]'
            cand -o 'Output format'
            cand --output 'Output format'
            cand --print 'Print the number of workers at each evaluation instead'
            cand --once 'Evaluate once and exit'
            cand -q 'Print only errors'
            cand --quiet 'Print only errors'
            cand -v 'Print more (repeat for debug logs)'
            cand --verbose 'Print more (repeat for debug logs)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'jobq;bench'= {
            cand --jobs 'Jobs worked off by the drain workload'
            cand --bulk-jobs 'Jobs enqueued in bulk by the enqueue workload'
            cand --single-jobs 'Jobs enqueued one at a time by the enqueue workload'
            cand --producers 'Producers enqueueing those one-at-a-time jobs at once, each awaiting its own calls (as concurrent web requests do)'
            cand --batch-size 'Jobs per call when enqueueing in bulk'
            cand -c 'Handlers each worker runs at once [default: [worker] concurrency, or 8]'
            cand --concurrency 'Handlers each worker runs at once [default: [worker] concurrency, or 8]'
            cand --processes 'Run drain and steady with N `jobq worker` processes instead of one worker inside the bench; with enqueue, N worker processes work the one-at-a-time jobs off while they are enqueued'
            cand --exec 'Run each drain and steady job with this program (no arguments) instead of the builtin noop'
            cand --persistent 'Hand each drain and steady job to this program (no arguments) kept running, as a persistent handler, instead of the builtin noop'
            cand --in-flight 'With --persistent: jobs one copy of the program holds at once'
            cand --copies 'With --persistent: copies of the program each worker runs'
            cand --rate 'Jobs per second enqueued by the steady workload'
            cand --duration 'How long the steady workload enqueues'
            cand --latency-jobs 'Jobs enqueued by the latency workload''s producer process'
            cand --spacing 'Pause between two of the latency producer''s jobs'
            cand --unique-mode 'Give each one-at-a-time job a unique key in this mode: coalesce, replace, debounce or throttle (with --unique-window)'
            cand --unique-window 'The debounce or throttle window of --unique-mode'
            cand --unique-keys 'How many keys the one-at-a-time jobs share, job i taking key i mod N [default: one per job]'
            cand --queue 'Internal: the producer''s queue'
            cand --url 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]'
            cand --config 'Config file (TOML) [default: ./jobq.toml, then the user config directory]'
            cand -o 'Output format'
            cand --output 'Output format'
            cand --producer 'Internal: be the latency workload''s producer process'
            cand -q 'Print only errors'
            cand --quiet 'Print only errors'
            cand -v 'Print more (repeat for debug logs)'
            cand --verbose 'Print more (repeat for debug logs)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'jobq;completions'= {
            cand --url 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]'
            cand --config 'Config file (TOML) [default: ./jobq.toml, then the user config directory]'
            cand -o 'Output format'
            cand --output 'Output format'
            cand -q 'Print only errors'
            cand --quiet 'Print only errors'
            cand -v 'Print more (repeat for debug logs)'
            cand --verbose 'Print more (repeat for debug logs)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'jobq;man'= {
            cand --dir 'Write every page (jobq.1, jobq-enqueue.1, …) into this folder instead of printing jobq(1)'
            cand --url 'Store URL: sqlite://PATH, postgres://…, mysql://…, redis://… [default: sqlite file in the user''s data directory]'
            cand --config 'Config file (TOML) [default: ./jobq.toml, then the user config directory]'
            cand -o 'Output format'
            cand --output 'Output format'
            cand -q 'Print only errors'
            cand --quiet 'Print only errors'
            cand -v 'Print more (repeat for debug logs)'
            cand --verbose 'Print more (repeat for debug logs)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'jobq;help'= {
            cand init 'Write a commented jobq.toml here to start from'
            cand enqueue 'Put a job (or a file of jobs) on a queue'
            cand flow 'Enqueue a graph of jobs that wait for each other, all or none, from a JSON document'
            cand batch 'Enqueue a batch of jobs and a callback that runs once all of them have ended; show a batch'
            cand worker 'Run jobs: claim, run handlers, retry, heartbeat, rescue'
            cand stats 'Counts by queue and status'
            cand list 'List jobs, newest first'
            cand show 'Show one job in full: payload, meta, errors, times'
            cand wait 'Wait for a job to finish, with a progress bar; the exit code tells the outcome'
            cand cancel 'Cancel pending, running or waiting jobs'
            cand resolve 'Finish a waiting job from outside: succeed, fail, retry or discard it'
            cand retry 'Put finished jobs of any outcome back on their queue (attempts reset, errors kept)'
            cand delete 'Delete jobs for good, by id or by filter'
            cand replay-dead 'Put dead jobs back on their queue (attempts reset, errors kept)'
            cand cleanup 'Delete finished jobs'
            cand export 'Write every job that matches, whole (state included), as NDJSON for `import`'
            cand import 'Restore jobs from `export` exactly (same ids, statuses, attempts, histories, times)'
            cand copy 'Copy (or move) every job that matches, whole, to another store'
            cand bridge 'Turn the messages of a RabbitMQ queue or a Kafka topic into jobs, acknowledging each once stored'
            cand workers 'List the workers that are running'
            cand queues 'Each queue with its counts, pauses and limits; each type with a limit or a block'
            cand pause 'Stop starting a queue''s jobs (or one type''s) on every worker; enqueueing goes on'
            cand resume 'Start a paused queue''s (or type''s) jobs again'
            cand schedules 'Show, trigger, pause and resume the configured schedules'
            cand emit 'Emit an event: enqueue the jobs the config subscribes to it, all or none'
            cand serve 'Serve the HTTP admin API, /metrics and /healthz'
            cand inbox 'List the Redis inbox items that could not become jobs'
            cand migrate 'Create or upgrade the store''s schema'
            cand doctor 'Find what is wrong with the store and its jobs, and what to do about it'
            cand autoscale 'Work out how many workers a queue needs and hand the number to a program, or print it'
            cand bench 'Measure this store''s throughput and latency on a throwaway queue'
            cand completions 'Print shell completions'
            cand man 'Print man pages (roff) into a folder, or jobq(1) on stdout'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'jobq;help;init'= {
        }
        &'jobq;help;enqueue'= {
        }
        &'jobq;help;flow'= {
        }
        &'jobq;help;batch'= {
            cand show 'Where a batch stands: its members counted by status, and its callback''s status'
        }
        &'jobq;help;batch;show'= {
        }
        &'jobq;help;worker'= {
        }
        &'jobq;help;stats'= {
        }
        &'jobq;help;list'= {
        }
        &'jobq;help;show'= {
        }
        &'jobq;help;wait'= {
        }
        &'jobq;help;cancel'= {
        }
        &'jobq;help;resolve'= {
        }
        &'jobq;help;retry'= {
        }
        &'jobq;help;delete'= {
        }
        &'jobq;help;replay-dead'= {
        }
        &'jobq;help;cleanup'= {
        }
        &'jobq;help;export'= {
        }
        &'jobq;help;import'= {
        }
        &'jobq;help;copy'= {
        }
        &'jobq;help;bridge'= {
        }
        &'jobq;help;workers'= {
        }
        &'jobq;help;queues'= {
        }
        &'jobq;help;pause'= {
        }
        &'jobq;help;resume'= {
        }
        &'jobq;help;schedules'= {
            cand next 'The next tick times of a schedule, computed (the store is not touched)'
            cand trigger 'Enqueue one run now, outside the tick sequence, and print its job id'
            cand pause 'Stop every worker from enqueueing the schedule''s ticks (within a second; survives restarts)'
            cand resume 'Let the schedule''s ticks be enqueued again'
        }
        &'jobq;help;schedules;next'= {
        }
        &'jobq;help;schedules;trigger'= {
        }
        &'jobq;help;schedules;pause'= {
        }
        &'jobq;help;schedules;resume'= {
        }
        &'jobq;help;emit'= {
        }
        &'jobq;help;serve'= {
        }
        &'jobq;help;inbox'= {
        }
        &'jobq;help;migrate'= {
        }
        &'jobq;help;doctor'= {
        }
        &'jobq;help;autoscale'= {
        }
        &'jobq;help;bench'= {
        }
        &'jobq;help;completions'= {
        }
        &'jobq;help;man'= {
        }
        &'jobq;help;help'= {
        }
    ]
    $completions[$command]
}
