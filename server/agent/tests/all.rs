//! The integration tests of the agent: real MCP server processes (our test server), a scripted
//! fake model HTTP server on 127.0.0.1, and the real `wave-mcp chat` command.

mod suite;
