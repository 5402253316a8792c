"""How the test scripts start `mcp-defer serve`.

The SDK hands a server only a few variables of its own environment (HOME, PATH, ...), so
the test's data directory, where search keeps what it learns from use, is passed on here
(and MCP_DEFER_HUB, so the suite's sessions run alone as set in .cargo/config.toml):
without it every run would learn into the data directory of whoever runs the tests.
"""

import os

from mcp import StdioServerParameters


def serve_params(binary, config):
    env = {k: os.environ[k] for k in ("MCP_DEFER_DATA_DIR", "MCP_DEFER_HUB") if k in os.environ}
    return StdioServerParameters(command=binary, args=["serve", "--config", config], env=env)
