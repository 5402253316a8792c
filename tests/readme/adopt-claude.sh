# README "Adopt": a Claude Code user file (as Claude Code 2.1.332 writes it) with two
# servers at user scope: the time server (uvx) and the memory server (npx).
cat > ~/.claude.json <<'JSON'
{
  "numStartups": 12,
  "mcpServers": {
    "time": {"type": "stdio", "command": "uvx", "args": ["mcp-server-time@2026.10.19"], "env": {}},
    "memory": {"type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory@2026.8.31"], "env": {}}
  }
}
JSON
