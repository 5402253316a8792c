"""How the test scripts start `mcp-defer serve`.

The SDK hands a server only a few variables of its own environment (HOME, PATH, ...), so
the test's data directory, where search keeps what it learns from use, is passed on here:
without it every run would learn into the data directory of whoever runs the tests.
"""

import os

from mcp import StdioServerParameters


def serve_params(binary, config):
    env = {"MCP_DEFER_DATA_DIR": os.environ["MCP_DEFER_DATA_DIR"]} if "MCP_DEFER_DATA_DIR" in os.environ else {}
    return StdioServerParameters(command=binary, args=["serve", "--config", config], env=env)
