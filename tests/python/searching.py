"""search_tools as a model is told to use it, shared by the Python sessions."""

import anyio


async def search(session, arguments):
    """A search answers within a few seconds with what is indexed and names the servers still
    starting ("Search again shortly"), so a real server slow to start on a loaded machine is
    searched again, for 60 s at most."""
    with anyio.fail_after(60):
        while True:
            found = await session.call_tool("search_tools", arguments)
            if not (found.structured_content or {}).get("starting"):
                return found
            await anyio.sleep(0.5)
