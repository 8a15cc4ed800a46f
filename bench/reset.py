"""Dataset reset by copy vs pgbench -i: the reason datasets are initialized once.

Initializes a pgbench dataset at scale 50 (timed), then resets a working cluster from it several
times (timed). The last line is ``reset_ratio: X`` = median reset time / init time (target ≤ 0.2).

    .venv/bin/python bench/reset.py [--scale 50] [--resets 5]
"""

from __future__ import annotations

import shutil
import statistics

from _common import open_lab, parser

from pglab.campaign.spec import DatasetSpec, ServerSpec, dataset_key
from pglab.postgres import dataset
from pglab.postgres.sources import resolve


def main() -> None:
    ap = parser(__doc__, point=False)
    ap.add_argument("--scale", type=int, default=50)
    ap.add_argument("--resets", type=int, default=5)
    args = ap.parse_args()
    lab = open_lab(args)
    server = ServerSpec()
    spec = DatasetSpec(scale=args.scale)
    binaries = resolve(server, lab)
    # a fresh init every time, so the init time is measured, not read from an earlier run
    shutil.rmtree(lab.datasets / dataset_key(server, spec), ignore_errors=True)
    ds = dataset.ensure(lab, binaries, server, spec)
    target = lab.clusters / "w-bench-reset"
    times = [dataset.reset(lab, ds, target) for _ in range(args.resets)]
    shutil.rmtree(target, ignore_errors=True)
    print(
        f"scale {args.scale}: {ds.size_bytes / 2**20:.0f} MiB; pgbench -i (with initdb) "
        f"{ds.init_seconds:.2f} s; reset by copy median {statistics.median(times):.2f} s "
        f"(min {min(times):.2f}, max {max(times):.2f}, {args.resets} resets)"
    )
    print(f"reset_ratio: {statistics.median(times) / ds.init_seconds:.4f}")


if __name__ == "__main__":
    main()
