"""``pglab bisect FILE --good REF --bad REF``: the first commit that changed a point's figure."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.markup import escape

from pglab.analysis import evidence, spreads
from pglab.analysis.verdicts import Comparison
from pglab.bisect import search
from pglab.campaign import git_refs
from pglab.campaign import parse as campaigns
from pglab.cli import commands
from pglab.cli import fleet as fleet_cli
from pglab.cli import run as running
from pglab.cli.common import Where, console
from pglab.cli.evidence_view import print_evidence
from pglab.errors import BuildError, LabError
from pglab.fleet import queue as fleet_queue
from pglab.fleet.enqueue import enqueue
from pglab.lab import Lab

HELP = """\
The first commit between a good one and a bad one that changed the campaign's point, for a
campaign file whose [server] builds from a git clone (build = { git = "CLONE", ref = ... }).

Each step builds the commit in the middle of what is left and runs it beside the good and the
bad commits' builds, interleaved, in a campaign of its own (NAME@bisect-COMMIT, stored: run the
same command again to resume, every build kept in the cache); the middle is bad when its figure
is nearer the bad commit's, and why it changed follows: what else moved between the middle and
the end it differs from (waits, CPU functions, WAL, …: see pglab compare --help). A commit that
does not build is skipped (its neighbour is tried).
The file's [server] settings, [dataset] and [workload] make the point; its variants and matrix
are left out. Ends with the first bad commit, its subject and its effect (Δ%, 95% CI).

exit status: 0 the commit was found; 1 the ends do not differ, or skipped commits hide it.

examples:
  pglab bisect nightly.toml --good REL_17_0 --bad master
  pglab bisect patch.toml --good a1b2c3d --bad HEAD --repeats 5 --figure latency_avg_ms
  pglab bisect nightly.toml --good REL_17_0 --bad master --fleet --store postgresql://lab@db/pglab
"""


def add_parser(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    p = sub.add_parser(
        "bisect",
        parents=[common],
        help=commands.help_of("bisect"),
        description=HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("file", type=Path, help="campaign file whose [server] builds from git")
    p.add_argument("--good", required=True, help="a commit (or branch, tag) that is good")
    p.add_argument("--bad", required=True, help="a later commit that is bad")
    p.add_argument("--repeats", type=int, default=3, help="rounds per step (default 3)")
    p.add_argument("--figure", default="tps", help="tps (default) or a run metric")
    p.add_argument(
        "--fleet",
        action="store_true",
        help="run each step as jobs for `pglab worker` on lab hosts (PostgreSQL "
        "store): each step's builds are made here first (a commit that does not "
        "build is skipped here), the workers find them in their build cache or "
        "build them",
    )
    p.add_argument("--queue", default=fleet_queue.DEFAULT_QUEUE, help="--fleet: the queue")
    p.set_defaults(
        func=lambda a: run(
            Where.from_args(a),
            a.file,
            a.good,
            a.bad,
            a.repeats,
            a.figure,
            a.queue if a.fleet else None,
        )
    )


def run(
    where: Where,
    file: Path,
    good: str,
    bad: str,
    repeats: int = 3,
    figure: str = "tps",
    queue: str | None = None,
) -> int:
    """``queue``: the steps as fleet jobs on that queue (None: run here)."""
    if queue is not None:
        fleet_queue.require_postgres(where.store_url)
    camp = campaigns.load(file)
    build = camp.variants[0].server.build
    if build is None or build.commit is None:
        hint = '[server] build = { git = "../postgresql", ref = "master" }'
        raise LabError(f"{file}: its [server] does not build from git", hint=hint)
    clone = build.source
    ends = git_refs.commit_of(clone, good), git_refs.commit_of(clone, bad)
    commits = git_refs.commits_between(clone, *ends)
    if not commits:
        raise LabError(
            f"--good {good} is not an ancestor of --bad {bad} in {clone}",
            hint=f"git -C {clone} log --oneline {good}..{bad}",
        )
    console.print(
        f"bisecting [bold]{escape(camp.name)}[/] over {len(commits)} commit(s) after "
        f"{ends[0][:12]}, up to {ends[1][:12]}"
    )
    found = search.Search(commits)
    effect = None
    while (index := found.next()) is not None:
        judged = _step(where, camp, ends, commits[index], repeats, figure, queue)
        if judged is None:
            found.skipped.add(index)
            continue
        if effect is None and judged.good_vs_bad.verdict not in ("+", "-"):
            console.print(
                f"the good and bad commits do not differ here: "
                f"{_said(judged.good_vs_bad)}: nothing to bisect"
            )
            if judged.good_vs_bad.verdict == "?":
                more = f"--repeats {repeats + 2}"
                console.print(
                    f"  (? could not tell with {repeats} repeat(s): run again with "
                    f"{more}; the runs made so far are kept)"
                )
            return 1
        effect = judged.good_vs_bad
        found.record(index, judged.bad)
        console.print(
            f"  {commits[index][:12]} {escape(git_refs.subject_of(clone, commits[index]))}: "
            f"[bold]{'bad' if judged.bad else 'good'}[/] (against good "
            f"{_said(judged.middle_vs_good)}; against bad {_said(judged.middle_vs_bad)})",
            soft_wrap=True,
        )
        _why(where, search.step_name(camp.name, commits[index]), judged.bad)
    suspects = found.suspects()
    if len(suspects) != 1:
        console.print(
            f"skipped commits hide the first bad one among {len(suspects)}: "
            + ", ".join(c[:12] for c in suspects)
        )
        return 1
    first = suspects[0]
    console.print(
        f"first bad commit: [bold]{first}[/] {escape(git_refs.subject_of(clone, first))}"
        + (f"\n  effect of the bad commit against the good: {_said(effect)}" if effect else ""),
        soft_wrap=True,
    )
    return 0


def _step(
    where: Where,
    camp: campaigns.Campaign,
    ends: tuple[str, str],
    middle: str,
    repeats: int,
    figure: str,
    queue: str | None = None,
) -> search.Judged | None:
    """One step: the middle commit beside the ends, run (or resumed; on the fleet's ``queue``)
    and judged; None when it does not build or gave no value."""
    name = search.step_name(camp.name, middle)
    doc = search.step_document(
        camp.document, name, {"good": ends[0], "middle": middle, "bad": ends[1]}, repeats
    )
    step = campaigns.parse(doc, name, base_dir=camp.base_dir, source_file=camp.source_file)
    try:
        if queue is None:
            running.execute(where, step)
        else:
            _on_the_fleet(where, step, queue)
    except BuildError as exc:
        console.print(
            f"  {middle[:12]}: skipped, it does not build ({escape(exc.message)})", soft_wrap=True
        )
        return None
    with where.open(read_only=True) as store:
        runs = spreads.fingerprinted(store, store.list_runs(name))
        judged = search.judge(runs, store.get_campaign(name), figure)
    if judged is None and queue is not None:
        console.print(
            f"  {middle[:12]}: skipped, its step gave no value on the fleet: "
            + where.command("status", name),
            markup=False,
            soft_wrap=True,
        )
    return judged


def _on_the_fleet(where: Where, step: campaigns.Campaign, queue: str) -> None:
    """The step's builds made here (a BuildError when one fails), its runs still to do queued
    for the workers, followed to the end."""
    running.build_first(step, Lab.open(where.home))
    done = enqueue(where.store_url, where.home, step, queue)
    added, already = done.submitted.added, done.submitted.already
    console.print(
        f"  step {escape(step.name)}: {len(added)} job(s) queued on {escape(queue)} "
        f"for {done.runs} run(s)" + (f", {len(already)} queued already" if already else ""),
        soft_wrap=True,
    )
    if added or already:
        fleet_cli.follow(where, step.name)


def _why(where: Where, step: str, bad: bool) -> None:
    """What moved between the middle commit and the end it differs from (the good end when it
    behaves as the bad one, else the bad end): the step's evidence."""
    sides = ("good", "middle") if bad else ("middle", "bad")
    with where.open(read_only=True) as store:
        found = evidence.of_variants(store, step, *sides)
    print_evidence([(f"{sides[0]} → {sides[1]}", found)] if found else [], titled=True)


def _said(c: Comparison) -> str:
    ci = f" [{c.ci_low:+.1f}, {c.ci_high:+.1f}]" if c.ci_low is not None else ""
    return f"{c.delta_pct:+.1f}%{ci} {c.verdict}"
