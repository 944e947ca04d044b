// The chat's consent cards (TRUST-3, TRUST-5, TRUST-6): the sidecar's `wave/session/approveServers`
// (project servers that would run) and `wave/session/confirmTool` (a tool call that no allow rule
// covers), delivered by the host as page requests and answered by the user's click. Every card
// stays until answered; several may wait at once (parallel tool calls), shown in arrival order.
// A card whose turn ended (Stop, `wave/session/turnEnded`) closes: the sidecar has already taken
// the question as cancelled, and the host gets an error answer so that it forgets it too.
// Everything the server wrote is a text node (dom.ts), never markup.

import type {
  ServerApproval,
  SessionApproveServersParams,
  SessionApproveServersResult,
  SessionConfirmToolParams,
  SessionConfirmToolResult,
  SessionTurnEndedParams,
  ToolDecision,
} from "../../src/protocol.generated";
import {
  approvalNotes,
  approvalTarget,
  approvedNames,
  argumentsText,
  DECISIONS,
  endsCard,
  toolBadges,
  toolTitle,
  type CardScope,
} from "./consent";
import { h } from "./dom";
import { t, type Lang } from "./i18n";

type Card =
  | {
      kind: "approve";
      key: number;
      scope: CardScope;
      params: SessionApproveServersParams;
      checked: Set<string>;
      resolve(r: SessionApproveServersResult): void;
      reject(e: Error): void;
    }
  | {
      kind: "confirm";
      key: number;
      scope: CardScope;
      params: SessionConfirmToolParams;
      resolve(r: SessionConfirmToolResult): void;
      reject(e: Error): void;
    };

/** The details of one project server that approving would run (shared with the settings page). */
export function approvalDetails(lang: Lang, a: ServerApproval): HTMLElement {
  const L = (k: Parameters<typeof t>[1], v?: Record<string, string | number>) => t(lang, k, v);
  const target = approvalTarget(a);
  return h(
    "div",
    { class: "approval-details" },
    h("div", { class: "muted" }, L(target.kind === "command" ? "approvalRuns" : "approvalConnects")),
    h("code", { class: "approval-target", "data-kind": target.kind }, target.text),
    h("div", { class: "approval-config muted" }, L("approvalConfig", { path: a.configPath })),
    approvalNotes(lang, a).map((n) =>
      h("div", { class: n.kind === "changed" || n.kind === "shadows" ? `approval-note warn note-${n.kind}` : `approval-note note-${n.kind}`, "data-note": n.kind }, n.text),
    ),
  );
}

export class ConsentCards {
  private cards: Card[] = [];
  private nextKey = 1;

  /** `changed` is called after cards opened or closed (the chat marks calls waiting for an answer). */
  constructor(
    private readonly root: HTMLElement,
    private readonly lang: Lang,
    private readonly changed: () => void = () => undefined,
  ) {
    this.render();
  }

  /** The tool calls (`toolCallId`) of `sessionId` whose confirmation card is open. */
  waitingCalls(sessionId: string): Set<string> {
    return new Set(
      this.cards.flatMap((c) => (c.kind === "confirm" && c.params.sessionId === sessionId ? [c.params.toolCallId] : [])),
    );
  }

  /** `wave/session/approveServers`: resolves with the names the user approved. */
  approveServers(params: SessionApproveServersParams): Promise<SessionApproveServersResult> {
    return new Promise((resolve, reject) => {
      const checked = new Set(params.servers.map((s) => s.name));
      this.cards.push({ kind: "approve", key: this.nextKey++, scope: { sessionId: params.sessionId }, params, checked, resolve, reject });
      this.render();
    });
  }

  /** `wave/session/confirmTool`: resolves with the user's decision. */
  confirmTool(params: SessionConfirmToolParams): Promise<SessionConfirmToolResult> {
    return new Promise((resolve, reject) => {
      this.cards.push({
        kind: "confirm",
        key: this.nextKey++,
        scope: { sessionId: params.sessionId, turn: params.turn },
        params,
        resolve,
        reject,
      });
      this.render();
    });
  }

  /** The turn ended while its cards were open: they close, answered with an error. */
  turnEnded(p: Pick<SessionTurnEndedParams, "sessionId" | "turn">): void {
    const ended = this.cards.filter((c) => endsCard(c.scope, p));
    if (ended.length === 0) return;
    this.cards = this.cards.filter((c) => !ended.includes(c));
    for (const c of ended) c.reject(new Error(t(this.lang, "consentTurnEnded")));
    this.render();
  }

  /** How many cards are open (for tests). */
  get open(): number {
    return this.cards.length;
  }

  private finish(card: Card, answer: () => void): void {
    if (!this.cards.includes(card)) return;
    this.cards = this.cards.filter((c) => c !== card);
    answer();
    this.render();
  }

  private render(): void {
    this.root.hidden = this.cards.length === 0;
    this.root.replaceChildren(...this.cards.map((c) => (c.kind === "approve" ? this.approveCard(c) : this.confirmCard(c))));
    this.changed();
  }

  private approveCard(card: Extract<Card, { kind: "approve" }>): HTMLElement {
    const L = (k: Parameters<typeof t>[1], v?: Record<string, string | number>) => t(this.lang, k, v);
    const yes = h(
      "button",
      {
        class: "primary",
        type: "button",
        "data-answer": "approve",
        disabled: card.checked.size === 0,
        onclick: () => this.finish(card, () => card.resolve({ approved: approvedNames(card.params.servers, card.checked) })),
      },
      L("approveSelected"),
    ) as HTMLButtonElement;
    const servers = card.params.servers.map((s) => {
      const box = h("input", {
        type: "checkbox",
        "data-approve": s.name,
        "aria-label": L("approveServerLabel", { name: s.name }),
        checked: card.checked.has(s.name),
        onchange: (ev: Event) => {
          if ((ev.target as HTMLInputElement).checked) card.checked.add(s.name);
          else card.checked.delete(s.name);
          yes.disabled = card.checked.size === 0;
        },
      });
      return h(
        "li",
        { class: "approve-server", "data-server": s.name },
        h("label", { class: "approve-name" }, box, " ", h("span", { class: "server-name" }, s.name), " ", h("span", { class: "badge transport" }, s.transport)),
        approvalDetails(this.lang, s),
      );
    });
    return h(
      "div",
      { class: "consent consent-approve", role: "dialog", "data-card": "approveServers", "data-key": card.key, "aria-label": L("approveCardTitle") },
      h("div", { class: "consent-title" }, L("approveCardTitle")),
      h("div", { class: "muted" }, L("approveCardBody")),
      h("ul", { class: "approve-servers" }, servers),
      h(
        "div",
        { class: "consent-actions" },
        yes,
        h(
          "button",
          { class: "secondary", type: "button", "data-answer": "deny", onclick: () => this.finish(card, () => card.resolve({ approved: [] })) },
          L("dontApprove"),
        ),
      ),
    );
  }

  private confirmCard(card: Extract<Card, { kind: "confirm" }>): HTMLElement {
    const L = (k: Parameters<typeof t>[1], v?: Record<string, string | number>) => t(this.lang, k, v);
    const p = card.params;
    const badges = toolBadges(this.lang, p.annotations);
    const destructive = badges.some((b) => b.kind === "destructive");
    const decide = (decision: ToolDecision) => this.finish(card, () => card.resolve({ decision }));
    return h(
      "div",
      {
        class: destructive ? "consent consent-confirm destructive" : "consent consent-confirm",
        role: "dialog",
        "data-card": "confirmTool",
        "data-key": card.key,
        "data-tool-call": p.toolCallId,
        "data-tool": p.fullName,
        "aria-label": L("confirmToolTitle", { title: toolTitle(p) }),
      },
      h("div", { class: "consent-title" }, L("confirmToolTitle", { title: toolTitle(p) })),
      h("div", { class: "consent-server muted" }, L("confirmToolServer", { tool: p.tool, server: p.server })),
      badges.length > 0
        ? h(
            "div",
            { class: "consent-badges" },
            badges.map((b) => h("span", { class: `badge hint hint-${b.kind}`, "data-badge": b.kind, title: b.tooltip }, b.kind === "destructive" ? `⚠ ${b.label}` : b.label)),
          )
        : null,
      p.definitionChanged ? h("div", { class: "approval-note warn note-definition-changed", "data-note": "definitionChanged" }, L("toolDefinitionChanged")) : null,
      h("div", { class: "consent-args-label muted" }, L("toolArguments")),
      h("pre", { class: "consent-args" }, argumentsText(p.arguments)),
      h(
        "div",
        { class: "consent-actions" },
        DECISIONS.map(({ decision, label }) =>
          h(
            "button",
            {
              class: decision === "once" ? "primary" : decision === "deny" ? "secondary danger" : "secondary",
              type: "button",
              "data-decision": decision,
              onclick: () => decide(decision),
            },
            L(label),
          ),
        ),
      ),
    );
  }
}
