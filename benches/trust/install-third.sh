#!/usr/bin/env bash
# Installs, pinned, the real MCP servers whose tool lists are the trust bench's third real set
# (benches/data/trust/third-real.json), into target/trust-third/ (git-ignored). None of them is
# in the held-out set (install-heldout.sh). Only `collect-heldout.py third` needs them; the bench
# reads the committed JSON. Scripts of npm packages are not run (`--ignore-scripts`: no browser
# downloads); the servers only list.
set -euo pipefail
cd "$(dirname "$0")/../.."
dir="$PWD/target/trust-third"
mkdir -p "$dir"
# One folder an npm server, as one venv a PyPI server below: one tree for all of them fails
# whole when a single package cannot resolve (one pulls a dependency from outside npm).
npms=("exa-mcp-server@3.4.1" "@modelcontextprotocol/server-everart@0.6.2" "@elastic/mcp-server-elasticsearch@0.3.1"
  "airtable-mcp-server@1.14.0" "@hubspot/mcp-server@0.4.0" "@shopify/dev-mcp@1.16.0"
  "@apify/actors-mcp-server@0.16.0" "@neondatabase/mcp-server-neon@0.6.5" "figma-developer-mcp@0.13.2"
  "@openbnb/mcp-server-airbnb@0.3.0" "@pinecone-database/mcp@0.3.0" "@mapbox/mcp-server@0.14.0"
  "@launchdarkly/mcp-server@0.6.2" "@twilio-alpha/mcp@0.7.0" "@netlify/mcp@1.15.1"
  "mcp-discord@1.3.4" "@translated/lara-mcp@1.0.6" "linear-mcp-server@0.1.0"
  "@browsermcp/mcp@0.1.3" "@agentdeskai/browser-tools-mcp@2.0.2" "@cloudflare/mcp-server-cloudflare@0.2.0"
  "@currents/mcp@2.1.1" "@kazuph/mcp-taskmanager@1.1.1" "@brightdata/mcp@2.11.3"
  "@perplexity-ai/mcp-server@1.2.1" "@mastra/mcp-docs-server@1.2.27" "nx-mcp@0.25.0"
  "@browserbasehq/mcp-server-browserbase@2.4.3" "@dynatrace-oss/dynatrace-mcp-server@2.1.2" "@upstash/mcp-server@0.3.0")
# One venv a PyPI server: their pins conflict with each other. Four installs at a time.
pins=("mcp-server-qdrant==0.8.1" "chroma-mcp==0.2.6" "mcp-obsidian==0.2.3" "wikipedia-mcp==2.0.1"
  "mcp-server-motherduck==1.1.0" "mcp-neo4j-cypher==0.6.0" "mcp-neo4j-memory==0.4.5"
  "mcp-server-calculator==0.2.1" "kagimcp==1.0.2" "mcp-pandoc==0.11.1"
  "elasticsearch-mcp-server==2.1.6" "mcp-server-tree-sitter==0.7.0" "zotero-mcp==0.3.1"
  "mcp-reddit==0.4.0" "mcp-server-sentry==2025.1.14" "serper-mcp-server==0.0.10"
  "todoist-mcp==0.4.0" "mcp-grafana==2.1.1" "kubernetes-mcp-server==0.0.69"
  "mcp-server-docker==0.3.0" "mcp-youtube-transcript==0.3.5" "langfuse-mcp==0.14.0"
  "mcp-server-trello==0.5.2" "semgrep-mcp==0.9.0" "mcp-shell-server==1.1.14"
  "mcp-text-editor==1.2.2" "mcp-server-odoo==0.9.0")
install() {
  local venv="$dir/py-${1%%==*}"
  [ -f "$venv/.installed" ] && return 0
  python3 -m venv "$venv"
  if "$venv/bin/pip" install --quiet --disable-pip-version-check "$1" >"$venv/install.log" 2>&1; then
    touch "$venv/.installed"
  else
    echo "not installed: $1 (see $venv/install.log)" >&2
  fi
}
# `npm install` once a folder: a second run over a tree re-resolves it and can fail on its own lock.
install_npm() {
  local d="$dir/npm-$(echo "${1%@*}" | tr -d @ | tr / -)"
  [ -f "$d/.installed" ] && return 0
  mkdir -p "$d" && echo '{"private": true}' >"$d/package.json"
  if (cd "$d" && npm install --no-audit --no-fund --ignore-scripts --legacy-peer-deps \
    --loglevel=error "$1" >install.log 2>&1); then
    touch "$d/.installed"
  else
    echo "not installed: $1 (see $d/install.log)" >&2
  fi
}
for pin in "${npms[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge 4 ]; do wait -n || true; done
  install_npm "$pin" &
done
for pin in "${pins[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge 4 ]; do wait -n || true; done
  install "$pin" &
done
wait
