// What the chat keeps of each app view to stop it and start it again (APPS-3): pure functions,
// no DOM. A view is `loading` (its resource asked), `live` (its frame runs the app), `stopping`
// (`ui/resource-teardown` sent, its answer awaited), `stopped` (no frame; the card stays in the
// log with a way to start it again) or `failed` (the resource could not be read). Starting again
// replays the stored call: the same tool input and the same ending (result or cancellation),
// never a new call of the tool.

import type { HostAppsTornDown } from "../../src/protocol.generated";
import type { AppBridge } from "./appBridge";

export type AppPhase = "loading" | "live" | "stopping" | "stopped" | "failed";

/** How the app's tool call ended, as the app is told (`tool-result` or `tool-cancelled`). */
export type AppEnding = { kind: "result"; result: unknown; isError: boolean } | { kind: "cancelled"; reason: string };

/**
 * The ending kept for the call. The first result stays; a result replaces a cancellation (a
 * stopped call's result can still arrive, and the history has it: an app started again shows
 * it). A cancellation never replaces anything.
 */
export function storeEnding(kept: AppEnding | undefined, next: AppEnding): AppEnding {
  if (kept === undefined) return next;
  if (kept.kind === "cancelled" && next.kind === "result") return next;
  return kept;
}

/** A view that runs, or is about to: Stop is for it. */
export function isLive(phase: AppPhase): boolean {
  return phase === "loading" || phase === "live";
}

/** What `teardownEvery` needs of a view: its phase, and its teardown while one runs. */
export interface TeardownTarget {
  phase: AppPhase;
  stopping?: Promise<boolean>;
}

/**
 * APPS-3, `host/teardownApps`: tears down every view that is live or already stopping (`stop`
 * resolves with whether the app answered `ui/resource-teardown`), and settles once all are
 * down with how many there were and how many apps answered. Stopped and failed views have no
 * app left to tell.
 */
export async function teardownEvery<V extends TeardownTarget>(views: Iterable<V>, stop: (view: V) => Promise<boolean>): Promise<HostAppsTornDown> {
  const stops = [...views].filter((v) => isLive(v.phase) || v.stopping !== undefined).map(stop);
  const heard = await Promise.all(stops);
  return { total: heard.length, answered: heard.filter((answered) => answered).length };
}

/** The chat's Stop button: while a turn runs or any app view of the chat is live. */
export function stopShown(runningTurns: number, livePhases: Iterable<AppPhase>): boolean {
  if (runningTurns > 0) return true;
  for (const phase of livePhases) if (isLive(phase)) return true;
  return false;
}

/** Feeds a (new) bridge the stored call: its input, then its ending if it has one. */
export function replay(bridge: AppBridge, args: string, ending: AppEnding | undefined): void {
  bridge.toolInput(parseArguments(args));
  if (ending) deliver(bridge, ending);
}

/** Tells the bridge how the call ended (the bridge keeps only the first ending). */
export function deliver(bridge: AppBridge, ending: AppEnding): void {
  if (ending.kind === "cancelled") {
    bridge.toolCancelled(ending.reason);
    return;
  }
  const { result, isError } = ending;
  const full = typeof result === "object" && result !== null ? (result as Record<string, unknown>) : { content: [] };
  bridge.toolResult(isError && full.isError === undefined ? { ...full, isError: true } : full);
}

/** The call's arguments (a JSON text) as the object `tool-input` carries ({} if not one). */
export function parseArguments(args: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(args);
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
