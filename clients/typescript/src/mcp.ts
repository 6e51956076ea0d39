// The MCP adapter: an initialized client of the official TypeScript MCP SDK
// connected to Gatehouse's tools, over stdio (a `gatehouse mcp` child process
// talking to a running server) or over streamable HTTP (`/mcp` on the server,
// the token as a bearer in the Authorization header).

import { Client as McpClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport, getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

export interface McpConnection {
  /** The Gatehouse server (`http://127.0.0.1:7777`). */
  url: string;
  /** An agent token. */
  token: string;
  /** The name the client gives itself (its session's runs are named after it). */
  name?: string;
  version?: string;
}

export interface StdioConnection extends McpConnection {
  /** The gatehouse binary (default `gatehouse` on the PATH). */
  binary?: string;
  /** Ask in this run instead of one started for the session (`--run`). */
  runId?: string;
  /** Seconds between progress notifications while a call waits (`--progress-every`). */
  progressEvery?: number;
}

function client(options: McpConnection): McpClient {
  return new McpClient({ name: options.name ?? "gatehouse-ts", version: options.version ?? "0.1.0" });
}

/** Starts `gatehouse mcp` and connects to it over stdio; close the client to stop it. */
export async function connectStdio(options: StdioConnection): Promise<McpClient> {
  const args = ["mcp"];
  if (options.runId) args.push("--run", options.runId);
  if (options.progressEvery !== undefined) args.push("--progress-every", String(options.progressEvery));
  const transport = new StdioClientTransport({
    command: options.binary ?? "gatehouse",
    args,
    env: { ...getDefaultEnvironment(), GATEHOUSE_URL: options.url, GATEHOUSE_TOKEN: options.token },
    stderr: "inherit",
  });
  const mcp = client(options);
  await mcp.connect(transport);
  return mcp;
}

/** Connects to the server's `/mcp` endpoint over streamable HTTP. */
export async function connectHttp(options: McpConnection): Promise<McpClient> {
  const transport = new StreamableHTTPClientTransport(new URL("/mcp", options.url), {
    requestInit: { headers: { Authorization: `Bearer ${options.token}` } },
  });
  const mcp = client(options);
  await mcp.connect(transport);
  return mcp;
}
