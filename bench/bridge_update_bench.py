"""The bridge graph of a new index version: derived from the previous version's graph
(`update_bridge_graph`) against built from every chunk (`build_bridge_graph`).

    python bench/bridge_update_bench.py --collection eval-2wiki-dev --changed 1,10,100

For each N, the "previous version" is the graph of the collection without N of its chunks
(chosen evenly) and the update brings it to the full index: those chunks are read and
matched, and the names only they give are looked for in the other chunks, which is the work
of N chunks added by a re-ingest. The result is checked equal to the fresh build. Times are
wall-clock and CPU seconds, the median of `--repeat` runs each.
"""

from __future__ import annotations

import argparse
import copy
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))


class _Subset:
    """The engine's dense index seen without some chunks (the previous version's ids)."""

    def __init__(self, dense: object, ids: list[str]) -> None:
        self._dense = dense
        self.ids = ids


def timed(fn, repeat: int) -> tuple[float, float, object]:  # type: ignore[no-untyped-def]
    walls, cpus, out = [], [], None
    for _ in range(repeat):
        w, c = time.perf_counter(), time.process_time()
        out = fn()
        walls.append(time.perf_counter() - w)
        cpus.append(time.process_time() - c)
    return statistics.median(walls), statistics.median(cpus), out


def main() -> None:
    from json_out import emit

    from app.engine import Engine
    from app.retrieval.bridge_graph import build_bridge_graph, update_bridge_graph
    from app.settings import Settings

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--collection", required=True)
    ap.add_argument("--changed", default="1,10,100")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", type=Path, default=REPO / "bench" / "out" / "bridge-update.json")
    args = ap.parse_args()
    settings = Settings(collection=args.collection)
    engine = Engine(settings)
    cfg = settings.retrieval.bridge
    ids = list(engine.dense.ids)
    wall, cpu, fresh = timed(
        lambda: build_bridge_graph(engine, cfg.max_name_words, cfg.capitalised), args.repeat
    )
    rows = []
    for n in (int(x) for x in args.changed.split(",")):
        step = max(1, len(ids) // n)
        dropped = set(ids[::step][:n])
        before = copy.copy(engine)
        before.dense = _Subset(engine.dense, [c for c in ids if c not in dropped])  # type: ignore[assignment]
        old = build_bridge_graph(before, cfg.max_name_words, cfg.capitalised)
        u_wall, u_cpu, updated = timed(
            lambda old=old: update_bridge_graph(old, engine, cfg.max_name_words), args.repeat
        )
        same = (
            updated.names == fresh.names
            and updated.chunk_ids == fresh.chunk_ids
            and (updated.mentions != fresh.mentions).nnz == 0
            and (updated.titles != fresh.titles).nnz == 0
        )
        rows.append(
            {
                "changed_chunks": len(dropped),
                "update_seconds": round(u_wall, 3),
                "update_cpu_seconds": round(u_cpu, 3),
                "speed_up": round(wall / u_wall, 1),
                "equal_to_fresh_build": same,
            }
        )
        print(rows[-1], flush=True)
    engine.close()
    emit(
        {
            "collection": args.collection,
            "chunks": len(ids),
            "names": len(fresh.names),
            "fresh_build_seconds": round(wall, 3),
            "fresh_build_cpu_seconds": round(cpu, 3),
            "updates": rows,
            "command": " ".join(["python", *sys.argv]),
        },
        args.out,
    )


if __name__ == "__main__":
    main()
