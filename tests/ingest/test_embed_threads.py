"""The shared tokenizer is used only under its lock. Its padding/truncation state is not
thread-safe (two threads at once produce `ValueError: setting an array element with a
sequence`, about once in thousands of calls), so the invariant is checked directly: every
call through the bulk encoder and the token counter holds `Embedder.tokenizer_lock`. (The
query model runs its own tokenizers, configured once: tests/ingest/test_query_encoder.py.)"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

from ingest.embed import shared_embedder


class _Watched:
    """A tokenizer proxy that records whether the lock was held at each call."""

    def __init__(self, inner: Any, lock: Any) -> None:
        self.inner, self.lock, self.held = inner, lock, []

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.held.append(self.lock.locked())
        return self.inner(*args, **kwargs)


def test_every_tokenizer_call_holds_the_lock() -> None:
    emb = shared_embedder("all-MiniLM-L6-v2")
    watched = _Watched(emb._tokenizer, emb.tokenizer_lock)
    original = emb._tokenizer
    emb._tokenizer = watched
    try:
        texts = [" ".join(["river"] * n) for n in range(1, 9)]
        with ThreadPoolExecutor(4) as pool:
            list(pool.map(lambda t: (emb.encode([t, t + " sea"]), emb.count_tokens(t)), texts * 4))
    finally:
        emb._tokenizer = original
    assert len(watched.held) == 32 and all(watched.held)
