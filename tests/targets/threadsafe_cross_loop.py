"""Two handlers on the main loop each await, through wrap_future(), a
coroutine run_coroutine_threadsafe() runs on a second loop's thread: a
query that takes a lock and waits on an Event nobody sets (the second
waits for the lock).  The hang is on the second loop; the handlers only
wait for it."""
import asyncio
import threading


class Backend:
    def __init__(self):
        self.loop = asyncio.new_event_loop()
        self.up = threading.Event()
        threading.Thread(target=self.serve, name="backend-loop",
                         daemon=True).start()
        self.up.wait()

    def serve(self):
        asyncio.set_event_loop(self.loop)
        self.lock = asyncio.Lock()
        self.never = asyncio.Event()
        self.up.set()
        self.loop.run_forever()

    async def query(self):
        async with self.lock:
            await self.never.wait()  # MARK: backend-waits

    def submit(self):
        return asyncio.wrap_future(
            asyncio.run_coroutine_threadsafe(self.query(), self.loop))


async def handler(backend):
    return await backend.submit()  # MARK: handler-awaits


async def main():
    backend = Backend()
    await asyncio.gather(handler(backend), handler(backend))


loop = asyncio.new_event_loop()
loop.run_until_complete(main())
