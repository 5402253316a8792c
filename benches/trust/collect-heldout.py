#!/usr/bin/env python3
"""Collects the tool lists of the real MCP servers `install-heldout.sh` installed into
target/trust-peers/ and writes them, as the servers sent them, to
benches/data/trust/heldout-real.json: the held-out real set of the trust bench
(`cargo bench --bench trust`), one entry a server with its package and version. With `third`,
the same for the servers of `install-third.sh` (target/trust-third/, third-real.json); with
`fourth`, those of `install-fourth.sh` (target/trust-fourth/, fourth-real.json).

usage: benches/trust/collect-heldout.py [third|fourth]  (from the project root, after
                                 install-heldout.sh, install-third.sh or install-fourth.sh)

Each server runs over stdio with a throwaway HOME and, where it refuses to start without one,
a dummy credential (`dummy`: no request leaves the machine, a server only lists its tools);
a raw JSON-RPC client sends initialize (2025-06-18) and pages through tools/list. A server
that does not answer within TIMEOUT seconds, or refuses to start, is reported and left out.
JOBS=N lists N servers at a time (on a loaded machine, give TIMEOUT room: some take a minute).
"""
import concurrent.futures
import glob
import json
import os
import select
import subprocess
import sys
import tempfile
import time

ROOT = os.getcwd()
SET = sys.argv[1] if len(sys.argv) > 1 else "heldout"
if SET not in ("heldout", "third", "fourth"):
    sys.exit(f"unknown set {SET!r}: give nothing (held-out), `third` or `fourth`")
PEERS = os.path.join(ROOT, "target", "trust-peers" if SET == "heldout" else f"trust-{SET}")
NODE_BIN = os.path.join(PEERS, "node", "node_modules", ".bin")
# install-third.sh: one folder an npm package, npm-<package>/node_modules/.bin.
NODE_BINS = [NODE_BIN] + sorted(glob.glob(os.path.join(PEERS, "npm-*", "node_modules", ".bin")))
# One venv a PyPI server (install-heldout.sh): py-<package>/bin.
PY_BINS = sorted(glob.glob(os.path.join(PEERS, "py-*", "bin")))
TIMEOUT = float(os.environ.get("TIMEOUT", "60"))
D = "dummy"

# (server, package@version, command, args, env)
SERVERS = [
    ("playwright", "@playwright/mcp@0.0.83", "n:playwright-mcp", [], {}),
    ("chrome-devtools", "chrome-devtools-mcp@1.11.0", "n:chrome-devtools-mcp", [], {}),
    ("context7", "@upstash/context7-mcp@4.1.1", "n:context7-mcp", [], {}),
    ("sequential-thinking", "@modelcontextprotocol/server-sequential-thinking@2026.8.31",
     "n:mcp-server-sequential-thinking", [], {}),
    ("github", "@modelcontextprotocol/server-github@2025.4.8", "n:mcp-server-github", [],
     {"GITHUB_PERSONAL_ACCESS_TOKEN": D}),
    ("postgres", "@modelcontextprotocol/server-postgres@0.6.2", "n:mcp-server-postgres",
     ["postgresql://127.0.0.1:9/none"], {}),
    ("google-maps", "@modelcontextprotocol/server-google-maps@0.6.2", "n:mcp-server-google-maps", [],
     {"GOOGLE_MAPS_API_KEY": D}),
    ("slack", "@modelcontextprotocol/server-slack@2025.4.25", "n:mcp-server-slack", [],
     {"SLACK_BOT_TOKEN": D, "SLACK_TEAM_ID": D}),
    ("brave-search", "@modelcontextprotocol/server-brave-search@0.6.2", "n:mcp-server-brave-search", [],
     {"BRAVE_API_KEY": D}),
    ("puppeteer", "@modelcontextprotocol/server-puppeteer@2025.5.12", "n:mcp-server-puppeteer", [], {}),
    ("redis", "@modelcontextprotocol/server-redis@2025.4.25", "n:mcp-server-redis",
     ["redis://127.0.0.1:9"], {}),
    ("gitlab", "@modelcontextprotocol/server-gitlab@2025.4.25", "n:mcp-server-gitlab", [],
     {"GITLAB_PERSONAL_ACCESS_TOKEN": D}),
    ("aws-kb-retrieval", "@modelcontextprotocol/server-aws-kb-retrieval@0.6.2",
     "n:mcp-server-aws-kb-retrieval", [], {"AWS_ACCESS_KEY_ID": D, "AWS_SECRET_ACCESS_KEY": D,
                                             "AWS_REGION": "us-east-1"}),
    ("notion", "@notionhq/notion-mcp-server@2.5.2", "n:notion-mcp-server", [], {"NOTION_TOKEN": D}),
    ("tavily", "tavily-mcp@0.2.22", "n:tavily-mcp", [], {"TAVILY_API_KEY": D}),
    ("firecrawl", "firecrawl-mcp@3.26.0", "n:firecrawl-mcp", [], {"FIRECRAWL_API_KEY": D}),
    ("gitlab-zereight", "@zereight/mcp-gitlab@2.1.64", "n:mcp-gitlab", [],
     {"GITLAB_PERSONAL_ACCESS_TOKEN": D}),
    ("circleci", "@circleci/mcp-server-circleci@0.20.0", "n:mcp-server-circleci", [],
     {"CIRCLECI_TOKEN": D}),
    ("mongodb", "mongodb-mcp-server@3.0.4", "n:mongodb-mcp-server", [], {}),
    ("desktop-commander", "@wonderwhy-er/desktop-commander@0.2.52", "n:desktop-commander", [], {}),
    ("supabase", "@supabase/mcp-server-supabase@0.13.0", "n:mcp-server-supabase", [],
     {"SUPABASE_ACCESS_TOKEN": D}),
    ("sentry", "@sentry/mcp-server@0.39.0", "n:sentry-mcp", [], {"SENTRY_ACCESS_TOKEN": D}),
    ("azure-devops", "@azure-devops/mcp@2.10.0", "n:mcp-server-azuredevops", ["contoso"], {}),
    ("stripe", "@stripe/mcp@0.3.3", "n:mcp", ["--tools=all", "--api-key=sk_test_dummy"], {}),
    ("heroku", "@heroku/mcp-server@1.2.8", "n:heroku-mcp-server", [], {"HEROKU_API_KEY": D}),
    ("kubernetes", "mcp-server-kubernetes@4.1.7", "n:mcp-server-kubernetes", [], {}),
    ("mysql", "@benborla29/mcp-server-mysql@2.0.9", "n:mcp-server-mysql", [],
     {"MYSQL_HOST": "127.0.0.1", "MYSQL_PORT": "9", "MYSQL_USER": D, "MYSQL_PASS": D, "MYSQL_DB": D}),
    ("youtube-transcript", "@kimtaeyoon83/mcp-server-youtube-transcript@0.1.1",
     "n:mcp-server-youtube-transcript", [], {}),
    ("playwright-ea", "@executeautomation/playwright-mcp-server@1.0.12", "n:playwright-mcp-server", [], {}),
    ("next-devtools", "next-devtools-mcp@0.4.0", "n:next-devtools-mcp", [], {}),
    ("fetch", "mcp-server-fetch==2026.10.24", "p:mcp-server-fetch", [], {}),
    ("sqlite", "mcp-server-sqlite==2025.4.25", "p:mcp-server-sqlite", ["--db-path", "{tmp}/x.db"], {}),
    ("arxiv", "arxiv-mcp-server==0.8.2", "p:arxiv-mcp-server", ["--storage-path", "{tmp}/papers"], {}),
    ("duckduckgo", "duckduckgo-mcp-server==0.7.0", "p:duckduckgo-mcp-server", [], {}),
    ("markitdown", "markitdown-mcp==0.0.1a8", "p:markitdown-mcp", [], {}),
    ("excel", "excel-mcp-server==2.2.2", "p:excel-mcp-server", ["stdio"], {"EXCEL_FILES_PATH": "{tmp}"}),
    ("word", "office-word-mcp-server==1.1.11", "p:word_mcp_server", [], {}),
    ("duckdb", "mcp-server-duckdb==1.1.0", "p:mcp-server-duckdb", ["--db-path", "{tmp}/x.duckdb"], {}),
    ("clickhouse", "mcp-clickhouse==0.7.0", "p:mcp-clickhouse", [],
     {"CLICKHOUSE_HOST": "127.0.0.1", "CLICKHOUSE_PORT": "9", "CLICKHOUSE_USER": D,
      "CLICKHOUSE_PASSWORD": D}),
    ("aws-documentation", "awslabs-aws-documentation-mcp-server==1.2.3",
     "p:awslabs.aws-documentation-mcp-server", [], {"FASTMCP_LOG_LEVEL": "ERROR"}),
    ("atlassian", "mcp-atlassian==0.23.1", "p:mcp-atlassian", [],
     {"JIRA_URL": "https://jira.invalid", "JIRA_USERNAME": D, "JIRA_API_TOKEN": D,
      "CONFLUENCE_URL": "https://wiki.invalid/wiki", "CONFLUENCE_USERNAME": D, "CONFLUENCE_API_TOKEN": D}),
    ("powerpoint", "office-powerpoint-mcp-server==2.0.7", "p:ppt_mcp_server", [], {}),
    ("scholarly", "mcp-scholarly==0.1.0", "p:mcp-scholarly", [], {}),
    ("yahoo-finance", "mcp-yahoo-finance==0.2.0", "p:mcp-yahoo-finance", [], {}),
    ("cli", "cli-mcp-server==0.2.5", "p:cli-mcp-server", [], {"ALLOWED_DIR": "{tmp}"}),
]

# The third real set (install-third.sh): none of these packages is in the list above.
THIRD = [
    ("neon", "@neondatabase/mcp-server-neon@0.6.5", "n:mcp-server-neon", ["start", D], {}),
    ("exa", "exa-mcp-server@3.4.1", "n:exa-mcp-server", [], {"EXA_API_KEY": D}),
    ("everart", "@modelcontextprotocol/server-everart@0.6.2", "n:mcp-server-everart", [],
     {"EVERART_API_KEY": D}),
    ("elasticsearch", "@elastic/mcp-server-elasticsearch@0.3.1", "n:mcp-server-elasticsearch", [],
     {"ES_URL": "http://127.0.0.1:9", "ES_API_KEY": D}),
    ("airtable", "airtable-mcp-server@1.14.0", "n:airtable-mcp-server", [], {"AIRTABLE_API_KEY": D}),
    ("hubspot", "@hubspot/mcp-server@0.4.0", "n:mcp-hubspot", [], {"PRIVATE_APP_ACCESS_TOKEN": D}),
    ("shopify-dev", "@shopify/dev-mcp@1.16.0", "n:shopify-dev-mcp", [], {"OPT_OUT_INSTRUMENTATION": "true"}),
    ("apify", "@apify/actors-mcp-server@0.16.0", "n:actors-mcp-server", [], {"APIFY_TOKEN": D}),
    ("figma", "figma-developer-mcp@0.13.2", "n:figma-developer-mcp", ["--stdio"], {"FIGMA_API_KEY": D}),
    ("airbnb", "@openbnb/mcp-server-airbnb@0.3.0", "n:mcp-server-airbnb", [], {}),
    ("pinecone", "@pinecone-database/mcp@0.3.0", "n:pinecone-mcp", [], {"PINECONE_API_KEY": D}),
    ("mapbox", "@mapbox/mcp-server@0.14.0", "n:mcp-server", [], {"MAPBOX_ACCESS_TOKEN": D}),
    ("launchdarkly", "@launchdarkly/mcp-server@0.6.2", "n:mcp", ["start", "--api-key", D], {}),
    ("twilio", "@twilio-alpha/mcp@0.7.0", "n:twilio-mcp-server", ["AC" + "0" * 32 + "/SK" + "0" * 32 + ":" + D], {}),
    ("netlify", "@netlify/mcp@1.15.1", "n:netlify-mcp", [], {"NETLIFY_PERSONAL_ACCESS_TOKEN": D}),
    ("discord", "mcp-discord@1.3.4", "n:mcp-discord", [], {"DISCORD_TOKEN": D}),
    ("lara", "@translated/lara-mcp@1.0.6", "n:lara-mcp", [],
     {"LARA_ACCESS_KEY_ID": D, "LARA_ACCESS_KEY_SECRET": D}),
    ("linear", "linear-mcp-server@0.1.0", "n:linear-mcp-server", [], {"LINEAR_API_KEY": D}),
    ("browsermcp", "@browsermcp/mcp@0.1.3", "n:mcp-server-browsermcp", [], {}),
    ("browser-tools", "@agentdeskai/browser-tools-mcp@2.0.2", "n:browser-tools-mcp", [], {}),
    ("cloudflare", "@cloudflare/mcp-server-cloudflare@0.2.0", "n:mcp-server-cloudflare", ["run", D], {}),
    ("currents", "@currents/mcp@2.1.1", "n:mcp", [], {"CURRENTS_API_KEY": D}),
    ("taskmanager", "@kazuph/mcp-taskmanager@1.1.1", "n:mcp-taskmanager", [],
     {"TASK_MANAGER_FILE_PATH": "{tmp}/tasks.json"}),
    ("brightdata", "@brightdata/mcp@2.11.3", "n:mcp", [], {"API_TOKEN": D}),
    ("perplexity", "@perplexity-ai/mcp-server@1.2.1", "n:perplexity-mcp", [], {"PERPLEXITY_API_KEY": D}),
    ("mastra-docs", "@mastra/mcp-docs-server@1.2.27", "n:mcp-docs-server", [], {}),
    ("nx", "nx-mcp@0.25.0", "n:nx-mcp", ["{tmp}"], {}),
    ("browserbase", "@browserbasehq/mcp-server-browserbase@2.4.3", "n:mcp-server-browserbase", [],
     {"BROWSERBASE_API_KEY": D, "BROWSERBASE_PROJECT_ID": D, "GEMINI_API_KEY": D}),
    ("dynatrace", "@dynatrace-oss/dynatrace-mcp-server@2.1.2", "n:mcp-server-dynatrace", [],
     {"DT_ENVIRONMENT": "https://abc12345.apps.dynatrace.com", "DT_PLATFORM_TOKEN": D}),
    ("upstash", "@upstash/mcp-server@0.3.0", "n:mcp-server", ["run", "--email", "a@b.invalid", "--api-key", D], {}),
    ("qdrant", "mcp-server-qdrant==0.8.1", "p:mcp-server-qdrant", [],
     {"QDRANT_URL": "http://127.0.0.1:9", "COLLECTION_NAME": "x"}),
    ("chroma", "chroma-mcp==0.2.6", "p:chroma-mcp", ["--client-type", "ephemeral"], {}),
    ("obsidian", "mcp-obsidian==0.2.3", "p:mcp-obsidian", [], {"OBSIDIAN_API_KEY": D}),
    ("wikipedia", "wikipedia-mcp==2.0.1", "p:wikipedia-mcp", [], {}),
    ("motherduck", "mcp-server-motherduck==1.1.0", "p:mcp-server-motherduck", ["--db-path", ":memory:", "--read-write"], {}),
    ("neo4j-cypher", "mcp-neo4j-cypher==0.6.0", "p:mcp-neo4j-cypher", [],
     {"NEO4J_URI": "bolt://127.0.0.1:9", "NEO4J_USERNAME": D, "NEO4J_PASSWORD": D}),
    ("neo4j-memory", "mcp-neo4j-memory==0.4.5", "p:mcp-neo4j-memory", [],
     {"NEO4J_URL": "bolt://127.0.0.1:9", "NEO4J_USERNAME": D, "NEO4J_PASSWORD": D}),
    ("calculator", "mcp-server-calculator==0.2.1", "p:mcp-server-calculator", [], {}),
    ("kagi", "kagimcp==1.0.2", "p:kagimcp", [], {"KAGI_API_KEY": D}),
    ("pandoc", "mcp-pandoc==0.11.1", "p:mcp-pandoc", [], {}),
    ("elasticsearch-py", "elasticsearch-mcp-server==2.1.6", "p:elasticsearch-mcp-server", [],
     {"ELASTICSEARCH_HOSTS": "http://127.0.0.1:9", "ELASTICSEARCH_USERNAME": D, "ELASTICSEARCH_PASSWORD": D}),
    ("tree-sitter", "mcp-server-tree-sitter==0.7.0", "p:mcp-server-tree-sitter", [], {}),
    ("zotero", "zotero-mcp==0.3.1", "p:zotero-mcp", [], {"ZOTERO_LOCAL": "true"}),
    ("reddit", "mcp-reddit==0.4.0", "p:mcp-reddit", [], {}),
    ("sentry-py", "mcp-server-sentry==2025.1.14", "p:mcp-server-sentry", ["--auth-token", D], {}),
    ("serper", "serper-mcp-server==0.0.10", "p:serper-mcp-server", [], {"SERPER_API_KEY": D}),
    ("todoist", "todoist-mcp==0.4.0", "p:todoist-mcp", [], {"TODOIST_API_TOKEN": D}),
    ("grafana", "mcp-grafana==2.1.1", "p:mcp-grafana", [],
     {"GRAFANA_URL": "http://127.0.0.1:9", "GRAFANA_API_KEY": D}),
    ("kubernetes-go", "kubernetes-mcp-server==0.0.69", "p:kubernetes-mcp-server", [], {}),
    ("docker", "mcp-server-docker==0.3.0", "p:mcp-server-docker", [], {"DOCKER_HOST": "tcp://127.0.0.1:9"}),
    ("youtube-transcript-py", "mcp-youtube-transcript==0.3.5", "p:mcp-youtube-transcript", [], {}),
    ("langfuse", "langfuse-mcp==0.14.0", "p:langfuse-mcp", [],
     {"LANGFUSE_PUBLIC_KEY": D, "LANGFUSE_SECRET_KEY": D, "LANGFUSE_HOST": "http://127.0.0.1:9"}),
    ("trello", "mcp-server-trello==0.5.2", "p:mcp-server-trello", [], {"TRELLO_API_KEY": D, "TRELLO_TOKEN": D}),
    ("semgrep", "semgrep-mcp==0.9.0", "p:semgrep-mcp", [], {}),
    ("shell", "mcp-shell-server==1.1.14", "p:mcp-shell-server", [], {"ALLOW_COMMANDS": "ls,cat"}),
    ("text-editor", "mcp-text-editor==1.2.2", "p:mcp-text-editor", [], {}),
    ("odoo", "mcp-server-odoo==0.9.0", "p:mcp-server-odoo", [],
     {"ODOO_URL": "http://127.0.0.1:9", "ODOO_API_KEY": D, "ODOO_DB": D}),
]
# The fourth real set (install-fourth.sh): in neither list above, nor a reference server.
FOURTH = [
    ("antv-chart", "@antv/mcp-server-chart@0.9.10", "n:mcp-server-chart", [], {}),
    ("amap", "@amap/amap-maps-mcp-server@0.0.8", "n:mcp-amap", [], {"AMAP_MAPS_API_KEY": D}),
    ("baidu-map", "@baidumap/mcp-server-baidu-map@1.0.5", "n:mcp-server-baidu-map", [], {"BAIDU_MAP_API_KEY": D}),
    ("brave-search-v2", "@brave/brave-search-mcp-server@2.1.4", "n:brave-search-mcp-server", ["--transport", "stdio"],
     {"BRAVE_API_KEY": D}),
    ("selenium", "@angiejones/mcp-selenium@0.2.3", "n:mcp-selenium", [], {}),
    ("agent-infra-filesystem", "@agent-infra/mcp-server-filesystem@1.2.29", "n:mcp-server-filesystem",
     ["--allowed-directories", "{tmp}"], {}),
    ("agent-infra-commands", "@agent-infra/mcp-server-commands@1.2.18", "n:mcp-server-commands", [], {}),
    ("asana", "@roychri/mcp-server-asana@1.8.0", "n:mcp-server-asana", [], {"ASANA_ACCESS_TOKEN": D}),
    ("shortcut", "@shortcut/mcp@0.25.0", "n:mcp-server-shortcut", [], {"SHORTCUT_API_TOKEN": D}),
    ("git-cyanheads", "@cyanheads/git-mcp-server@2.15.3", "n:git-mcp-server", [],
     {"MCP_TRANSPORT_TYPE": "stdio", "GIT_BASE_DIR": "{tmp}"}),
    ("drawio", "@drawio/mcp@1.6.1", "n:drawio-mcp", [], {}),
    ("eslint", "@eslint/mcp@0.3.13", "n:mcp", [], {}),
    ("monday", "@mondaydotcomorg/monday-api-mcp@3.3.0", "n:mcp-server-monday-api", ["-t", D], {}),
    ("line-bot", "@line/line-bot-mcp-server@0.5.0", "n:line-bot-mcp-server", [],
     {"CHANNEL_ACCESS_TOKEN": D, "DESTINATION_USER_ID": D}),
    ("lark", "@larksuiteoapi/lark-mcp@0.5.1", "n:lark-mcp", ["mcp", "-a", D, "-s", D], {}),
    ("pdf-reader", "@sylphx/pdf-reader-mcp@2.4.0", "n:pdf-reader-mcp", [], {}),
    ("mui", "@mui/mcp@0.1.6", "n:mcp", [], {}),
    ("mermaid", "mcp-mermaid@0.4.1", "n:mcp-mermaid", [], {}),
    ("code-runner", "mcp-server-code-runner@0.1.8", "n:mcp-server-code-runner", [], {}),
    ("searxng", "mcp-searxng@2.4.0", "n:mcp-searxng", [], {"SEARXNG_URL": "http://127.0.0.1:9"}),
    ("deepwiki", "mcp-deepwiki@0.0.10", "n:mcp-instruct", [], {}),
    ("argocd", "argocd-mcp@0.9.0", "n:argocd-mcp", ["stdio"],
     {"ARGOCD_BASE_URL": "https://127.0.0.1:9", "ARGOCD_API_TOKEN": D}),
    ("reddit-buddy", "reddit-mcp-buddy@1.1.14", "n:reddit-mcp-buddy", [], {}),
    ("replicate", "replicate-mcp@0.9.0", "n:mcp-server", [], {"REPLICATE_API_TOKEN": D}),
    ("flightradar", "flightradar-mcp-server@0.1.2", "n:flightradar-mcp-server", [], {"FLIGHTRADAR24_API_KEY": D}),
    # Its VPS server alone: the whole API (hostinger-api-mcp) is 401 generated tools, a third of the set.
    ("hostinger-vps", "hostinger-api-mcp@1.63.2", "n:hostinger-vps-mcp", [], {"API_TOKEN": D}),
    ("postman", "@postman/postman-mcp-server@2.13.0", "n:postman-mcp-server", [], {"POSTMAN_API_KEY": D}),
    ("bitbucket", "@nexus2520/bitbucket-mcp-server@3.0.0", "n:bitbucket-mcp-server", [],
     {"BITBUCKET_USERNAME": D, "BITBUCKET_APP_PASSWORD": D}),
    ("jira-aashari", "@aashari/mcp-server-atlassian-jira@3.3.0", "n:mcp-atlassian-jira", [],
     {"ATLASSIAN_SITE_NAME": D, "ATLASSIAN_USER_EMAIL": "a@b.invalid", "ATLASSIAN_API_TOKEN": D}),
    ("mobile", "@mobilenext/mobile-mcp@1.0.4", "n:mcp-server-mobile", [], {}),
    ("fetcher", "fetcher-mcp@0.3.9", "n:fetcher-mcp", [], {}),
    ("azure-devops-tiberriver", "@tiberriver256/mcp-server-azure-devops@0.1.48", "n:mcp-server-azure-devops", [],
     {"AZURE_DEVOPS_ORG_URL": "https://dev.azure.com/contoso", "AZURE_DEVOPS_AUTH_METHOD": "pat",
      "AZURE_DEVOPS_PAT": D}),
    ("send-email", "@skanda-yutori/mcp-send-email@1.0.0", "n:mcp-send-email", [], {"RESEND_API_KEY": D}),
    ("pymupdf4llm", "pymupdf4llm-mcp==1.28.0", "p:pymupdf4llm-mcp", ["stdio"], {}),
    ("opensearch", "opensearch-mcp-server-py==0.12.0", "p:opensearch-mcp-server-py", [],
     {"OPENSEARCH_URL": "http://127.0.0.1:9", "OPENSEARCH_USERNAME": D, "OPENSEARCH_PASSWORD": D}),
    ("aws-pricing", "awslabs-aws-pricing-mcp-server==1.1.1", "p:awslabs.aws-pricing-mcp-server", [],
     {"FASTMCP_LOG_LEVEL": "ERROR", "AWS_REGION": "us-east-1"}),
    ("aws-cloudwatch", "awslabs-cloudwatch-mcp-server==0.3.1", "p:awslabs.cloudwatch-mcp-server", [],
     {"FASTMCP_LOG_LEVEL": "ERROR", "AWS_REGION": "us-east-1"}),
    ("aws-location", "awslabs-aws-location-mcp-server==2.1.1", "p:awslabs.aws-location-mcp-server", [],
     {"FASTMCP_LOG_LEVEL": "ERROR", "AWS_REGION": "us-east-1"}),
    ("mysql-py", "mysql-mcp-server==0.4.4", "p:mysql_mcp_server", [],
     {"MYSQL_HOST": "127.0.0.1", "MYSQL_PORT": "9", "MYSQL_USER": D, "MYSQL_PASSWORD": D, "MYSQL_DATABASE": D}),
    ("tilt", "tilt-mcp==0.1.3", "p:tilt-mcp", [], {}),
    ("web-forager", "web-forager==4.0.0", "p:web-forager", ["serve"], {}),
    ("google-workspace", "workspace-mcp==2.2.1", "p:workspace-mcp", ["--transport", "stdio"],
     {"GOOGLE_OAUTH_CLIENT_ID": D, "GOOGLE_OAUTH_CLIENT_SECRET": D}),
    ("airflow", "astro-airflow-mcp==0.9.1", "p:astro-airflow-mcp", [], {"AIRFLOW_API_URL": "http://127.0.0.1:9"}),
    ("servicenow", "mfa-servicenow-mcp==1.25.4", "p:servicenow-mcp", [],
     {"SERVICENOW_INSTANCE_URL": "https://dev0.service-now.invalid", "SERVICENOW_USERNAME": D, "SERVICENOW_PASSWORD": D}),
]
if SET == "third":
    SERVERS = THIRD
elif SET == "fourth":
    SERVERS = FOURTH


class Peer:
    def __init__(self, argv, env):
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, env=env)
        self.buf = b""
        self.deadline = time.time() + TIMEOUT

    def send(self, msg):
        self.p.stdin.write((json.dumps(msg) + "\n").encode())
        self.p.stdin.flush()

    def answer(self, rid):
        while True:
            while b"\n" in self.buf:
                line, self.buf = self.buf.split(b"\n", 1)
                try:
                    msg = json.loads(line)
                except ValueError:
                    continue
                if isinstance(msg, dict) and msg.get("id") == rid and "method" not in msg:
                    return msg
            left = self.deadline - time.time()
            if left <= 0:
                raise TimeoutError(f"no answer to request {rid} in {TIMEOUT:.0f} s")
            ready, _, _ = select.select([self.p.stdout], [], [], left)
            if ready:
                chunk = os.read(self.p.stdout.fileno(), 1 << 16)
                if not chunk:
                    err = self.p.stderr.read().decode(errors="replace")[-300:]
                    raise EOFError(f"exited ({self.p.wait()}): {err}")
                self.buf += chunk

    def close(self):
        try:
            self.p.kill()
            self.p.wait(5)
        except Exception:
            pass


def tools_of(argv, env):
    peer = Peer(argv, env)
    try:
        peer.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "mcp-defer-trust-bench", "version": "1"}}})
        init = peer.answer(1)
        if "error" in init:
            raise RuntimeError(f"initialize: {init['error']}")
        peer.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        tools, cursor, rid = [], None, 2
        while True:
            params = {"cursor": cursor} if cursor else {}
            peer.send({"jsonrpc": "2.0", "id": rid, "method": "tools/list", "params": params})
            res = peer.answer(rid)
            if "error" in res:
                raise RuntimeError(f"tools/list: {res['error']}")
            tools += res["result"].get("tools") or []
            cursor = res["result"].get("nextCursor")
            rid += 1
            if not cursor:
                return tools
    finally:
        peer.close()


def collect(entry):
    """Lists one server's tools: (tools or None, the line that reports it)."""
    server, package, command, args, extra = entry
    kind, name = command.split(":", 1)
    if kind == "n":
        # The package's own folder first: another's .bin may hold a dependency of that name.
        own = os.path.join(PEERS, "npm-" + package.rsplit("@", 1)[0].replace("@", "").replace("/", "-"),
                           "node_modules", ".bin")
        exe = next((os.path.join(b, name) for b in [own] + NODE_BINS if os.path.exists(os.path.join(b, name))),
                   os.path.join(NODE_BIN, name))
    else:
        exe = next((os.path.join(b, name) for b in PY_BINS if os.path.exists(os.path.join(b, name))),
                   os.path.join(PEERS, "py-?", "bin", name))
    tmp = tempfile.mkdtemp(prefix=f"trust-{SET}-")
    env = {"PATH": f"{os.path.dirname(exe)}:{NODE_BIN}:{os.environ.get('PATH', '')}", "HOME": tmp,
           "LANG": "C.UTF-8", "HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9",
           "NO_PROXY": "127.0.0.1,localhost"}
    env.update({k: v.replace("{tmp}", tmp) for k, v in extra.items()})
    argv = [exe] + [a.replace("{tmp}", tmp) for a in args]
    t0 = time.time()
    try:
        if not os.path.exists(exe):
            raise FileNotFoundError(f"{exe} not installed")
        tools = tools_of(argv, env)
    except Exception as e:  # reported, the server left out
        return None, f"skip  {server:22} {package}: {str(e)[:160]}"
    if not tools:
        return None, f"skip  {server:22} {package}: no tools listed"
    return tools, f"ok    {server:22} {package}: {len(tools)} tools in {time.time() - t0:.1f} s"


def main():
    out, failed = [], []
    # JOBS servers at a time (default 1); the output keeps the order of SERVERS.
    with concurrent.futures.ThreadPoolExecutor(int(os.environ.get("JOBS", "1"))) as pool:
        for (server, package, *_), (tools, line) in zip(SERVERS, pool.map(collect, SERVERS)):
            print(line, flush=True)
            if tools is None:
                failed.append(server)
            else:
                out.append({"server": server, "package": package, "tools": tools})
    path = os.path.join(ROOT, "benches", "data", "trust", f"{SET}-real.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(f"{len(out)} servers, {sum(len(s['tools']) for s in out)} tools -> {path}"
          f"; left out: {', '.join(failed) or 'none'}")


if __name__ == "__main__":
    sys.exit(main())
