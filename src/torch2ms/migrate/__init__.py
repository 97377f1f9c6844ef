"""`torch2ms migrate`: turn PyTorch files into MindSpore files that run.

The modules, one concept each: `pipeline` (one file's text through scan, rewrites and re-scan),
`scope` (the root name rewrites write), `rules` (structural facts), `transform` (libcst
transformations), `imports` (libcst import management), `files` (trees, output paths, atomic
writes), `command` (the CLI adapter). Importing this package loads nothing heavy (libcst is loaded
by `pipeline`), so the CLI's parser can register the command cheaply.
"""
