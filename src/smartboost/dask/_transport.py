"""The driver's links to the shards: one authenticated connection per shard, the messages of
every step sent to all and answered by all, each answer awaited at most ``timeout`` seconds.

Steps go over ``multiprocessing.connection`` rather than Dask actor calls: an actor call costs
milliseconds, and an iteration takes several steps. A lost worker or a timeout stops training with
:class:`~smartboost.errors.DistributedError`; an error raised on a worker is raised again on
the driver with the worker's traceback.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Sequence
from multiprocessing.connection import Client, Connection
from typing import Any

import cloudpickle

from ..callback import TrainingCallback
from ..errors import DistributedError


def portable(exc: Exception) -> Exception:
    """``exc`` if it survives pickling, else a RuntimeError with its text."""
    try:
        cloudpickle.loads(cloudpickle.dumps(exc))
        return exc
    except Exception:
        return RuntimeError(f"{type(exc).__name__}: {exc}")


def _link_ends(conn: Connection) -> tuple[str, str]:
    """The local and the peer address of a step link (equal when both ends are on one host; a
    link that is not TCP, which is always local, gives two empty strings)."""
    with socket.socket(fileno=os.dup(conn.fileno())) as sock:
        if sock.family not in (socket.AF_INET, socket.AF_INET6):
            return "", ""
        return sock.getsockname()[0], sock.getpeername()[0]


def no_delay(conn: Connection) -> Connection:
    """Turn Nagle's algorithm off on a step link. Its messages are request-answer pairs, and a
    large one is written as a 4-byte header and a body: with Nagle on, the tail of a message can
    wait for the peer's delayed acknowledgement (40 ms on Linux)."""
    with socket.socket(fileno=os.dup(conn.fileno())) as sock:
        if sock.family in (socket.AF_INET, socket.AF_INET6):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return conn


class Workers:
    """The driver's connections to the shards; every step is sent to all, then answered by all.

    Parameters
    ----------
    addresses : list of (host, port)
    names : list of str
        Worker addresses, for messages.
    authkey : bytes
    timeout : float
        Seconds to wait for each shard's answer to each step.
    """

    def __init__(self, addresses: list[tuple[str, int]], names: list[str], authkey: bytes, timeout: float) -> None:
        self.names = names
        self.timeout = timeout
        self.one_at_a_time = True  # until the first iteration is done: see :meth:`call`
        self.conns = [no_delay(Client(address, authkey=authkey)) for address in addresses]
        self.link_ends = [_link_ends(conn) for conn in self.conns]
        self.bytes_received = 0
        self.bytes_sent = 0

    def __len__(self) -> int:
        return len(self.conns)

    def call(self, step: str, *args: Any, together: bool = False) -> list[Any]:
        """Run ``step(*args)`` on every shard; their answers in shard order.

        While ``one_at_a_time`` is set (setup and the first iteration, when the shards compile
        or load their kernels), the first shard runs each step alone and the others start when
        it has answered, so they load the kernels it compiled: processes that share numba's
        cache (one machine, or a shared file system) must not compile the same kernel at once,
        or the cache can end up holding the index of one compilation and the code of another,
        which crashes later loads (numba issue #4807). It costs one step's time more, whatever
        the number of shards.

        A step in which the shards talk to each other (``together``: connecting, growing a tree)
        runs on every shard at once. The driver waits twice the timeout for its answers, so that
        a shard stalled in an exchange is reported by the shards waiting for it, which wait at
        most the timeout (:class:`~smartboost.dask._peers.Peers`).
        """
        return self._run(step, [cloudpickle.dumps((step, args), protocol=5)] * len(self.conns), together)

    def call_each(self, step: str, args: Sequence[tuple], together: bool = False) -> list[Any]:
        """Run ``step(*args[i])`` on shard ``i``; their answers in shard order (``together``: as
        for :meth:`call`)."""
        return self._run(step, [cloudpickle.dumps((step, a), protocol=5) for a in args], together)

    def _run(self, step: str, messages: list[bytes], together: bool) -> list[Any]:
        first = 1 if self.one_at_a_time and not together else 0
        wait = 2 * self.timeout if together else self.timeout
        answers = []
        for group in (range(first), range(first, len(self.conns))):
            for i in group:
                self._send(i, step, self.conns[i], messages[i])
            answers += [self._receive(i, step, wait) for i in group]
        return answers

    def _send(self, i: int, step: str, conn: Any, message: bytes) -> None:
        try:
            conn.send_bytes(message)
        except OSError as exc:
            raise DistributedError(f"lost the connection to worker {self.names[i]} sending step '{step}': the "
                                   "worker died or was closed") from exc
        self.bytes_sent += len(message)

    def _receive(self, i: int, step: str, wait: float) -> Any:
        conn = self.conns[i]
        try:
            if not conn.poll(wait):
                raise DistributedError(f"worker {self.names[i]} did not answer step '{step}' within {wait:g} s "
                                       "(smartboost.dask.train's timeout)")
            message = conn.recv_bytes()
        except (EOFError, OSError) as exc:
            raise DistributedError(f"lost the connection to worker {self.names[i]} during step '{step}': the worker "
                                   "died or was closed") from exc
        self.bytes_received += len(message)
        status, *payload = cloudpickle.loads(message)
        if status == "error":
            exc, remote_traceback = payload
            exc.add_note(f"(raised on worker {self.names[i]} in step '{step}'; the worker's traceback follows)\n"
                         f"{remote_traceback.rstrip()}")
            raise exc
        return payload[0]

    def close(self) -> None:
        """Tell the shards to drop their rows, and close the connections (errors ignored)."""
        for conn in self.conns:
            try:
                conn.send_bytes(cloudpickle.dumps(("close", ()), protocol=5))
                if conn.poll(self.timeout):
                    conn.recv_bytes()
            except (EOFError, OSError):
                pass
            conn.close()


class AllAtOnceAfterFirstIteration(TrainingCallback):
    """Lets the shards run their steps at the same time once every kernel is compiled (see
    :meth:`Workers.call`)."""

    def __init__(self, workers: Workers) -> None:
        self.workers = workers

    def after_iteration(self, env: Any) -> bool:
        self.workers.one_at_a_time = False
        return False
