"""The kernel's modules form no include circle: each module (x.c + x.h) only depends on modules below it."""
import re
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "bench" / "src"


def module_graph() -> dict[str, set[str]]:
    g: dict[str, set[str]] = {}
    for f in SRC.glob("*.[ch]"):
        deps = {i.rsplit(".", 1)[0] for i in re.findall(r'#include "([^"]+)"', f.read_text())}
        g.setdefault(f.stem, set()).update(deps - {f.stem})
    return g


def cycle(g: dict[str, set[str]]) -> list[str] | None:
    def walk(n: str, path: list[str]) -> list[str] | None:
        for k in sorted(g.get(n, ())):
            if k in path:
                return path[path.index(k):] + [k]
            found = walk(k, path + [k])
            if found:
                return found
        return None
    return next((c for n in sorted(g) if (c := walk(n, [n]))), None)


def test_cycle_finder_finds_a_planted_circle():
    assert cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert cycle({"a": {"b"}, "b": set()}) is None


def test_kernel_modules_have_no_include_circle():
    g = module_graph()
    assert {"util", "config", "dlio", "main"} <= set(g), sorted(g)
    assert cycle(g) is None, f"include circle: {' -> '.join(cycle(g))}"
    assert g["util"] <= set(), f"util.c/h is the bottom layer, it includes {g['util']}"
