"""How the recipe's teacher values scale with workers: local processes and Ray nodes.

The same shards (a student's self-play games, valued by the teacher's 2-ply search) run
on each backend in turn; each set runs twice and the second, warm, run is timed (the
first loads the models and the compiled kernels in every worker). The simulated
clusters are Ray's cluster_utils.Cluster: several one-CPU nodes, each a raylet of its
own, on this machine, as a real cluster of small machines would be.

    python -m scripts.lab.recipe_scaling --shards 8 --games 2 --nodes 2 4
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from models.paths import DEFAULT_MODEL
from training.recipe_tasks import ModelBlob, ProcessExecutor, RayExecutor, SerialExecutor, derived_seed, positions_task

STUDENT = DEFAULT_MODEL.parent / "tesauro-198-80.pt"


def measure(executor, jobs: list[tuple]) -> tuple[int, float]:
    """(positions, seconds) of the warm run of `jobs`."""
    list(executor.map(positions_task, jobs))
    start = time.perf_counter()
    positions = sum(len(boards) for boards, _ in executor.map(positions_task, jobs))
    return positions, time.perf_counter() - start


def ray_cluster(nodes: int):
    """A simulated cluster of `nodes` one-CPU nodes."""
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    for _ in range(nodes - 1):
        cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes()
    return cluster


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--student", type=Path, default=STUDENT, help="whose self-play gives the positions")
    parser.add_argument("--teacher", type=Path, default=DEFAULT_MODEL, help="whose 2-ply values them")
    parser.add_argument("--shards", type=int, default=8)
    parser.add_argument("--games", type=int, default=2, help="games per shard")
    parser.add_argument("--local", type=int, nargs="*", default=[1, 2], help="local worker counts")
    parser.add_argument("--nodes", type=int, nargs="*", default=[2, 4], help="simulated Ray cluster sizes")
    args = parser.parse_args(argv)
    student, teacher = ModelBlob.read(args.student), ModelBlob.read(args.teacher)
    jobs = [(student, teacher, args.games, derived_seed(1, s), 0, 2) for s in range(args.shards)]
    rows = []
    for workers in args.local:
        executor = SerialExecutor() if workers == 1 else ProcessExecutor(workers)
        rows.append((f"local, {workers} worker{'s' * (workers > 1)}", *measure(executor, jobs)))
        executor.close()
    for nodes in args.nodes:
        cluster = ray_cluster(nodes)
        executor = RayExecutor(address=cluster.address)
        rows.append((f"Ray, simulated cluster of {nodes} one-CPU nodes", *measure(executor, jobs)))
        executor.close()
        cluster.shutdown()
    base = rows[0][1] / rows[0][2]
    print(f"teacher values: {args.shards} shards of {args.games} games of {args.student.name}, "
          f"valued by {args.teacher.name} at 2-ply")
    print("| backend | positions | seconds | positions/s | vs the first row |")
    print("|---|---|---|---|---|")
    for name, positions, seconds in rows:
        print(f"| {name} | {positions:,} | {seconds:.1f} | {positions / seconds:,.0f} | "
              f"{positions / seconds / base:.2f}x |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
