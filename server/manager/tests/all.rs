//! The integration tests of the `wave-mcp-manager` crate: what the manager promises, through its
//! public API, against real processes of our test server (lazy dial, generations, teardown,
//! cache).

mod suite;
