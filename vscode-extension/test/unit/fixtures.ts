import type { ConfigPaths, McpServerView, ServersSnapshot } from "../../src/protocol.generated";

export function server(name: string, over: Partial<McpServerView> = {}): McpServerView {
  return {
    name,
    source: "project",
    transport: "stdio",
    command: "node",
    args: ["server.js"],
    status: "disconnected",
    toolCount: 0,
    tools: [],
    icons: [],
    toolsFromCache: false,
    configPath: "/work/proj/.mcp.json",
    readOnly: false,
    signedIn: false,
    ...over,
  };
}

export function snap(version: number, servers: McpServerView[], sessionId = "default"): ServersSnapshot {
  return { version, sessionId, servers };
}

export const paths: ConfigPaths = {
  userConfigPath: "/home/u/.wave/mcp.json",
  projectConfigPath: "/work/proj/.mcp.json",
  projectName: "proj",
  workdir: "/work/proj",
};
