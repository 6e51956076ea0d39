// The official MCP TypeScript SDK as a client of Gatehouse's tools, over
// streamable HTTP (`/mcp` on the server) or stdio (`gatehouse mcp`):
// request_approval blocks, with progress notifications, until a reviewer
// decides, and the decision is the tool's result.
//
//   GATEHOUSE_TOKEN=<agent token> node examples/typescript/mcp-client.mjs [http|stdio]

import { connectHttp, connectStdio } from "@gatehouse/client/mcp";

const url = process.env.GATEHOUSE_URL ?? "http://127.0.0.1:7777";
const token = process.env.GATEHOUSE_TOKEN ?? "";
const mcp =
  process.argv[2] === "stdio"
    ? await connectStdio({ url, token, binary: process.env.GATEHOUSE_BIN ?? "gatehouse", name: "mcp-example" })
    : await connectHttp({ url, token, name: "mcp-example" });
try {
  const { tools } = await mcp.listTools();
  console.log(`tools: ${tools.map((t) => t.name).join(", ")}`);
  const result = await mcp.callTool(
    { name: "request_approval", arguments: { action: "rotate the API keys", context: { keys: ["billing", "search"] } } },
    undefined,
    { onprogress: (p) => console.log(`waiting for the reviewer (${p.progress})`), resetTimeoutOnProgress: true, timeout: 600_000 },
  );
  for (const block of result.content) if (block.type === "text") console.log(block.text);
} finally {
  await mcp.close();
}
