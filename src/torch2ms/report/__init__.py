"""One module per output format; each turns `FileResult`s into text. The text helpers they share with
the rest of the package (safe file names, paths, string tables) are in `torch2ms.strings`."""
