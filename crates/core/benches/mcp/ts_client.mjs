// Sequential tools/call echo round trips with the official TypeScript SDK client.
// Usage: node ts_client.mjs SDK_DIR stdio|http COMMAND_OR_URL CALLS WARMUP
// Prints {"calls": N, "total_ms": T}.
const [sdk, mode, target, calls, warmup] = process.argv.slice(2);
const { Client } = await import(`${sdk}/dist/esm/client/index.js`);
const transport =
  mode === "stdio"
    ? new (await import(`${sdk}/dist/esm/client/stdio.js`)).StdioClientTransport({ command: target, args: ["stdio"] })
    : new (await import(`${sdk}/dist/esm/client/streamableHttp.js`)).StreamableHTTPClientTransport(new URL(target));
const client = new Client({ name: "patchbay-bench", version: "1.0.0" });
await client.connect(transport);
const call = () => client.callTool({ name: "echo", arguments: { message: "hello" } });
for (let i = 0; i < Number(warmup); i++) await call();
const start = process.hrtime.bigint();
for (let i = 0; i < Number(calls); i++) await call();
const totalMs = Number(process.hrtime.bigint() - start) / 1e6;
console.log(JSON.stringify({ calls: Number(calls), total_ms: totalMs }));
await client.close();
