#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# new_conn.py: median seconds of one _search request on a fresh TCP connection, timed
# from connect to the last byte with a plain socket (used by bench/server.sh). curl's
# time_total also counts curl's own setup before it connects (about 0.6 ms here), which
# is the client's cost, not the server's.
#   new_conn.py PORT BODY_JSON REPS
import socket
import sys
import time

port, body, reps = int(sys.argv[1]), sys.argv[2].encode(), int(sys.argv[3])
req = (b"POST /api/v1/db/bench/_search HTTP/1.1\r\nHost: 127.0.0.1\r\n"
       b"Content-Type: application/json\r\nConnection: close\r\n"
       b"Content-Length: %d\r\n\r\n" % len(body)) + body


def one():
    t0 = time.perf_counter()
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(req)
    got = []
    while True:
        b = s.recv(1 << 16)
        if not b:
            break
        got.append(b)
    s.close()
    t = time.perf_counter() - t0
    if not b"".join(got).startswith(b"HTTP/1.1 200"):
        sys.exit("new_conn.py: the request failed")
    return t


one()  # warm
ts = sorted(one() for _ in range(reps))
print("%.6f" % ts[len(ts) // 2])
