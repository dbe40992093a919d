"""A TEST DOUBLE for the ``llama-server`` binary: a process that takes its command line.

Lifecycle tests start it where the real binary would be (``$UTP_LLAMA_SERVER``
points at a wrapper script that runs this file). It listens on ``--port``,
answers ``/health`` with 503 ("loading") twice and then 200, ``/v1/models``
with ``--alias``, ``/props`` with a fixed template, and records its argv in
``$FAKE_LLAMA_ARGV``. ``FAKE_LLAMA_FAIL=<code>`` makes it print an error and
exit with that status instead, as the real one does for a bad model file.
"""

from __future__ import annotations

import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

TEMPLATE = "{%- if tools %}<tools>{{ tools | tojson }}</tools>{%- endif %}"


def main(argv: list[str]) -> int:
    args: dict[str, str] = {}
    for index, item in enumerate(argv):
        if item.startswith("--") and index + 1 < len(argv) and not argv[index + 1].startswith("--"):
            args[item] = argv[index + 1]
    if os.environ.get("FAKE_LLAMA_ARGV"):
        Path(os.environ["FAKE_LLAMA_ARGV"]).write_text(json.dumps(argv))
    if os.environ.get("FAKE_LLAMA_FAIL"):
        print("error: failed to load model (fake)", flush=True)
        return int(os.environ["FAKE_LLAMA_FAIL"])
    health = {"asked": 0}

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *a: object) -> None:
            pass

        def _json(self, status: int, payload: object) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            if self.path == "/health":
                health["asked"] += 1
                self._json(200 if health["asked"] > 2 else 503, {"status": "ok" if health["asked"] > 2 else "loading"})
            elif self.path == "/v1/models":
                self._json(200, {"object": "list", "data": [{"id": args.get("--alias"), "object": "model", "owned_by": "llamacpp"}]})
            elif self.path == "/props":
                self._json(200, {"chat_template": TEMPLATE, "build_info": "b0-fake", "total_slots": 1})
            else:
                self._json(404, {"error": "not found"})

    ThreadingHTTPServer(("127.0.0.1", int(args["--port"])), Handler).serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
