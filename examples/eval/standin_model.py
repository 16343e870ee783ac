"""A scripted stand-in for an OpenAI-compatible model server, so that the
`timeaware eval run` examples run without a GPU. It is not a model: its
replies follow fixed rules.

    python3 examples/eval/standin_model.py [--port 8811] [--habit tool|direct]

Rules, by what the request holds:
  - get_duration offered: call it once, then answer <answer>42</answer>;
  - other tools offered: call the first one (--habit tool, the default) or
    answer in words (--habit direct);
  - no tools, a sum A + B and a budget of N tokens named in the last user
    message: think for A words, returned apart as a reasoning parser does
    (reasoning_content), then answer the sum in <answer></answer>: right
    with a budget of 32 tokens or more, one off below it, in a rush;
  - no tools otherwise: answer Time Puzzles with "MY ANSWER: 2024-02-29" and
    anything else with "ANSWER: none".
Every reply carries usage.completion_tokens, counting a word as a token, and
completion_tokens_details.reasoning_tokens, the thinking's words.
GET /v1/models answers 200, for readiness checks.
"""

import argparse
import json
import re
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

def budgeted(messages):
    """The reply to a question that names a token budget, or None."""
    last = next((m for m in reversed(messages) if m.get("role") == "user"), {})
    text = str(last.get("content") or "")
    budget = re.search(r"(\d+) tokens", text)
    terms = re.search(r"(\d+) \+ (\d+)", text)
    if not budget or not terms:
        return None
    total = int(terms[1]) + int(terms[2])
    if int(budget[1]) < 32:
        total += 1
    thinking = " ".join(["step"] * int(terms[1]))
    return {"role": "assistant", "reasoning_content": thinking, "content": f"<answer>{total}</answer>"}


def usage(msg):
    """Token counts of a reply, a word counting as a token."""
    think = len(str(msg.get("reasoning_content") or "").split())
    words = think + len(str(msg.get("content") or "").split()) + len(msg.get("tool_calls") or [])
    return {"completion_tokens": words, "completion_tokens_details": {"reasoning_tokens": think}}


def reply(body, habit):
    messages = body.get("messages") or []
    tools = [t.get("function", {}).get("name") for t in body.get("tools") or []]
    last = messages[-1] if messages else {}
    if "get_duration" in tools:
        if last.get("role") == "tool":
            return {"role": "assistant", "content": "<answer>42</answer>"}, "stop"
        return call("get_duration", len(messages)), "tool_calls"
    if tools and habit == "tool":
        return call(tools[0], len(messages)), "tool_calls"
    if tools:
        return {"role": "assistant", "content": "From what we have so far, it looks fine."}, "stop"
    if (msg := budgeted(messages)) is not None:
        return msg, "stop"
    text = " ".join(str(m.get("content") or "") for m in messages)
    if "MY ANSWER" in text:
        return {"role": "assistant", "content": "MY ANSWER: 2024-02-29"}, "stop"
    return {"role": "assistant", "content": "ANSWER: none"}, "stop"


def call(name, n):
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": f"call_{n}", "type": "function", "function": {"name": name, "arguments": "{}"}}],
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, default=8811)
    ap.add_argument("--habit", choices=["tool", "direct"], default="tool")
    args = ap.parse_args()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def send(self, code, obj):
            data = json.dumps(obj).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            if self.path.rstrip("/") == "/v1/models":
                self.send(200, {"object": "list", "data": [{"id": "stand-in", "object": "model"}]})
            else:
                self.send(404, {"error": {"message": "not found"}})

        def do_POST(self):
            if self.path.rstrip("/") != "/v1/chat/completions":
                self.send(404, {"error": {"message": "not found"}})
                return
            n = int(self.headers.get("Content-Length") or 0)
            try:
                body = json.loads(self.rfile.read(n))
            except ValueError as e:
                self.send(400, {"error": {"message": f"bad JSON: {e}"}})
                return
            msg, finish = reply(body, args.habit)
            self.send(200, {
                "id": "standin", "object": "chat.completion", "model": body.get("model", ""),
                "choices": [{"index": 0, "message": msg, "finish_reason": finish}],
                "usage": usage(msg),
            })

    ThreadingHTTPServer(("127.0.0.1", args.port), Handler).serve_forever()


if __name__ == "__main__":
    main()
