use std::time::Duration;

use chrono::{NaiveDate, TimeZone};
use chrono_tz::Tz;

use super::*;
use crate::store::ScheduleState;

/// An instant from a wall time in `zone`, the first one when the wall time repeats.
fn wall(zone: &str, y: i32, mo: u32, d: u32, h: u32, mi: u32) -> UnixMillis {
    let tz: Tz = zone.parse().unwrap();
    let naive = NaiveDate::from_ymd_opt(y, mo, d)
        .unwrap()
        .and_hms_opt(h, mi, 0)
        .unwrap();
    UnixMillis(tz.from_local_datetime(&naive).earliest().unwrap().timestamp_millis())
}

fn utc(text: &str) -> UnixMillis {
    UnixMillis(chrono::DateTime::parse_from_rfc3339(text).unwrap().timestamp_millis())
}

fn next_n(when: &When, from: UnixMillis, n: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut t = from;
    for _ in 0..n {
        t = when.next_after(t).unwrap();
        out.push(t.to_rfc3339());
    }
    out
}

#[test]
fn a_wall_time_the_clock_skips_runs_once_at_the_first_valid_instant_after_it() {
    // Berlin, 2026-03-29: 02:00 CET becomes 03:00 CEST; 02:30 does not exist that day.
    let berlin = When::cron("30 2 * * *", "Europe/Berlin").unwrap();
    let ticks = next_n(&berlin, wall("Europe/Berlin", 2026, 3, 28, 12, 0), 3);
    assert_eq!(
        ticks,
        [
            "2026-03-29T01:00:00.000Z",
            "2026-03-30T00:30:00.000Z",
            "2026-03-31T00:30:00.000Z"
        ],
        "03:00 CEST on the day of the gap, then 02:30 CEST"
    );
    // New York, 2026-03-08: 02:00 EST becomes 03:00 EDT.
    let new_york = When::cron("15 2 * * *", "America/New_York").unwrap();
    let ticks = next_n(&new_york, wall("America/New_York", 2026, 3, 7, 12, 0), 2);
    assert_eq!(ticks, ["2026-03-08T07:00:00.000Z", "2026-03-09T06:15:00.000Z"]);
}

#[test]
fn a_wall_time_the_clock_repeats_runs_once_at_its_first_occurrence() {
    // Berlin, 2026-10-25: 03:00 CEST falls back to 02:00 CET; 02:30 happens twice.
    let berlin = When::cron("30 2 * * *", "Europe/Berlin").unwrap();
    let ticks = next_n(&berlin, wall("Europe/Berlin", 2026, 10, 24, 12, 0), 2);
    assert_eq!(
        ticks,
        ["2026-10-25T00:30:00.000Z", "2026-10-26T01:30:00.000Z"],
        "02:30 CEST once, not 02:30 CET again"
    );
    // New York, 2026-11-01: 02:00 EDT falls back to 01:00 EST; 01:30 happens twice.
    let new_york = When::cron("30 1 * * *", "America/New_York").unwrap();
    let ticks = next_n(&new_york, wall("America/New_York", 2026, 10, 31, 12, 0), 2);
    assert_eq!(ticks, ["2026-11-01T05:30:00.000Z", "2026-11-02T06:30:00.000Z"]);
}

#[test]
fn february_29th_comes_in_leap_years_only() {
    let leap = When::cron("0 12 29 2 *", "UTC").unwrap();
    assert_eq!(
        next_n(&leap, utc("2026-01-01T00:00:00Z"), 2),
        ["2028-02-29T12:00:00.000Z", "2032-02-29T12:00:00.000Z"]
    );
    let daily = When::cron("@daily", "Asia/Tokyo").unwrap();
    assert_eq!(
        next_n(&daily, utc("2028-02-27T16:00:00Z"), 2),
        ["2028-02-28T15:00:00.000Z", "2028-02-29T15:00:00.000Z"],
        "midnight in Tokyo, the 29th included"
    );
}

#[test]
fn cron_takes_five_or_six_fields_and_the_nicknames() {
    let seconds = When::cron("*/15 * * * * *", "UTC").unwrap();
    assert_eq!(
        next_n(&seconds, utc("2026-12-01T10:00:01Z"), 2),
        ["2026-12-01T10:00:15.000Z", "2026-12-01T10:00:30.000Z"]
    );
    for nickname in ["@hourly", "@daily", "@weekly", "@monthly"] {
        assert!(When::cron(nickname, "UTC").is_ok(), "{nickname}");
    }
    assert!(When::cron("61 * * * *", "UTC").unwrap_err().contains("does not parse"));
    assert!(
        When::cron("0 3 * * *", "Mars/Olympus")
            .unwrap_err()
            .contains("unknown time zone")
    );
    assert!(When::cron("0 0 30 2 *", "UTC").unwrap_err().contains("never matches"));
}

#[test]
fn intervals_align_to_multiples_of_themselves_since_the_epoch() {
    let every = When::every(Duration::from_secs(30)).unwrap();
    assert_eq!(
        next_n(&every, utc("2026-12-01T10:00:07Z"), 2),
        ["2026-12-01T10:00:30.000Z", "2026-12-01T10:01:00.000Z"]
    );
    assert_eq!(
        every.latest_at_or_before(utc("2026-12-01T10:00:30Z")),
        utc("2026-12-01T10:00:30Z").into()
    );
    assert!(When::every(Duration::from_millis(500)).is_err());
}

fn every_second(catch_up: CatchUp) -> Schedule {
    Schedule {
        name: "s".into(),
        when: When::every(Duration::from_secs(1)).unwrap(),
        job_type: "t".into(),
        payload: serde_json::value::to_raw_value(&serde_json::json!(null)).unwrap(),
        queue: "default".into(),
        meta: Default::default(),
        priority: 0,
        max_attempts: None,
        timeout: None,
        jitter: None,
        catch_up,
        overlap: Overlap::Allow,
        paused: false,
    }
}

fn state(last_tick: Option<i64>, not_before: i64) -> ScheduleState {
    ScheduleState {
        name: "s".into(),
        last_tick: last_tick.map(UnixMillis),
        not_before: UnixMillis(not_before),
        paused: false,
        last_job: None,
        last_job_status: None,
    }
}

#[test]
fn missed_ticks_follow_the_catch_up_rule_and_seen_ticks_all_fire() {
    // Last tick at 10s; every worker down until 20.5s; the scheduler is back at 20.5s.
    let st = state(Some(10_000), 0);
    let (now, since) = (UnixMillis(20_500), UnixMillis(20_500));
    let ms = |v: Vec<UnixMillis>| v.into_iter().map(|t| t.0).collect::<Vec<_>>();
    assert_eq!(ms(due_ticks(&every_second(CatchUp::Latest), &st, now, since)), [20_000]);
    assert_eq!(
        ms(due_ticks(
            &every_second(CatchUp::Within(Duration::from_secs(5))),
            &st,
            now,
            since
        )),
        [16_000, 17_000, 18_000, 19_000, 20_000]
    );
    assert!(due_ticks(&every_second(CatchUp::Within(Duration::ZERO)), &st, now, since).is_empty());
    // Watching since 18.2s: 19s and 20s came due while it watched and fire whatever the rule.
    let since = UnixMillis(18_200);
    assert_eq!(
        ms(due_ticks(
            &every_second(CatchUp::Within(Duration::ZERO)),
            &st,
            now,
            since
        )),
        [19_000, 20_000]
    );
    assert_eq!(
        ms(due_ticks(&every_second(CatchUp::Latest), &st, now, since)),
        [18_000, 19_000, 20_000]
    );
    // Nothing before the first sighting, nothing handled again.
    assert!(
        due_ticks(
            &every_second(CatchUp::Latest),
            &state(None, 20_400),
            now,
            UnixMillis(20_400)
        )
        .is_empty()
    );
    assert!(due_ticks(&every_second(CatchUp::Latest), &state(Some(20_000), 0), now, since).is_empty());
}

#[test]
fn a_tick_job_has_the_same_id_and_delay_on_every_worker() {
    let mut schedule = every_second(CatchUp::Latest);
    schedule.jitter = Some(Duration::from_secs(10));
    let limits = Limits::default();
    let a = schedule.tick_job(UnixMillis(5_000), UnixMillis(5_003), &limits);
    let b = schedule.tick_job(UnixMillis(5_000), UnixMillis(5_011), &limits);
    assert_eq!(a.id, b.id);
    assert_eq!(a.id.as_str(), "sched:s@1970-01-01T00:00:05.000Z");
    assert_eq!(a.run_at, b.run_at);
    assert!(a.run_at >= UnixMillis(5_000) && a.run_at < UnixMillis(15_000));
    assert_eq!(a.meta.get("schedule").map(String::as_str), Some("s"));
    assert_eq!(
        a.meta.get("scheduledFor").map(String::as_str),
        Some("1970-01-01T00:00:05.000Z")
    );
}
