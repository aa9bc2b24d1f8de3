"""make bench: how close the kernel gets to the machine's limit, and how far ahead of DLIO 2.0.0 it is (issue 6).

One module per measurement (readpath, overhead, dlio, generation, scaling, profilers), each a function
`measure(ctx) -> dict` returning plain data (every repetition's raw values next to its summary); `plots` draws
them, `report` writes results.json, the PNGs and results.md. Nothing here asserts on time."""
