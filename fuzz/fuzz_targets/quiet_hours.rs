//! libFuzzer over checks/quiet_hours.rs (the contract is written there; CI replays its seeds on stable).

#![no_main]

#[path = "../checks/quiet_hours.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::check(data));
