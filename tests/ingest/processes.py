"""Process-tree facts from /proc (Linux), for tests that kill ingests and check that no
worker process outlives them."""

from __future__ import annotations

import time
from pathlib import Path

PROC = Path("/proc")


def _stat(pid: int) -> tuple[str, int] | None:
    """(state, parent pid), or None once the process is gone."""
    try:
        text = (PROC / str(pid) / "stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    fields = text[text.rindex(")") + 2 :].split()
    return fields[0], int(fields[1])


def descendants(pid: int) -> list[int]:
    """Every live process below `pid` (children, their children, ...)."""
    parents: dict[int, int] = {}
    for entry in PROC.iterdir():
        if entry.name.isdigit() and (stat := _stat(int(entry.name))) and stat[0] != "Z":
            parents[int(entry.name)] = stat[1]
    found, frontier = [], [pid]
    while frontier:
        parent = frontier.pop()
        children = [p for p, pp in parents.items() if pp == parent]
        found += children
        frontier += children
    return found


def alive(pids: list[int]) -> list[int]:
    return [p for p in pids if (stat := _stat(p)) is not None and stat[0] != "Z"]


def wait_gone(pids: list[int], timeout: float) -> list[int]:
    """The processes of `pids` still alive after up to `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while (left := alive(pids)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


def spawned_workers(pid: int) -> list[int]:
    """The multiprocessing workers below `pid` (not its resource tracker)."""
    out = []
    for child in descendants(pid):
        try:
            cmdline = (PROC / str(child) / "cmdline").read_bytes()
        except (FileNotFoundError, ProcessLookupError):
            continue
        if b"spawn_main" in cmdline:
            out.append(child)
    return out
