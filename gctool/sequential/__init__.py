"""Beyond one round: sequential gradient codes (SR-SGC, M-SGC), CodedReduce trees and the
batched coupon collector (BCC).

* :mod:`~gctool.sequential.model` – the (B, W, λ)-bursty straggler model;
* :mod:`~gctool.sequential.formulas` – loads and delays in closed form (reference §5.2);
* :mod:`~gctool.sequential.sgc` – the SR-SGC and M-SGC schedules as state machines;
* :mod:`~gctool.sequential.schedule` – sequential code files, realised schedules;
* :mod:`~gctool.sequential.verify` – exhaustive (reachable states) and heuristic verification
  of a schedule, and of a schedule file;
* :mod:`~gctool.sequential.bounds` – SGC vs plain GC, CodedReduce vs GC and ring all-reduce;
* :mod:`~gctool.sequential.trees` – CodedReduce files: their level codes, every parent's
  verify, their communication bounds;
* the schemes, each a :class:`gctool.family.Family` next to its ``build``:
  :mod:`~gctool.sequential.design` (SR-SGC, M-SGC), :mod:`~gctool.sequential.coded_reduce`,
  :mod:`~gctool.sequential.bcc` (with its coupon-collector bounds).

Like the rest of the core library this package never imports click and never prints.
"""
