//! Stateright's `Model` over the explorer's own [`Space`]: the same initial state, the same
//! enabled steps and the same transition function (`State::apply`), so Stateright's
//! breadth-first checker and the explorer search one state space, and any difference between
//! their answers is a difference in the searches.
//!
//! Shared by the integration tests and `benches/explore.rs`.

use std::cell::RefCell;

use lockstep::explore::{Node, Space};
use lockstep::property::Property;
use lockstep::trace::Event;
use stateright::{Checker, Model};

/// The explorer's space as a Stateright model.
pub struct Peer(pub Space);

thread_local! {
    /// The events a step records, which neither checker keeps: one buffer per thread, reused, as
    /// the explorer reuses its own.
    static EVENTS: RefCell<Vec<Event>> = const { RefCell::new(Vec::new()) };
}

impl Peer {
    fn holds(&self, property: Property, node: &Node) -> bool {
        !self.0.properties.contains(&property) || property.holds(&self.0.world, &node.state)
    }
}

/// Stateright names properties with static strings.
pub fn name(property: Property) -> &'static str {
    property.name()
}

impl Model for Peer {
    type State = Node;
    type Action = u64;

    fn init_states(&self) -> Vec<Node> {
        vec![self.0.initial()]
    }

    fn actions(&self, node: &Node, actions: &mut Vec<u64>) {
        self.0.actions(node, actions);
    }

    fn next_state(&self, node: &Node, seq: u64) -> Option<Node> {
        EVENTS.with(|events| {
            let mut events = events.borrow_mut();
            events.clear();
            Some(self.0.next(node, seq, &mut events))
        })
    }

    fn properties(&self) -> Vec<stateright::Property<Self>> {
        vec![
            stateright::Property::always(name(Property::Exclusion), |m: &Peer, n: &Node| {
                m.holds(Property::Exclusion, n)
            }),
            stateright::Property::always(name(Property::NoLostUpdate), |m: &Peer, n: &Node| {
                m.holds(Property::NoLostUpdate, n)
            }),
            stateright::Property::always(name(Property::NoWaitCycle), |m: &Peer, n: &Node| {
                m.holds(Property::NoWaitCycle, n)
            }),
        ]
    }
}

/// What Stateright's breadth-first search on one thread answers.
pub struct PeerAnswer {
    /// Unique states it generated.
    pub states: usize,
    /// Each violated property with the length of the path to its discovery.
    pub violations: Vec<(Property, usize)>,
}

/// Runs Stateright's breadth-first checker, on one thread, to the end of the space or until a
/// property fails. With `steps`, it checks only the states at most that many steps from the
/// initial one.
///
/// Stateright reports, for each property, the path to a violating state it met in the block of
/// states where it first met one, not always the shortest; the length is only an upper bound.
pub fn check(space: Space, steps: Option<usize>) -> PeerAnswer {
    let mut builder = Peer(space).checker().threads(1);
    if let Some(steps) = steps {
        // Its depths count the initial state as 1, and it skips states at the target depth.
        builder = builder.target_max_depth(steps + 2);
    }
    let checker = builder
        .finish_when(stateright::HasDiscoveries::AnyFailures)
        .spawn_bfs()
        .join();
    let discoveries = checker.discoveries();
    let violations = Property::ALL
        .into_iter()
        .filter_map(|p| {
            discoveries
                .get(name(p))
                .map(|path| (p, path.clone().into_actions().len()))
        })
        .collect();
    PeerAnswer {
        states: checker.unique_state_count(),
        violations,
    }
}
