"""torch2ms.lsp: the language server, a thin pygls adapter over the scanner core.

Start it with ``torch2ms lsp`` (stdio) or ``torch2ms lsp --tcp HOST:PORT``;
see docs/lsp.md.
"""
