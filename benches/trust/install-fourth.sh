#!/usr/bin/env bash
# Installs, pinned, the real MCP servers whose tool lists are the trust bench's fourth real set
# (benches/data/trust/fourth-real.json), into target/trust-fourth/ (git-ignored). None of them is
# in the held-out or the third set (install-heldout.sh, install-third.sh), nor one of the five
# reference servers. Only `collect-heldout.py fourth` needs them; the bench reads the committed
# JSON. Scripts of npm packages are not run (`--ignore-scripts`: no browser downloads); the
# servers only list.
set -euo pipefail
cd "$(dirname "$0")/../.."
dir="$PWD/target/trust-fourth"
mkdir -p "$dir"
# One folder an npm server, as one venv a PyPI server below (see install-third.sh).
npms=("@antv/mcp-server-chart@0.9.10" "@amap/amap-maps-mcp-server@0.0.8" "@baidumap/mcp-server-baidu-map@1.0.5"
  "@brave/brave-search-mcp-server@2.1.4" "@angiejones/mcp-selenium@0.2.3"
  "@agent-infra/mcp-server-filesystem@1.2.29" "@agent-infra/mcp-server-commands@1.2.18"
  "@roychri/mcp-server-asana@1.8.0" "@shortcut/mcp@0.25.0"
  "@cyanheads/git-mcp-server@2.15.3" "@drawio/mcp@1.6.1" "@eslint/mcp@0.3.13"
  "@mondaydotcomorg/monday-api-mcp@3.3.0" "@line/line-bot-mcp-server@0.5.0" "@larksuiteoapi/lark-mcp@0.5.1"
  "@sylphx/pdf-reader-mcp@2.4.0" "@mui/mcp@0.1.6" "mcp-mermaid@0.4.1" "mcp-server-code-runner@0.1.8"
  "mcp-searxng@2.4.0" "mcp-deepwiki@0.0.10" "argocd-mcp@0.9.0" "reddit-mcp-buddy@1.1.14"
  "replicate-mcp@0.9.0" "flightradar-mcp-server@0.1.2" "hostinger-api-mcp@1.63.2"
  "@postman/postman-mcp-server@2.13.0" "@nexus2520/bitbucket-mcp-server@3.0.0"
  "@aashari/mcp-server-atlassian-jira@3.3.0" "@mobilenext/mobile-mcp@1.0.4"
  "fetcher-mcp@0.3.9" "@tiberriver256/mcp-server-azure-devops@0.1.48"
  "@skanda-yutori/mcp-send-email@1.0.0")
# One venv a PyPI server: their pins conflict with each other. Four installs at a time.
# Two need mcp 1.x (they import mcp.server.fastmcp, which mcp 2 renamed) and one an lxml
# module that lxml split out: the extra pins ride in the same entry, the venv named by the first.
pins=("opensearch-mcp-server-py==0.12.0" "awslabs-aws-pricing-mcp-server==1.1.1"
  "awslabs-cloudwatch-mcp-server==0.3.1" "awslabs-aws-location-mcp-server==2.1.1" "mysql-mcp-server==0.4.4"
  "workspace-mcp==2.2.1" "astro-airflow-mcp==0.9.1" "mfa-servicenow-mcp==1.25.4"
  "pymupdf4llm-mcp==1.28.0 mcp==1.30.0" "tilt-mcp==0.1.3 mcp==1.30.0" "web-forager==4.0.0 lxml_html_clean==0.4.6")
install() {
  local venv="$dir/py-${1%%==*}"
  [ -f "$venv/.installed" ] && return 0
  python3 -m venv "$venv"
  local specs
  read -ra specs <<<"$1"
  if "$venv/bin/pip" install --quiet --disable-pip-version-check "${specs[@]}" >"$venv/install.log" 2>&1; then
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
