"""Sequential tools/call echo round trips with the official Python SDK client.

Usage: py_client.py stdio|http COMMAND_OR_URL CALLS WARMUP
Prints {"calls": N, "total_ms": T}.
"""

import asyncio
import json
import sys
import time

from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client


async def main() -> None:
    mode, target, calls, warmup = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    server = StdioServerParameters(command=target, args=["stdio"]) if mode == "stdio" else streamable_http_client(target)
    async with Client(server) as client:
        for _ in range(warmup):
            await client.call_tool("echo", {"message": "hello"})
        start = time.perf_counter()
        for _ in range(calls):
            await client.call_tool("echo", {"message": "hello"})
        total_ms = (time.perf_counter() - start) * 1000
    print(json.dumps({"calls": calls, "total_ms": total_ms}))


asyncio.run(main())
