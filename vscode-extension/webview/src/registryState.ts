// "Browse registry" on the settings page (USE-3): the decisions, free of the DOM so vitest can
// check them. The sidecar does the registry work (`wave/registry/search|get|add`); the page
// searches as the user types, shows one server's details and adds it to the user or project
// file.

import type {
  RegistryAdded,
  RegistryInputView,
  RegistrySearchResult,
  RegistryServerDetails,
} from "../../src/protocol.generated";
import { t, type Lang } from "./i18n";

/** How long typing must pause before the page asks the registry. */
export const SEARCH_DELAY_MS = 250;

export interface RegistryState {
  query: string;
  /** Number of the newest search asked; an answer to an older one is dropped. */
  asked: number;
  /** The search answered last (for the current query). */
  results?: RegistrySearchResult;
  searching: boolean;
  searchError?: string;
  /** The server whose details are shown (or loading). */
  selected?: string;
  details?: RegistryServerDetails;
  detailsError?: string;
  /** The entry name the user will add it as. */
  entryName: string;
  adding?: "user" | "project";
  addError?: string;
  added?: { result: RegistryAdded; name: string; scope: "user" | "project" };
}

export function initialRegistryState(): RegistryState {
  return { query: "", asked: 0, searching: false, entryName: "" };
}

/** A new query typed: the search to ask for it gets the next number. */
export function startSearch(state: RegistryState, query: string): RegistryState {
  return { ...state, query, asked: state.asked + 1, searching: true, searchError: undefined };
}

/** A search answered: kept only when it is the newest one asked. */
export function searchAnswered(
  state: RegistryState,
  number: number,
  answer: { result: RegistrySearchResult } | { error: string },
  more = false,
): RegistryState {
  if (number !== state.asked) return state;
  if ("error" in answer) return { ...state, searching: false, searchError: answer.error };
  const servers = more && state.results ? [...state.results.servers, ...answer.result.servers] : answer.result.servers;
  return { ...state, searching: false, results: { ...answer.result, servers } };
}

/** The name a registry server gets in the config file by default: its last part, as a key. */
export function entryNameFor(serverName: string): string {
  const last = serverName.split("/").pop() ?? serverName;
  const name = last
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, "-")
    .replace(/^-+|-+$/g, "");
  return name || "server";
}

export function selectServer(state: RegistryState, name: string): RegistryState {
  return {
    ...state,
    selected: name,
    details: undefined,
    detailsError: undefined,
    entryName: entryNameFor(name),
    addError: undefined,
    added: undefined,
  };
}

export function detailsAnswered(
  state: RegistryState,
  name: string,
  answer: { details: RegistryServerDetails } | { error: string },
): RegistryState {
  if (state.selected !== name) return state;
  if ("error" in answer) return { ...state, detailsError: answer.error };
  return { ...state, details: answer.details };
}

/** The inputs the user must set (each a `${VAR}` in the entry), and the optional ones. */
export function splitInputs(inputs: RegistryInputView[]): { required: RegistryInputView[]; optional: RegistryInputView[] } {
  return {
    required: inputs.filter((i) => i.placeholder !== undefined),
    optional: inputs.filter((i) => i.placeholder === undefined),
  };
}

/** One input as a line: where it goes, whether secret or repeatable, its default and description. */
export function inputText(lang: Lang, input: RegistryInputView): string {
  const parts = [t(lang, KIND_TEXT[input.kind]), input.name];
  let text = parts.join(" ");
  if (input.secret) text += `, ${t(lang, "registrySecret")}`;
  if (input.repeated) text += `, ${t(lang, "registryRepeated")}`;
  if (input.default !== undefined) text += `, ${t(lang, "registryDefault", { value: input.default })}`;
  if (input.description) text += `: ${input.description}`;
  return text;
}

const KIND_TEXT = {
  environmentVariable: "registryKindEnv",
  argument: "registryKindArgument",
  header: "registryKindHeader",
  urlVariable: "registryKindUrlVariable",
} as const;

/** Why the entry name cannot be used, or undefined. */
export function entryNameProblem(lang: Lang, name: string): string | undefined {
  if (name.trim() === "") return t(lang, "registryNameMissing");
  return undefined;
}

/** After an add: what was written where, and the variables to set. */
export function addedText(lang: Lang, added: NonNullable<RegistryState["added"]>): string {
  const { required } = splitInputs(added.result.install.inputs);
  const where = t(lang, "registryAdded", { name: added.name, path: added.result.path });
  if (required.length === 0) return where;
  const vars = required.map((i) => i.placeholder).join(", ");
  return `${where} ${t(lang, "registrySetBeforeStart", { vars })}`;
}
