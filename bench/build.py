"""PostgreSQL built by the lab: how long a build takes, and how long a second campaign waits for
the same build (found in the cache).

Builds the source (a tarball or tree; default: Debian's PostgreSQL 15 tarball that the tests
fetch into /var/tmp/pglab-build-cache/src) with the default options into a fresh, temporary
build cache (so the build is real, and nothing is left behind), ``--builds`` times, then
resolves the same ``server = { build = ... }`` ``--hits`` times. The last lines are
``build_seconds: X`` (median, with the steps' times) and
``build_cache_hit_seconds: X (95% CI a–b)``: the whole resolve of a cached build (hashing the
source, finding the build, checking its binaries run).

    .venv/bin/python bench/build.py [--source TARBALL] [--builds 1] [--hits 10]
"""

from __future__ import annotations

import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from _common import bootstrap_median_ci, open_lab, parser

from pglab.campaign.spec import BuildSpec, ServerSpec
from pglab.postgres import build
from pglab.postgres.sources import resolve

DEFAULT_SOURCE = Path("/var/tmp/pglab-build-cache/src")


def main() -> None:
    ap = parser(__doc__, point=False)
    ap.add_argument("--source", type=Path, default=None)
    ap.add_argument("--builds", type=int, default=1)
    ap.add_argument("--hits", type=int, default=10)
    args = ap.parse_args()
    source = args.source or max(DEFAULT_SOURCE.glob("postgresql-15_*.orig.tar.bz2"), default=None)
    if source is None:
        raise SystemExit(f"no tarball in {DEFAULT_SOURCE}: give --source (or run the tests once)")
    lab = open_lab(args)
    server = ServerSpec(source="build", build=BuildSpec(source=str(Path(source).absolute())))
    assert server.build is not None
    with tempfile.TemporaryDirectory(prefix="pglab-bench-builds-", dir="/var/tmp") as cache:
        os.chmod(cache, 0o755)
        os.environ["PGLAB_BUILDS"] = cache
        took = []
        for i in range(args.builds):
            for old in Path(cache).iterdir():  # every build from scratch
                shutil.rmtree(old) if old.is_dir() else old.unlink()
            t0 = time.monotonic()
            made = build.ensure(server.build, lab)
            took.append(time.monotonic() - t0)
            assert made.built_now
            steps = ", ".join(f"{k} {v:.1f} s" for k, v in made.info["step_seconds"].items())
            print(f"build {i + 1}: {took[-1]:.1f} s ({steps}); {made.info['compiler']}")
        hits = []
        for _ in range(args.hits):
            t0 = time.monotonic()
            b = resolve(server, lab)
            hits.append(time.monotonic() - t0)
            assert b.build is not None and b.build["key"] == made.key
    size = Path(source).stat().st_size / 2**20
    print(f"source: {source} ({size:.1f} MiB), {os.cpu_count()} CPUs")
    med, n = statistics.median(took), len(took)
    print(f"build_seconds: {med:.1f} (min {min(took):.1f}, max {max(took):.1f}, {n} build(s))")
    low, high = bootstrap_median_ci(hits)
    print(
        f"build_cache_hit_seconds: {statistics.median(hits):.3f} (95% CI {low:.3f}–{high:.3f}, "
        f"{len(hits)} resolves)"
    )


if __name__ == "__main__":
    main()
