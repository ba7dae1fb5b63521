"""Where ``gctool train`` runs: the Dask cluster (a throw-away LocalCluster or a running
scheduler), the groups of logical workers placed on its workers, and their resident tasks.

n logical workers are cut into G = min(n, Dask workers) groups of consecutive workers (a
cyclic code's neighbours share partitions, so a group holds fewer distinct rows); group g is
one resident task (:func:`gctool.trainer.worker.serve`) placed on Dask worker g.  Its data
(the rows of every partition its workers use, in every scheme of the run) is the task's
argument: sent once per task, so a group started again after its worker died (on a restarted or
another worker, :meth:`Placement.restart`) gets its data with it; no data travels per round.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gctool.errors import GctoolError, InvalidInput

MISSING_EXTRA = ("gctool train needs the optional extra 'gctool[dask]' "
                 "(pip install 'gctool[dask]', i.e. dask and distributed)")


class ClusterError(GctoolError):
    """The cluster cannot carry the run on (workers lost for good, a resident task failed)."""


def require_dask() -> None:
    try:
        import dask  # noqa: F401
        import distributed  # noqa: F401
    except ImportError:
        raise InvalidInput(MISSING_EXTRA) from None


@contextlib.contextmanager
def quiet_dask() -> Iterator[None]:
    """Dask's own log lines off stderr for the block (gctool reports what matters: a lost
    worker is an event of the report, a failure one line): its loggers in this process, and
    the worker processes a LocalCluster spawns (they read the environment)."""
    import logging
    import os

    key, before = "DASK_LOGGING__DISTRIBUTED", os.environ.get("DASK_LOGGING__DISTRIBUTED")
    loggers = [logging.getLogger(name) for name in ("distributed", "dask")]
    levels = [lg.level for lg in loggers]
    os.environ[key] = "critical"
    for lg in loggers:
        lg.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = before
        for lg, level in zip(loggers, levels, strict=True):
            lg.setLevel(level)


@contextlib.contextmanager
def dask_client(scheduler: str | None, jobs: int) -> Iterator[Any]:
    """A client of ``scheduler``, or of a LocalCluster of ``jobs`` worker processes on
    127.0.0.1 started (and closed) for the run (not capped at the cores: the caller bounds
    ``jobs`` by the number of logical workers)."""
    from gctool.audit.distributed import DaskRunner

    require_dask()
    with quiet_dask(), DaskRunner(scheduler=scheduler)._client(jobs, at_most_cores=False) \
            as client:
        yield client


def master_host(scheduler: str | None) -> str:
    """The address the resident tasks connect back to: 127.0.0.1 for a local cluster, else the
    address of this machine's interface towards the scheduler."""
    if scheduler is None:
        return "127.0.0.1"
    from distributed.comm import get_address_host, parse_host_port
    from distributed.utils import get_ip

    host = get_address_host(scheduler)
    if host in ("127.0.0.1", "localhost", "::1"):
        return "127.0.0.1"
    _, port = parse_host_port(scheduler.split("://")[-1], 8786)
    return str(get_ip(host, port))


def groups_of(n: int, workers: int) -> list[list[int]]:
    """n logical workers in min(n, workers) groups of consecutive workers, sizes differing by
    at most one."""
    G = max(1, min(n, workers))
    edges = np.linspace(0, n, G + 1).round().astype(int)
    return [list(range(int(a), int(b))) for a, b in zip(edges[:-1], edges[1:], strict=True)]


@dataclass
class Placement:
    """The groups, the Dask worker each was placed on and its resident task.

    A group whose connection ended is started again at once by :meth:`restart`: its task is
    cancelled and submitted anew without a preferred worker.  Dask would rerun the task by
    itself, but a task whose preferred worker no longer exists can wait for it forever (state
    ``no-worker``) once every worker it knew has been replaced, as a LocalCluster's restarted
    workers are."""

    groups: list[list[int]]
    addresses: list[str]
    futures: list[Any] = field(default_factory=list)
    #: submit(group, preferred address or None) -> future (None: groups cannot be restarted)
    submit: Callable[[int, str | None], Any] | None = None
    client: Any = None

    def __post_init__(self) -> None:
        self._group = {i: g for g, members in enumerate(self.groups) for i in members}
        self.restarts = 0

    def group_of(self, worker: int) -> int:
        return self._group[worker]

    def failed(self) -> str | None:
        """A one-line reason when a resident task ended with an error (None: all fine)."""
        for g, f in enumerate(self.futures):
            if f.status == "error":
                exc = f.exception()
                return (f"the resident task of group {g} (logical workers "
                        f"{_span(self.groups[g])}) failed: {type(exc).__name__}: {exc}")
        return None

    def restart(self, g: int) -> None:
        """Start group ``g``'s resident task again, wherever Dask places it (see the class
        docs; a preferred worker could be the dead one, which the scheduler may not have
        noticed yet)."""
        if self.submit is None:
            return
        with contextlib.suppress(Exception):
            self.client.cancel([self.futures[g]], force=True)
        self.futures[g] = self.submit(g, None)
        self.addresses[g] = ""
        self.restarts += 1


def _span(members: list[int]) -> str:
    return f"{members[0]}-{members[-1]}" if len(members) > 1 else str(members[0])


def dask_workers(client: Any) -> list[str]:
    """Addresses of the cluster's workers (sorted); refuses a cluster without workers."""
    workers = sorted(client.scheduler_info().get("workers", {}))
    if not workers:
        raise ClusterError("the Dask cluster has no workers")
    return workers


def place(client: Any, n: int, hub: Any, model: Any, samples: int,
          data_of: Any) -> Placement:
    """Start one resident task per group; ``data_of(members)`` gives a group's data."""
    from gctool.trainer.worker import serve

    addresses = dask_workers(client)
    groups = groups_of(n, len(addresses))
    starts = [0] * len(groups)

    def submit(g: int, address: str | None) -> Any:
        starts[g] += 1
        where: dict[str, Any] = {} if address is None else {
            "workers": [address], "allow_other_workers": True}
        return client.submit(serve, hub.address, hub.authkey, g, model, samples,
                             data_of(groups[g]), pure=False,
                             key=f"gctool-train-{hub.address[1]}-group-{g}-{starts[g]}", **where)

    placement = Placement(groups, addresses[: len(groups)], submit=submit, client=client)
    placement.futures = [submit(g, a) for g, a in enumerate(placement.addresses)]
    return placement
