"""The process's runtime, below everything but the errors and the kernels:
``cores`` (the default thread count), ``config`` (the settings), ``threads`` (the
one thread policy and worker pool), ``async_calls`` (the executor the asyncio API
runs its calls on) and ``locks`` (the write locks of partial writes)."""
