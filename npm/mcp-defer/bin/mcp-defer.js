#!/usr/bin/env node
// Runs the mcp-defer binary of this platform, which npm installed as one of the optional
// dependencies (`@mcp-defer/<os>-<cpu>`, the esbuild/biome pattern: no postinstall
// download). stdin, stdout and stderr are handed to it as they are, so the MCP stdio
// session is between the client and the binary; signals are passed on and its exit code
// (or signal) becomes ours.
"use strict";

const { spawn } = require("child_process");
const path = require("path");

const PLATFORMS = {
  "linux x64": "@mcp-defer/linux-x64",
  "linux arm64": "@mcp-defer/linux-arm64",
  "darwin x64": "@mcp-defer/darwin-x64",
  "darwin arm64": "@mcp-defer/darwin-arm64",
  "win32 x64": "@mcp-defer/win32-x64",
};

function binaryPath() {
  if (process.env.MCP_DEFER_BINARY) {
    return process.env.MCP_DEFER_BINARY;
  }
  const key = `${process.platform} ${process.arch}`;
  const pkg = PLATFORMS[key];
  if (!pkg) {
    fail(
      `mcp-defer has no prebuilt binary for ${key}. Build it from source with ` +
        "`cargo install --locked mcp-defer`, or set MCP_DEFER_BINARY to a binary you built."
    );
  }
  const exe = process.platform === "win32" ? "mcp-defer.exe" : "mcp-defer";
  try {
    return require.resolve(`${pkg}/bin/${exe}`);
  } catch (_) {
    fail(
      `the package ${pkg}, which carries mcp-defer for ${key}, is not installed. It is an ` +
        "optional dependency of mcp-defer: reinstall without --no-optional/--omit=optional " +
        `(or \`npm install ${pkg}\`).`
    );
  }
}

function fail(message) {
  process.stderr.write(`mcp-defer: ${message}\n`);
  process.exit(1);
}

const child = spawn(binaryPath(), process.argv.slice(2), {
  stdio: "inherit",
  windowsHide: true,
});
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(signal, () => {
    try {
      child.kill(signal);
    } catch (_) {
      // The child is gone already.
    }
  });
}
child.on("error", (err) => fail(`cannot start ${path.basename(binaryPath())}: ${err.message}`));
child.on("exit", (code, signal) => {
  if (signal) {
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
  } else {
    process.exit(code === null ? 1 : code);
  }
});
