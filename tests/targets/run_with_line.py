"""Three threads blocked at a `with` line that ends in its own colon (no
comment after it), on a lock the main thread took and keeps while it
joins them: run's group detail line quotes that line."""
import threading

lk = threading.Lock()
lk.acquire()


def worker():
    # (the line after the mark: no comment of its own)
    # MARK: with-line
    with lk:
        pass


threads = [threading.Thread(target=worker, name="w-%d" % i) for i in range(3)]
for t in threads:
    t.start()
for t in threads:
    t.join()
