//! libFuzzer over checks/socket_line.rs (the contract is written there; CI replays its seeds on stable).

#![no_main]

#[path = "../checks/socket_line.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::check(data));
