import { describe, expect, it } from "vitest";
import { appInvoke, Connection, failure, fieldOf, isConnectionPage, plainHttp, type Invoke, type Status } from "./connection";

const STATUS: Status = {
  place: "team",
  label: "Team: gh.example.com",
  origin: "https://gh.example.com",
  reviewer: "ann",
  team_url: "https://gh.example.com",
  saved_token: true,
  notice: null,
};

function recording(answer: (command: string) => Promise<unknown>): { invoke: Invoke; calls: [string, unknown][] } {
  const calls: [string, unknown][] = [];
  return {
    calls,
    invoke: (command, args) => {
      calls.push([command, args]);
      return answer(command);
    },
  };
}

describe("the connection page's calls", () => {
  it("send the address and token trimmed, and return the app's status", async () => {
    const app = recording(async () => STATUS);
    const connection = new Connection(app.invoke);
    expect(await connection.connectTeam(" https://gh.example.com ", " tok \n")).toEqual(STATUS);
    await connection.useThisComputer();
    expect(app.calls).toEqual([
      ["connect_team", { url: "https://gh.example.com", token: "tok" }],
      ["use_this_computer", undefined],
    ]);
  });

  it("turn the app's refusals into failures naming what to fix", async () => {
    const refused = new Connection(recording(async () => Promise.reject({ code: "bad_token", message: "unknown token" })).invoke);
    await expect(refused.connectTeam("https://gh.example.com", "x")).rejects.toEqual({ code: "bad_token", message: "unknown token" });
    const denied = new Connection(recording(async () => Promise.reject("Command connect_team not allowed by ACL")).invoke);
    await expect(denied.status()).rejects.toEqual({ code: "not_in_app", message: "Command connect_team not allowed by ACL" });
    await expect(new Connection(null).status()).rejects.toMatchObject({ code: "not_in_app" });
  });

  it("focus the field a failure is about", () => {
    expect(fieldOf("bad_url")).toBe("url");
    expect(fieldOf("unreachable")).toBe("url");
    expect(fieldOf("not_reviewer")).toBe("token");
    expect(fieldOf("no_token")).toBe("token");
    expect(fieldOf("keychain")).toBeNull();
    expect(failure(new Error("boom"))).toEqual({ code: "not_in_app", message: "boom" });
  });
});

describe("the connection page", () => {
  it("is the page on the app's own scheme, and finds the app's invoke there only", () => {
    expect(isConnectionPage({ protocol: "gatehouse:", hostname: "localhost" })).toBe(true);
    expect(isConnectionPage({ protocol: "http:", hostname: "gatehouse.localhost" })).toBe(true);
    expect(isConnectionPage({ protocol: "https:", hostname: "gh.example.com" })).toBe(false);
    const invoke: Invoke = async () => null;
    expect(appInvoke({ __TAURI_INTERNALS__: { invoke } })).toBe(invoke);
    expect(appInvoke({})).toBeNull();
  });

  it("warns when a token would cross the network unencrypted", () => {
    expect(plainHttp("http://gh.example.com")).toBe(true);
    expect(plainHttp("HTTP://10.0.0.5:7777")).toBe(true);
    expect(plainHttp("http://127.0.0.1:7777")).toBe(false);
    expect(plainHttp("http://localhost:7777")).toBe(false);
    expect(plainHttp("https://gh.example.com")).toBe(false);
    expect(plainHttp("gh.example.com")).toBe(false);
  });
});
