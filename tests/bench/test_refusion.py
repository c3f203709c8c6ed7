"""bench/refusion.py re-fuses the default's parts as the product does: its RRF is the
fusion module's (same scores, same tie order), and its variants only reorder."""

from __future__ import annotations

from app.retrieval.fusion import rrf
from bench.refusion import guaranteed, pages, rrf_scores, same_title


def _parts() -> dict[str, list[tuple[str, float]]]:
    tigrag = [(f"d{i}#0-a", 1.0 - i / 100) for i in range(12)]
    bridge = [(f"d{i}#0-a", 1.0 - i / 100) for i in (20, 0, 1, 2, 3, 4, 5)]
    return {"tigrag": tigrag, "bridge": bridge}


def test_its_rrf_is_the_products() -> None:
    parts = _parts()
    mine = rrf_scores(parts)
    product = rrf(parts, 60)
    assert [c for c, _ in mine] == [s.chunk_id for s in product]
    assert [round(s, 12) for _, s in mine] == [round(s.score, 12) for s in product]


def test_guaranteed_places_keep_every_page_and_move_a_parts_first_page_up() -> None:
    parts = _parts()
    row = {"parts": parts}
    shipped = [c for c, _ in rrf_scores(parts)]
    moved = guaranteed(m=1, keep=1)(row)
    assert sorted(moved) == sorted(shipped)  # a reordering, nothing lost or added
    assert "d20" not in pages(shipped)[:5]  # bridge's first page, which RRF ranks 7th
    assert "d20" in pages(moved)[:5]
    assert pages(moved)[0] == pages(shipped)[0]  # the kept first page stays first


def test_same_title_demotion_at_one_is_the_shipped_order() -> None:
    parts = _parts()
    data = {"titles": {f"d{i}": "one title" for i in range(30)}}
    assert same_title(data, 1.0)({"parts": parts}) == [c for c, _ in rrf_scores(parts)]
    demoted = same_title(data, 0.5)({"parts": parts})
    assert sorted(demoted) == sorted(c for c, _ in rrf_scores(parts))
