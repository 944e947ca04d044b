#![no_main]
#![allow(dead_code)]

include!("../harness.rs");

libfuzzer_sys::fuzz_target!(|data: &[u8]| parse_file(data));
