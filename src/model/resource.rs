//! The resource: fencing by token, and the reads and writes it accepts or rejects.

use crate::scenario::Fencing;
use crate::trace::{Endpoint, Token, Values, What};

use super::{row_indices, Cx, Message};

impl Cx<'_> {
    /// Whether the resource accepts an access with this token, raising its highest token if so.
    fn fence(&mut self, resource: u32, token: Option<Token>) -> bool {
        let cfg = &self.world.resources[resource as usize];
        let st = &mut self.state.resources[resource as usize];
        let value = match (cfg.fencing, token) {
            (Fencing::Off, _) => return true,
            (_, None) => return false,
            (Fencing::AnySource, Some(t)) => t.value,
            (Fencing::OneSource, Some(t)) => {
                if Some(t.service) != cfg.fencing_source {
                    return false;
                }
                t.value
            }
        };
        if st.highest_token.is_some_and(|h| value < h) {
            return false;
        }
        st.highest_token = Some(value);
        true
    }

    pub(super) fn resource_message(&mut self, resource: u32, client: u32, message: Message) {
        let r = resource as usize;
        match message {
            Message::Read {
                attempt,
                rows,
                token,
            } => {
                let check = self.world.resources[r].check_reads;
                let accepted = !check || self.fence(resource, token);
                let st = &self.state.resources[r];
                let values: Values = if accepted {
                    row_indices(rows).map(|i| st.values[i]).collect()
                } else {
                    Values::new()
                };
                self.emit(What::Read {
                    client,
                    resource,
                    rows,
                    token,
                    accepted,
                    values: values.clone(),
                });
                self.send(
                    Endpoint::Resource(resource),
                    Endpoint::Client(client),
                    Message::ReadReply {
                        attempt,
                        accepted,
                        values,
                    },
                );
            }
            Message::Write {
                attempt,
                rows,
                values,
                token,
            } => {
                let accepted = self.fence(resource, token);
                if accepted {
                    let st = &mut self.state.resources[r];
                    for (k, i) in row_indices(rows).enumerate() {
                        st.values[i] = values[k];
                        st.versions[i] += 1;
                    }
                }
                // Which updates this write loses is known only later (a later write based on an
                // older read can carry them forward again), so the trace records the write alone
                // and `monitor::lost_updates` attributes losses from the whole trace.
                self.emit(What::Write {
                    client,
                    resource,
                    rows,
                    token,
                    accepted,
                    values,
                });
                self.send(
                    Endpoint::Resource(resource),
                    Endpoint::Client(client),
                    Message::WriteReply { attempt, accepted },
                );
            }
            _ => unreachable!("resources receive only reads and writes"),
        }
    }
}
