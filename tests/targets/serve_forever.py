"""A server nobody shuts down: http.server's serve_forever() in the
main thread (socketserver's loop, polling every half second), as a test
that started a fixture server and never stopped it.

Usage: serve_forever.py READY_FILE [handler]

With "handler", a client thread sends a request whose handler reads a
pipe nobody writes to: the thread is stuck in its handler, not waiting
for requests.

READY_FILE gets, as JSON, "pid", "fd" (the server's socket's fileno())
and "address" (its server_address).
"""

import http.server
import os
import socket
import sys
import threading

from _ready import write_ready

never_r, never_w = os.pipe()


class Stuck(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        os.read(never_r, 1)  # MARK: handler


handler = len(sys.argv) > 2 and sys.argv[2] == "handler"
server = http.server.HTTPServer(("127.0.0.1", 0), Stuck if handler else
                                http.server.BaseHTTPRequestHandler)


def client():
    c = socket.create_connection(server.server_address)
    c.sendall(b"GET / HTTP/1.0\r\n\r\n")
    c.recv(10)


if handler:
    threading.Thread(target=client, daemon=True).start()
write_ready(sys.argv[1], {"pid": os.getpid(), "fd": server.fileno(),
                          "address": server.server_address})
server.serve_forever()  # MARK: serve
