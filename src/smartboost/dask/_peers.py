"""The links among the shards: every shard connected to every other, and the two collectives
that growing a tree together needs over them (``docs/concepts/distributed.md``).

- :meth:`_Peers.all_reduce` sums an integer array over every shard, in place: a reduce-scatter
  (shard ``j`` receives every other shard's ``j``-th slice of the array and adds them up) and
  an all-gather of the summed slices. Each shard sends and receives ``2 (W - 1) / W`` times the
  array in ``2 (W - 1)`` messages, in two rounds whatever the number of shards ``W``; two shards
  swap their whole arrays instead, the same bytes in one round. Integer cells make the sum exact
  in any order.
- :meth:`_Peers.all_gather` gives every shard every shard's copy of a small array.

The links are ``multiprocessing.connection`` connections, authenticated with the run's key,
one per pair of shards (the lower rank connects to the higher), with socket buffers as large as
the system allows. Two shards send each other their slices at the same time, and then receive:
a message that fits a quarter of the send buffer (two in flight, with room to spare) is written
at once, since the write cannot block; a larger one goes through a thread of its link, so that
two shards writing each other a large message do not wait on each other's receive. Every receive waits at most ``timeout`` seconds; a stalled or lost peer raises
:class:`~smartboost.errors.DistributedError` naming both workers and the exchange.
"""

from __future__ import annotations

import os
import queue
import socket
import threading
from multiprocessing.connection import Client, Connection, Listener

import numpy as np

from ..errors import DistributedError
from ._transport import _no_delay

_BUFFER_BYTES = 1 << 22  # the socket buffers asked for (the system caps them)


class _Peers:
    """One shard's links to every other shard.

    Parameters
    ----------
    rank : int
        This shard's position among the shards.
    links : dict of int to Connection
        The connection to every other shard, by its rank.
    names : list of str
        Every shard's worker address, by rank, for messages.
    timeout : float
        Seconds each receive waits for its peer.
    """

    def __init__(self, rank: int, links: dict[int, Connection], names: list[str], timeout: float) -> None:
        self.rank = rank
        self.size = len(names)
        self.names = names
        self.timeout = timeout
        self.links = links
        self.others = sorted(links)
        self.bytes_sent = 0
        self.context = ""  # where in training the exchanges happen, for messages
        self._inline = min((_large_buffers(conn) // 4 for conn in links.values()), default=0)
        self._outboxes: dict[int, queue.SimpleQueue] = {j: queue.SimpleQueue() for j in links}
        for j, conn in links.items():
            threading.Thread(target=_send_loop, args=(conn, self._outboxes[j]), name=f"smartboost-peer-{j}",
                             daemon=True).start()

    @classmethod
    def alone(cls) -> _Peers:
        """The links of a shard that has no peers (every collective returns its input)."""
        return cls(0, {}, [""], 0.0)

    @classmethod
    def connect(cls, rank: int, listener: Listener, addresses: list[tuple[str, int]], names: list[str],
                authkey: bytes, timeout: float) -> _Peers:
        """Connect to every other shard: accept the lower ranks on ``listener`` (closed after)
        and connect to the higher ones at their ``addresses``. Every shard must call it at the
        same time."""
        links: dict[int, Connection] = {}

        def accept() -> None:
            for _ in range(rank):
                conn = listener.accept()
                links[int.from_bytes(conn.recv_bytes(), "little")] = _no_delay(conn)

        acceptor = threading.Thread(target=accept, name="smartboost-peer-accept", daemon=True)
        acceptor.start()
        for j in range(rank + 1, len(addresses)):
            try:
                conn = _no_delay(Client(tuple(addresses[j]), authkey=authkey))
            except OSError as exc:
                raise DistributedError(f"worker {names[rank]} could not connect to worker {names[j]} at "
                                       f"{addresses[j]}: {exc}") from exc
            conn.send_bytes(rank.to_bytes(4, "little"))
            links[j] = conn
        acceptor.join(timeout)
        listener.close()
        missing = [names[j] for j in range(rank) if j not in links]
        if missing:
            raise DistributedError(f"worker {names[rank]} was not reached by worker(s) {', '.join(missing)} within "
                                   f"{timeout:g} s (smartboost.dask.train's timeout)")
        return cls(rank, links, names, timeout)

    def _send(self, j: int, array: np.ndarray) -> None:
        """Send ``array`` (contiguous) to peer ``j``: at once, or a copy through the link's thread."""
        self.bytes_sent += array.nbytes
        if array.nbytes > self._inline:
            self._outboxes[j].put(array.tobytes())
            return
        try:
            self.links[j].send_bytes(array)
        except OSError:  # the peer is gone, which the next receive from it reports
            pass

    def _receive(self, j: int, what: str) -> bytes:
        conn = self.links[j]
        me, peer = self.names[self.rank], self.names[j]
        try:
            if not conn.poll(self.timeout):
                raise DistributedError(f"worker {me} waited more than {self.timeout:g} s for worker {peer} in the "
                                       f"exchange of {what} ({self.context}; smartboost.dask.train's timeout)")
            return conn.recv_bytes()
        except (EOFError, OSError) as exc:
            raise DistributedError(f"worker {me} lost the connection to worker {peer} in the exchange of {what} "
                                   f"({self.context}): that worker died or was closed") from exc

    def all_gather(self, array: np.ndarray, what: str) -> list[np.ndarray]:
        """Every shard's ``array`` (all of one shape and dtype), in rank order."""
        for j in self.others:
            self._send(j, array)
        out = [array] * self.size
        for j in self.others:
            out[j] = np.frombuffer(self._receive(j, what), array.dtype)
        return out

    def all_reduce(self, flat: np.ndarray, what: str) -> None:
        """Replace the 1-d integer array ``flat`` by its sum over every shard (reduce-scatter,
        then all-gather; see the module docstring)."""
        if self.size == 1:
            return
        if self.size == 2:  # one round instead of two, for the same bytes: swap the whole arrays
            (j,) = self.others
            self._send(j, flat)
            flat += np.frombuffer(self._receive(j, what), flat.dtype)
            return
        bounds = flat.size * np.arange(self.size + 1) // self.size
        for j in self.others:
            self._send(j, flat[bounds[j]:bounds[j + 1]])
        mine = flat[bounds[self.rank]:bounds[self.rank + 1]]
        for j in self.others:
            mine += np.frombuffer(self._receive(j, what), flat.dtype)
        for j in self.others:
            self._send(j, mine)
        for j in self.others:
            flat[bounds[j]:bounds[j + 1]] = np.frombuffer(self._receive(j, what), flat.dtype)

    def close(self) -> None:
        """Stop the send threads and close the links."""
        for outbox in self._outboxes.values():
            outbox.put(None)
        for conn in self.links.values():
            conn.close()


def _large_buffers(conn: Connection) -> int:
    """Ask for the largest socket buffers the system allows on a link; its send buffer's size
    (as Linux reports it: twice the payload it holds)."""
    with socket.socket(fileno=os.dup(conn.fileno())) as sock:
        for option in (socket.SO_SNDBUF, socket.SO_RCVBUF):
            sock.setsockopt(socket.SOL_SOCKET, option, _BUFFER_BYTES)
        return sock.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF)


def _send_loop(conn: Connection, outbox: queue.SimpleQueue) -> None:
    """Send what is put in ``outbox`` on ``conn``, in order, until None. A failed send ends it:
    the peer is gone, which the next receive from it reports."""
    while (data := outbox.get()) is not None:
        try:
            conn.send_bytes(data)
        except OSError:
            return
