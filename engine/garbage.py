"""When Python's cycle collector runs: between ticks, not in the middle of them.

CPython's collector starts whenever enough container objects have been made,
and now and then it walks every tracked object in the process. A loaded world
is millions of them (terrain rows, cell stores, agents, minds' memories), and a
tick makes hundreds of thousands of short-lived ones (perceptions, actions,
events, captures), so during a busy tick it kept walking the whole world over:
on the 1,000-agent bench a third of the tick went to it.

So the engine takes charge:

- `settle()` after loading: collect once, then freeze what survives. Frozen
  objects are never walked again; they are still freed by reference counting
  as usual, so only a cycle that dies among them would wait (see `full_every`).
- `tick_started()` pauses the collector; `tick_ended()` freezes what the tick
  made and kept alive, and resumes it. A tick's garbage is freed by reference
  counting as it goes: collecting after each tick of the 1,000-agent bench
  found no cycles at all, and cost 11-24 ms of a tick each time.
- Every `full_every` ticks everything is unfrozen, fully collected and frozen
  again, so the rare cycle that died since is reclaimed too.

The collector is process-wide (the observer's thread too), so it is paused only
for ticks that wait on nothing: every mind answering at once (the offline mind, a
replay), where the measurement above was made. A tick that waits on a model lasts
seconds to minutes, the process's other threads go on meanwhile, and what it keeps
alive includes live network objects; such a tick (`tick_started(pause=False)`)
leaves the collector as Python runs it, and freezes nothing.
"""

from __future__ import annotations

import gc


class TickCollector:
    def __init__(self, *, full_every: int = 200) -> None:
        self.full_every = full_every
        self._ticks = 0
        self._paused = False
        self._pausing = False

    def settle(self) -> None:
        """After the world is loaded: collect, and freeze what is left."""
        gc.collect()
        gc.freeze()

    def tick_started(self, *, pause: bool = True) -> None:
        """A tick begins; `pause`: it waits on nothing (see the module's docstring)."""
        self._pausing = pause
        self._paused = pause and gc.isenabled()
        if self._paused:
            gc.disable()

    def tick_ended(self) -> None:
        if not self._pausing:
            return
        self._ticks += 1
        if self.full_every and self._ticks % self.full_every == 0:
            gc.unfreeze()
            gc.collect()
            gc.freeze()
        else:
            gc.freeze()
        if self._paused:
            gc.enable()
            self._paused = False
