// Sequential tools/call latency through the official TypeScript SDK's Streamable HTTP client
// (what Claude Code and most Node clients use). Warm-up calls first, so V8 has compiled the
// SDK's path and the figures are of the steady state, not of the JIT.
// Usage: node latency.mjs SDK_DIR URL TOOL WARMUP CALLS
// Prints one JSON line: {"calls":N,"p50_ms":..,"p90_ms":..,"p99_ms":..}
import path from "node:path";

const [sdk, url, tool, warmup, calls] = process.argv.slice(2);
const load = (p) => import(path.join(sdk, "dist/esm", p));
const { Client } = await load("client/index.js");
const { StreamableHTTPClientTransport } = await load("client/streamableHttp.js");

const client = new Client({ name: "latency", version: "1.0.0" });
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
const call = async () => {
  const result = await client.callTool({ name: tool, arguments: { a: 2, b: 3 } });
  if (result.isError) {
    console.error(`FAILED: ${JSON.stringify(result)}`);
    process.exit(1);
  }
};
for (let i = 0; i < Number(warmup); i++) await call();
const times = [];
for (let i = 0; i < Number(calls); i++) {
  const at = process.hrtime.bigint();
  await call();
  times.push(Number(process.hrtime.bigint() - at) / 1e6);
}
times.sort((a, b) => a - b);
const at = (q) => Number(times[Math.min(times.length - 1, Math.floor(q * times.length))].toFixed(2));
console.log(JSON.stringify({ calls: times.length, p50_ms: at(0.5), p90_ms: at(0.9), p99_ms: at(0.99) }));
await client.close();
