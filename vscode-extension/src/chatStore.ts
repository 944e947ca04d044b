// What the chat view shows, kept in the extension host so the view can be hidden, moved or
// reloaded without losing the conversation or a pending prefill. Pure (no `vscode` import).

import type { SessionMessageParams, SessionTurnEndedParams } from "./protocol.generated";
import type { ChatHostState } from "../webview/src/hostApi";

export class ChatStore {
  private messages: SessionMessageParams[] = [];
  private running = new Set<number>();
  private pendingPrefill?: string;

  constructor(readonly sessionId: string) {}

  message(params: SessionMessageParams): boolean {
    if (params.sessionId !== this.sessionId) return false;
    const duplicateUser =
      params.message.role === "user" &&
      this.messages.some((m) => m.turn === params.turn && m.message.role === "user" && m.message.content === params.message.content);
    if (!duplicateUser) this.messages.push(params);
    return true;
  }

  /** The user's own message, recorded when it was accepted, so a reloaded view still shows it. */
  sent(turn: number, text: string): void {
    this.running.add(turn);
    const already = this.messages.some((m) => m.turn === turn && m.message.role === "user");
    if (!already)
      this.messages.push({
        sessionId: this.sessionId,
        turn,
        message: { role: "user", content: text, toolCalls: [], isError: false, isMeta: false },
      });
  }

  turnEnded(params: SessionTurnEndedParams): boolean {
    if (params.sessionId !== this.sessionId) return false;
    this.running.delete(params.turn);
    return true;
  }

  /** A prefill for a chat view that is not showing yet; taken by the next `snapshot()`. */
  setPrefill(text: string | undefined): void {
    this.pendingPrefill = text;
  }

  snapshot(takePrefill = true): ChatHostState {
    const state: ChatHostState = {
      sessionId: this.sessionId,
      messages: [...this.messages],
      runningTurns: [...this.running],
    };
    if (takePrefill && this.pendingPrefill !== undefined) {
      state.prefill = this.pendingPrefill;
      this.pendingPrefill = undefined;
    }
    return state;
  }

  reset(): void {
    this.messages = [];
    this.running.clear();
  }
}
