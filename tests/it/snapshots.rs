//! Snapshots of short traces in their text form, one line per event, with the verdict on top.
//! A change in behaviour shows up as a diff here; if it is intended, run
//! `UPDATE_EXPECT=1 cargo test --test it snapshots` and review the new files.

use expect_test::{expect_file, ExpectFile};

use crate::{check, scenario};

/// The verdict summary, a blank line, and at most `lines` lines of trace.
fn render(prefix: &str, seed: u64, lines: usize) -> String {
    let s = scenario(prefix);
    let (run, verdict) = check(&s, seed);
    let lost = lockstep::monitor::lost_updates(&run.world, &run.events, 0);
    let trace = lockstep::monitor::render_trace(&run.world, &run.events, &lost);
    let mut out = format!("{} (seed {seed})\n{}\n", s.name, verdict.summary());
    for line in trace.lines().take(lines) {
        out.push_str(line);
        out.push('\n');
    }
    if run.events.len() > lines {
        out.push_str(&format!("... {} more events\n", run.events.len() - lines));
    }
    out
}

fn snapshot(prefix: &str, seed: u64, lines: usize, expected: ExpectFile) {
    expected.assert_eq(&render(prefix, seed, lines));
}

#[test]
fn stale_writer_without_fencing() {
    snapshot("05", 1, 200, expect_file!["snapshots/05-fencing.txt"]);
}

#[test]
fn lock_held_across_a_naive_migration() {
    snapshot(
        "09",
        1,
        200,
        expect_file!["snapshots/09-migration-held.txt"],
    );
}

#[test]
fn deadlock_across_two_services() {
    snapshot("02", 1, 40, expect_file!["snapshots/02-both-unordered.txt"]);
}

#[test]
fn partition_between_regions() {
    snapshot("06", 1, 60, expect_file!["snapshots/06-partition.txt"]);
}
