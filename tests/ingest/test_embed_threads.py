"""The shared tokenizer is used only under its lock. Its padding/truncation state is not
thread-safe (two threads at once produce `ValueError: setting an array element with a
sequence`, about once in thousands of calls), so the invariant is checked directly: every
call through the query encoder and the token counter holds `Embedder.tokenizer_lock`."""

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
    emb.encode_queries(["build the ONNX encoder first"])
    fast = emb.query_encoder()
    assert fast is not None and fast._tokenizer_lock is emb.tokenizer_lock
    watched = _Watched(emb._tokenizer, emb.tokenizer_lock)
    original = (emb._tokenizer, fast._tokenizer)
    emb._tokenizer = fast._tokenizer = watched
    try:
        texts = [" ".join(["river"] * n) for n in range(1, 9)]
        with ThreadPoolExecutor(4) as pool:
            list(
                pool.map(
                    lambda t: (emb.encode_queries([t, t + " sea"]), emb.count_tokens(t)), texts * 4
                )
            )
    finally:
        emb._tokenizer, fast._tokenizer = original
    assert len(watched.held) == 64 and all(watched.held)
