// The settings page's "Browse registry" dialog (USE-3): a search box that asks the sidecar as the
// user types (`wave/registry/search`), the matching servers, one server's details
// (`wave/registry/get`: the package or remote, the entry written, the values it needs) and Add to
// user or project (`wave/registry/add`). Decisions are in registryState.ts. The dialog keeps its
// own elements between renders, so the search box keeps its focus and caret while results change.

import type { McpSource, RegistryServerDetails, RegistryServerView, ServersSnapshot } from "../../src/protocol.generated";
import type { HostBridge } from "./bridge";
import { h } from "./dom";
import { HostError } from "./hostApi";
import { t, type Lang, type TextKey } from "./i18n";
import {
  addedText,
  detailsAnswered,
  entryNameProblem,
  initialRegistryState,
  inputText,
  searchAnswered,
  SEARCH_DELAY_MS,
  selectServer,
  splitInputs,
  startSearch,
  type RegistryState,
} from "./registryState";

/** Replaces `el`'s children with the given ones, skipping the absent. */
function fill(el: HTMLElement, ...children: (Node | null)[]): void {
  el.replaceChildren(...children.filter((c): c is Node => c !== null));
}

function reason(e: unknown): string {
  return e instanceof HostError || e instanceof Error ? e.message : String(e);
}

export class RegistryBrowser {
  /** The dialog (an overlay); the settings page shows it while `isOpen`. */
  readonly el: HTMLElement;
  private state: RegistryState = initialRegistryState();
  private open = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly input: HTMLInputElement;
  private readonly results: HTMLElement;
  private readonly details: HTMLElement;

  constructor(
    private readonly bridge: HostBridge,
    private readonly lang: Lang,
    private readonly sessionId: () => string,
    /** The page re-renders (shows or hides `el`). */
    private readonly changed: () => void,
    /** A server was added: the session's servers after it, and the tab to show. */
    private readonly onAdded: (servers: ServersSnapshot, scope: "user" | "project") => void,
  ) {
    const L = (k: TextKey) => t(lang, k);
    this.input = h("input", {
      type: "search",
      id: "registry-query",
      class: "registry-query",
      "data-key": "registry-query",
      placeholder: L("registrySearchPlaceholder"),
      "aria-label": L("registrySearchPlaceholder"),
      autocomplete: "off",
      spellcheck: "false",
      oninput: () => this.typed(),
    }) as HTMLInputElement;
    this.results = h("div", { class: "registry-results", id: "registry-results" });
    this.details = h("div", { class: "registry-details", id: "registry-details" });
    this.el = h(
      "div",
      {
        class: "overlay",
        onclick: (ev: Event) => {
          if (ev.target === ev.currentTarget) this.close();
        },
      },
      h(
        "div",
        { class: "dialog registry-dialog", role: "dialog", "aria-modal": "true", "aria-labelledby": "registry-title", id: "registry-browser" },
        h(
          "header",
          { class: "registry-header" },
          h("h2", { id: "registry-title" }, L("registryTitle")),
          this.input,
          h("button", { class: "secondary registry-close", "data-key": "registry-close", onclick: () => this.close() }, L("registryClose")),
        ),
        h("div", { class: "registry-body" }, this.results, this.details),
      ),
    );
    this.renderResults();
    this.renderDetails();
  }

  get isOpen(): boolean {
    return this.open;
  }

  /** For tests: the state shown. */
  get current(): RegistryState {
    return this.state;
  }

  show(): void {
    this.open = true;
    this.changed();
    this.input.focus();
    if (this.state.results === undefined && !this.state.searching) void this.search(this.input.value);
  }

  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.open = false;
    this.changed();
  }

  private set(next: RegistryState): void {
    this.state = next;
    this.renderResults();
    this.renderDetails();
  }

  /** Search as you type: one request once typing pauses; older answers are dropped. */
  private typed(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.search(this.input.value), SEARCH_DELAY_MS);
  }

  private async search(query: string, cursor?: string): Promise<void> {
    const next = cursor ? { ...this.state, asked: this.state.asked + 1, searching: true } : startSearch(this.state, query);
    this.set(next);
    const number = next.asked;
    try {
      const result = await this.bridge.request("wave/registry/search", cursor ? { query, cursor } : { query });
      this.set(searchAnswered(this.state, number, { result }, cursor !== undefined));
    } catch (e) {
      this.set(searchAnswered(this.state, number, { error: t(this.lang, "registrySearchFailed", { reason: reason(e) }) }));
    }
  }

  private async select(server: RegistryServerView): Promise<void> {
    this.set(selectServer(this.state, server.name));
    try {
      const details = await this.bridge.request("wave/registry/get", { name: server.name });
      this.set(detailsAnswered(this.state, server.name, { details }));
    } catch (e) {
      this.set(
        detailsAnswered(this.state, server.name, {
          error: t(this.lang, "registryDetailsFailed", { name: server.name, reason: reason(e) }),
        }),
      );
    }
  }

  private async add(details: RegistryServerDetails, scope: "user" | "project"): Promise<void> {
    const name = this.state.entryName.trim();
    const problem = entryNameProblem(this.lang, name);
    if (problem) {
      this.set({ ...this.state, addError: problem });
      return;
    }
    this.set({ ...this.state, adding: scope, addError: undefined, added: undefined });
    try {
      const source: McpSource = scope;
      const result = await this.bridge.request("wave/registry/add", {
        name,
        server: details.name,
        ...(details.version ? { version: details.version } : {}),
        scope: source,
        sessionId: this.sessionId(),
      });
      this.set({ ...this.state, adding: undefined, added: { result, name, scope } });
      this.onAdded(result.servers, scope);
    } catch (e) {
      this.set({ ...this.state, adding: undefined, addError: t(this.lang, "registryAddFailed", { name, reason: reason(e) }) });
    }
  }

  // ---- rendering (only the parts below the search box) ----

  private renderResults(): void {
    const L = (k: TextKey, v?: Record<string, string | number>) => t(this.lang, k, v);
    const s = this.state;
    const list = s.results?.servers ?? [];
    fill(this.results,
      s.results ? h("p", { class: "muted registry-from" }, L("registryFrom", { url: s.results.registryUrl })) : null,
      s.searchError ? h("p", { class: "error-text registry-search-error", role: "alert" }, s.searchError) : null,
      s.results && list.length === 0 && !s.searching
        ? h("p", { class: "muted registry-empty" }, L("registryNoResults", { query: s.query }))
        : null,
      h(
        "ul",
        { class: "registry-list", "aria-busy": s.searching ? "true" : "false" },
        list.map((server) =>
          h(
            "li",
            {
              class: server.name === s.selected ? "registry-result selected" : "registry-result",
              "data-name": server.name,
            },
            h(
              "button",
              { class: "registry-pick", "data-key": `registry-${server.name}`, onclick: () => void this.select(server) },
              h("span", { class: "registry-name" }, server.title || server.name),
              server.version ? h("span", { class: "badge registry-version" }, server.version) : null,
              h(
                "span",
                { class: server.install ? "registry-install muted" : "registry-install warn" },
                server.install ?? L("registryNotInstallable"),
              ),
              server.title ? h("span", { class: "registry-id muted" }, server.name) : null,
              h("span", { class: "registry-description" }, server.description),
            ),
          ),
        ),
      ),
      s.searching ? h("p", { class: "muted registry-searching", role: "status" }, L("registrySearching")) : null,
      s.results?.nextCursor && !s.searching
        ? h(
            "button",
            {
              class: "secondary registry-more",
              "data-key": "registry-more",
              onclick: () => void this.search(s.query, s.results?.nextCursor),
            },
            L("registryMore"),
          )
        : null,
    );
  }

  private renderDetails(): void {
    const L = (k: TextKey, v?: Record<string, string | number>) => t(this.lang, k, v);
    const s = this.state;
    if (!s.selected) {
      fill(this.details,h("p", { class: "muted" }, L("registryPick")));
      return;
    }
    if (s.detailsError) {
      fill(this.details,h("p", { class: "error-text", role: "alert" }, s.detailsError));
      return;
    }
    const d = s.details;
    if (!d) {
      fill(this.details,h("p", { class: "muted", role: "status" }, L("registryLoadingDetails")));
      return;
    }
    const head = [
      h("h3", { class: "registry-details-title" }, d.title || d.name, d.version ? h("span", { class: "badge" }, d.version) : null),
      d.title ? h("p", { class: "muted" }, d.name) : null,
      h("p", { class: "registry-details-description" }, d.description),
      d.repositoryUrl ? h("p", { class: "muted registry-source" }, L("registrySource", { url: d.repositoryUrl })) : null,
    ];
    if (!d.install) {
      fill(this.details,...head, h("p", { class: "error-text registry-unsupported", role: "alert" }, d.unsupported ?? ""));
      return;
    }
    const { required, optional } = splitInputs(d.install.inputs);
    const nameInput = h("input", {
      type: "text",
      id: "registry-entry-name",
      "data-key": "registry-entry-name",
      value: s.entryName,
      oninput: (ev: Event) => {
        this.state = { ...this.state, entryName: (ev.target as HTMLInputElement).value };
      },
    });
    const busy = s.adding !== undefined;
    const addButton = (scope: "user" | "project") =>
      h(
        "button",
        {
          class: scope === "user" ? "primary" : "secondary",
          "data-add-registry": scope,
          "data-key": `registry-add-${scope}`,
          disabled: busy,
          onclick: () => void this.add(d, scope),
        },
        s.adding === scope ? L("registryAdding") : L(scope === "user" ? "registryAddUser" : "registryAddProject"),
      );
    fill(this.details,
      ...head,
      h("p", { class: "registry-how" }, L("registryRunsAs", { how: d.install.how })),
      h("p", { class: "muted" }, L("registryEntry")),
      h("pre", { class: "registry-entry" }, JSON.stringify(d.install.entry, null, 2)),
      required.length > 0
        ? h(
            "div",
            { class: "registry-needs" },
            h("p", {}, L("registryNeeds")),
            h(
              "ul",
              {},
              required.map((input) =>
                h(
                  "li",
                  { "data-placeholder": input.placeholder ?? "" },
                  h("code", {}, "${" + (input.placeholder ?? "") + "}"),
                  " ",
                  inputText(this.lang, input),
                ),
              ),
            ),
          )
        : h("p", { class: "muted registry-no-inputs" }, L("registryNoInputs")),
      optional.length > 0
        ? h(
            "div",
            { class: "registry-optional muted" },
            h("p", {}, L("registryOptional")),
            h("ul", {}, optional.map((input) => h("li", { "data-optional": input.name }, inputText(this.lang, input)))),
          )
        : null,
      h("label", { class: "registry-entry-name" }, L("registryEntryName"), " ", nameInput),
      h("div", { class: "dialog-actions" }, addButton("user"), addButton("project")),
      s.addError ? h("p", { class: "error-text registry-add-error", role: "alert" }, s.addError) : null,
      s.added ? h("p", { class: "registry-added", role: "status" }, addedText(this.lang, s.added)) : null,
    );
  }
}
