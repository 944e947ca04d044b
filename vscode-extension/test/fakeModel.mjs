// The one fake model of the JS tests, shared by the Chromium layer (test/chromium) and the
// code-server end-to-end tests (tests/e2e): an OpenAI-compatible Chat Completions endpoint on
// 127.0.0.1 that needs no network. A test gives it a function that decides each answer.

import * as http from "node:http";

/**
 * Starts the model. `answer(request, n)` gets each request's parsed body and its number (1 for
 * the first) and returns what to answer:
 *   `{ say: "text" }`                                  one JSON answer with that text
 *   `{ call: "tool", arguments, content?, id? }`       one JSON answer calling `tool` (arguments:
 *                                                      an object or a JSON string; id default
 *                                                      `call_<n>`; content default null)
 *   either with `stream: true`                         the same as SSE chunks (`stream: true`
 *                                                      answers): a text one word a chunk with
 *                                                      `gapMs` (default 0) before each word, a
 *                                                      call as its name, then its arguments
 * Every request body is kept in `requests`, in order.
 */
export async function startFakeModel(answer) {
  const requests = [];
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      const request = JSON.parse(body || "{}");
      requests.push(request);
      const step = answer(request, requests.length);
      const id = step.id ?? `call_${requests.length}`;
      const args = typeof step.arguments === "string" ? step.arguments : JSON.stringify(step.arguments ?? {});
      if (step.stream) {
        void streamStep(res, step, id, args);
        return;
      }
      const message =
        step.call !== undefined
          ? { role: "assistant", content: step.content ?? null, tool_calls: [{ id, type: "function", function: { name: step.call, arguments: args } }] }
          : { role: "assistant", content: step.say };
      const finish = step.call !== undefined ? "tool_calls" : "stop";
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ id: "x", object: "chat.completion", choices: [{ index: 0, message, finish_reason: finish }] }));
    });
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return { baseUrl: `http://127.0.0.1:${server.address().port}/v1`, requests, close: () => new Promise((r) => server.close(r)) };
}

/** A step as SSE `chat.completion.chunk`s; a text stops early when the client went away (Stop). */
async function streamStep(res, step, id, args) {
  res.writeHead(200, { "content-type": "text/event-stream" });
  const send = (delta) => res.write(`data: ${JSON.stringify({ id: "x", object: "chat.completion.chunk", choices: [{ index: 0, delta }] })}\n\n`);
  send({ role: "assistant", content: "" });
  if (step.call !== undefined) {
    send({ tool_calls: [{ index: 0, id, type: "function", function: { name: step.call, arguments: "" } }] });
    send({ tool_calls: [{ index: 0, function: { arguments: args } }] });
  } else {
    for (const word of step.say.split(/(?<= )/)) {
      await new Promise((r) => setTimeout(r, step.gapMs ?? 0));
      if (res.destroyed) return;
      send({ content: word });
    }
  }
  res.end("data: [DONE]\n\n");
}

/** The steps in order, one a request; then `(script exhausted)`. */
export function scripted(steps) {
  return (_request, n) => steps[n - 1] ?? { say: "(script exhausted)" };
}

/** The last message of a request (a tool result after a call). */
export function lastMessage(request) {
  return (request.messages ?? []).at(-1);
}

/** The content of a request's last user message ("" when there is none). */
export function lastUserText(request) {
  return [...(request.messages ?? [])].reverse().find((m) => m.role === "user")?.content ?? "";
}

/** Answers every request with `reply to <the last user message>`. */
export function startEchoModel() {
  return startFakeModel((request) => ({ say: `reply to ${lastUserText(request)}` }));
}
