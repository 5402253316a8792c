# docs/deploy.md "Tool filters per profile": a profile whose pattern uses `/`, in a
# directory of its own. The config is refused before any server starts.
cd "$(mktemp -d)"
cat > servers.toml <<'TOML'
[mcp_servers.github]
url = "https://api.githubcopilot.com/mcp/"

[mcp_servers.time]
command = "uvx"
args = ["mcp-server-time"]

[profiles.review]
servers = ["github", "time"]
allow_tools = ["github__get_*", "github/list_*", "time__*"]
deny_tools = ["*__delete_*"]
TOML
