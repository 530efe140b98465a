//! Integrity: counts of what the resource accepted and rejected, the writes that landed inside
//! another client's read-modify-write, and the lost updates, each attributed to the write that
//! erased it.

use serde::Serialize;

use crate::model::row_indices;
use crate::trace::{Event, What};
use crate::world::{Micros, World};

/// One lost update: whose increment was lost, and whose write erased it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LostUpdateDetail {
    pub resource: String,
    pub row: String,
    /// The client whose accepted write was lost, and when it landed.
    pub lost_writer: String,
    pub lost_at_us: Micros,
    /// The client whose write erased it (computed from a read taken before the lost write
    /// landed), and when that write landed.
    pub overwritten_by: String,
    pub overwritten_at_us: Micros,
}

/// Counts of what the resource saw.
pub(super) struct DataCounts {
    pub(super) interleaved: u64,
    pub(super) rejected_writes: u64,
    pub(super) rejected_reads: u64,
    pub(super) accepted: u64,
}

/// Counts accepted and rejected accesses, and the accepted writes that landed inside another
/// client's read-modify-write window on a common row, one event at a time.
///
/// A window opens when a client's read lands while the client is in its critical section (a
/// read that lands after its client let go opens nothing: that client will not write on it),
/// and closes when the client's write lands or the client lets go.
pub(super) struct DataCounter {
    pub(super) counts: DataCounts,
    inside: Vec<bool>,
    /// The open window of each client: (resource, rows).
    window: Vec<Option<(u32, u64)>>,
    /// How many open windows cover each row of each resource.
    open: Vec<Vec<u32>>,
}

impl DataCounter {
    pub(super) fn new(world: &World) -> DataCounter {
        let clients = world.clients.len();
        DataCounter {
            counts: DataCounts {
                interleaved: 0,
                rejected_writes: 0,
                rejected_reads: 0,
                accepted: 0,
            },
            inside: vec![false; clients],
            window: vec![None; clients],
            open: world
                .resources
                .iter()
                .map(|r| vec![0; r.rows.len()])
                .collect(),
        }
    }

    fn close(&mut self, c: u32) {
        if let Some((r, rows)) = self.window[c as usize].take() {
            for i in row_indices(rows) {
                self.open[r as usize][i] -= 1;
            }
        }
    }

    pub(super) fn on(&mut self, e: &Event) {
        match &e.what {
            What::BeliefStarted { client, .. } => self.inside[*client as usize] = true,
            What::BeliefEnded { client, .. } => {
                self.inside[*client as usize] = false;
                self.close(*client);
            }
            What::Read {
                client,
                resource,
                rows,
                accepted,
                ..
            } => {
                if !*accepted {
                    self.counts.rejected_reads += 1;
                } else if self.inside[*client as usize] {
                    self.close(*client);
                    self.window[*client as usize] = Some((*resource, *rows));
                    for i in row_indices(*rows) {
                        self.open[*resource as usize][i] += 1;
                    }
                }
            }
            What::Write {
                client,
                resource,
                rows,
                accepted,
                ..
            } => {
                self.close(*client);
                if *accepted {
                    self.counts.accepted += 1;
                    if row_indices(*rows).any(|i| self.open[*resource as usize][i] > 0) {
                        self.counts.interleaved += 1;
                    }
                } else {
                    self.counts.rejected_writes += 1;
                }
            }
            _ => {}
        }
    }
}

/// One increment that is missing from a row's final value, and the write that erased it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LostIncrement {
    pub resource: u32,
    pub row: u32,
    /// The accepted write whose increment was lost (an index into the trace).
    pub lost: usize,
    /// The accepted write that overwrote it: it was computed from a read taken before the lost
    /// write landed, and nothing after it brought the increment back.
    pub by: usize,
}

/// Lost updates, attributed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LostUpdates {
    /// Increments missing from the final values: the verdict's lost updates.
    pub total: u64,
    /// Each write that erased increments for good, with how many (summed over its rows), by
    /// index into the trace, in trace order. These are the marks a timeline shows.
    pub marks: Vec<(usize, u32)>,
    /// The first lost increments, in the order of the writes that erased them.
    pub details: Vec<LostIncrement>,
}

/// Which updates were lost, and which write lost each.
///
/// Every accepted write stores what its client read plus one, so each write extends the value
/// of the write it read from (or the initial value). Following those links back from a row's
/// last write gives the writes whose increments the final value contains; every other accepted
/// write on the row was lost, and it was lost by the write on that chain that read a value from
/// before it and landed after it. So a row's lost updates are exactly its increments minus its
/// growth, and each is attributed to one write. Which write loses an update is known only once
/// the run is over: a write based on an older read erases increments for the moment, but a later
/// write based on a read taken before that erasure carries them forward again.
pub fn lost_updates(world: &World, events: &[Event], keep: usize) -> LostUpdates {
    let mut writes = WriteCollector::new(world);
    for (index, e) in events.iter().enumerate() {
        writes.on(index, e);
    }
    writes.finish(keep)
}

/// The accepted writes of a trace and what each read from, one event at a time.
pub(super) struct WriteCollector {
    /// Per resource and row: each accepted write as (event index, the write it read from, as a
    /// position in this list plus one; 0 is the initial value).
    writes: Vec<Vec<Vec<(usize, u32)>>>,
    /// Per client: what its last accepted read saw, one position per row read.
    basis: Vec<Option<(u32, u64, Values32)>>,
}

impl WriteCollector {
    pub(super) fn new(world: &World) -> WriteCollector {
        WriteCollector {
            writes: world
                .resources
                .iter()
                .map(|r| vec![Vec::new(); r.rows.len()])
                .collect(),
            basis: vec![None; world.clients.len()],
        }
    }

    #[inline]
    pub(super) fn on(&mut self, index: usize, e: &Event) {
        let WriteCollector { writes, basis } = self;
        match &e.what {
            What::Read {
                client,
                resource,
                rows,
                accepted: true,
                ..
            } => {
                let seen = row_indices(*rows)
                    .map(|i| writes[*resource as usize][i].len() as u32)
                    .collect();
                basis[*client as usize] = Some((*resource, *rows, seen));
            }
            What::Write {
                client,
                resource,
                rows,
                accepted: true,
                ..
            } => {
                let read = basis[*client as usize].as_ref();
                for (k, i) in row_indices(*rows).enumerate() {
                    let row = &mut writes[*resource as usize][i];
                    // A write always follows its client's read of the same rows; if a trace
                    // lacked it, the write is taken to have read the latest value (no loss).
                    let from = match read {
                        Some((r, rs, seen)) if r == resource && rs == rows => seen[k],
                        _ => row.len() as u32,
                    };
                    row.push((index, from));
                }
            }
            _ => {}
        }
    }

    pub(super) fn finish(self, keep: usize) -> LostUpdates {
        let writes = self.writes;
        let mut lost = LostUpdates::default();
        // (event, increments it erased), one entry per erasing walk, summed by event below.
        let mut marks: Vec<(usize, u32)> = Vec::new();
        // The `keep` earliest lost increments by (eraser, lost write): a bounded max-heap whose top
        // is the latest kept, replaced whenever an earlier one turns up.
        let mut kept: std::collections::BinaryHeap<(usize, usize, u32, u32)> =
            std::collections::BinaryHeap::new();
        for (r, rows) in writes.iter().enumerate() {
            for (i, row) in rows.iter().enumerate() {
                // Walk the chain back from the last write: position p (1-based) read from `from`.
                let mut p = row.len();
                while p > 0 {
                    let (event, from) = row[p - 1];
                    let from = from as usize;
                    let erased = p - 1 - from;
                    if erased > 0 {
                        lost.total += erased as u64;
                        marks.push((event, erased as u32));
                        for q in (from + 1)..p {
                            let entry = (event, row[q - 1].0, r as u32, i as u32);
                            if kept.len() < keep {
                                kept.push(entry);
                            } else if kept.peek().is_some_and(|top| entry < *top) {
                                kept.pop();
                                kept.push(entry);
                            } else {
                                // Positions only fall along the walk, so nothing earlier follows
                                // on this row from this eraser.
                                break;
                            }
                        }
                    }
                    p = from;
                }
            }
        }
        lost.details = kept
            .into_sorted_vec()
            .into_iter()
            .map(|(by, lost, resource, row)| LostIncrement {
                resource,
                row,
                lost,
                by,
            })
            .collect();
        lost.marks = crate::sorted::SortedMap::from_pairs_merging(marks, |a, b| *a += b)
            .into_iter()
            .collect();
        lost
    }
}

/// Positions read, one per row of a read (most reads cover one or two rows).
type Values32 = smallvec::SmallVec<[u32; 2]>;

pub(super) fn lost_detail(world: &World, events: &[Event], d: &LostIncrement) -> LostUpdateDetail {
    let who = |i: usize| match &events[i].what {
        What::Write { client, .. } => world.clients[*client as usize].name.clone(),
        _ => unreachable!("lost updates point at writes"),
    };
    LostUpdateDetail {
        resource: world.resources[d.resource as usize].name.clone(),
        row: world.resources[d.resource as usize].rows[d.row as usize].clone(),
        lost_writer: who(d.lost),
        lost_at_us: events[d.lost].at,
        overwritten_by: who(d.by),
        overwritten_at_us: events[d.by].at,
    }
}
