"""The Ray executor: one actor per agent replica, chunks of episodes fed by a ``ray.wait`` loop.

Each actor loads the environment and the agent once (:meth:`Workload.runner
<vlneval.distributed.executors.workload.Workload.runner>`), inside the actor, so its weights land
on the GPU Ray assigned it (an agent whose constructor takes ``device`` gets ``device="cuda"``).
The driver keeps ``pipeline`` chunks in flight per actor and writes each finished chunk's records
as it arrives.

A dead actor's chunks are queued again at the front and a replacement is started in its place
(Ray's ``ActorPool`` would lose them); a chunk is re-run at most ``max_retries`` times. An error
raised by the agent itself is raised as it is: it would happen again. Actors of several GPUs
each (``actor_gpus >= 2``, or ``placement=True``) get one placement group with a bundle per
actor, reserved for the whole run so a replacement always finds its resources. Ray is imported
only here, and only when a run starts.
"""

from __future__ import annotations

import contextlib
import math
import os
import signal
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from vlneval.distributed.executors.workload import ChunkResult, Workload, chunks
from vlneval.distributed.merge import sum_calls
from vlneval.errors import VLNEvalError

__all__ = ["RayOptions", "RayRun", "import_ray", "run_on_ray"]

Log = Callable[[str], None]


@dataclass(frozen=True)
class RayOptions:
    """How a run uses the cluster.

    Attributes:
        num_actors: agent replicas (actors).
        actor_cpus, actor_gpus: resources of each actor (``actor_gpus=0.5``: two share a GPU).
        chunk: episodes per task.
        address: the cluster (``"auto"``: the running one; None: ``RAY_ADDRESS`` or a new local
            cluster); unused when Ray is already initialised in this process.
        max_retries: times one chunk is re-run after its actor died.
        placement: a placement group with a bundle per actor (None: when ``actor_gpus >= 2``).
        strategy: the placement group's strategy (``PACK``, ``SPREAD``, ``STRICT_PACK``...).
        start_timeout: seconds to wait for the actors (or the placement group) to be placed.
        pipeline: chunks in flight per actor (2: the next chunk waits in the actor's queue).
    """

    num_actors: int = 2
    actor_cpus: float = 1.0
    actor_gpus: float = 0.0
    chunk: int = 8
    address: str | None = None
    max_retries: int = 3
    placement: bool | None = None
    strategy: str = "PACK"
    start_timeout: float = 600.0
    pipeline: int = 2

    def __post_init__(self) -> None:
        for name in ("num_actors", "chunk", "pipeline", "max_retries"):
            value, low = getattr(self, name), int(name != "max_retries")
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                what = "a positive integer" if low else ">= 0"
                raise VLNEvalError(f"ray: {name} must be {what}, got {value!r}")
        for name in ("actor_cpus", "actor_gpus"):
            value = getattr(self, name)
            number = isinstance(value, (int, float)) and not isinstance(value, bool)
            if not number or not math.isfinite(value) or value < 0:
                raise VLNEvalError(f"ray: {name} must be a number >= 0, got {value!r}")
        if self.actor_gpus > 1 and self.actor_gpus != int(self.actor_gpus):
            raise VLNEvalError(
                f"ray: actor_gpus {self.actor_gpus}: above 1, a whole number of GPUs per actor"
            )

    @property
    def uses_placement_group(self) -> bool:
        """Whether the actors go into a placement group."""
        return self.actor_gpus >= 2 if self.placement is None else self.placement

    def resources(self) -> dict[str, float]:
        """One actor's bundle (zero entries left out)."""
        out = {"CPU": float(self.actor_cpus), "GPU": float(self.actor_gpus)}
        return {k: v for k, v in out.items() if v > 0}

    def card(self) -> dict[str, Any]:
        """What the shard manifest records of the executor."""
        return {
            "name": "ray",
            "num_actors": self.num_actors,
            "actor_resources": self.resources(),
            "chunk": self.chunk,
            "max_retries": self.max_retries,
            "placement_group": self.strategy if self.uses_placement_group else None,
        }


@dataclass
class RayRun:
    """A finished Ray run: the protocol fields of its chunks, counts, and what happened.

    ``actors`` says where each actor ran (``pid``, ``node``, the GPU ids Ray assigned it,
    ``cuda_visible_devices``, the ``device`` its agent was given, its ``placement_group``);
    ``placement`` is the run's placement group (``id``, ``strategy``, ``bundles``), if any.
    """

    protocol: dict[str, Any]
    n_episodes: int
    truncated: int
    steps: int
    seconds: float
    restarts: int
    actors: list[dict[str, Any]] = field(default_factory=list)
    n_chunks: int = 0
    placement: dict[str, Any] | None = None


class _Replica:
    """The actor: one loaded environment and agent; runs chunks of global episode indices."""

    def __init__(self, workload: Workload) -> None:
        import ray  # deferred: ray

        self.gpus = [str(g) for g in ray.get_gpu_ids()]
        self.device = "cuda" if self.gpus else None
        self.runner = workload.runner(device=self.device)

    def ready(self) -> dict[str, Any]:
        """Where the actor runs."""
        import ray  # deferred: ray

        return {
            "pid": os.getpid(),
            "node": ray.util.get_node_ip_address(),
            "gpus": self.gpus,
            "device": self.device,
            "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
            "placement_group": ray.get_runtime_context().get_placement_group_id(),
        }

    def run(self, indices: list[int]) -> ChunkResult:
        """Runs one chunk."""
        return self.runner.run(indices)


def import_ray() -> Any:
    """The ``ray`` module (a caller checks it before it writes anything).

    Raises:
        VLNEvalError: Ray is not installed (says how to install it).
    """
    try:
        import ray  # deferred: ray
    except ImportError as exc:
        raise VLNEvalError(
            '--executor ray needs Ray: pip install "vlneval[ray]" (or pip install ray)'
        ) from exc
    return ray


def _init(ray: Any, address: str | None) -> bool:
    """Connects to (or starts) the cluster; whether this call started it."""
    if ray.is_initialized():
        return False
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # never report on a user's behalf
    kwargs: dict[str, Any] = {"address": address}
    if address is None and not os.environ.get("RAY_ADDRESS"):
        kwargs["include_dashboard"] = False
    before = signal.getsignal(signal.SIGTERM)
    try:
        ray.init(**kwargs)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise VLNEvalError(
            f"ray: cannot reach the cluster at {address or 'RAY_ADDRESS'}: {exc}"
        ) from exc
    if callable(before) and threading.current_thread() is threading.main_thread():
        # the caller's own SIGTERM handler again, over the one Ray installs (which prints a
        # stack dump that reads like a crash): a stopped run ends through its cleanup
        signal.signal(signal.SIGTERM, before)
    return True


class _Actors:
    """The replicas, their generations (bumped on replacement) and their placement group."""

    def __init__(self, ray: Any, workload: Workload, options: RayOptions) -> None:
        self.ray, self.workload, self.options = ray, workload, options
        self.cls = ray.remote(_Replica)
        self.pg: Any = None
        if options.uses_placement_group:
            self.pg = self._placement_group()
        self.handles: list[Any] = [self._start(k) for k in range(options.num_actors)]
        self.generation = [0] * options.num_actors
        self.alive = [True] * options.num_actors

    def _placement_group(self) -> Any:
        from ray.util.placement_group import placement_group  # deferred: ray

        o = self.options
        bundle = o.resources()
        if not bundle:
            raise VLNEvalError("ray: a placement group needs actors with CPUs or GPUs")
        pg = placement_group([dict(bundle) for _ in range(o.num_actors)], strategy=o.strategy)
        if not pg.wait(timeout_seconds=o.start_timeout):
            self.ray.util.remove_placement_group(pg)
            raise VLNEvalError(
                f"ray: the cluster did not grant {o.num_actors} bundles of {bundle} ({o.strategy}) "
                f"within {o.start_timeout:g} s; it has {_resources(self.ray)}: lower --num-actors "
                "or --actor-gpus"
            )
        return pg

    def _start(self, k: int) -> Any:
        o = self.options
        opts: dict[str, Any] = {"num_cpus": o.actor_cpus, "num_gpus": o.actor_gpus,
                                "max_restarts": 0, "max_task_retries": 0}  # fmt: skip
        if self.pg is not None:
            from ray.util.scheduling_strategies import (  # deferred: ray
                PlacementGroupSchedulingStrategy,
            )

            opts["scheduling_strategy"] = PlacementGroupSchedulingStrategy(
                self.pg, placement_group_bundle_index=k
            )
        return self.cls.options(**opts).remote(self.workload)

    def wait_ready(self, log: Log | None) -> list[dict[str, Any]]:
        """Waits for the actors to be placed and loaded; drops those the cluster cannot place in
        time (the run goes on with the others)."""
        refs = [h.ready.remote() for h in self.handles]
        ready, pending = self.ray.wait(
            refs, num_returns=len(refs), timeout=self.options.start_timeout
        )
        infos: list[dict[str, Any]] = []
        for k, ref in enumerate(refs):
            if ref in pending:
                continue
            try:
                infos.append({"actor": k, **self.ray.get(ref)})
            except self.ray.exceptions.RayError as exc:
                raise VLNEvalError(f"ray: actor {k} failed to start: {_reason(exc)}") from exc
        if not infos:
            raise VLNEvalError(
                f"ray: no actor started within {self.options.start_timeout:g} s; each asks for "
                f"{self.options.resources()} and the cluster has {_resources(self.ray)}"
            )
        for k, ref in enumerate(refs):
            if ref in pending:
                self.alive[k] = False
                self.ray.kill(self.handles[k], no_restart=True)
                if log is not None:
                    log(f"ray: actor {k} was not placed within {self.options.start_timeout:g} s "
                        f"(the cluster has {_resources(self.ray)}); going on with {len(infos)}")  # fmt: skip
        return infos

    def placement(self) -> dict[str, Any] | None:
        """The placement group's id, strategy and bundles (None without one)."""
        if self.pg is None:
            return None
        return {"id": self.pg.id.hex(), "strategy": self.options.strategy,
                "bundles": [dict(b) for b in self.pg.bundle_specs]}  # fmt: skip

    def replace(self, k: int) -> None:
        """Kills actor ``k`` (if it lingers) and starts a replacement in its place."""
        with contextlib.suppress(Exception):  # it is dead already
            self.ray.kill(self.handles[k], no_restart=True)
        self.handles[k] = self._start(k)
        self.generation[k] += 1

    def close(self) -> None:
        """Kills the actors and frees the placement group."""
        for h in self.handles:
            with contextlib.suppress(Exception):  # shutting down: best effort
                self.ray.kill(h, no_restart=True)
        if self.pg is not None:
            with contextlib.suppress(Exception):
                self.ray.util.remove_placement_group(self.pg)


def _resources(ray: Any) -> dict[str, float]:
    res = ray.cluster_resources()
    return {k: float(res[k]) for k in ("CPU", "GPU") if k in res}


def _reason(exc: BaseException) -> str:
    """The useful last line of a Ray error (the exception raised in the actor, if any)."""
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    for ln in reversed(lines):
        if "Error" in ln.split(":", 1)[0] or "Exception" in ln.split(":", 1)[0]:
            return ln
    return lines[-1] if lines else type(exc).__name__


def _span(chunk: Sequence[int]) -> str:
    return f"episodes {chunk[0]}..{chunk[-1]}" if len(chunk) > 1 else f"episode {chunk[0]}"


def run_on_ray(
    workload: Workload,
    indices: Sequence[int],
    *,
    options: RayOptions | None = None,
    on_record: Callable[..., Any] | None = None,
    log: Log | None = None,
) -> RayRun:
    """Runs ``workload`` on the episodes ``indices`` (global indices) on a Ray cluster.

    ``on_record(index, record)`` receives every record, a chunk at a time in the order chunks
    finish (``on_record(index, record, extra)`` for a continuous run's episodes, ``extra``
    their measurements); ``log`` receives what happens to the actors. Connects to
    ``options.address`` (or starts a local cluster) unless Ray is already initialised, and
    shuts down only a cluster it started.

    Raises:
        VLNEvalError: Ray is not installed, the cluster cannot place the actors, an actor fails
            to start, or a chunk's actor died more than ``max_retries`` times.
    """
    options = options or RayOptions()
    work = chunks(indices, options.chunk)
    ray = import_ray()
    started = time.perf_counter()
    own = _init(ray, options.address)
    actors: _Actors | None = None
    try:
        need = options.actor_gpus
        have = _resources(ray).get("GPU", 0.0)
        if need > have:
            raise VLNEvalError(
                f"ray: each actor asks for {need:g} GPUs but the cluster has {have:g}"
            )
        actors = _Actors(ray, workload, options)
        infos = actors.wait_ready(log)
        if log is not None:
            log(f"ray: {len(infos)} actors ({options.resources() or 'no resources'} each) on "
                f"{len({i['node'] for i in infos})} node(s); {len(indices)} episodes in "
                f"{len(work)} chunks of up to {options.chunk}")  # fmt: skip
        run = _feed(ray, actors, work, options, on_record or (lambda *_: None), log)
        run.actors, run.n_chunks, run.placement = infos, len(work), actors.placement()
        run.seconds = time.perf_counter() - started
        return run
    finally:
        if actors is not None:
            actors.close()
        if own:
            ray.shutdown()


def _feed(
    ray: Any,
    actors: _Actors,
    work: list[list[int]],
    options: RayOptions,
    on_record: Callable[..., Any],
    log: Log | None,
) -> RayRun:
    queue = deque(work)
    failures: dict[int, int] = {}
    running: dict[Any, tuple[int, int, list[int]]] = {}
    load = [0] * len(actors.handles)
    protocols: list[Mapping[str, Any]] = []
    totals = {"episodes": 0, "truncated": 0, "steps": 0, "restarts": 0}

    def submit(k: int) -> None:
        while queue and actors.alive[k] and load[k] < options.pipeline:
            chunk = queue.popleft()
            running[actors.handles[k].run.remote(chunk)] = (k, actors.generation[k], chunk)
            load[k] += 1

    for k in range(len(actors.handles)):
        submit(k)
    while running:
        (ref,), _ = ray.wait(list(running), num_returns=1)
        k, gen, chunk = running.pop(ref)
        current = gen == actors.generation[k]
        if current:
            load[k] -= 1
        try:
            result: ChunkResult = ray.get(ref)
        except ray.exceptions.RayActorError as exc:
            failures[chunk[0]] = failures.get(chunk[0], 0) + 1
            if failures[chunk[0]] > options.max_retries:
                raise VLNEvalError(
                    f"ray: {_span(chunk)} lost their actor {failures[chunk[0]]} times (more than "
                    f"--max-retries {options.max_retries}); last: {_reason(exc)}. The episodes "
                    "written so far are kept: fix the cause and run again with --resume"
                ) from exc
            queue.appendleft(chunk)
            if current:
                totals["restarts"] += 1
                if log is not None:
                    log(f"ray: actor {k} died running {_span(chunk)} ({_reason(exc)}); "
                        f"re-queued (retry {failures[chunk[0]]} of {options.max_retries}), "
                        "starting a replacement")  # fmt: skip
                actors.replace(k)
                load[k] = 0
        except ray.exceptions.RayTaskError as exc:
            cause = getattr(exc, "cause", None)
            if isinstance(cause, Exception):
                raise cause from None
            raise VLNEvalError(f"ray: {_span(chunk)} failed: {_reason(exc)}") from exc
        else:
            if result.extras:  # a continuous episode's measurements: the shard line's extra
                for (i, record), extra in zip(result.records, result.extras, strict=True):
                    on_record(i, record, extra)
            else:
                for i, record in result.records:
                    on_record(i, record)
            protocols.append(result.protocol)
            totals["episodes"] += len(result.records)
            totals["truncated"] += result.truncated
            totals["steps"] += result.steps
        submit(k)
    if queue:  # only when no actor is left to take them
        raise VLNEvalError(f"ray: {len(queue)} chunks left with no actor to run them")
    return RayRun(sum_calls(protocols), totals["episodes"], totals["truncated"], totals["steps"],
                  0.0, totals["restarts"])  # fmt: skip
