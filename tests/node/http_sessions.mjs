// Two sessions of one `mcp-defer serve --http` through the official TypeScript SDK's
// Streamable HTTP client: each sees only the tools it selected, and A's list_changed never
// reaches B. Usage: node http_sessions.mjs SDK_DIR URL TOOL_A TOOL_B
// Prints one JSON line with what it saw; exits non-zero with a message on any failure.
import path from "node:path";

const [sdk, url, toolA, toolB] = process.argv.slice(2);
const load = (p) => import(path.join(sdk, "dist/esm", p));
const { Client } = await load("client/index.js");
const { StreamableHTTPClientTransport } = await load("client/streamableHttp.js");
const { ToolListChangedNotificationSchema } = await load("types.js");

function check(condition, message) {
  if (!condition) {
    console.error(`FAILED: ${message}`);
    process.exit(1);
  }
}

async function open(name) {
  const client = new Client({ name, version: "1.0.0" });
  const seen = { notifications: 0 };
  client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
    seen.notifications += 1;
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return { client, seen };
}

const names = (tools) => tools.map((t) => t.name);
const a = await open("a");
const b = await open("b");
const firstA = (await a.client.listTools()).tools;
const firstB = (await b.client.listTools()).tools;
check(JSON.stringify(firstA) === JSON.stringify(firstB), "both sessions start alike");

const selectedA = await a.client.callTool({ name: "select_tools", arguments: { names: [toolA] } });
check(!selectedA.isError, `A's select_tools: ${JSON.stringify(selectedA.content)}`);
await new Promise((r) => setTimeout(r, 300));
const bBefore = b.seen.notifications;
const selectedB = await b.client.callTool({ name: "select_tools", arguments: { names: [toolB] } });
check(!selectedB.isError, `B's select_tools: ${JSON.stringify(selectedB.content)}`);

const listA = (await a.client.listTools()).tools;
const listB = (await b.client.listTools()).tools;
check(
  JSON.stringify(listA.slice(0, firstA.length)) === JSON.stringify(firstA),
  "A's earlier tools keep their bytes",
);
const called = await b.client.callTool({ name: toolB, arguments: { a: 2, b: 3 } });
check(!called.isError, `B calls its tool directly: ${JSON.stringify(called.content)}`);
console.log(
  JSON.stringify({
    a: names(listA),
    b: names(listB),
    a_notifications: a.seen.notifications,
    b_notifications_before_its_select: bBefore,
  }),
);
await a.client.close();
await b.client.close();
