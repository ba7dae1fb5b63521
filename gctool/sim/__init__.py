"""Simulator of runtime and training (``gctool simulate``).

* :mod:`~gctool.sim.delays` – delay models (shifted exponential, Pareto, bursty Markov, traces);
* :mod:`~gctool.sim.traces` – the AWS Lambda CSV traces and how schemes are mapped onto them;
* :mod:`~gctool.sim.contenders` – the schemes raced and their waiting rules;
* :mod:`~gctool.sim.stats` – means, quantiles and speed-ups with confidence intervals;
* :mod:`~gctool.sim.training` – gradient descent driven by each scheme's decoding;
* :mod:`~gctool.sim.run` – :func:`simulate` and its report.

The library never prints; rendering is in :mod:`gctool.cli.render.simulate`.
"""
