"""Imported by thread_waits.py's "import" scenario: its import never
ends, so the importing thread holds importlib's lock on this module and
a second importer waits for it."""

import threading

threading.Event().wait()  # MARK: slow-import
