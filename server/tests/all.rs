//! The integration tests of the `wave-mcp` package: real MCP server processes (our test server),
//! real HTTP endpoints on 127.0.0.1, and the real `wave-mcp` binary.

mod suite;
