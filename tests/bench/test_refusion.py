"""bench/refusion.py re-fuses the default's parts as the product does (the product's RRF,
as deep as the default reads each part), and its variants only reorder."""

from __future__ import annotations

from bench.refusion import guaranteed, pages, rrf_scores, same_title


def _parts() -> dict[str, list[tuple[str, float]]]:
    tigrag = [(f"d{i}#0-a", 1.0 - i / 100) for i in range(12)]
    bridge = [(f"d{i}#0-a", 1.0 - i / 100) for i in (20, 0, 1, 2, 3, 4, 5)]
    return {"tigrag": tigrag, "bridge": bridge}


def test_it_fuses_as_deep_as_the_default_does() -> None:
    """The product's RRF over each part's first 30, as the default mode reads them: chunks
    both parts rank below 30 are not fused."""
    ranking = [(f"d{i}#0-a", 1.0 - i / 100) for i in range(40)]
    fused = [c for c, _ in rrf_scores({"tigrag": ranking, "bridge": ranking})]
    assert fused == [f"d{i}#0-a" for i in range(30)]


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
