#!/usr/bin/env bash
# Installs, pinned, the real MCP servers whose tool lists are the trust bench's held-out real
# set (benches/data/trust/heldout-real.json), into target/trust-peers/ (git-ignored). Only
# `collect-heldout.py` needs them; the bench reads the committed JSON. Scripts of npm
# packages are not run (`--ignore-scripts`: no browser downloads); the servers only list.
set -euo pipefail
cd "$(dirname "$0")/../.."
dir="$PWD/target/trust-peers"
mkdir -p "$dir/node"
cat > "$dir/node/package.json" <<'JSON'
{
  "private": true,
  "dependencies": {
    "@playwright/mcp": "0.0.83",
    "chrome-devtools-mcp": "1.11.0",
    "@upstash/context7-mcp": "4.1.1",
    "@modelcontextprotocol/server-sequential-thinking": "2026.8.31",
    "@modelcontextprotocol/server-github": "2025.4.8",
    "@modelcontextprotocol/server-postgres": "0.6.2",
    "@modelcontextprotocol/server-google-maps": "0.6.2",
    "@modelcontextprotocol/server-slack": "2025.4.25",
    "@modelcontextprotocol/server-brave-search": "0.6.2",
    "@modelcontextprotocol/server-puppeteer": "2025.5.12",
    "@modelcontextprotocol/server-redis": "2025.4.25",
    "@modelcontextprotocol/server-gitlab": "2025.4.25",
    "@modelcontextprotocol/server-aws-kb-retrieval": "0.6.2",
    "@notionhq/notion-mcp-server": "2.5.2",
    "tavily-mcp": "0.2.22",
    "firecrawl-mcp": "3.26.0",
    "@zereight/mcp-gitlab": "2.1.64",
    "@circleci/mcp-server-circleci": "0.20.0",
    "mongodb-mcp-server": "3.0.4",
    "@wonderwhy-er/desktop-commander": "0.2.52",
    "@supabase/mcp-server-supabase": "0.13.0",
    "@sentry/mcp-server": "0.39.0",
    "@azure-devops/mcp": "2.10.0",
    "@stripe/mcp": "0.3.3",
    "@heroku/mcp-server": "1.2.8",
    "mcp-server-kubernetes": "4.1.7",
    "@benborla29/mcp-server-mysql": "2.0.9",
    "@kimtaeyoon83/mcp-server-youtube-transcript": "0.1.1",
    "@executeautomation/playwright-mcp-server": "1.0.12",
    "next-devtools-mcp": "0.4.0"
  }
}
JSON
# Once: a second `npm install` over this tree re-resolves it and can fail on its own lock.
[ -d "$dir/node/node_modules" ] ||
  (cd "$dir/node" && npm install --no-audit --no-fund --ignore-scripts --loglevel=error)
# One venv a PyPI server: their pins conflict with each other.
for pin in "mcp-server-fetch==2026.10.24" "mcp-server-sqlite==2025.4.25" \
  "arxiv-mcp-server==0.8.2" "duckduckgo-mcp-server==0.7.0" "markitdown-mcp==0.0.1a8" \
  "excel-mcp-server==2.2.2" "office-word-mcp-server==1.1.11" "mcp-server-duckdb==1.1.0" \
  "mcp-clickhouse==0.7.0" "awslabs-aws-documentation-mcp-server==1.2.3" \
  "mcp-atlassian==0.23.1" "office-powerpoint-mcp-server==2.0.7" "mcp-scholarly==0.1.0" \
  "mcp-yahoo-finance==0.2.0" "cli-mcp-server==0.2.5"; do
  venv="$dir/py-${pin%%==*}"
  [ -f "$venv/.installed" ] && continue
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "$pin" && touch "$venv/.installed"
done
