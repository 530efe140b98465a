//! Lockstep core.
