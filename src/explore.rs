//! The exhaustive explorer: the second driver of the model.
//!
//! It searches breadth first over the interleavings of a small scenario, applying the model's
//! one transition function ([`State::apply`]) to every enabled step of every state it reaches,
//! and asks every [`Property`] of every new state. States that behave alike are visited once:
//! they are deduplicated by [`State::fingerprint`], which leaves out sequence numbers, instants
//! and absolute time.
//!
//! Time is abstract, as in a model checker: any enabled step may come next, whatever the time
//! it was scheduled for. A lease may expire at any moment, a pause is other steps going first,
//! and a slow message is one that others overtake (except on its own channel, which stays
//! FIFO). What depends on reading a clock is therefore not explored: scenarios with outages,
//! partitions that drop messages, or lease-aware clients are refused ([`explorable`]); pauses,
//! partitions that only delay, jitter, periods and start and stop times are ignored, because
//! the interleavings already cover what they could do. Two timed things are explored as steps
//! that may come at any moment: a majority client's validity running out (its timer; the
//! client does not read its clock), and the restart of a service that forgets on restart (an
//! outage of no length: what it forgets is explored, the requests its downtime would lose are
//! not).
//!
//! The search is bounded by [`Budgets`]: a depth (steps from the initial state), a number of
//! unique states, a number of faults per path (lease expiries and the scenario's migrations,
//! each of which may happen at any moment), and a number of operations per client. It answers
//! either that every property holds for all the states it reached up to a depth, or the
//! shortest counterexample, which [`Counterexample::replay`] turns into an ordinary trace.
//!
//! It works in chunks ([`Explorer::step`]) so that a caller can report progress and stop when
//! it likes: a web worker, or the command line.

use std::collections::{HashSet, VecDeque};
use std::fmt;
use std::hash::{BuildHasherDefault, Hash, Hasher};

use crate::model::{Choices, StableHasher, State, Step, Stream};
use crate::property::Property;
use crate::scenario::{PartitionMode, Scenario, ScenarioErrors};
use crate::sim::Run;
use crate::trace::Event;
use crate::world::{Micros, ProtocolConfig, World, MS};

/// The bounds of a search.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budgets {
    /// The most steps from the initial state; states at this depth are checked, not expanded.
    pub depth: u32,
    /// The most unique states.
    pub states: u64,
    /// The most faults (lease expiries and migrations) on any one path.
    pub faults: u32,
    /// The most operations per client (a class's own `max_operations` applies if lower).
    pub operations: u32,
}

impl Default for Budgets {
    fn default() -> Budgets {
        Budgets {
            depth: 200,
            states: 1_000_000,
            faults: 2,
            operations: 1,
        }
    }
}

/// Why a scenario cannot be explored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExploreError {
    Invalid(ScenarioErrors),
    /// What in the scenario depends on reading a clock, one sentence each.
    Timed(Vec<String>),
}

impl fmt::Display for ExploreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExploreError::Invalid(e) => write!(f, "{e}"),
            ExploreError::Timed(reasons) => {
                write!(
                    f,
                    "the explorer lets any step come next, whatever its time, so it cannot explore:"
                )?;
                for r in reasons {
                    write!(f, "\n  - {r}")?;
                }
                Ok(())
            }
        }
    }
}

/// Compiles a scenario for exploring: refuses what depends on a clock, drops what the
/// interleavings already cover, and bounds each client's operations.
pub fn explorable(scenario: &Scenario, budgets: &Budgets) -> Result<World, ExploreError> {
    scenario.validate().map_err(ExploreError::Invalid)?;
    let mut reasons = Vec::new();
    for s in &scenario.services {
        // A service that forgets on restart is explored as one that may restart empty at any
        // moment, at once: what its downtime does (requests lost) is left out, what its
        // restart does (grants forgotten, tokens again from the first) is kept.
        if !s.outages.is_empty() && !s.forgets_on_restart {
            reasons.push(format!(
                "service {}'s outages (a service that is down drops requests for a while)",
                s.name
            ));
        }
    }
    if scenario
        .partitions
        .iter()
        .any(|p| p.mode != PartitionMode::Delay)
    {
        reasons.push(
            "partitions that drop messages (a partition that only delays is kept out: any \
             message may already be overtaken)"
                .to_string(),
        );
    }
    for c in &scenario.clients {
        if c.lease_aware {
            reasons.push(format!(
                "class {}'s lease-aware clients (they decide by their own clock whether a lease \
                 may have ended)",
                c.name
            ));
        }
    }
    if !reasons.is_empty() {
        return Err(ExploreError::Timed(reasons));
    }
    let mut untimed = scenario.clone();
    untimed.pauses.clear();
    untimed.partitions.clear();
    for s in &mut untimed.services {
        // Each outage of a service that forgets becomes a restart with no downtime.
        for w in &mut s.outages {
            w.duration_ms = 0;
        }
        s.restart_delay_ms = 0;
    }
    let mut world = World::compile(&untimed);
    for c in &mut world.clients {
        c.stop = Micros::MAX;
        c.max_operations = Some(
            c.max_operations
                .map_or(budgets.operations, |m| m.min(budgets.operations)),
        );
        // A majority client's validity is its timer, which may come at any moment: before
        // the quorum (acquiring took too long) or after it (it did not). Its clock is not read.
        if let ProtocolConfig::Locks {
            majority: Some(m), ..
        } = &mut c.protocol
        {
            m.clock_checked = false;
        }
    }
    Ok(world)
}

/// Time treated abstractly: no jitter is ever drawn.
pub struct NoJitter;

impl Choices for NoJitter {
    fn draw(&mut self, _: Stream, _: u64) -> u64 {
        0
    }
}

/// A state of the search: the model's state and the faults taken on the way to it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Node {
    pub state: State,
    pub faults: u32,
}

impl Node {
    /// The node's fingerprint: the state's, with the faults used.
    pub fn fingerprint(&self) -> u64 {
        let mut h = StableHasher::default();
        self.hash(&mut h);
        h.finish()
    }
}

/// Whether taking a step spends the fault budget.
pub fn is_fault(step: &Step) -> bool {
    matches!(step, Step::LeaseExpiry { .. } | Step::Fault(_))
}

/// The state space of a scenario: the initial node, the actions enabled in a node, the node
/// an action leads to, and the properties. The explorer walks it, and so does any other
/// checker given the same space (the tests compare with Stateright's), so both explore one
/// transition function.
#[derive(Clone, Debug)]
pub struct Space {
    pub world: World,
    pub budgets: Budgets,
    /// The properties asked of every state, in order.
    pub properties: Vec<Property>,
}

impl Space {
    /// The space of a world compiled by [`explorable`], checking every property.
    pub fn new(world: World, budgets: Budgets) -> Space {
        Space {
            world,
            budgets,
            properties: Property::ALL.to_vec(),
        }
    }

    /// The same space, checking only the given properties.
    pub fn checking(mut self, properties: &[Property]) -> Space {
        self.properties = properties.to_vec();
        self
    }

    pub fn initial(&self) -> Node {
        Node {
            state: State::initial(&self.world, &mut NoJitter),
            faults: 0,
        }
    }

    /// The sequence numbers of the steps that may come next, earliest first; faults only while
    /// the budget lasts.
    pub fn actions(&self, node: &Node, out: &mut Vec<u64>) {
        let faults_left = node.faults < self.budgets.faults;
        out.extend(
            node.state
                .enabled()
                .filter(|(_, _, step)| faults_left || !is_fault(step))
                .map(|(_, seq, _)| seq),
        );
    }

    /// The node that taking the step with sequence number `seq` leads to; the events it
    /// records are appended to `events`.
    pub fn next(&self, node: &Node, seq: u64, events: &mut Vec<Event>) -> Node {
        self.advance(node.clone(), seq, events)
    }

    /// Like [`Space::next`], reusing the node: the explorer takes a state's last action this
    /// way, which saves copying it.
    pub fn advance(&self, node: Node, seq: u64, events: &mut Vec<Event>) -> Node {
        let mut next = node;
        let item = next
            .state
            .take(seq)
            .expect("actions come from the enabled steps");
        next.faults += u32::from(is_fault(&item.step));
        next.state.apply(&self.world, item, &mut NoJitter, events);
        next
    }

    /// The first property checked, in order, that the node violates.
    pub fn violated(&self, node: &Node) -> Option<Property> {
        self.properties
            .iter()
            .copied()
            .find(|p| !p.holds(&self.world, &node.state))
    }
}

/// How far a search has come.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Progress {
    /// Unique states found so far.
    pub states: u64,
    /// The depth being expanded.
    pub depth: u32,
    /// The answer, once there is one.
    pub done: Option<Outcome>,
}

/// The answer of a search.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    Holds(Holds),
    Violated(Counterexample),
}

/// Every property held in every state reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Holds {
    /// Unique states reached (and checked).
    pub states: u64,
    /// The deepest of them, in steps from the initial state.
    pub depth: u32,
    /// True if the whole state space was reached: no budget cut the search short.
    pub complete: bool,
}

/// A shortest path to a state that violates a property.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Counterexample {
    pub property: Property,
    /// The sequence numbers of the steps taken, from the initial state.
    pub steps: Vec<u64>,
    /// Unique states reached when it was found.
    pub states: u64,
}

impl Counterexample {
    /// Replays the path as an ordinary run: its trace, ending a millisecond after the last step
    /// so that what holds in the final state (two beliefs that overlap) lasts long enough for
    /// the monitors to see and the timeline to draw.
    pub fn replay(&self, world: &World) -> Run {
        self.try_replay(world)
            .expect("a counterexample replays step by step")
    }

    /// The same replay for a path that may not belong to `world` (one that came from
    /// elsewhere, as the page's worker sends it): a step that is not enabled is an error.
    pub fn try_replay(&self, world: &World) -> Result<Run, String> {
        let mut state = State::initial(world, &mut NoJitter);
        let mut events = Vec::new();
        for seq in &self.steps {
            let item = state
                .take(*seq)
                .ok_or_else(|| format!("step {seq} of the counterexample is not enabled here"))?;
            state.apply(world, item, &mut NoJitter, &mut events);
        }
        Ok(Run {
            world: world.clone(),
            seed: 0,
            end: state.now + MS,
            events,
            truncated: false,
            state,
        })
    }

    /// How many steps the path takes.
    pub fn len(&self) -> usize {
        self.steps.len()
    }

    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }
}

/// A fingerprint is already well mixed: a table keyed by it needs no further hashing.
#[derive(Default)]
struct Identity(u64);

impl Hasher for Identity {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, _: &[u8]) {
        unreachable!("only fingerprints are hashed");
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = x;
    }
}

/// No parent: the initial state.
const ROOT: u32 = u32::MAX;

/// A breadth-first search over a [`Space`], run in chunks.
pub struct Explorer {
    space: Space,
    seen: HashSet<u64, BuildHasherDefault<Identity>>,
    /// Nodes to expand, with their index in `parents` and their depth.
    queue: VecDeque<(Node, u32, u32)>,
    /// For each state found, in order: its parent's index and the step that led to it.
    parents: Vec<(u32, u64)>,
    depth: u32,
    deepest: u32,
    /// True once a budget has left some state unexpanded.
    cut: bool,
    done: Option<Outcome>,
    events: Vec<Event>,
    actions: Vec<u64>,
}

impl Explorer {
    /// A search of a world compiled by [`explorable`], checking every property.
    pub fn new(world: World, budgets: Budgets) -> Explorer {
        Explorer::over(Space::new(world, budgets))
    }

    /// A search of a space.
    pub fn over(space: Space) -> Explorer {
        let initial = space.initial();
        // Room for the first states, so a small search never grows its tables, without taking
        // megabytes up front in a browser for a budget the search may never reach.
        let room = space.budgets.states.min(1 << 16) as usize;
        let mut explorer = Explorer {
            seen: HashSet::with_capacity_and_hasher(room, Default::default()),
            queue: VecDeque::new(),
            parents: Vec::with_capacity(room),
            depth: 0,
            deepest: 0,
            cut: false,
            done: None,
            events: Vec::new(),
            actions: Vec::new(),
            space,
        };
        explorer.seen.insert(initial.fingerprint());
        explorer.found(initial, ROOT, 0, 0);
        explorer
    }

    pub fn space(&self) -> &Space {
        &self.space
    }

    /// Unique states found so far.
    pub fn states(&self) -> u64 {
        self.parents.len() as u64
    }

    /// Records a state not seen before, checks it, and queues it; false if the search is over.
    fn found(&mut self, node: Node, parent: u32, seq: u64, depth: u32) -> bool {
        let index = self.parents.len() as u32;
        self.parents.push((parent, seq));
        self.deepest = self.deepest.max(depth);
        if let Some(property) = self.space.violated(&node) {
            self.done = Some(Outcome::Violated(Counterexample {
                property,
                steps: self.path(index),
                states: self.states(),
            }));
            return false;
        }
        if self.states() >= self.space.budgets.states {
            self.cut = true;
            self.done = Some(self.holds());
            return false;
        }
        self.queue.push_back((node, index, depth));
        true
    }

    fn holds(&self) -> Outcome {
        Outcome::Holds(Holds {
            states: self.states(),
            depth: self.deepest,
            complete: !self.cut,
        })
    }

    /// The steps from the initial state to the state with this index.
    fn path(&self, mut index: u32) -> Vec<u64> {
        let mut steps = Vec::new();
        while index != ROOT {
            let (parent, seq) = self.parents[index as usize];
            if parent != ROOT {
                steps.push(seq);
            }
            index = parent;
        }
        steps.reverse();
        steps
    }

    /// Expands up to `chunk` states and reports how far the search has come.
    pub fn step(&mut self, chunk: usize) -> Progress {
        for _ in 0..chunk {
            if self.done.is_some() {
                break;
            }
            let Some((node, index, depth)) = self.queue.pop_front() else {
                self.done = Some(self.holds());
                break;
            };
            self.depth = depth;
            let mut actions = std::mem::take(&mut self.actions);
            actions.clear();
            self.space.actions(&node, &mut actions);
            if depth >= self.space.budgets.depth {
                self.cut |= !actions.is_empty();
            } else {
                let mut node = Some(node);
                for (k, &seq) in actions.iter().enumerate() {
                    self.events.clear();
                    let next = if k + 1 == actions.len() {
                        let last = node.take().expect("taken only for the last action");
                        self.space.advance(last, seq, &mut self.events)
                    } else {
                        let node = node.as_ref().expect("kept until the last action");
                        self.space.next(node, seq, &mut self.events)
                    };
                    if !self.seen.insert(next.fingerprint()) {
                        continue;
                    }
                    if !self.found(next, index, seq, depth + 1) {
                        break;
                    }
                }
            }
            self.actions = actions;
        }
        Progress {
            states: self.states(),
            depth: self.depth,
            done: self.done.clone(),
        }
    }

    /// Runs the search to its answer.
    pub fn run(&mut self) -> Outcome {
        loop {
            if let Some(outcome) = self.step(4096).done {
                return outcome;
            }
        }
    }
}
