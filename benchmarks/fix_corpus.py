"""Usage programs through `torch2ms scan --fix --unsafe-fixes` (or `migrate`), run in torch and MindSpore.

    python benchmarks/fix_corpus.py [--jobs 2] [--through fix|migrate] [--only TOPIC[/NAME]] [--json FILE]
                                    [--show NAME]

The corpus is tests/data/usage_corpus/*.py (programs start at `# %% NAME`; see
torch2ms/verify/corpus.py). Each program is rewritten by the fix engine, run in torch and,
unless it still imports torch, in a MindSpore worker where `import torch` fails, and the
results are compared. `--through migrate` rewrites each program with `torch2ms migrate` (the whole port:
training steps, loaders and structure too) instead of the fix engine alone. Prints the count and share of each verdict, the silent differences
(which must be none) and the other failures grouped by cause. Exit code 1 when a program
silently differs, when the torch side of a program fails (a broken corpus program) or when
fewer than --min-same percent give torch's result.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "data" / "usage_corpus"


def main() -> int:
    sys.path.insert(0, str(ROOT))
    from torch2ms.config import Config
    from torch2ms.verify.corpus import DIFFERENT, FIX, REWRITERS, SAME, TORCH_FAILED, VERDICTS, load_corpus, \
        run_corpus, summary, to_json

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--through", choices=REWRITERS, default=FIX,
                        help="the rewrite: scan --fix --unsafe-fixes (fix) or the whole port (migrate)")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per program and side")
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--only", default=None, help="programs whose name starts with this (topic or topic/name)")
    parser.add_argument("--json", type=Path, default=None, help="write every program's verdict here")
    parser.add_argument("--show", action="append", default=[], metavar="NAME",
                        help="print the rewritten text and the verdict of this program")
    parser.add_argument("--min-same", type=float, default=90.0, help="percent that must give torch's result")
    parser.add_argument("--target-version", default=None, help="MindSpore version the fix writes for (default: the tables')")
    args = parser.parse_args()

    programs = load_corpus(args.corpus)
    if args.only:
        programs = [p for p in programs if p.ident.startswith(args.only)]
    if not programs:
        print("no programs selected", file=sys.stderr)
        return 2
    topics = sorted({p.topic for p in programs})
    print(f"{len(programs)} programs in {len(topics)} topics ({args.corpus.name}), jobs {args.jobs}, "
          f"MindSpore target version {args.target_version or 'default'}, rewritten by {args.through}")
    start = time.monotonic()
    config = Config(target_version=args.target_version) if args.target_version else Config()
    verdicts = run_corpus(programs, jobs=args.jobs, timeout=args.timeout, config=config,
                          progress=lambda line: print(f"  running {line}", file=sys.stderr), through=args.through)
    elapsed = time.monotonic() - start
    facts = summary(verdicts)
    total = facts["programs"]

    print(f"\n{'verdict':<26}{'programs':>9}{'share':>9}")
    for verdict in VERDICTS:
        count = facts["counts"][verdict]
        print(f"{verdict:<26}{count:>9}{100 * count / total:>8.1f}%")
    print(f"{'total':<26}{total:>9}")

    print(f"\n{'topic':<16}" + "".join(f"{v[:12]:>14}" for v in VERDICTS))
    for topic in topics:
        mine = [v for v in verdicts if v.program.topic == topic]
        print(f"{topic:<16}" + "".join(f"{sum(1 for x in mine if x.verdict == v):>14}" for v in VERDICTS))

    silent = [v for v in verdicts if v.verdict == DIFFERENT]
    print(f"\nsilent differences: {len(silent)}")
    for item in silent:
        print(f"  {item.program.ident}: {item.detail}")
        for note in item.notes:
            print(f"      {note}")
    for verdict, causes in facts["causes"].items():
        if verdict == DIFFERENT:
            continue
        print(f"\n{verdict}, by cause:")
        for cause, names in sorted(causes.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            shown = ", ".join(names[:6]) + (f", ... (+{len(names) - 6})" if len(names) > 6 else "")
            example = next(v for v in verdicts if v.verdict == verdict and v.cause == cause)
            print(f"  {len(names):>4}  {cause}: {shown}")
            if example.detail and example.detail != cause:
                print(f"        e.g. {example.detail[:200]}")
    for name in args.show:
        for item in verdicts:
            if item.program.ident == name:
                print(f"\n---- {name}: {item.verdict} {item.detail}\n{item.fixed}")
    if args.json:
        args.json.write_text(to_json(verdicts), encoding="utf-8")
    same = facts["counts"][SAME]
    print(f"\ngive torch's result: {same} of {total} ({100 * same / total:.1f}%); "
          f"silently different: {len(silent)}; {elapsed:.0f} s")
    if silent or facts["counts"][TORCH_FAILED] or 100 * same / total < args.min_same:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
