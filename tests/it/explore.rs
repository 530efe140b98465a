//! The explorer and the properties it checks: known answers on small scenarios, agreement with
//! the monitors, and agreement with a peer model checker (Stateright) over the same transition
//! function.

use lockstep::model::State;
use lockstep::property::Property;
use lockstep::world::World;
use lockstep::{monitor, Scenario};

use crate::shipped_paths;

/// The simulator's own choices for a seed.
fn seeded(world: &World, seed: u64) -> lockstep::sim::SeededChoices {
    lockstep::sim::SeededChoices::new(world, seed)
}

#[test]
fn the_properties_of_states_agree_with_the_monitors_of_traces() {
    // Along simulated runs of every shipped scenario, each property is asked of every state,
    // and the verdict of the whole trace must say the same. Exclusion counts only overlaps of
    // positive length, so a state is asked about it only when time moves on from it; a lost
    // update can be carried forward again by a later write, so the monitors count the rows'
    // shortfall at the end, which is where the state is asked.
    let mut broken = [0u32; 3];
    for path in shipped_paths() {
        let s = Scenario::from_toml_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let world = World::compile(&s);
        for seed in 0..4u64 {
            let mut choices = seeded(&world, seed);
            let mut state = State::initial(&world, &mut choices);
            state.set_horizon(world.duration);
            let mut events = Vec::new();
            let mut excluded = true;
            let mut acyclic = true;
            while let Some(item) = state.pop_earliest() {
                if item.at > world.duration || events.len() >= world.event_budget as usize {
                    break;
                }
                if item.at > state.now {
                    excluded &= Property::Exclusion.holds(&world, &state);
                }
                state.apply(&world, item, &mut choices, &mut events);
                acyclic &= Property::NoWaitCycle.holds(&world, &state);
            }
            let run = lockstep::run(&s, seed).unwrap();
            assert_eq!(run.events, events, "{}: the same run", path.display());
            if run.end > state.now {
                excluded &= Property::Exclusion.holds(&world, &state);
            }
            let verdict = monitor::verdict(&run);
            let name = path.display();
            assert_eq!(
                Property::Exclusion.holds_in(&verdict),
                excluded,
                "{name} seed {seed}: exclusion"
            );
            assert_eq!(
                Property::NoLostUpdate.holds_in(&verdict),
                Property::NoLostUpdate.holds(&world, &state),
                "{name} seed {seed}: lost updates"
            );
            assert_eq!(
                Property::NoWaitCycle.holds_in(&verdict),
                acyclic,
                "{name} seed {seed}: wait cycles"
            );
            for (i, p) in Property::ALL.iter().enumerate() {
                broken[i] += u32::from(!p.holds_in(&verdict));
            }
        }
    }
    // The shipped scenarios break each property somewhere, so the agreement is not vacuous.
    assert!(broken.iter().all(|b| *b > 0), "{broken:?}");
}
