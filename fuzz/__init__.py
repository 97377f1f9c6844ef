"""Fuzzing and soak tooling for torch2ms (not shipped in the wheel).

- `fuzz.mutate`: input sources (examples/, torch's installed sources) and mutators
  (truncation at token boundaries, byte flips, mixed line endings, long lines, deep
  nesting, huge files, identifier swaps).
- `fuzz.oracle`: the properties every input must satisfy (no exception, clear
  per-file TMS9xx errors, spans inside the text, fixes idempotent and parseable).
- `fuzz.runner`: runs oracle checks in a child process so a hang is caught and
  killed instead of stopping the run.
- `fuzz.strategies`: hypothesis strategies for torch-flavoured Python programs.
- `fuzz.lsp_client`: a raw JSON-RPC client over a server's stdio, for the soak.
- `python -m fuzz.campaign`: the long fuzz campaign; `python -m fuzz.soak_lsp`:
  the long language-server soak. Both print what they tried and found.
"""
