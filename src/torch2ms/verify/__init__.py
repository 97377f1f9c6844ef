"""The verify backend: run each mapping's examples in real torch and real MindSpore and compare.

Modules: `cases` (which examples, per-entry verdicts), `pool` (long-lived worker
processes with time and memory limits), `worker` (the only module that imports
torch and MindSpore, and only inside a worker process), `compare` (NumPy-only
comparison), `record` (the verification record, src/torch2ms/data/verification.json),
`locate` (``torch2ms verify FILE:LINE``), `command` (the CLI), and for whole usage programs
`program_worker` (runs a program on one side; torch cannot be imported on the MindSpore side) and
`corpus` (programs through ``--fix``, run on both sides, compared: benchmarks/fix_corpus.py).

Importing this package imports neither torch nor MindSpore.
"""

from .record import EntryRecord, Record, load_record

__all__ = ["EntryRecord", "Record", "load_record"]
