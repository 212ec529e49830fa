"""The links among the shards: every shard connected to every other, and the two collectives
that growing a tree together needs over them (``docs/concepts/distributed.md``).

- :meth:`Peers.all_reduce` sums an integer array over every shard, in place: a reduce-scatter
  (shard ``j`` receives every other shard's ``j``-th slice of the array and adds them up) and
  an all-gather of the summed slices. Each shard sends and receives ``2 (W - 1) / W`` times the
  array in ``2 (W - 1)`` messages, in two rounds whatever the number of shards ``W``; two shards
  swap their whole arrays instead, the same bytes in one round. Integer cells make the sum exact
  in any order.
- :meth:`Peers.reduce_scatter` is the first half alone: shard ``j`` receives every other
  shard's part ``j`` and adds them to its own, so that it holds the sum of part ``j`` only.
  Each shard sends and receives ``(W - 1) / W`` of the array, in one round. The growth loop
  uses it for histograms, of which each shard scans its own share of the features.
- Both send their int64 parts *narrowed* (``_kernels.messages``): the width ``k`` of the
  message, then ``k`` bytes a value, the fewest that hold every value of the message in two's
  complement. Histogram cells are sums of 30-bit row values and typically need 5 of their 8
  bytes; the receiver widens them back exactly.
- :meth:`Peers.all_gather` gives every shard every shard's copy of a small array, and
  :meth:`Peers.gather_concat` every shard's arrays of differing sizes, concatenated (the
  partial sums of the line searches, ``smartboost.steps.exact_sum``).

The links are TCP connections, authenticated with the run's key by ``multiprocessing.connection``
when they open, one per pair of shards (the lower rank connects to the higher), with socket
buffers as large as the system allows. Then they carry bare array bytes: every shard runs the
same growth loop, so the receiver knows each message's number of values and reads it straight
into its array (a narrowed message: its header and one byte a value first, then the rest). Two
shards send each other their slices at the same time, and then receive: a message that fits a
quarter of the send buffer (two in flight, with room to spare) is written at once,
since the write cannot block; a larger one goes through a thread of its link, so that two
shards writing each other a large message do not wait on each other's receive. Every receive
(and write) waits at most ``timeout`` seconds; a stalled or lost peer raises
:class:`~smartboost.errors.DistributedError` naming both workers and the exchange.
"""

from __future__ import annotations

import os
import queue
import socket
import threading
from multiprocessing.connection import Client, Connection, Listener

import numpy as np

from .._kernels.messages import HEADER, narrow_into, widen_add
from ..errors import DistributedError
from ._transport import no_delay

_BUFFER_BYTES = 1 << 22  # the socket buffers asked for (the system caps them)


class Peers:
    """One shard's links to every other shard.

    Parameters
    ----------
    rank : int
        This shard's position among the shards.
    links : dict of int to Connection
        The (authenticated) connection to every other shard, by its rank; taken over.
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
        self.others = sorted(links)
        self.links = {j: _bare_socket(conn, timeout) for j, conn in links.items()}
        self.bytes_sent = 0
        self.context = ""  # where in training the exchanges happen, for messages
        self._inline = min((sock.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF) // 4
                            for sock in self.links.values()), default=0)
        self._scratch = np.empty(0, np.uint8)  # received messages
        self._narrowed = np.empty(0, np.uint8)  # the message being sent
        self._outboxes: dict[int, queue.SimpleQueue] = {j: queue.SimpleQueue() for j in links}
        for j, sock in self.links.items():
            threading.Thread(target=_send_loop, args=(sock, self._outboxes[j]), name=f"smartboost-peer-{j}",
                             daemon=True).start()

    @classmethod
    def alone(cls) -> Peers:
        """The links of a shard that has no peers (every collective returns its input)."""
        return cls(0, {}, [""], 0.0)

    @classmethod
    def connect(cls, rank: int, listener: Listener, addresses: list[tuple[str, int]], names: list[str],
                authkey: bytes, timeout: float) -> Peers:
        """Connect to every other shard: accept the lower ranks on ``listener`` (closed after)
        and connect to the higher ones at their ``addresses``. Every shard must call it at the
        same time."""
        links: dict[int, Connection] = {}

        def accept() -> None:
            for _ in range(rank):
                conn = listener.accept()
                links[int.from_bytes(conn.recv_bytes(), "little")] = no_delay(conn)

        acceptor = threading.Thread(target=accept, name="smartboost-peer-accept", daemon=True)
        acceptor.start()
        for j in range(rank + 1, len(addresses)):
            try:
                conn = no_delay(Client(tuple(addresses[j]), authkey=authkey))
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
            self.links[j].sendall(memoryview(array).cast("B"))
        except OSError:  # the peer is gone or stalled, which the next receive from it reports
            pass

    def _receive(self, j: int, out: np.ndarray, what: str) -> np.ndarray:
        """Fill ``out`` (contiguous) with the next ``out.nbytes`` bytes from peer ``j``."""
        sock, view = self.links[j], memoryview(out).cast("B")
        me, peer = self.names[self.rank], self.names[j]
        got = 0
        while got < view.nbytes:
            try:
                n = sock.recv_into(view[got:])
            except TimeoutError as exc:
                raise DistributedError(f"worker {me} waited more than {self.timeout:g} s for worker {peer} in the "
                                       f"exchange of {what} ({self.context}; smartboost.dask.train's timeout)") from exc
            except OSError as exc:
                n = 0
                cause = exc
            else:
                cause = None
            if n == 0:
                raise DistributedError(f"worker {me} lost the connection to worker {peer} in the exchange of {what} "
                                       f"({self.context}): that worker died or was closed") from cause
            got += n
        return out

    def _send_narrow(self, j: int, values: np.ndarray) -> None:
        """Send the int64 ``values`` to peer ``j`` narrowed (``_kernels.messages``); nothing
        when empty."""
        if values.size:
            if self._narrowed.size < HEADER + 8 * values.size:
                self._narrowed = np.empty(HEADER + 8 * values.size, np.uint8)
            self._send(j, self._narrowed[:narrow_into(values, self._narrowed)])

    def _receive_narrow(self, j: int, out: np.ndarray, what: str) -> None:
        """Add the next ``out.size`` int64 values from peer ``j``, sent narrowed, to ``out``: the
        header and one byte a value are read first, then the rest of the message."""
        n = out.size
        if n == 0:
            return
        if self._scratch.size < HEADER + 8 * n:
            self._scratch = np.empty(HEADER + 8 * n, np.uint8)
        self._receive(j, self._scratch[:HEADER + n], what)
        width = int(self._scratch[0])
        self._receive(j, self._scratch[HEADER + n:HEADER + width * n], what)
        widen_add(self._scratch[HEADER:HEADER + width * n], width, out)

    def all_gather(self, array: np.ndarray, what: str) -> np.ndarray:
        """Every shard's ``array`` (1-d, all of one size and dtype), a row each in rank order."""
        for j in self.others:
            self._send(j, array)
        out = np.empty((self.size, array.size), array.dtype)
        out[self.rank] = array
        for j in self.others:
            self._receive(j, out[j], what)
        return out

    def gather_concat(self, array: np.ndarray, what: str) -> np.ndarray:
        """Every shard's 1-d ``array`` (one dtype, sizes that may differ), concatenated in rank
        order: their sizes, then the arrays padded to the largest."""
        if self.size == 1:
            return array
        sizes = [int(n[0]) for n in self.all_gather(np.array([array.size], np.int64), what)]
        padded = np.zeros(max(sizes), array.dtype)
        padded[:array.size] = array
        return np.concatenate([part[:n] for part, n in zip(self.all_gather(padded, what), sizes)])

    def reduce_scatter(self, parts: list[np.ndarray], what: str) -> np.ndarray:
        """The sum over every shard of its ``parts[rank]`` (1-d integer arrays, part ``j`` of
        every shard of one size and dtype): each part ``j`` is sent to shard ``j``. This
        shard's own part is summed into in place and returned."""
        for j in self.others:
            self._send_narrow(j, parts[j])
        mine = parts[self.rank]
        for j in self.others:
            self._receive_narrow(j, mine, what)
        return mine

    def all_reduce(self, flat: np.ndarray, what: str) -> None:
        """Replace the 1-d integer array ``flat`` by its sum over every shard (reduce-scatter,
        then all-gather; see the module docstring)."""
        if self.size == 1:
            return
        if self.size == 2:  # one round instead of two, for the same bytes: swap the whole arrays
            (j,) = self.others
            self._send_narrow(j, flat)
            self._receive_narrow(j, flat, what)
            return
        bounds = flat.size * np.arange(self.size + 1) // self.size
        for j in self.others:
            self._send_narrow(j, flat[bounds[j]:bounds[j + 1]])
        mine = flat[bounds[self.rank]:bounds[self.rank + 1]]
        for j in self.others:
            self._receive_narrow(j, mine, what)
        for j in self.others:
            self._send_narrow(j, mine)
        for j in self.others:
            flat[bounds[j]:bounds[j + 1]] = 0
            self._receive_narrow(j, flat[bounds[j]:bounds[j + 1]], what)

    def close(self) -> None:
        """Stop the send threads and close the links."""
        for outbox in self._outboxes.values():
            outbox.put(None)
        for sock in self.links.values():
            sock.close()


def _bare_socket(conn: Connection, timeout: float) -> socket.socket:
    """The socket of an authenticated link, taken over from ``conn`` (closed), with the largest
    buffers the system allows and ``timeout`` on every read and write."""
    sock = socket.socket(fileno=os.dup(conn.fileno()))
    conn.close()
    for option in (socket.SO_SNDBUF, socket.SO_RCVBUF):
        sock.setsockopt(socket.SOL_SOCKET, option, _BUFFER_BYTES)
    sock.settimeout(timeout)
    return sock


def _send_loop(sock: socket.socket, outbox: queue.SimpleQueue) -> None:
    """Send what is put in ``outbox`` on ``sock``, in order, until None. A failed send ends it:
    the peer is gone or stalled, which the next receive from it reports."""
    while (data := outbox.get()) is not None:
        try:
            sock.sendall(data)
        except OSError:
            return
