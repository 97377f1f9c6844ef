"""The verify backend: run each mapping's examples in real torch and real MindSpore and compare.

Modules: `cases` (which examples, per-entry verdicts), `pool` (long-lived worker
processes with time and memory limits), `worker` (the only module that imports
torch and MindSpore, and only inside a worker process), `compare` (NumPy-only
comparison), `record` (the verification record, mappings/verification.json),
`locate` (``torch2ms verify FILE:LINE``) and `command` (the CLI).

Importing this package imports neither torch nor MindSpore.
"""

from .record import EntryRecord, Record, load_record

__all__ = ["EntryRecord", "Record", "load_record"]
