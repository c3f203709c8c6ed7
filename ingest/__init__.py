"""Indexing: loaders, chunkers, tokens, entities, edges and the incremental runner."""

import os

# Passive OpenMP waits: with spinning threads (the default), torch on 2 cores slows 20-50x
# as soon as another process wants a core (measured: 10 ms → 420 ms for one query embedding).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
