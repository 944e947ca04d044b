// USE-3: the decisions of the settings page's "Browse registry".
import { describe, expect, it } from "vitest";
import type { RegistryAdded, RegistryInputView, RegistrySearchResult } from "../../src/protocol.generated";
import {
  addedText,
  detailsAnswered,
  entryNameFor,
  entryNameProblem,
  initialRegistryState,
  inputText,
  searchAnswered,
  selectServer,
  splitInputs,
  startSearch,
} from "../../webview/src/registryState";

const page = (names: string[], nextCursor?: string): RegistrySearchResult => ({
  registryUrl: "http://127.0.0.1:1",
  servers: names.map((name) => ({ name, description: "" })),
  ...(nextCursor ? { nextCursor } : {}),
});

const key: RegistryInputView = {
  name: "AIRTABLE_API_KEY",
  kind: "environmentVariable",
  placeholder: "AIRTABLE_API_KEY",
  required: true,
  secret: true,
  repeated: false,
  description: "Airtable token",
};
const token: RegistryInputView = { name: "token", kind: "argument", required: false, secret: true, repeated: false };

describe("USE-3: Browse registry", () => {
  it("keeps only the answer to the newest search (typing fast)", () => {
    let s = startSearch(initialRegistryState(), "a");
    const first = s.asked;
    s = startSearch(s, "ai");
    const second = s.asked;
    s = searchAnswered(s, second, { result: page(["io.x/airtable"]) });
    s = searchAnswered(s, first, { result: page(["io.x/a", "io.x/b"]) });
    expect(s.results?.servers.map((x) => x.name)).toEqual(["io.x/airtable"]);
    expect(s.searching).toBe(false);
  });

  it("appends a next page and shows a failure in words", () => {
    let s = searchAnswered(startSearch(initialRegistryState(), ""), 1, { result: page(["io.x/a"], "1") });
    s = { ...s, asked: 2, searching: true };
    s = searchAnswered(s, 2, { result: page(["io.x/b"]) }, true);
    expect(s.results?.servers.map((x) => x.name)).toEqual(["io.x/a", "io.x/b"]);
    expect(s.results?.nextCursor).toBeUndefined();
    s = searchAnswered(startSearch(s, "z"), 3, { error: "cannot reach the MCP registry" });
    expect(s.searchError).toBe("cannot reach the MCP registry");
  });

  it("names the entry after the server's last part and drops details of another server", () => {
    expect(entryNameFor("io.github.domdomegg/airtable-mcp-server")).toBe("airtable-mcp-server");
    expect(entryNameFor("com.Example/My Server!")).toBe("my-server");
    expect(entryNameFor("x/!!!")).toBe("server");
    let s = selectServer(initialRegistryState(), "io.x/a");
    expect(s.entryName).toBe("a");
    s = selectServer(s, "io.x/b");
    s = detailsAnswered(s, "io.x/a", { error: "late" });
    expect(s.detailsError).toBeUndefined();
    expect(entryNameProblem("en", "  ")).toBe("Give the server a name.");
    expect(entryNameProblem("en", "a")).toBeUndefined();
  });

  it("lists the variables to set and the optional inputs left out", () => {
    expect(splitInputs([token, key])).toEqual({ required: [key], optional: [token] });
    expect(inputText("en", key)).toBe("environment variable AIRTABLE_API_KEY, secret: Airtable token");
    expect(inputText("en", { ...token, default: "x" })).toBe("argument token, secret, default x");
    expect(inputText("en", { ...token, secret: false, repeated: true })).toBe(
      "argument token, may be given more than once (add more after it in args)",
    );
    const added: RegistryAdded = {
      path: "/p/.mcp.json",
      install: { how: "npm package a@1", entry: {}, inputs: [key, token] },
      servers: { version: 1, sessionId: "default", servers: [] },
    };
    expect(addedText("en", { result: added, name: "air", scope: "project" })).toBe(
      'Added "air" to /p/.mcp.json. Set AIRTABLE_API_KEY before it starts.',
    );
    const none = { ...added, install: { ...added.install, inputs: [token] } };
    expect(addedText("en", { result: none, name: "air", scope: "user" })).toBe('Added "air" to /p/.mcp.json.');
  });
});
