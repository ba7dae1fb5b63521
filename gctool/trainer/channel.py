"""The master's side of the per-round traffic of ``gctool train``: a listening socket that the
resident tasks (:mod:`gctool.trainer.worker`) connect to, one connection per group, and the
events the master waits for: messages, groups that went away (their process died: the
connection ends), groups that (re)connected.

A background thread accepts connections (the authentication handshake of
``multiprocessing.connection`` with a random key of this run) and wakes the master through a
pipe; everything else happens in the caller's thread.
"""

from __future__ import annotations

import os
import queue
import secrets
import socket
import threading
from dataclasses import dataclass, field
from typing import Any

from gctool.trainer.worker import nodelay


@dataclass
class Events:
    """What happened while the master waited."""

    messages: list[tuple[Any, ...]] = field(default_factory=list)
    joined: list[int] = field(default_factory=list)  # groups that (re)connected
    replaced: list[int] = field(default_factory=list)  # a new connection of a connected group
    lost: list[int] = field(default_factory=list)  # groups whose connection ended


class Hub:
    """Connections of the groups, keyed by group number."""

    def __init__(self, host: str) -> None:
        from multiprocessing.connection import Listener

        self.authkey = secrets.token_bytes(32)
        self._listener = Listener((host, 0), authkey=self.authkey)
        self.address: tuple[str, int] = self._listener.address
        self.conns: dict[int, Any] = {}
        self.pids: dict[int, int] = {}
        self._new: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._unnamed: list[Any] = []
        self._gone: list[int] = []
        self._wake_r, self._wake_w = os.pipe()
        self._closing = False
        self._thread = threading.Thread(target=self._accept, name="gctool-train-accept",
                                        daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while not self._closing:
            try:
                conn = self._listener.accept()
            except Exception:  # noqa: BLE001 - closed, or a peer that failed the handshake
                if self._closing:
                    return
                continue
            if self._closing:
                conn.close()
                return
            self._new.put(conn)
            os.write(self._wake_w, b"x")

    def _admit(self) -> None:
        """Connections accepted since the last call wait for their hello."""
        while True:
            try:
                conn = self._new.get_nowait()
            except queue.Empty:
                return
            try:
                nodelay(conn)
            except OSError:
                conn.close()
                continue
            self._unnamed.append(conn)

    def _hello(self, conn: Any, events: Events) -> None:
        """The first message of a new connection names its group."""
        self._unnamed.remove(conn)
        try:
            hello = conn.recv()
        except (OSError, EOFError):
            conn.close()
            return
        if not (isinstance(hello, tuple) and len(hello) == 3 and hello[0] == "hello"):
            conn.close()
            return
        group = int(hello[1])
        old = self.conns.pop(group, None)
        if old is not None:  # a second task of the group (Dask's rerun and gctool's restart)
            old.close()
        self.conns[group], self.pids[group] = conn, int(hello[2])
        (events.joined if old is None else events.replaced).append(group)

    def send(self, group: int, msg: tuple[Any, ...]) -> bool:
        """Send to ``group``; False (and the group dropped) when its connection is gone."""
        conn = self.conns.get(group)
        if conn is None:
            return False
        try:
            conn.send(msg)
            return True
        except (OSError, ValueError):
            self._drop(group)
            return False

    def _drop(self, group: int) -> None:
        """Forget ``group``'s connection; the next :meth:`wait` reports it lost."""
        conn = self.conns.pop(group, None)
        if conn is not None:
            conn.close()
            self._gone.append(group)

    def wait(self, timeout: float | None) -> Events:
        """Block until something happens or ``timeout`` seconds pass."""
        from multiprocessing.connection import wait

        events = Events()
        self._admit()
        if self._gone:  # dropped when a send failed: report at once
            timeout = 0
        by_conn = {id(c): g for g, c in self.conns.items()}
        ready = wait([*self.conns.values(), *self._unnamed, self._wake_r], timeout)
        for obj in ready:
            if obj == self._wake_r:
                os.read(self._wake_r, 4096)
                self._admit()
            elif id(obj) not in by_conn:
                self._hello(obj, events)
            else:
                group = by_conn[id(obj)]
                conn: Any = obj
                try:
                    while conn.poll():
                        msg = conn.recv()
                        if isinstance(msg, tuple) and msg and msg[0] == "batch":
                            events.messages.extend(msg[1])
                        else:
                            events.messages.append(msg)
                except (OSError, EOFError):
                    self._drop(group)
        events.lost, self._gone = self._gone, []
        return events

    def close(self) -> None:
        """Tell every group to stop and close everything (idempotent)."""
        if self._closing:
            return
        self._closing = True
        for group in list(self.conns):
            self.send(group, ("stop",))
            self._drop(group)
        for conn in self._unnamed:
            conn.close()
        try:  # wake the accepting thread: a bare connection, closed at once (its handshake
            # fails, it sees the flag and returns).  No handshake here: the thread may have
            # seen the flag after its last connection and returned, and nobody would answer.
            socket.create_connection(self.address, timeout=5).close()
        except OSError:
            pass
        self._listener.close()
        self._thread.join(timeout=5)
        for fd in (self._wake_r, self._wake_w):
            os.close(fd)
