# docs/clients.md "import": a VS Code project with a stdio server, a server whose token VS Code
# prompts for, and a remote server without credentials.
mkdir -p ~/proj/.vscode
cd ~/proj
cat > .vscode/mcp.json <<'JSON'
{
  "inputs": [
    {"type": "promptString", "id": "github-pat", "description": "GitHub Personal Access Token", "password": true}
  ],
  "servers": {
    "time": {"type": "stdio", "command": "uvx", "args": ["mcp-server-time", "--local-timezone", "UTC"]},
    "github": {"type": "http", "url": "https://api.githubcopilot.com/mcp/",
               "headers": {"Authorization": "Bearer ${input:github-pat}"}},
    "notion": {"type": "http", "url": "https://mcp.notion.com/mcp"}
  }
}
JSON
