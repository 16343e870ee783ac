"""A scripted OpenAI-compatible chat-completions server for the verifiers tier.

It answers ``POST .../chat/completions`` with the assistant message a
function the test gives chose for the request (plain text, or tool calls),
non-streaming or as a server-sent event stream, on a port the kernel chose,
and keeps every request it got.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Reply = Callable[[dict[str, Any]], dict[str, Any]]


def text(content: str) -> dict[str, Any]:
    """An assistant message that says ``content``."""
    return {"role": "assistant", "content": content}


def tool_call(name: str, arguments: str) -> dict[str, Any]:
    """An assistant message that calls one tool with ``arguments`` (raw text)."""
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": f"call_{uuid.uuid4().hex[:12]}", "type": "function", "function": {"name": name, "arguments": arguments}}
    ]}


class ScriptedModel:
    """The server; ``url`` is its OpenAI base URL (``.../v1``)."""

    def __init__(self, reply: Reply) -> None:
        self.reply = reply
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        model = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                self._send(200, {"object": "list", "data": [{"id": "scripted", "object": "model"}]})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                if not self.path.endswith("/chat/completions"):
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                with model._lock:
                    model.requests.append(body)
                try:
                    message = model.reply(body)
                except Exception as exc:  # the test's script failed: say so to the caller
                    self._send(500, {"error": {"message": f"script failed: {exc!r}"}})
                    return
                finish = "tool_calls" if message.get("tool_calls") else "stop"
                created, cid = 1_700_000_000, f"chatcmpl-{uuid.uuid4().hex[:12]}"
                usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
                if not body.get("stream"):
                    self._send(200, {"id": cid, "object": "chat.completion", "created": created,
                                     "model": body.get("model", "scripted"),
                                     "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                                     "usage": usage})
                    return
                delta = dict(message)
                if delta.get("tool_calls"):
                    delta["tool_calls"] = [{"index": i, **c} for i, c in enumerate(delta["tool_calls"])]
                chunks = [
                    {"choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
                    {"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]},
                    {"choices": [], "usage": usage},
                ]
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                for c in chunks:
                    c.update({"id": cid, "object": "chat.completion.chunk", "created": created,
                              "model": body.get("model", "scripted")})
                    self.wfile.write(f"data: {json.dumps(c)}\n\n".encode())
                self.wfile.write(b"data: [DONE]\n\n")
                self.close_connection = True

            def _send(self, status: int, obj: dict[str, Any]) -> None:
                data = json.dumps(obj).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> ScriptedModel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
