"""A suggested order of work for the report: leaf modules first, then the files closest to done.

A file comes after the project files it imports that still have work in them (porting and testing a
module is easier once what it imports is MindSpore already); among the files free to start, the one
with the least work left comes first (a file done early is a file that can be tested early). Import
cycles are broken at the file with the fewest imports still open (then the least work).
"""

from __future__ import annotations

import heapq

from collections.abc import Mapping, Set
from dataclasses import dataclass


@dataclass(frozen=True)
class Step:
    """One file in the order: its index, the work files it waits for, whether it is in an import cycle."""

    file: int
    after: tuple[int, ...]
    cycle: bool = False


def work_order(work: Mapping[int, tuple[int, ...]], imports: Mapping[int, Set[int]]) -> list[Step]:
    """The files of `work` (index -> a key, smaller is less work left) in the suggested order; `imports`:
    per file, the files it imports (those without work are ignored)."""
    needs = {f: {i for i in imports.get(f, ()) if i in work and i != f} for f in work}
    open_needs = {f: set(n) for f, n in needs.items()}
    waiting = {f: len(n) for f, n in needs.items()}
    users: dict[int, list[int]] = {f: [] for f in work}
    for f, n in needs.items():
        for i in n:
            users[i].append(f)
    ready = [(work[f], f) for f, count in waiting.items() if not count]
    heapq.heapify(ready)
    placed: list[Step] = []
    done: set[int] = set()
    while len(done) < len(work):
        cycle = not ready
        if cycle:  # every file left waits for another: start in a cycle, where the fewest imports are open
            members = _a_cycle(min(f for f in work if f not in done), open_needs)
            first = min(members, key=lambda f: (waiting[f], work[f], f))
            heapq.heappush(ready, (work[first], first))
        _, chosen = heapq.heappop(ready)
        if chosen in done:
            continue
        done.add(chosen)
        placed.append(Step(chosen, tuple(sorted(needs[chosen])), cycle))
        for user in users[chosen]:
            open_needs[user].discard(chosen)
            waiting[user] -= 1
            if not waiting[user] and user not in done:
                heapq.heappush(ready, (work[user], user))
    return placed


def _a_cycle(start: int, open_needs: Mapping[int, Set[int]]) -> list[int]:
    """The files of an import cycle reached from `start` by following open imports (every file left has
    one, so the walk comes back to a file it has seen)."""
    path: list[int] = []
    seen: dict[int, int] = {}
    node = start
    while node not in seen:
        seen[node] = len(path)
        path.append(node)
        node = min(open_needs[node])
    return path[seen[node]:]
