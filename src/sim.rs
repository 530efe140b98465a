//! The timed random simulator: the first driver of the model.
//!
//! It always takes the earliest scheduled step, draws jitter from seeded ChaCha8 streams, and
//! stops at the scenario's duration or event budget. There is one stream per sender and one per
//! client workload, each chosen by the entity's kind and name rather than its position, so the
//! numbers are the same on every platform, and adding a client or flipping fencing does not
//! reshuffle the draws of the others.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::model::{Choices, State, Stream};
use crate::scenario::{Scenario, ScenarioErrors};
use crate::trace::{Endpoint, Event, Recorded};
use crate::world::{Micros, World};

/// Seeded random streams for the simulator.
pub struct SeededChoices {
    streams: Vec<ChaCha8Rng>,
    clients: usize,
    services: usize,
    resources: usize,
}

impl SeededChoices {
    pub fn new(world: &World, seed: u64) -> SeededChoices {
        let clients = world.clients.len();
        let services = world.services.len();
        let resources = world.resources.len();
        let labels = world
            .clients
            .iter()
            .map(|c| format!("network/client/{}", c.name))
            .chain(
                world
                    .services
                    .iter()
                    .map(|s| format!("network/service/{}", s.name)),
            )
            .chain(
                world
                    .resources
                    .iter()
                    .map(|r| format!("network/resource/{}", r.name)),
            )
            .chain(world.clients.iter().map(|c| format!("workload/{}", c.name)));
        let streams = labels
            .map(|label| {
                let mut rng = ChaCha8Rng::seed_from_u64(seed);
                rng.set_stream(crate::hash::fnv1a64(label.as_bytes()));
                rng
            })
            .collect();
        SeededChoices {
            streams,
            clients,
            services,
            resources,
        }
    }

    fn index(&self, stream: Stream) -> usize {
        match stream {
            Stream::Network(Endpoint::Client(c)) => c as usize,
            Stream::Network(Endpoint::Service(s)) => self.clients + s as usize,
            Stream::Network(Endpoint::Resource(r)) => self.clients + self.services + r as usize,
            Stream::Workload(c) => self.clients + self.services + self.resources + c as usize,
        }
    }
}

impl Choices for SeededChoices {
    fn draw(&mut self, stream: Stream, max: u64) -> u64 {
        if max == 0 {
            return 0;
        }
        let i = self.index(stream);
        self.streams[i].random_range(0..=max)
    }
}

/// A finished run: the world, the trace and the final state.
#[derive(Clone, Debug)]
pub struct Run {
    pub world: World,
    pub seed: u64,
    pub events: Vec<Event>,
    /// The simulated time the run covers (the scenario's duration unless it was cut short).
    pub end: Micros,
    /// True if the event budget ran out before the scenario's duration.
    pub truncated: bool,
    pub state: State,
}

impl Recorded for Run {
    fn world(&self) -> &World {
        &self.world
    }
    fn events(&self) -> &[Event] {
        &self.events
    }
    fn end(&self) -> Micros {
        self.end
    }
    fn truncated(&self) -> bool {
        self.truncated
    }
    fn seed(&self) -> u64 {
        self.seed
    }
}

/// Validates, compiles and simulates a scenario with a seed.
pub fn run(scenario: &Scenario, seed: u64) -> Result<Run, ScenarioErrors> {
    scenario.validate()?;
    Ok(run_world(World::compile(scenario), seed))
}

/// Room kept free in the trace before each step. Only the rarest steps record more (a
/// migration that moves a long queue), and those just grow the trace once more.
const STEP_EVENTS: usize = 256;

/// Doubles the trace's room, but never past the budget and one step's events: left to itself
/// a vector doubles past it, and a 500,000-event run would hold room for 524,288 events or more:
/// more than it needs.
#[cold]
fn grow(events: &mut Vec<Event>, budget: usize) {
    let wanted = (events.capacity() * 2)
        .min(budget + STEP_EVENTS)
        .max(events.len() + STEP_EVENTS);
    events.reserve_exact(wanted - events.len());
}

/// Simulates an already compiled world.
pub fn run_world(world: World, seed: u64) -> Run {
    let mut choices = SeededChoices::new(&world, seed);
    let mut state = State::initial(&world, &mut choices);
    state.set_horizon(world.duration);
    state.set_lazy_leases(&world);
    let budget = world.event_budget as usize;
    let mut events = Vec::with_capacity(budget.min(1024));
    // Every step either records an event or moves a pending step to a later time, so a step
    // budget several times the event budget can only be reached by a model bug; it keeps even
    // that from freezing a tab.
    let mut steps_left = world.event_budget.saturating_mul(8).max(1024);
    let mut truncated = false;
    loop {
        if events.len() >= budget || steps_left == 0 {
            truncated = state.next_due().is_some_and(|due| due <= world.duration);
            break;
        }
        let Some(item) = state.pop_earliest() else {
            break;
        };
        if item.at > world.duration {
            break;
        }
        steps_left -= 1;
        if events.capacity() - events.len() < STEP_EVENTS {
            grow(&mut events, budget);
        }
        state.apply(&world, item, &mut choices, &mut events);
    }
    events.truncate(budget);
    let end = if truncated {
        events.last().map(|e| e.at).unwrap_or(0)
    } else {
        world.duration
    };
    Run {
        world,
        seed,
        events,
        end,
        truncated,
        state,
    }
}
