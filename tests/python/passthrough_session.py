"""Prompts, resources, templates, completions and a resource subscription through mcp-defer,
with the official Python SDK client, compared with asking server-everything directly.

Usage: python passthrough_session.py MCP_DEFER_BINARY SERVERS_TOML EVERYTHING_BINARY ERA
ERA is "legacy" (the `initialize` handshake, `resources/subscribe`) or "2026-07-28"
(`server/discover`, `subscriptions/listen` with `resourceSubscriptions`).
Prints one JSON line with what it saw; exits non-zero with a message on any failure.
"""

import json
import sys
import warnings

import anyio
import mcp.types as types
from mcp import Client, StdioServerParameters
from launch import serve_params

warnings.simplefilter("ignore")  # resources/subscribe is deprecated, and used on purpose

WAIT = 20


def check(condition, message):
    if not condition:
        print(f"FAILED: {message}", file=sys.stderr)
        sys.exit(1)


def dump(model):
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


async def direct_answers(everything):
    """What server-everything says when asked directly."""
    params = StdioServerParameters(command=everything, args=["stdio"])
    async with Client(params, mode="legacy") as client:
        prompt = await client.get_prompt("args-prompt", {"city": "Lyon", "state": "Rhone"})
        resources = (await client.list_resources()).resources
        templates = (await client.list_resource_templates()).resource_templates
        first = resources[0].uri
        read = await client.read_resource(first)
        return {
            "messages": [dump(m) for m in prompt.messages],
            "resources": [dump(r) for r in resources],
            "templates": [dump(t) for t in templates],
            "first": str(first),
            "read": [dump(c) for c in read.contents],
        }


async def main(binary, config, everything, era):
    want = await direct_answers(everything)
    updated = anyio.Event()
    seen = {}

    async def on_message(message):
        if getattr(message, "method", None) == "notifications/resources/updated":
            seen["updated"] = str(message.params.uri)
            updated.set()

    params = serve_params(binary, config)
    mode = "legacy" if era == "legacy" else "auto"
    async with Client(params, mode=mode, message_handler=on_message) as client:
        check(client.protocol_version == era if era != "legacy" else client.protocol_version < "2026",
              f"negotiated {client.protocol_version} for {era}")
        caps = client.server_capabilities
        check(caps.prompts is not None and caps.resources is not None and caps.completions is not None,
              f"capabilities: {caps}")
        # A meta tool waits for every server, so the lists below are complete.
        await client.call_tool("search_tools", {"query": "echo"})

        prompts = [p.name for p in (await client.list_prompts()).prompts]
        check("everything__args-prompt" in prompts and "everything__completable-prompt" in prompts,
              f"qualified prompt names: {prompts}")
        got = await client.get_prompt("everything__args-prompt", {"city": "Lyon", "state": "Rhone"})
        check([dump(m) for m in got.messages] == want["messages"], f"prompt as direct: {got.messages}")

        resources = [dump(r) for r in (await client.list_resources()).resources]
        check(resources == want["resources"], "resources as direct")
        templates = [dump(t) for t in (await client.list_resource_templates()).resource_templates]
        check(templates == want["templates"], "templates as direct")
        read = await client.read_resource(want["first"])
        check([dump(c) for c in read.contents] == want["read"], "read as direct")
        text_template = next(t["uriTemplate"] for t in templates if "/text/" in t["uriTemplate"])
        dynamic = await client.read_resource(text_template.replace("{resourceId}", "5"))
        check(dynamic.contents[0].text.startswith("Resource 5:"), f"templated read: {dynamic.contents}")

        done = await client.complete(
            types.PromptReference(type="ref/prompt", name="everything__completable-prompt"),
            {"name": "department", "value": "Sa"},
        )
        check(done.completion.values == ["Sales"], f"prompt completion: {done.completion}")
        ids = await client.complete(
            types.ResourceTemplateReference(type="ref/resource", uri=text_template),
            {"name": "resourceId", "value": "42"},
        )
        check(ids.completion.values == ["42"], f"template completion: {ids.completion}")

        uri = want["first"]
        toggle = {"name": "everything__toggle-subscriber-updates"}
        if era == "legacy":
            await client.subscribe_resource(uri)
            await client.call_tool("call_tool", toggle)
            with anyio.fail_after(WAIT):
                await updated.wait()
        else:
            async with client.listen(resource_subscriptions=[uri]) as subscription:
                check(subscription.honored.resource_subscriptions == [uri],
                      f"subscription honored: {subscription.honored}")
                await client.call_tool("call_tool", toggle)
                with anyio.fail_after(WAIT):
                    async for event in subscription:
                        if getattr(event, "uri", None):
                            seen["updated"] = str(event.uri)
                            break
        check(seen.get("updated") == uri, f"resources/updated for {uri}: {seen}")

        print(json.dumps({"era": era, "prompts": prompts, "updated": seen["updated"]}))


if __name__ == "__main__":
    anyio.run(main, *sys.argv[1:5])
