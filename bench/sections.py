"""The rendered blocks of docs/results.md (`{{section:NAME}}` in its template) and the
README's headline table: each table names its file, command, commit and date."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.figures import PUBLISHED, REPO, Figures, grid, provenance, rounded, wrap
from bench.sections_docs import docs_halves, fusion_replay
from bench.sections_scale import capacity_serving, scale
from bench.suites.recall import Run

ABLATIONS = REPO / "bench" / "ablations.json"

SHARED = ("2wiki-dev", "musique-200", "hotpotqa-200")
DOCS = ("sqlite-docs", "git-docs")
BACKENDS = ("embedded", "neo4j")
BASELINES = ("dense", "bm25", "hybrid")

COLUMNS = [
    ("recall@2", "R@2"),
    ("recall@5", "R@5"),
    ("recall@10", "R@10"),
    ("mrr", "MRR"),
    ("answer@5", "answer@5"),
    ("context_tokens_mean", "context tokens"),
    ("latency_ms_p50", "p50 ms"),
    ("latency_ms_p95", "p95 ms"),
]
ANSWER_COLUMNS = [
    ("em", "EM"),
    ("f1", "F1"),
    ("answer_hit", "answer_hit"),
    ("answer_ms_p50", "answer p50 ms"),
]


def eval_command(name: str, report: dict[str, Any], extra: tuple[str, ...] = ()) -> str:
    """What the recall or answers suite runs to write this file (for files from before
    the suites recorded their command)."""
    run = Run(
        dataset=report["dataset"],
        backend=report["backend"],
        modes=",".join(report["results"]),
        out=Path("bench/out") / f"{name}.json",
        distractors=report.get("distractors"),
        args=list(extra),
    )
    return run.command()


def table(report: dict[str, Any], name: str | None = None, command: str | None = None) -> str:
    """Every mode of one `neorag eval --json` file, one row per mode."""
    head = (
        f"**{report['dataset']}**, {report['backend']} backend, {report['questions']} questions, "
        f"indexed in {report['index_seconds']:.0f} s"
    )
    answered = any(row.get("em") is not None for row in report["results"].values())
    columns = COLUMNS + (ANSWER_COLUMNS if answered else [])
    lines = [head, "", "| mode | " + " | ".join(h for _, h in columns) + " |"]
    lines.append("|---|" + "---:|" * len(columns))
    for mode, row in report["results"].items():
        cells = [rounded(row.get(k), key=k) for k, _ in columns]
        lines.append(f"| {mode} | " + " | ".join(cells) + " |")
    if name:
        lines += ["", provenance(name, report, command or eval_command(name, report))]
    return "\n".join(lines)


def held_out_rows(everything: dict[str, Any], first: dict[str, Any]) -> list[list[str]]:
    """A run over all questions split into its first n and the rest: each metric of the
    rest is (N·all − n·first) / (N − n)."""
    keys = [k for k, _ in ANSWER_COLUMNS[:3]]
    n_all, n_first = everything["questions"], first["questions"]
    rest = n_all - n_first
    rows = []
    for mode, row in everything["results"].items():
        head = first["results"][mode]
        tail = {k: (n_all * row[k] - n_first * head[k]) / rest for k in keys}
        for label, values in (
            (f"first {n_first} (fitted)", head),
            (f"last {rest} (held out)", tail),
        ):
            rows.append([everything["dataset"], label] + [rounded(values[k], 1) for k in keys])
    return rows


def held_out(paths: list[Path]) -> str:
    lines = ["| dataset | questions | " + " | ".join(h for _, h in ANSWER_COLUMNS[:3]) + " |"]
    lines.append("|---|---|" + "---:|" * 3)
    for path in paths:
        everything = json.loads(path.read_text())
        first = json.loads(path.with_name(path.stem + "-first100.json").read_text())
        lines += ["| " + " | ".join(row) + " |" for row in held_out_rows(everything, first)]
    return "\n".join(lines)


def headline(figures: Figures) -> str:
    """R@5 of the default mode on each set against the baselines and the published
    systems (bench/published.json): the README's table."""
    published = json.loads(PUBLISHED.read_text())
    systems = published["systems"]
    header = ["dataset", "default, embedded", "default, Neo4j", *BASELINES, *systems, "goal"]
    rows = []
    for ds in SHARED + DOCS:
        embedded = figures.get(f"eval-{ds}-embedded")["results"]
        neo4j = figures.get(f"eval-{ds}-neo4j")["results"]
        label = ds + (" (pages)" if ds in DOCS else "")
        row = [label, f"**{rounded(embedded['default']['recall@5'])}**"]
        row.append(rounded(neo4j["default"]["recall@5"]))
        row += [rounded(embedded[b]["recall@5"]) for b in BASELINES]
        row += [rounded(s["recall@5"].get(ds)) for s in systems.values()]
        row.append(rounded(published["goals"]["recall@5"].get(ds)))
        rows.append(row)
    sources = "; ".join(f"{n}: {s['source']}" for n, s in systems.items())
    runs = [figures.get(f"eval-{ds}-{b}") for ds in SHARED + DOCS for b in BACKENDS]
    commit = ", ".join(sorted({r["commit"] for r in runs if r.get("commit")}))
    date = ", ".join(sorted({r["date"] for r in runs if r.get("date")}))
    when = f"{commit or 'commit not recorded'} · {date or 'date not recorded'}"
    return "\n".join(
        [
            wrap(
                "Recall@5 (percent) of the default mode, no LLM anywhere, against the "
                "baselines and two published LLM-built graph RAG systems:"
            ),
            "",
            grid(header, rows),
            "",
            wrap(
                "neorag: the first 200 questions of each shared set (pages for the documentation "
                "corpora), `bench/out/eval-DATASET-BACKEND.json` from `python -m bench recall` "
                f"({when}). Published figures are on the full 1,000-question sets, with an LLM "
                f"extracting the graph at index time ({sources}); goals: "
                f"{published['goals']['source']}. They come from `bench/published.json`, so the "
                "comparison is indicative, not like for like. " + held_out_recall(figures)
            ),
        ]
    )


def held_out_recall(figures: Figures) -> str:
    """The sentence that says which of the headline's questions were tuned on: the bridge
    walk's parameters on the first 100 of two sets, so their last 100 are held out."""
    sweep = figures.get("findings/bridge-params-default")
    rows = {ds: sweep["sets"][ds]["shipped"] for ds in ("musique-200", "hotpotqa-200")}
    halves = "; ".join(
        f"{ds} {rounded(r['first 100']['R@5'])} on the first 100 and "
        f"{rounded(r['last 100']['R@5'])} on the held-out last 100"
        for ds, r in rows.items()
    )
    return (
        "The defaults were chosen on these same questions, the bridge walk's parameters on "
        "the first 100 of musique-200 and hotpotqa-200; the default's R@5 by half: "
        f"{halves} (`bench/out/findings/bridge-params-default.json`, commit "
        f"{sweep.get('commit') or 'not recorded'})."
    )


def eval_tables(figures: Figures) -> str:
    blocks = []
    for ds in SHARED + DOCS:
        for backend in BACKENDS:
            name = f"eval-{ds}-{backend}"
            blocks.append(table(figures.get(name), name))
    return "\n\n".join(blocks)


def mixed_tables(figures: Figures) -> str:
    names = ["eval-2wiki-dev-with-sqlite-docs-embedded", "eval-sqlite-docs-with-2wiki-dev-embedded"]
    return "\n\n".join(table(figures.get(n), n) for n in names)


ANSWERS = "answer-{}-embedded"


def answers(figures: Figures) -> str:
    header = ["dataset", "questions", "answer@5", "EM", "F1", "answer_hit", "answer p50 ms"]
    rows, sources = [], []
    for ds in SHARED + DOCS:
        name = ANSWERS.format(ds)
        report = figures.get(name)
        row = report["results"]["default"]
        keys = ["answer@5", "em", "f1", "answer_hit", "answer_ms_p50"]
        rows.append([ds, str(report["questions"])] + [rounded(row[k], 1) for k in keys])
        sources.append(
            provenance(name, report, eval_command(name, report, ("--answer", "offline")))
        )
    return grid(header, rows) + "\n\n" + "\n".join(f"- {s}" for s in sources)


def held_out_section(figures: Figures) -> str:
    header = ["dataset", "questions", "EM", "F1", "answer_hit"]
    rows, sources = [], []
    for ds in ("musique-200", "hotpotqa-200"):
        name = ANSWERS.format(ds)
        everything, first = figures.get(name), figures.get(name + "-first100")
        rows += held_out_rows(everything, first)
        cmd = eval_command(name + "-first100", first, ("--answer", "offline", "--limit", "100"))
        sources.append(provenance(name + "-first100", first, cmd))
    return grid(header, rows) + "\n\n" + "\n".join(f"- {s}" for s in sources)


def ablations(figures: Figures) -> str:
    """Every named ablation of bench/ablations.json, grouped, one row per dataset × mode."""
    registry = json.loads(ABLATIONS.read_text())["ablations"]
    keys = ["recall@2", "recall@5", "recall@10", "mrr", "answer@5", "context_tokens_mean"]
    keys.append("latency_ms_p50")
    header = ["ablation", "setting", "dataset", "mode", "R@2", "R@5", "R@10", "MRR"]
    header += ["answer@5", "context tokens", "p50 ms", "commit · date"]
    recorded = False
    groups: dict[str, list[list[str]]] = {}
    for name, spec in registry.items():
        setting = " ".join(
            [f"`{k}={v}`" for k, v in spec.get("env", {}).items()]
            + [f"`{' '.join(spec.get('args', []))}`"] * bool(spec.get("args"))
        )
        setting = setting or f"retired: {spec.get('retired', '')}"
        for ds in spec["datasets"]:
            file = f"ablation-{name}-{ds.replace('+', '-with-')}"
            report = figures.get(file)
            recorded = recorded or bool(report.get("commit") or report.get("date"))
            when = f"{report.get('commit') or 'commit not recorded'} · "
            when += report.get("date") or "date not recorded"
            for mode, row in report["results"].items():
                cells = [rounded(row.get(k), key=k) for k in keys]
                rows = groups.setdefault(spec["group"], [])
                label = f"{name}: {spec['about']}"
                rows.append([label, setting, ds.replace("+", " + "), mode, *cells, when])
    if not recorded:  # no file says when it ran: one sentence instead of a column of "–"
        header = header[:-1]
        groups = {g: [r[:-1] for r in rows] for g, rows in groups.items()}
    blocks = [f"**{group}**\n\n" + grid(header, rows) for group, rows in groups.items()]
    note = "" if recorded else " None of these files records its commit or date."
    return "\n\n".join(blocks) + (
        "\n\nEach row: `bench/out/ablation-NAME-DATASET.json`, written by `python -m bench "
        "recall --ablation NAME` (bench/ablations.json: the setting shown on the shipped "
        "configuration, `neorag eval DATASET --backend embedded --modes MODES`; the Neo4j "
        f"row with `--backend neo4j`).{note}"
    )


def ingest(figures: Figures) -> str:
    name = "ingest-2wiki-dev"
    report = figures.get(name)
    header = ["backend", "documents", "chunks", "ingest s", "embedding only s", "ingest / embed"]
    header += ["peak RSS MB"]
    rows = []
    for r in report["results"]:
        keys = ["documents", "chunks", "ingest_seconds", "embedding_only_seconds", "ratio"]
        cells = [rounded(r.get(k), 2 if k == "ratio" else None) for k in keys]
        rows.append([r["backend"], *cells, rounded(r.get("peak_rss_mb"))])
    stages = sorted({s for r in report["results"] for s in r.get("stage_seconds", {})})
    stage_rows = [
        [s] + [rounded(r.get("stage_seconds", {}).get(s)) for r in report["results"]]
        for s in stages
    ]
    stage_header = ["stage s"] + [r["backend"] for r in report["results"]]
    return "\n\n".join(
        [grid(header, rows), grid(stage_header, stage_rows), provenance(name, report)]
    )


def workers(figures: Figures) -> str:
    name = "ingest-workers-hotpotqa-800"
    report = figures.get(name)
    header = ["workers", "ingest s", "process CPU s", "peak tree RSS MB", "load average (mean)"]
    rows = [
        [
            str(r["workers"]),
            rounded(r["ingest_seconds"]),
            rounded(r.get("process_cpu_seconds")),
            rounded(r.get("peak_tree_rss_mb")),
            rounded(r.get("load_average_1m", {}).get("mean"), 2),
        ]
        for r in report["results"]
    ]
    return grid(header, rows) + "\n\n" + provenance(name, report)


def ppr(figures: Figures) -> str:
    name = "ppr-2wiki-dev"
    report = figures.get(name)
    header = ["backend", "queries", "p50 ms", "p95 ms", "queries/s", "candidate PPR p50 ms"]
    rows = []
    for backend in BACKENDS:
        r = report[backend]
        keys = ["latency_ms_p50", "latency_ms_p95", "throughput_qps", "candidate_ppr_ms_p50"]
        rows.append([backend, str(r["queries"])] + [rounded(r[k]) for k in keys])
    return grid(header, rows) + "\n\n" + provenance(name, report)


def load(figures: Figures) -> str:
    header = ["run", "concurrency", "requests", "errors", "requests/s", "p50 ms", "p95 ms"]
    header.append("p99 ms")
    rows, sources = [], []
    for name in ("load-embedded", "load-neo4j"):
        report = figures.get(name)
        levels = [*report["levels"], {**report["during_reingest"], "label": "during re-ingest"}]
        for level in levels:
            rows.append(
                [
                    f"{name} {level.get('label', '')}".strip(),
                    str(level["concurrency"]),
                    str(level["requests"]),
                    str(level["errors"]),
                    rounded(level["throughput_rps"]),
                    rounded(level["p50_ms"]),
                    rounded(level["p95_ms"]),
                    rounded(level["p99_ms"]),
                ]
            )
        sources.append(provenance(name, report))
    return grid(header, rows) + "\n\n" + "\n".join(f"- {s}" for s in sources)


def support(figures: Figures) -> str:
    """When the reader's short answer is shown: each set's halves at the shipped threshold
    (fitted on the even halves), against showing every pick."""
    report = figures.get("abstain")
    header = ["set", "half", "shown / questions", "answer_precision", "answer_coverage"]
    header += ["precision if always shown", "nonsense without a short answer %"]
    rows = []
    for entry in report["sets"]:
        for half in ("even", "odd"):
            at = entry["at_shipped"][half]
            always = entry["always_shown"][half]
            label = "even (fitted)" if half == "even" else "odd (held out)"
            rows.append(
                [
                    entry["dataset"],
                    label,
                    f"{at['shown']} / {at['questions']}",
                    rounded(at["answer_precision"]) if at["shown"] else "–",
                    rounded(at["answer_coverage"]),
                    rounded(always["answer_precision"]),
                    rounded(entry["nonsense_abstained"]["shipped"]) if half == "even" else "",
                ]
            )
    return grid(header, rows) + "\n\n" + provenance("abstain", report)


def cli(figures: Figures) -> str:
    """`neorag ask` from the shell: cold, through a running API, and `--help` beside them."""
    report = figures.get("cli-ask")
    header = ["route", "runs", "p50 s", "p95 s", "min s", "max s", "× --help p50", "× --help p95"]
    header += ["questions/s", "peak RSS MiB"]
    labels = {
        "help": "`neorag --help`",
        "cold": "`neorag ask` (a new process)",
        "api": "`neorag ask` with `NEORAG_API__URL`",
    }
    rows = []
    for key, label in labels.items():
        r = report[key]
        rows.append(
            [
                label,
                str(r["runs"]),
                rounded(r["wall_s_p50"], 2),
                rounded(r["wall_s_p95"], 2),
                rounded(r["wall_s_min"], 2),
                rounded(r["wall_s_max"], 2),
                rounded(r.get("ratio_to_help_p50", 1.0), 2),
                rounded(r.get("ratio_to_help_p95", 1.0), 2),
                rounded(r["questions_per_s"], 2),
                rounded(r["peak_rss_mb_p50"]),
            ]
        )
    return grid(header, rows) + "\n\n" + provenance("cli-ask", report)


FINDINGS = REPO / "bench" / "findings.json"


def findings_files(figures: Figures) -> str:
    """The records under bench/out/findings/: what wrote each and when."""
    registry = json.loads(FINDINGS.read_text())["files"]
    header = ["file", "written by (removed)", "command", "commit · date"]
    rows = []
    for name, spec in registry.items():
        report = figures.get(f"findings/{name}")
        when = " · ".join(filter(None, [report.get("commit"), report.get("date")]))
        when = when or f"committed at {spec['committed']}"
        command = f"`{report['command']}`" if report.get("command") else "not recorded"
        rows.append([f"`{name}.json`", f"`{spec['script']}`", command, when])
    return grid(header, rows)


SECTIONS: dict[str, Callable[[Figures], str]] = {
    "headline": headline,
    "eval-tables": eval_tables,
    "mixed-tables": mixed_tables,
    "docs-halves": docs_halves,
    "fusion-replay": fusion_replay,
    "answers": answers,
    "held-out": held_out_section,
    "ablations": ablations,
    "ingest": ingest,
    "ingest-workers": workers,
    "ppr": ppr,
    "scale": scale,
    "capacity-serving": capacity_serving,
    "load": load,
    "cli": cli,
    "support": support,
    "findings-files": findings_files,
}
