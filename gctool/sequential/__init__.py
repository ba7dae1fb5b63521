"""Beyond one round: sequential gradient codes (SR-SGC, M-SGC), CodedReduce trees and the
batched coupon collector (BCC).

* :mod:`~gctool.sequential.model` – the (B, W, λ)-bursty straggler model;
* :mod:`~gctool.sequential.formulas` – loads and delays in closed form (reference §5.2);
* :mod:`~gctool.sequential.sgc` – the SR-SGC and M-SGC schedules as state machines;
* :mod:`~gctool.sequential.schedule` – sequential code files, realised schedules;
* :mod:`~gctool.sequential.verify` – exhaustive (reachable states) and heuristic verification;
* :mod:`~gctool.sequential.bounds` – SGC vs plain GC, CodedReduce vs GC and ring all-reduce,
  BCC vs FRC waiting times;
* :mod:`~gctool.sequential.coded_reduce`, :mod:`~gctool.sequential.bcc` – the other designs;
* :mod:`~gctool.sequential.hooks` – the ``verifier``/``bounder`` capability hooks (``verify``
  and ``bound`` of code files).

Like the rest of the core library this package never imports click and never prints.
"""
