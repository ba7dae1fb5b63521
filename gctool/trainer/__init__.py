"""``gctool train``: coded gradient descent on a Dask cluster (the optional ``gctool[dask]``
extra), with injected stragglers, recorded traces and the simulator checked against them.

* :mod:`~gctool.trainer.run` – :func:`gctool.train` and the order of a run;
* :mod:`~gctool.trainer.schemes` – the code files and the baselines: what workers send, when
  the master stops waiting, how it decodes;
* :mod:`~gctool.trainer.cluster` – the Dask cluster, the groups of logical workers and their
  resident tasks;
* :mod:`~gctool.trainer.worker` – the resident task (runs on the Dask workers);
* :mod:`~gctool.trainer.channel` – the master's connections to the resident tasks;
* :mod:`~gctool.trainer.rounds` – the master's loop, faults included;
* :mod:`~gctool.trainer.record` – the measured rounds as a trace for ``simulate``;
* :mod:`~gctool.trainer.report`, :mod:`~gctool.trainer.plot` – the report and its SVG.

The package is not called ``train``: ``gctool.train`` is the library function.  The library
never prints; rendering is in :mod:`gctool.cli.render.train`.
"""
