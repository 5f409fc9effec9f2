//! libFuzzer over checks/cloud_answers.rs (the contract is written there; CI replays its seeds on stable).

#![no_main]

#[path = "../checks/cloud_answers.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::check(data));
