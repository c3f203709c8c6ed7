"""The capacity model's database-serving fit: the replica budget is passed where the
in-process API's memory, fitted through the measured sizes, reaches it."""

from __future__ import annotations

from bench.suites.capacity import REPLICA_MB, database_serving_model


def _size(chunks: int, rss: float, database_rss: float | None) -> dict:
    size = {"chunks": chunks, "serving_rss_mb": rss}
    if database_rss is not None:
        size["database_serving"] = {
            "engine_warm_up_seconds": 5.0,
            "serving_rss_mb": database_rss,
            "served_p50_ms": 100.0,
        }
    return size


def test_in_process_memory_passes_the_budget_where_its_line_says() -> None:
    # In process: 300 MB at 10k, 3,000 MB at 100k (linear, 0.03 MB per chunk).
    sizes = [_size(10_000, 300.0, 250.0), _size(100_000, 3000.0, 260.0)]
    model = database_serving_model(sizes, [1_000_000])
    assert model["in_process_passes_replica_budget_at"] == round(REPLICA_MB / 0.03)
    (row,) = model["rows"]
    assert 250.0 < row["serving_rss_mb"] < 400.0  # the database route stays nearly flat
    assert [m["chunks"] for m in model["measured"]] == [10_000, 100_000]


def test_no_database_sizes_no_model() -> None:
    assert database_serving_model([_size(10_000, 300.0, None)], [1_000_000]) == {}
