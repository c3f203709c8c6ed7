"""Dotted-path overrides of the settings (CLI ablation flags, UI controls)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, TypeAdapter, ValidationError

from graph.errors import NeoragError


def with_overrides(model: BaseModel, overrides: dict[str, Any]) -> Any:
    """`{"retrieval.tigrag.hops": 1}` → a copy of `model` with that field changed (and
    validated)."""
    for path, value in overrides.items():
        model = _set(model, path.split("."), value)
    return model


def _set(model: BaseModel, parts: list[str], value: Any) -> BaseModel:
    head = parts[0]
    field = type(model).model_fields.get(head)
    if field is None:
        raise NeoragError(f"unknown setting {head!r}")
    if len(parts) > 1:
        return model.model_copy(update={head: _set(getattr(model, head), parts[1:], value)})
    try:
        kind = Annotated[field.annotation, *field.metadata] if field.metadata else field.annotation
        checked = TypeAdapter(kind).validate_python(value)
    except ValidationError as exc:
        raise NeoragError(f"invalid value {value!r} for {head}: {exc.errors()[0]['msg']}") from None
    return model.model_copy(update={head: checked})


def ablation_overrides(
    no_bm25: bool,
    centrality: str | None,
    no_rerank: bool,
    hops: int | None,
    beta: int | None,
    th: float | None,
    budget: int | None,
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if no_bm25:
        out["retrieval.tigrag.use_bm25"] = False
    if centrality:
        out["retrieval.tigrag.centrality"] = centrality
    if no_rerank:
        out["retrieval.tigrag.rerank"] = False
    if hops is not None:
        out["retrieval.tigrag.hops"] = hops
    if beta is not None:
        out["retrieval.tigrag.beta"] = beta
    if th is not None:
        out["retrieval.tigrag.pool_mass"] = th
    if budget is not None:
        out["retrieval.spectrag.budget_tokens"] = budget
    return out
