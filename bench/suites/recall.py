"""Recall suite: `neorag eval` on each dataset and backend, every mode and baseline.

    python -m bench recall                                  # the five sets, both backends
    python -m bench recall 2wiki-dev --backends embedded --modes default,tigrag
    python -m bench recall --ablation tigrag-hops0          # one named ablation
    python -m bench recall 2wiki-dev --distractors sqlite-docs --backends embedded
    python -m bench recall --ablation page-evidence-1 --dry-run   # print, do not run

Writes bench/out/eval-DATASET-BACKEND.json (eval-DATASET-with-OTHER-BACKEND.json with
distractors), or bench/out/ablation-NAME-DATASET.json for an ablation of
bench/ablations.json: the shipped configuration with the ablation's settings (environment
variables and `neorag eval` flags) on the datasets and modes it lists. A file is
overwritten by a rerun and stamped with the command, commit and date. Indexes live in
NEORAG_DATA_DIR (default .neorag/eval-cache), built once per corpus and configuration;
the Neo4j backend needs NEO4J_URI / NEO4J_PASSWORD (`make bench SUITE=recall` starts one).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from bench.json_out import stamped

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "bench" / "out"
ABLATIONS = REPO / "bench" / "ablations.json"
SHARED = ("2wiki-dev", "musique-200", "hotpotqa-200")
DOCS = ("sqlite-docs", "git-docs")
MODES = "default,tigrag,bridge,spectrag,tigrag-spectrag,literag,dense,bm25,hybrid"


def locate(name: str) -> Path:
    """A dataset folder by name: bundled under bench/datasets, else in NEORAG_DATASETS
    (default ../shared/datasets); a path is taken as it is."""
    if "/" in name:
        return Path(name)
    bundled = REPO / "bench" / "datasets" / name
    if bundled.is_dir():
        return bundled
    shared = Path(os.environ.get("NEORAG_DATASETS", REPO.parent / "shared" / "datasets"))
    return shared / name


def display(name: str) -> str:
    """A dataset or output as the docs write it, whatever NEORAG_DATASETS says here:
    bundled sets by their path in the checkout, shared ones under ../shared/datasets."""
    path = Path(name)
    if path.is_absolute() or name.startswith("."):
        try:
            return str(path.resolve().relative_to(REPO))
        except ValueError:
            return os.path.relpath(path.resolve(), REPO)
    if "/" in name:
        return name
    if (REPO / "bench" / "datasets" / name).is_dir():
        return f"bench/datasets/{name}"
    return f"../shared/datasets/{name}"


@dataclass
class Run:
    """One `neorag eval` invocation and the file it writes."""

    dataset: str
    backend: str
    modes: str
    out: Path
    distractors: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    args: list[str] = field(default_factory=list)

    def argv(self, where: Callable[[str], str] = lambda name: str(locate(name))) -> list[str]:
        mix = ["--distractors", where(self.distractors)] if self.distractors else []
        return [
            *["eval", where(self.dataset), *mix],
            *["--backend", self.backend, "--modes", self.modes, *self.args],
            *["--json", display(str(self.out))],
        ]

    def command(self) -> str:
        """The run as the docs write it (the same on every machine)."""
        env = [f"{k}={shlex.quote(v)}" for k, v in self.env.items()]
        return " ".join([*env, "neorag", *map(shlex.quote, self.argv(display))])

    def execute(self) -> int:
        env = {**os.environ, **self.env}
        env.setdefault("NEORAG_DATA_DIR", str(REPO / ".neorag" / "eval-cache"))
        cli = [sys.executable, "-m", "app.cli", *self.argv()[:-1], str(self.out)]
        code = subprocess.run(cli, env=env, cwd=REPO, check=False).returncode
        if code == 0:
            report = json.loads(self.out.read_text())
            report["command"] = self.command()
            self.out.write_text(json.dumps(stamped(report), indent=2) + "\n")
        return code


def suffix(dataset: str, distractors: str | None) -> str:
    return f"{dataset}-with-{distractors}" if distractors else dataset


def ablation_runs(name: str, out: Path = OUT) -> list[Run]:
    """The runs of one named ablation of bench/ablations.json."""
    registry = json.loads(ABLATIONS.read_text())["ablations"]
    if name not in registry:
        raise SystemExit(
            f"recall: no ablation {name!r}; bench/ablations.json has {sorted(registry)}"
        )
    spec = registry[name]
    if "retired" in spec:
        raise SystemExit(f"recall: ablation {name!r} is retired: {spec['retired']}")
    runs = []
    for entry in spec["datasets"]:
        dataset, _, distractors = entry.partition("+")
        runs.append(
            Run(
                dataset=dataset,
                backend=spec.get("backend", "embedded"),
                modes=spec["modes"],
                out=out / f"ablation-{name}-{suffix(dataset, distractors or None)}.json",
                distractors=distractors or None,
                env=dict(spec.get("env", {})),
                args=list(spec.get("args", [])),
            )
        )
    return runs


def plan(args: argparse.Namespace) -> list[Run]:
    if args.ablation:
        return ablation_runs(args.ablation, args.out)
    datasets = args.datasets or [*SHARED, *DOCS]
    return [
        Run(
            dataset=ds,
            backend=backend,
            modes=args.modes,
            out=args.out / f"eval-{suffix(Path(ds).name, args.distractors)}-{backend}.json",
            distractors=args.distractors,
        )
        for backend in args.backends.split(",")
        for ds in datasets
    ]


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("datasets", nargs="*", help="names or folders (default: the five sets)")
    p.add_argument("--backends", default="embedded,neo4j")
    p.add_argument("--modes", default=MODES)
    p.add_argument("--distractors", help="another dataset's corpus indexed beside each one")
    p.add_argument("--ablation", help="a named ablation of bench/ablations.json")
    p.add_argument("--out", type=Path, default=OUT, help="folder for the JSON (bench/out)")
    p.add_argument("--dry-run", action="store_true", help="print the commands only")
    return p


def run_all(runs: list[Run], dry_run: bool) -> int:
    for run in runs:
        print(run.command(), flush=True)
        if not dry_run and (code := run.execute()):
            return code
    return 0


def main() -> int:
    args = parser().parse_args()
    return run_all(plan(args), args.dry_run)
