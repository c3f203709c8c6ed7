"""How long `neorag ask` takes from the shell, against `neorag --help` in the same run.

    python -m bench cli --out bench/out/cli-ask.json

1. The bundled sample corpus is indexed into a temporary data dir (embedded backend), as
   `make run` indexes it; the model cache is the user's own, as after `make install`.
2. The questions are the README's `neorag ask "…"` examples and the sample set's first
   questions. Each round runs `neorag --help` (the floor: Python, the CLI's imports), then a
   cold `neorag ask QUESTION` (a new process: imports, query model, index, reader), then
   the same through a running `neorag api` (`NEORAG_API__URL`), started once over the same
   data dir and warmed. The three alternate round by round, so a change of the machine's
   speed meets all of them.
3. Per route: wall seconds (p50, p95, min, max) and peak RSS of the process (its own
   accounting, `wait4`); the ratio to `--help` of the same round (p50, p95); and
   questions per second one after another.

The temporary data dir is removed at the end; nothing else is written but `--out`.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
NEORAG = str(Path(sys.executable).with_name("neorag"))
SAMPLE = REPO / "sample_corpus"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    k = (len(ordered) - 1) * q / 100
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def readme_questions() -> list[str]:
    text = (REPO / "README.md").read_text()
    return list(dict.fromkeys(re.findall(r'^neorag ask "([^"]+)"', text, flags=re.M)))


def sample_questions(n: int) -> list[str]:
    lines = (SAMPLE / "wiki" / "questions.jsonl").read_text().splitlines()
    return [json.loads(line)["question"] for line in lines[:n]]


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, float, int]:
    """(wall seconds, peak RSS MiB, exit code) of one process, from its own accounting."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.stderr is not None:
        proc.stderr.close()
    return wall, usage.ru_maxrss / 1024, proc.returncode


def summary(walls: list[float], rss: list[float], floor: list[float] | None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "runs": len(walls),
        "wall_s_p50": round(percentile(walls, 50), 3),
        "wall_s_p95": round(percentile(walls, 95), 3),
        "wall_s_min": round(min(walls), 3),
        "wall_s_max": round(max(walls), 3),
        "questions_per_s": round(len(walls) / sum(walls), 2),
        "peak_rss_mb_p50": round(percentile(rss, 50), 1),
    }
    if floor is not None:
        ratios = [w / f for w, f in zip(walls, floor, strict=True)]
        out["ratio_to_help_p50"] = round(percentile(ratios, 50), 2)
        out["ratio_to_help_p95"] = round(percentile(ratios, 95), 2)
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_api(env: dict[str, str], log: Path) -> tuple[subprocess.Popen[bytes], str]:
    import httpx

    port = free_port()
    server = subprocess.Popen(
        [NEORAG, "api", "--port", str(port), "--workers", "1"],
        env=env,
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"neorag api exited; see {log}")
        try:
            if httpx.get(f"{url}/readyz", timeout=10).status_code == 200:
                return server, url
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    server.terminate()
    raise SystemExit("neorag api never became ready")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=20, help="rounds of the three routes")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    from bench.json_out import emit

    questions = readme_questions() + sample_questions(5)
    work = Path(tempfile.mkdtemp(prefix="neorag-cli-bench-"))
    env = {
        **os.environ,
        "NEORAG_BACKEND": "embedded",
        "NEORAG_DATA_DIR": str(work / "data"),
        "NEORAG_COLLECTION": "default",
        "NEORAG_API__URL": "",
        "NEORAG_LLM__PROVIDER": "none",
    }
    server = None
    try:
        subprocess.run([NEORAG, "ingest", str(SAMPLE)], env=env, check=True, capture_output=True)
        server, url = start_api(env, work / "api.log")
        remote = {**env, "NEORAG_API__URL": url}
        routes: dict[str, tuple[list[float], list[float]]] = {
            k: ([], []) for k in ("help", "cold", "api")
        }
        failures = 0
        for r in range(args.rounds + 1):  # the first round warms the file cache
            question = questions[r % len(questions)]
            runs = {
                "help": timed([NEORAG, "--help"], env),
                "cold": timed([NEORAG, "ask", question], env),
                "api": timed([NEORAG, "ask", question], remote),
            }
            failures += sum(code != 0 for _, _, code in runs.values())
            if r == 0:
                continue
            for name, (wall, rss, _) in runs.items():
                routes[name][0].append(wall)
                routes[name][1].append(rss)
    finally:
        if server is not None:
            server.terminate()
            server.wait(60)
        shutil.rmtree(work, ignore_errors=True)
    floor = routes["help"][0]
    load = os.getloadavg()
    emit(
        {
            "suite": "cli",
            "command": " ".join(["python -m bench cli", *sys.argv[1:]]),
            "corpus": "sample_corpus",
            "backend": "embedded",
            "questions": questions,
            "failures": failures,
            "help": summary(*routes["help"], None),
            "cold": summary(*routes["cold"], floor),
            "api": summary(*routes["api"], floor),
            "machine": {"cpus": os.cpu_count(), "load_average_at_end": [round(x, 2) for x in load]},
        },
        args.out,
    )


if __name__ == "__main__":
    main()
