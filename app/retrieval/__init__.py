"""Retrieval modes by name. `default` is the combination the evaluation harness measured best
(see README, Results)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from graph.errors import NeoragError

if TYPE_CHECKING:
    from app.engine import Engine
    from app.retrieval.base import Retriever


def _registry() -> dict[str, type[Retriever]]:
    from app.retrieval.baselines import Bm25Retriever, DenseRetriever, HybridRetriever
    from app.retrieval.composed import TigragLiteragRetriever, TigragSpectragRetriever
    from app.retrieval.literag import LiteragRetriever
    from app.retrieval.spectrag import SpectragRetriever
    from app.retrieval.tigrag import TigragRetriever

    return {
        "tigrag": TigragRetriever,
        "spectrag": SpectragRetriever,
        "tigrag-spectrag": TigragSpectragRetriever,
        "literag": LiteragRetriever,
        "tigrag+literag": TigragLiteragRetriever,
        "dense": DenseRetriever,
        "bm25": Bm25Retriever,
        "hybrid": HybridRetriever,
    }


DEFAULT_MODE = "tigrag+literag"


def mode_names() -> list[str]:
    return ["default", *_registry()]


def build_retriever(mode: str, engine: Engine) -> Retriever:
    registry = _registry()
    name = DEFAULT_MODE if mode == "default" else mode
    if name not in registry:
        raise NeoragError(f"unknown mode {mode!r}; choose one of {', '.join(mode_names())}")
    retriever = registry[name](engine)
    if mode == "default":
        retriever.name = "default"
    return retriever
