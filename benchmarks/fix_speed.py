"""Speed of the fix machinery on torch's own sources (prints figures; not a test).

    python benchmarks/fix_speed.py [N_FILES]

Prints: the cost of building fixes with the findings during a scan (scan with
and without `fixes`), the throughput of `fix_text` (scan, apply, re-scan,
import clean-up) in safe and unsafe mode, and the time to select and apply the
fixes of one file with 2,000 fixable findings (the fix loop's round and the
editor's fix-all; target: at most 100 ms).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path


def main() -> None:
    import torch

    from torch2ms import engine, fix
    from torch2ms.config import Config
    from torch2ms.fix import fix_text
    from torch2ms.mappings import load_table

    count = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    root = Path(torch.__file__).resolve().parent
    files = sorted(root.rglob("*.py"))
    step = max(1, len(files) // count)
    texts = [p.read_text(encoding="utf-8", errors="replace") for p in files[::step][:count]]
    lines = sum(t.count("\n") for t in texts)
    table = load_table()
    config = Config()

    def scan_all(with_fixes: bool = True) -> tuple[float, int]:
        start = time.process_time()
        fixes = 0
        for text in texts:
            result = engine.scan_source(text, "x.py", config, table, fixes=with_fixes)
            fixes += sum(1 for d in result.diagnostics if d.fix is not None)
        return time.process_time() - start, fixes

    scan_all()  # warm up
    with_fixes, fixes = scan_all()
    without, _ = scan_all(with_fixes=False)
    print(f"{len(texts)} files, {lines} lines of torch {torch.__version__}")
    print(f"scan with fixes built:       {with_fixes:6.2f} s CPU ({lines / with_fixes:,.0f} lines/s), {fixes} fixes")
    print(f"scan without fixes:          {without:6.2f} s CPU ({lines / without:,.0f} lines/s)")
    print(f"overhead of building fixes:  {100 * (with_fixes - without) / without:5.1f} %")
    for unsafe in (False, True):
        start = time.process_time()
        changed = applied = 0
        for text in texts:
            out = fix_text(text, "x.py", config, unsafe, table)
            changed += out.text != text
            applied += len(out.applied)
        spent = time.process_time() - start
        mode = "unsafe" if unsafe else "safe"
        print(f"fix_text ({mode:6}):            {spent:6.2f} s CPU ({lines / spent:,.0f} lines/s), "
              f"{applied} fixes in {changed} files")


    # One round of the fix loop over a file with 2,000 fixable findings (what fix-all does).
    many = "import torch\n\n\ndef f(x):\n" + "".join(f"    y{i} = torch.abs(x) + torch.cat([x, x], dim=0)\n"
                                                       for i in range(1000))
    result = engine.scan_source(many, "many.py", config, table)
    diags = [d for d in result.diagnostics if d.fix is not None]
    runs = []
    for _ in range(5):
        start = time.perf_counter()
        new, applied = fix._select(many, diags, False)
        runs.append(time.perf_counter() - start)
    print(f"select + apply {len(diags)} fixes of one file: {1000 * min(runs):6.1f} ms "
          f"(best of 5; {len(applied)} applied; target <= 100 ms)")


if __name__ == "__main__":
    main()
