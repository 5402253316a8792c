"""What a provider with prefix caching would read from its cache and write anew, per request.

Used by the mock model endpoints of the cache-cost bench (mock_anthropic.py, mock_openai.py): they
answer every main-loop request with the usage this model computes, so the real clients write
these figures into their own transcripts (which `mcp-defer report` then reads).

The prompt is cut into blocks in the order the provider caches it: each tool definition (tools
the client marks `defer_loading` are not in the prompt), then the system prompt/instructions, then
each content block of each message (input item for OpenAI). A prefix is identified by a hash chain
over the blocks, so two requests share a prefix exactly when their first k blocks are
byte-identical (JSON with sorted keys, `cache_control` left out).

Anthropic (documented prompt caching): cache entries are written at the cache breakpoints
(`cache_control` on a block) whose prefix holds at least 1024 tokens; a request reads the longest
cached prefix that ends at one of its breakpoints or at most 20 blocks before one; it writes from
there to its last breakpoint; the rest is uncached input. A `tool_reference` block (Claude Code's
tool search) expands to the referenced tool's definition where it stands.

OpenAI (automatic prompt caching): every prompt of 1024 tokens or more is cached; a request reads
the longest prefix it shares with an earlier one, rounded down to 1024 + a multiple of 128 tokens;
cache writes are not billed. Prefixes are compared at block granularity (a block that differs
counts wholly as uncached: a slight under-estimate of reads).

Tokens: tiktoken's o200k_base when `tiktoken` is importable (the bench points TIKTOKEN_CACHE_DIR
at the table the tiktoken-rs crate ships, so no download), else bytes / 4 (reported as such).
Anthropic's tokenizer is not public: for Claude the counts are an o200k_base approximation.
"""
import hashlib
import json

MIN_CACHEABLE = 1024
OPENAI_STEP = 128
LOOKBACK_BLOCKS = 20

try:
    import tiktoken

    _ENC = tiktoken.get_encoding("o200k_base")
    TOKENIZER = "o200k_base"

    def count(text):
        return len(_ENC.encode(text, disallowed_special=()))
except Exception:  # no tiktoken, or no table offline: the documented fallback
    TOKENIZER = "bytes/4"

    def count(text):
        return (len(text.encode()) + 3) // 4

_COUNTS = {}


def tokens(text):
    n = _COUNTS.get(text)
    if n is None:
        n = _COUNTS[text] = count(text)
    return n


def strip_cc(x):
    if isinstance(x, dict):
        return {k: strip_cc(v) for k, v in x.items() if k != "cache_control"}
    if isinstance(x, list):
        return [strip_cc(v) for v in x]
    return x


def canon(x):
    return json.dumps(strip_cc(x), sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _refs(x, out):
    """Names of tool_reference blocks anywhere inside x."""
    if isinstance(x, dict):
        if x.get("type") == "tool_reference":
            out.append(x.get("tool_name") or x.get("name"))
        for v in x.values():
            _refs(v, out)
    elif isinstance(x, list):
        for v in x:
            _refs(v, out)
    return out


class Prompt:
    """A request cut into blocks: text, breakpoint flag, cumulative tokens and prefix hash."""

    def __init__(self, blocks, tool_tokens):
        self.blocks, self.tool_tokens = blocks, tool_tokens
        self.cum, self.hashes = [], []
        total, h = 0, b""
        for text, _ in blocks:
            total += tokens(text)
            h = hashlib.sha1(h + text.encode()).digest()
            self.cum.append(total)
            self.hashes.append(h)
        self.total = total


def anthropic_prompt(body):
    tools = body.get("tools") or []
    deferred = {t.get("name"): t for t in tools if t.get("defer_loading")}
    blocks, tool_tokens = [], 0
    for t in tools:
        if t.get("defer_loading"):
            continue
        text = canon(t)
        tool_tokens += tokens(text)
        blocks.append((text, "cache_control" in t))
    system = body.get("system")
    if isinstance(system, str):
        blocks.append(("system:" + system, False))
    for b in system if isinstance(system, list) else []:
        blocks.append(("system:" + canon(b), isinstance(b, dict) and "cache_control" in b))
    for m in body.get("messages") or []:
        content = m.get("content")
        items = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        for b in items:
            text = m.get("role", "") + ":" + canon(b)
            for name in _refs(b, []):
                if name in deferred:  # the schema a tool_reference loads sits here in the prompt
                    text += canon(deferred[name])
            blocks.append((text, isinstance(b, dict) and "cache_control" in b))
    return Prompt(blocks, tool_tokens)


def openai_prompt(body):
    blocks, tool_tokens = [], 0
    for t in body.get("tools") or []:
        text = canon(t)
        tool_tokens += tokens(text)
        blocks.append((text, False))
    if body.get("instructions"):
        blocks.append(("instructions:" + str(body["instructions"]), False))
    for item in body.get("input") or []:
        blocks.append((canon(item), False))
    return Prompt(blocks, tool_tokens)


class AnthropicCache:
    def __init__(self):
        self.entries = {}  # prefix hash -> tokens (written at a breakpoint)

    def account(self, body):
        p = anthropic_prompt(body)
        bps = [i for i, (_, bp) in enumerate(p.blocks) if bp]
        read = 0
        for bp in bps:
            for k in range(bp, max(-1, bp - LOOKBACK_BLOCKS - 1), -1):
                if p.hashes[k] in self.entries:
                    read = max(read, p.cum[k])
                    break
        write = 0
        if bps and p.cum[bps[-1]] >= MIN_CACHEABLE:
            write = max(0, p.cum[bps[-1]] - read)
            for bp in bps:
                if p.cum[bp] >= MIN_CACHEABLE:
                    self.entries[p.hashes[bp]] = p.cum[bp]
        return {"prompt": p.total, "input": p.total - read - write, "cache_read": read,
                "cache_write": write, "tool_tokens": p.tool_tokens, "blocks": len(p.blocks)}


class OpenAICache:
    def __init__(self):
        self.entries = set()

    def account(self, body):
        p = openai_prompt(body)
        lcp = 0
        for k in range(len(p.blocks)):
            if p.hashes[k] not in self.entries:
                break
            lcp = p.cum[k]
        read = 0 if lcp < MIN_CACHEABLE else MIN_CACHEABLE + (lcp - MIN_CACHEABLE) // OPENAI_STEP * OPENAI_STEP
        if p.total >= MIN_CACHEABLE:
            self.entries.update(p.hashes)
        return {"prompt": p.total, "input": p.total - read, "cache_read": read, "cache_write": 0,
                "tool_tokens": p.tool_tokens, "blocks": len(p.blocks)}
