"""A stand-in for ``python -m llama_cpp.server``: a real HTTP server on 127.0.0.1.

Takes the arguments vance passes (``--model``, ``--model_alias``, ``--host``, ``--port`` …),
appends its argv as one JSON line to ``$FAKE_LLAMA_ARGV`` (when set), waits until
``$FAKE_LLAMA_GATE`` exists (when set) before it listens, exits 1 with a message when
``$FAKE_LLAMA_FAIL`` is set, then serves ``GET /v1/models`` until SIGTERM (holding each
while ``$FAKE_LLAMA_BUSY`` exists, as llama-cpp-python's server does while the model is
busy). With
``$FAKE_LLAMA_UPSTREAM`` (a ``…/v1`` URL: the scripted LLM server of tests/llm_server.py) it
passes every POST on to it and relays the answer, so a test can see which calls came
through this server.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser()
    for name in ("--model", "--model_alias", "--host", "--port", "--n_ctx",
                 "--interrupt_requests"):
        parser.add_argument(name, required=True)
    args, _extra = parser.parse_known_args()
    if os.environ.get("FAKE_LLAMA_ARGV"):
        with open(os.environ["FAKE_LLAMA_ARGV"], "a", encoding="utf-8") as out:
            out.write(json.dumps({"pid": os.getpid(), "argv": sys.argv[1:]}) + "\n")
    if os.environ.get("FAKE_LLAMA_FAIL"):
        print("loading model ...", flush=True)
        sys.exit(os.environ["FAKE_LLAMA_FAIL"])
    gate = os.environ.get("FAKE_LLAMA_GATE")
    while gate and not Path(gate).exists():
        time.sleep(0.05)
    alias = args.model_alias

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path != "/v1/models":
                self.send_error(404)
                return
            busy = os.environ.get("FAKE_LLAMA_BUSY")
            while busy and Path(busy).exists():
                time.sleep(0.05)
            body = json.dumps({"object": "list", "data": [
                {"id": alias, "object": "model", "owned_by": "me"}]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self) -> None:
            upstream = os.environ["FAKE_LLAMA_UPSTREAM"].removesuffix("/v1")
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            request = urllib.request.Request(upstream + self.path, data=body, method="POST",
                                             headers={"Content-Type": "application/json"})
            opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
            try:
                with opener.open(request, timeout=60) as answer:
                    status, kind, data = answer.status, answer.headers["Content-Type"], \
                        answer.read()
            except urllib.error.HTTPError as exc:
                status, kind, data = exc.code, exc.headers["Content-Type"], exc.read()
            self.send_response(status)
            self.send_header("Content-Type", kind or "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *_args: object) -> None:
            pass

    server = ThreadingHTTPServer((args.host, int(args.port)), Handler)
    print(f"serving {args.model} on {args.host}:{args.port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
