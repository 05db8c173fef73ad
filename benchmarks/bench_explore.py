#!/usr/bin/env python3
"""How fast the explorer answers: every state of every widget on the built-in corpora, through
the HTTP API of a fresh server, the way the page asks (issue 12: "on the built-in corpora every
interaction answers in under 100 ms").

    python benchmarks/bench_explore.py            # after the server's warm-up (the page's case)
    python benchmarks/bench_explore.py --cold     # without waiting for the warm-up

Each state is asked twice: the first answer may compute (the fits a state needs are cached by
the widgets), the second is the cache. Prints, per widget, the states, the median and the worst
first answer, and how many first answers took 100 ms or more.
"""

from __future__ import annotations

import argparse
import http.client
import json
import statistics
import threading
import time

from subwords.explore import widgets as W
from subwords.explore.server import ExplorerServer


def ask(port: int, widget: str, state: dict) -> float:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    body = json.dumps({"widget": widget, "state": state})
    start = time.perf_counter()
    conn.request("POST", "/api/compute", body, {"X-Subwords": "1", "Content-Type": "application/json"})
    reply = conn.getresponse()
    reply.read()
    took = time.perf_counter() - start
    conn.close()
    if reply.status not in (200, 400):
        raise SystemExit(f"{widget} {state}: HTTP {reply.status}")
    return took


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cold", action="store_true", help="do not wait for the server's warm-up")
    a = ap.parse_args()
    t0 = time.perf_counter()
    srv = ExplorerServer("127.0.0.1", 0)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    port = srv.server_address[1]
    if not a.cold:
        srv.warm.join()
        print(f"warm-up (every widget's opening state): {time.perf_counter() - t0:.2f} s")
    slow_total = states_total = 0
    print(f"{'widget':16} {'states':>6} {'median ms':>10} {'worst ms':>9} {'>=100 ms':>9} {'cached ms':>10}")
    for w in W.WIDGETS.values():
        states = W.all_states(w)
        first = [ask(port, w.id, s) for s in states]
        again = [ask(port, w.id, s) for s in states]
        slow = sum(t >= 0.1 for t in first)
        slow_total += slow
        states_total += len(states)
        print(f"{w.id:16} {len(states):6} {1000 * statistics.median(first):10.1f} {1000 * max(first):9.1f} "
              f"{slow:9} {1000 * max(again):10.1f}")
    print(f"{states_total} states; {slow_total} first answers took 100 ms or more")
    srv.shutdown()
    srv.server_close()


if __name__ == "__main__":
    main()
