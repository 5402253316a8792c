# docs/config.md "Overrides": the servers.toml shown there, in a directory of its own.
cd "$(mktemp -d)"
cat > servers.toml <<'TOML'
[mcp_servers.time]
command = "uvx"
args = ["mcp-server-time", "--local-timezone", "UTC"]
search_hints = "clock, what time is it, timezone"
startup_timeout_sec = 60   # a first `uvx` run downloads the package

[mcp_servers.time.tools.get_current_time]
description = "Current date and time in an IANA time zone (e.g. Europe/Paris); use before any date arithmetic."
title = "Current time"

[mcp_servers.time.tools.convert_tme]   # a typo: `check` warns about it
description = "Convert a time between zones."
TOML
