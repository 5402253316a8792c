//! The MCP server the client talks to.
