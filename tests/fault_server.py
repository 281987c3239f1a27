"""A real OpenAI-compatible HTTP server on 127.0.0.1 for tests, able to inject faults.

Each request is answered by a fault chosen by `plan(n, body)` (n counts requests from 0), or by
the deterministic reply when the plan returns None (the default: no faults). A reply function
that raises is answered with HTTP 500. Every request body and its headers are kept. Faults:
  500, 429 (with or without Retry-After), slow (sleeps past the client's timeout), drop (closes
  the connection without answering), malformed (200 with a body that is not JSON), empty (200
  with no choices), truncated (a reply cut in half), schema (a JSON reply of the wrong shape).
"""

import json
import random
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

FAULTS = ("500", "429", "429-retry-after", "slow", "drop", "malformed", "empty")
STRUCTURED_FAULTS = ("truncated", "schema")


def seeded_plan(rate: float, seed: int, faults=FAULTS, recover_after: int = 2):
    """About `rate` of first attempts fail with a random fault; a retried request succeeds
    after at most `recover_after` failures (the same messages are recognised)."""
    rng = random.Random(seed)
    failures: Counter = Counter()

    def plan(n: int, body: dict) -> str | None:
        key = json.dumps(body.get("messages"), sort_keys=True)
        if failures[key] >= recover_after or rng.random() >= rate:
            return None
        failures[key] += 1
        return rng.choice(faults)

    return plan


def echo_question(body: dict) -> str:
    """Deterministic answer: the words of the question after 'Question:' in the last message."""
    return body["messages"][-1]["content"].rsplit("Question:", 1)[-1].strip()


class _Server(ThreadingHTTPServer):
    # The default backlog of 5 refuses bursts of new connections (32 clients at once); a
    # refused connect would be a fault the test did not ask for.
    request_queue_size = 256


class FaultServer:
    def __init__(self, reply: Callable[[dict], str] = echo_question, plan=lambda n, body: None,
                 slow_seconds: float = 3.0, rate_limit_per_second: float | None = None,
                 delay: float = 0.0):
        self.reply, self.plan, self.slow_seconds = reply, plan, slow_seconds
        self.delay = delay  # latency of every request
        self.requests: list[dict] = []
        self.headers: list[dict] = []
        self.rate_limit = rate_limit_per_second
        self.faults: Counter = Counter()
        self.count = 0
        self.served = 0
        self._lock = threading.Lock()
        self._window: list[float] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
                with server._lock:
                    server.requests.append(body)
                    server.headers.append(dict(self.headers))
                if server.delay:
                    time.sleep(server.delay)
                fault = server._choose(body)
                if fault == "drop":
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                if fault == "slow":
                    time.sleep(server.slow_seconds)
                status, payload, headers = server._response(fault, body)
                self.send_response(status)
                for name, value in {"content-type": "application/json", **headers}.items():
                    self.send_header(name, value)
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.http = _Server(("127.0.0.1", 0), Handler)
        self.http.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.http.server_address[1]}/v1"
        self._thread = threading.Thread(target=self.http.serve_forever, daemon=True)

    def _choose(self, body: dict) -> str | None:
        with self._lock:
            n = self.count
            self.count += 1
            if self.rate_limit is not None:
                now = time.monotonic()
                self._window = [t for t in self._window if now - t < 1.0]
                if len(self._window) >= self.rate_limit:
                    self.faults["429-rate"] += 1
                    return "429-rate"
                self._window.append(now)
            fault = self.plan(n, body)
            if fault:
                self.faults[fault] += 1
            return fault

    def _response(self, fault: str | None, body: dict) -> tuple[int, bytes, dict]:
        if fault == "500":
            return 500, b'{"error": {"message": "injected"}}', {}
        if fault in ("429", "429-rate"):
            return 429, b'{"error": {"message": "slow down"}}', {}
        if fault == "429-retry-after":
            return 429, b'{"error": {"message": "slow down"}}', {"retry-after": "0.05"}
        if fault == "malformed":
            return 200, b'{"choices": [{"message": ', {}
        try:
            text = self.reply(body)
        except Exception as exc:  # a reply that raises becomes an HTTP 500
            return 500, json.dumps({"error": {"message": str(exc)}}).encode(), {}
        if fault == "empty":
            return 200, self._completion(body, None), {}
        if fault == "truncated":
            text = text[: len(text) // 2]
        if fault == "schema":
            text = json.dumps({"unexpected": True})
        with self._lock:
            self.served += 1
        return 200, self._completion(body, text), {}

    @staticmethod
    def _completion(body: dict, text: str | None) -> bytes:
        # As a real server does, a reply longer than max_tokens (one token per word here) is
        # cut there and says so.
        finish = "stop"
        limit = body.get("max_tokens")
        if text is not None and limit is not None and len(text.split()) > limit:
            text, finish = " ".join(text.split()[:limit]), "length"
        choices = [] if text is None else [{"index": 0, "finish_reason": finish,
                                            "message": {"role": "assistant", "content": text}}]
        return json.dumps({"id": "x", "object": "chat.completion", "created": 0,
                           "model": body.get("model", "m"), "choices": choices,
                           "usage": {"prompt_tokens": 10, "completion_tokens": 2,
                                     "total_tokens": 12}}).encode()

    def __enter__(self) -> "FaultServer":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.http.shutdown()
        self.http.server_close()
