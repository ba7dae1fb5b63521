"""gctool train without a Dask cluster: the coded messages decode to the full gradient, and the
master's loop (cancellation, stale messages, lost workers, the recorded trace that simulate
replays) against resident tasks run as threads of this process."""

from __future__ import annotations

import threading
from itertools import combinations

import numpy as np
import pytest

import gctool
from gctool.trainer.channel import Hub
from gctool.trainer.cluster import ClusterError, Placement, groups_of
from gctool.trainer.record import trace_csv, worker_times
from gctool.trainer.rounds import Master
from gctool.trainer.schemes import Coded, IgnoreStragglers, Uncoded, group_data, partition_data
from gctool.trainer.worker import message, serve
from gctool.trainer.workload import TwoLayer, make

from helpers import run
from refusals import refused


def _problem(kind: str = "lsq"):
    return make(kind, None, np.random.default_rng(4), 8)[0]


def _messages(scheme, problem, w):
    bounds = partition_data(problem.X, problem.y, [scheme])
    rows = {scheme.layout: scheme.rows(len(w))}
    data = group_data(problem.X, problem.y, bounds, rows, list(range(scheme.n)))
    return np.array([message(r, problem.model, data, problem.N, w)
                     for r in rows[scheme.layout]])


@pytest.mark.parametrize("spec", [("cyclic", {"n": 6, "s": 2, "seed": 1}),
                                  ("comm", {"n": 6, "s": 1, "m": 2}),
                                  ("frc", {"n": 6, "s": 2}),
                                  ("cyclic-mds", {"n": 5, "s": 2, "field": "complex"})])
@pytest.mark.parametrize("kind", ["lsq", "logistic", "mlp"])
def test_every_decodable_set_of_workers_gives_the_full_gradient(spec, kind) -> None:
    code = gctool.design(spec[0], **spec[1])
    problem = _problem(kind)
    w = np.random.default_rng(0).standard_normal(problem.model.size(problem.X.shape[1]))
    scheme = Coded(code, "file", 0)
    msgs = _messages(scheme, problem, w)
    full = problem.model.gradient(problem.X, problem.y, w, problem.N)
    scale = np.linalg.norm(problem.partial_gradients(w, partition_data(
        problem.X, problem.y, [scheme])[scheme.layout]), axis=1).sum()
    for F in combinations(range(code.n), code.n - code.s):
        assert scheme.done(list(F))
        g, exact, used = scheme.combine(list(F), msgs[list(F)], len(w))
        assert used == list(F) and exact, (F, code.scheme)
        assert np.linalg.norm(g - full) <= 1e-12 * scale, (F, code.scheme)


def test_baselines_sum_and_rescale() -> None:
    problem = _problem()
    w = np.ones(problem.X.shape[1])
    full = problem.model.gradient(problem.X, problem.y, w, problem.N)
    unc, ign = Uncoded(5), IgnoreStragglers(5, 2)
    msgs = _messages(unc, problem, w)
    assert not unc.done([0, 1, 2, 3]) and unc.done(list(range(5)))
    assert np.allclose(unc.combine(list(range(5)), msgs, len(w))[0], full, atol=1e-14)
    assert not ign.done([0, 1]) and ign.done([0, 3, 4])
    g, exact, used = ign.combine([4, 0, 3, 1], msgs[[4, 0, 3, 1]], len(w))
    assert not exact and used == [0, 3, 4]  # the first n - s to arrive
    assert np.allclose(g, msgs[[0, 3, 4]].sum(axis=0) * 5 / 3)


def test_groups_are_consecutive_and_balanced() -> None:
    assert groups_of(8, 2) == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert groups_of(7, 3) == [[0, 1], [2, 3, 4], [5, 6]]
    assert groups_of(3, 8) == [[0], [1], [2]]


class _Threads:
    """Resident tasks of ``groups`` served by threads of this process (no Dask)."""

    def __init__(self, groups, schemes, problem) -> None:
        self.hub = Hub("127.0.0.1")
        bounds = partition_data(problem.X, problem.y, schemes)
        d = problem.X.shape[1]
        rows = {s.layout: s.rows(d) for s in schemes}
        self.placement = Placement(groups, ["thread"] * len(groups))
        self.threads = [threading.Thread(target=serve, daemon=True, args=(
            self.hub.address, self.hub.authkey, g, problem.model, problem.N,
            group_data(problem.X, problem.y, bounds, rows, members)))
            for g, members in enumerate(groups)]
        for t in self.threads:
            t.start()

    def close(self) -> None:
        self.hub.close()
        for t in self.threads:
            t.join(timeout=10)
            assert not t.is_alive()


def test_the_master_stops_at_the_first_decodable_set_and_records_it() -> None:
    code = gctool.design("cyclic", n=6, s=2, seed=1)
    problem = _problem("logistic")
    scheme = Coded(code, "crc", 0)
    rng = np.random.default_rng(2)
    delays = np.zeros((12, 6))
    delays[:, [1, 4]] = 1.0  # two stragglers every round: cancelled, never waited for (1 s: far
    # beyond the scheduling delays of a loaded machine)
    delays[:, [0, 2, 3, 5]] = rng.uniform(0, 0.01, (12, 4))
    cluster = _Threads([[0, 1], [2, 3], [4, 5]], [scheme], problem)
    try:
        master = Master(cluster.hub, cluster.placement, wait=10)
        master.connect(10)
        w0 = np.zeros(problem.X.shape[1])
        log = master.run(scheme, problem, w0, delays, 12, None, check=True)
    finally:
        cluster.close()
    assert log.rounds == 12 and log.reached is None
    assert all(used == [0, 2, 3, 5] for used in log.used)  # the stragglers: not waited for
    assert all(log.exact) and max(log.error_partials) < 1e-12
    # gradient descent on the decoded gradients is plain gradient descent
    w = w0.copy()
    for _ in range(12):
        w = w - problem.eta * problem.model.gradient(problem.X, problem.y, w, problem.N)
    assert abs(log.loss[-1] - problem.loss(w)) < 1e-12
    times, status = worker_times(log, delays)
    assert (status[:, [1, 4]] == 1).all() and (status[:, [0, 2, 3, 5]] == 0).all()
    ends = np.array(log.decodable) - np.array(log.start)
    assert np.all(times[:, [1, 4]] > ends[:, None])  # projected after the round's end
    assert np.all(times[:, [1, 4]] >= 1.0)


def test_a_recorded_trace_replays_in_simulate_to_the_master_s_rounds(tmp_path) -> None:
    from gctool.sim.delays import parse_delay

    code = gctool.design("cyclic", n=6, s=2, seed=1)
    problem = _problem()
    schemes = [Coded(code, "crc", 0), Uncoded(6)]
    delays = np.random.default_rng(5).uniform(0, 0.02, (10, 6))
    cluster = _Threads([[0, 1, 2], [3, 4, 5]], schemes, problem)
    try:
        master = Master(cluster.hub, cluster.placement, wait=10)
        master.connect(10)
        logs = [master.run(s, problem, np.zeros(12), delays, 10, None, False) for s in schemes]
    finally:
        cluster.close()
    for scheme, log in zip(schemes, logs, strict=True):
        path = tmp_path / f"{scheme.contender.kind}.csv"
        path.write_bytes(trace_csv(log, delays))
        report = gctool.simulate([("crc", code)], parse_delay(f"trace:{path}"),
                                 iterations=10, seed=1, baselines=scheme.name == "uncoded")
        row = next(r for r in report.rows if r["name"] == scheme.name)
        waited = np.array(log.decodable) - np.array(log.start)
        arrivals = np.array(log.arrival)
        last = np.array([arrivals[r, u].max() for r, u in enumerate(log.used)])
        assert np.allclose(np.sort(row["percentiles"])[[0, 100]], [last.min(), last.max()],
                           atol=1e-9)
        assert np.all(last <= waited + 1e-9)
        assert abs(row["p50"]["value"] - np.median(last)) < 1e-9


def test_a_lost_group_is_a_straggler_and_too_many_stop_the_run_with_one_line() -> None:
    code = gctool.design("cyclic", n=6, s=2, seed=1)
    problem = _problem()
    scheme = Coded(code, "crc", 0)
    cluster = _Threads([[0, 1], [2, 3], [4, 5]], [scheme], problem)
    try:
        master = Master(cluster.hub, cluster.placement, wait=0.5)
        master.connect(10)
        cluster.hub.send(0, ("stop",))  # group 0 goes away: 2 = s workers lost
        log = master.run(scheme, problem, np.zeros(12), np.zeros((5, 6)), 5, None, True)
        assert log.rounds == 5 and all(0 not in u and 1 not in u for u in log.used)
        assert log.events[0]["event"] == "lost" and log.events[0]["workers"] == [0, 1]
        assert max(log.error_partials) < 1e-12
        cluster.hub.send(1, ("stop",))  # 4 > s workers lost: the round cannot end
        with pytest.raises(ClusterError, match=r"crc, round 1: lost logical workers 0-3 .*"
                                               r"the 2 that answered cannot decode"):
            master.run(scheme, problem, np.zeros(12), np.zeros((5, 6)), 5, None, False)
    finally:
        cluster.close()


def test_the_network_s_gradient_is_its_loss_s_derivative_and_splits_over_partitions() -> None:
    problem, w = make("mlp", None, np.random.default_rng(1), 8)
    assert isinstance(problem.model, TwoLayer) and len(w) == 8 * 14 + 1
    bounds = np.array([0, 100, 700, 1200])
    parts = problem.partial_gradients(w, bounds)
    full = problem.model.gradient(problem.X, problem.y, w, problem.N)
    assert np.allclose(parts.sum(axis=0), full, atol=1e-15)
    h = 1e-6
    for i in (0, 50, 97, 104, 112):  # W, b, v and c
        e = np.zeros_like(w)
        e[i] = h
        numeric = (problem.loss(w + e) - problem.loss(w - e)) / (2 * h)
        assert abs(numeric - full[i]) <= 1e-7 * max(1.0, abs(full[i]))
    linear, _ = make("logistic", None, np.random.default_rng(1), 8)
    assert problem.loss_star == linear.loss_star  # the best linear model's loss
    w_fit = w.copy()
    for _ in range(60):  # plain gradient descent gets below it
        w_fit = w_fit - problem.eta * problem.model.gradient(problem.X, problem.y, w_fit,
                                                               problem.N)
    assert problem.loss(w_fit) < problem.loss_star < problem.loss(w)


def _refused(args: list[str], *words: str) -> None:
    refused(run("train", *args), *words)


def test_bad_input_is_one_line_before_any_cluster_starts(tmp_path) -> None:
    code = tmp_path / "crc.json"
    gctool.write_code(gctool.design("cyclic", n=4, s=1, seed=1), str(code))
    gf = tmp_path / "gf.json"
    gctool.write_code(gctool.design("cyclic-mds", n=4, s=1, field="GF(5)"), str(gf))
    seq = tmp_path / "sgc.json"
    gctool.write_code(gctool.design("sr-sgc", n=4, s=1, burst=1, window=2, lam=1), str(seq))
    _refused([str(gf)], "training needs a real or complex code", "GF(5)")
    _refused([str(seq)], "gctool train runs single-round codes")
    _refused([str(code), "--delay", "nonsense"], "unknown delay model")
    _refused([str(code), "--data", str(tmp_path / "none.npz")], "none.npz")
    _refused([str(code), "--scheduler", "tcp://127.0.0.1:1", "-j", "2"],  # it was ignored
             "--jobs applies to the LocalCluster gctool starts, not to --scheduler")
    bad = {"shape": {"X": np.ones(5), "y": np.ones(5)},
           "labels": {"X": np.ones((8, 2)), "y": np.full(8, 0.5)},
           "finite": {"X": np.full((8, 2), np.nan), "y": np.ones(8)},
           "length": {"X": np.ones((8, 2)), "y": np.ones(7)},
           "few": {"X": np.ones((3, 2)), "y": np.ones(3)},
           "missing": {"X": np.ones((8, 2))}}
    words = {"shape": "2-d array", "labels": "labels y in {0, 1}", "finite": "finite",
             "length": "one value per sample", "few": "fewer than the 4 partitions",
             "missing": "'y'"}
    for name, arrays in bad.items():
        path = tmp_path / f"{name}.npz"
        np.savez(path, **arrays)
        _refused([str(code), "--problem", "logistic", "--data", str(path)], words[name])


def test_a_data_file_is_the_problem(tmp_path) -> None:
    rng = np.random.default_rng(3)
    X = rng.standard_normal((40, 3))
    y = (X[:, 0] > 0).astype(float)
    path = tmp_path / "mine.npz"
    np.savez(path, X=X, y=y)
    problem, w0 = make("logistic", path, np.random.default_rng(1), 8)
    assert problem.N == 40 and len(w0) == 3 and np.array_equal(problem.X, X)
    assert problem.loss(np.zeros(3)) == pytest.approx(np.log(2))
    lsq, _ = make("lsq", path, np.random.default_rng(1), 8)
    assert lsq.loss_star == pytest.approx(
        0.5 * np.mean((X @ np.linalg.lstsq(X, y, rcond=None)[0] - y) ** 2))


def _npz(save, **arrays) -> bytes:
    import io

    out = io.BytesIO()
    save(out, **arrays)
    return out.getvalue()


def _data_variants() -> dict[str, bytes]:
    rng = np.random.default_rng(5)
    X = rng.standard_normal((64, 5))
    y = (X[:, 1] > 0).astype(float)
    return {"stored": _npz(np.savez, X=X, y=y),
            "compressed": _npz(np.savez_compressed, X=X, y=y),
            "fortran float32": _npz(np.savez, X=np.asfortranarray(X.astype(np.float32)),
                                    y=y.astype(np.float32).reshape(-1, 1)),
            "integers": _npz(np.savez_compressed, X=np.arange(60, dtype=np.int16).reshape(20, 3),
                             y=np.arange(20, dtype=np.uint8)),
            "more members": _npz(np.savez, w=np.ones(3), y=y, X=X)}


@pytest.mark.parametrize("variant", list(_data_variants()))
def test_a_data_file_is_read_member_wise_as_numpy_reads_it(tmp_path, monkeypatch, variant
                                                           ) -> None:
    """load_data reads an NPZ data file as a code file is read (open_input: an NpzFile, its
    members read from the file, not the file's bytes whole) and gets numpy's arrays, as
    float64, y flat; from stdin too."""
    import sys

    import gctool._files as files
    from gctool.trainer.workload import load_data

    path = tmp_path / "data.npz"
    path.write_bytes(_data_variants()[variant])
    with np.load(path) as ref:
        X, y = ref["X"].astype(np.float64), ref["y"].reshape(-1).astype(np.float64)
    seen: list[type] = []
    members = files.npz_members

    def spy(data, *args, **kw):
        seen.append(type(data))
        return members(data, *args, **kw)

    monkeypatch.setattr(files, "npz_members", spy)
    monkeypatch.setattr(files, "read_bytes", None)  # never the whole file
    got_X, got_y = load_data(path)
    assert seen == [files.NpzFile]
    assert got_X.dtype == got_y.dtype == np.float64 and got_y.shape == (len(X),)
    assert np.array_equal(got_X, X) and np.array_equal(got_y, y)
    with open(path, "rb") as fh:
        monkeypatch.setattr(sys, "stdin", type("In", (), {"buffer": fh})())
        std_X, std_y = load_data("-")
    assert np.array_equal(std_X, X) and np.array_equal(std_y, y)


def _corrupt_data() -> dict[str, bytes]:
    import io
    import zipfile

    X, y = np.arange(24.0).reshape(8, 3), np.arange(8.0)
    good = _npz(np.savez, X=X, y=y)
    packed = _npz(np.savez_compressed, X=np.ones((64, 64)), y=np.ones(64))
    at = good.index(X.tobytes()[8:24])
    flipped = good[:at] + bytes([good[at] ^ 1]) + good[at + 1:]
    twice = io.BytesIO()
    with zipfile.ZipFile(twice, "w") as z, pytest.warns(UserWarning):
        for name in ("X.npy", "X.npy", "y.npy"):
            z.writestr(name, good[:64])
    at = len(packed) // 3
    return {"truncated": good[:len(good) // 2], "no directory": good[:-10],
            "bad CRC": flipped, "bad header": good.replace(b"'descr'", b"'dexcr'"),
            "pickled": _npz(np.savez, X=np.array([1, "a"], dtype=object), y=y),
            "missing y": _npz(np.savez, X=X), "twice": twice.getvalue(),
            "deflated garbage": packed[:at] + bytes(64) + packed[at + 64:],
            "short member": _npz(np.savez, X=X, y=y).replace(b"(8,)", b"(9,)"),
            "text": b'{"X": [[1]], "y": [1]}', "empty": b""}


@pytest.mark.parametrize("variant", list(_corrupt_data()))
def test_a_corrupt_data_file_is_refused_as_the_whole_bytes_reader_refuses_it(tmp_path, variant
                                                                             ) -> None:
    """Each corrupt data file is refused by load_data (member-wise, from the file) with the
    message of npz_members on the file's bytes held whole (the in-memory reader), naming the
    file, in one line; the command refuses it in that line, exit 2."""
    from gctool._files import npz_members
    from gctool.errors import CodeFileError, InvalidInput
    from gctool.trainer.workload import MAX_DATA_ENTRIES, load_data

    data = _corrupt_data()[variant]
    path = tmp_path / "bad.npz"
    path.write_bytes(data)
    if data:
        with pytest.raises(CodeFileError) as whole:
            npz_members(data, ("X", "y"), {"X": MAX_DATA_ENTRIES, "y": MAX_DATA_ENTRIES})
        expected = f"{path}: {whole.value}"
    else:
        expected = f"{path}: empty input, expected an NPZ data file"
    with pytest.raises(InvalidInput) as refused:
        load_data(path)
    assert str(refused.value) == expected and "\n" not in expected
    code = tmp_path / "crc.json"
    gctool.write_code(gctool.design("cyclic", n=4, s=1, seed=1), str(code))
    _refused([str(code), "--data", str(path)], expected)
