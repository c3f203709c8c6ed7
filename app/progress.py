"""Rich progress bars for the CLI, behind the ingest Progress protocol."""

from __future__ import annotations

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)


class RichProgress:
    def __init__(self, console: Console) -> None:
        self._bars = Progress(
            SpinnerColumn(),
            TextColumn("{task.description:<16}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=console,
            transient=False,
        )
        self._tasks: dict[str, TaskID] = {}

    def __enter__(self) -> RichProgress:
        self._bars.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._bars.stop()

    def start(self, stage: str, total: int | None) -> None:
        self._tasks[stage] = self._bars.add_task(stage, total=total)

    def advance(self, stage: str, n: int = 1) -> None:
        if stage not in self._tasks:
            self.start(stage, None)
        self._bars.advance(self._tasks[stage], n)

    def finish(self, stage: str) -> None:
        task = self._tasks.get(stage)
        if task is not None:
            t = self._bars.tasks[self._tasks[stage]]
            self._bars.update(task, total=t.completed or 1, completed=t.completed or 1)
