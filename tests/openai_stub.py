"""A real OpenAI-compatible HTTP server on 127.0.0.1 for tests (stdlib only, one thread/request)."""

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

Reply = Callable[[dict], str]


def echo_question(body: dict) -> str:
    """Deterministic answer: the words of the question after 'Question:' in the last message."""
    content = body["messages"][-1]["content"]
    return content.rsplit("Question:", 1)[-1].strip()


class OpenAIStub:
    def __init__(self, reply: Reply = echo_question, delay: float = 0.0):
        self.reply = reply
        self.delay = delay
        self.requests: list[dict] = []
        self.headers: list[dict] = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # keep test output clean
                pass

            def do_POST(self):
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length))
                stub.requests.append(body)
                stub.headers.append(dict(self.headers))
                if stub.delay:
                    time.sleep(stub.delay)
                try:
                    text = stub.reply(body)
                except Exception as exc:  # a reply that raises becomes an HTTP 500
                    self._send(500, json.dumps({"error": {"message": str(exc)}}).encode())
                    return
                payload = json.dumps({
                    "id": f"chatcmpl-{len(stub.requests)}", "object": "chat.completion",
                    "created": 0, "model": body.get("model", "stub"),
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": text}}],
                    "usage": {"prompt_tokens": len(json.dumps(body["messages"]).split()),
                              "completion_tokens": len(text.split()),
                              "total_tokens": 0},
                }).encode()
                self._send(200, payload)

            def _send(self, status: int, payload: bytes) -> None:
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> "OpenAIStub":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
