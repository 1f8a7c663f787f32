"""A server nobody shuts down: http.server's serve_forever() in the
main thread (socketserver's loop, polling every half second), as a test
that started a fixture server and never stopped it.

Usage: serve_forever.py READY_FILE

READY_FILE gets, as JSON, "pid", "fd" (the server's socket's fileno())
and "address" (its server_address).
"""

import http.server
import os
import sys

from _ready import write_ready

server = http.server.HTTPServer(("127.0.0.1", 0),
                                http.server.BaseHTTPRequestHandler)
write_ready(sys.argv[1], {"pid": os.getpid(), "fd": server.fileno(),
                          "address": server.server_address})
server.serve_forever()  # MARK: serve
