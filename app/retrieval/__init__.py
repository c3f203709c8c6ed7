"""Retrieval modes by name. `default` fuses the modes `RetrievalConfig.default_parts` names,
the combination the evaluation harness measured best (see docs/results.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from graph.errors import NeoragError

if TYPE_CHECKING:
    from app.retrieval.base import RetrievalContext, Retriever


def _registry() -> dict[str, type[Retriever]]:
    from app.retrieval.baselines import Bm25Retriever, DenseRetriever, HybridRetriever
    from app.retrieval.bridge import BridgeRetriever
    from app.retrieval.composed import (
        DefaultRetriever,
        TigragLiteragRetriever,
        TigragSpectragRetriever,
    )
    from app.retrieval.literag import LiteragRetriever
    from app.retrieval.spectrag import SpectragRetriever
    from app.retrieval.tigrag import TigragRetriever

    return {
        "default": DefaultRetriever,
        "tigrag": TigragRetriever,
        "spectrag": SpectragRetriever,
        "tigrag-spectrag": TigragSpectragRetriever,
        "literag": LiteragRetriever,
        "bridge": BridgeRetriever,
        "tigrag+literag": TigragLiteragRetriever,
        "dense": DenseRetriever,
        "bm25": Bm25Retriever,
        "hybrid": HybridRetriever,
    }


def mode_names() -> list[str]:
    return list(_registry())


def build_retriever(mode: str, engine: RetrievalContext) -> Retriever:
    registry = _registry()
    if mode not in registry:
        raise NeoragError(f"unknown mode {mode!r}; choose one of {', '.join(mode_names())}")
    return registry[mode](engine)
