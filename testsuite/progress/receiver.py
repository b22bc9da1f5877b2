#!/usr/bin/env python3
"""A stand-in for dlsched-ingestd in test-collect.sh: POST /v1/records with a munge credential.

Each body is decoded with `unmunge -S SOCKET` (so a credential sent twice is refused as
replayed, as the real service does); every request is appended to DIR/requests.jsonl as
{"status": answer, "uid": uid, "batch": payload or null, "error": ...}. The answer is read
from DIR/mode at each request: 200 (default), 503, 403 or 400. The port it listens on
(127.0.0.1, PORT or any free one) is written to DIR/port once it accepts connections.
"""
import argparse
import http.server
import json
import os
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--munge-socket", required=True)
    ap.add_argument("--port", type=int, default=0)
    args = ap.parse_args()

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *a):
            pass

        def answer(self, status, body):
            data = (json.dumps(body) + "\n").encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self):
            n = int(self.headers.get("Content-Length", "0"))
            body = self.rfile.read(n)
            entry = {"path": self.path, "type": self.headers.get("Content-Type"), "uid": None,
                     "batch": None, "error": None}
            try:
                with open(os.path.join(args.dir, "mode")) as f:
                    mode = int(f.read().strip() or "200")
            except (OSError, ValueError):
                mode = 200
            dec = subprocess.run(["unmunge", "-S", args.munge_socket, "-m", os.path.join(args.dir, "meta"),
                                  "-k", "UID", "-N"], input=body, capture_output=True)
            status = mode
            if self.path != "/v1/records" or entry["type"] != "application/x-munge":
                status, entry["error"] = 404, "wrong path or content type"
            elif dec.returncode != 0:
                status, entry["error"] = 401, dec.stderr.decode(errors="replace").strip()
            else:
                with open(os.path.join(args.dir, "meta")) as f:
                    meta = f.read()
                for line in meta.splitlines():
                    if line.startswith("UID:"):
                        entry["uid"] = int(line.split(":", 1)[1].strip())
                try:
                    entry["batch"] = json.loads(dec.stdout)
                except ValueError as e:
                    status, entry["error"] = 400, "payload is not JSON: %s" % e
            entry["status"] = status
            with open(os.path.join(args.dir, "requests.jsonl"), "a") as f:
                f.write(json.dumps(entry) + "\n")
            if status == 200:
                self.answer(200, {"accepted": len(entry["batch"]["records"]), "duplicates": 0})
            else:
                self.answer(status, {"error": entry["error"] or "told to answer %d" % status})

    http.server.HTTPServer.allow_reuse_address = True
    srv = http.server.HTTPServer(("127.0.0.1", args.port), Handler)
    tmp = os.path.join(args.dir, "port.tmp")
    with open(tmp, "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(tmp, os.path.join(args.dir, "port"))
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
