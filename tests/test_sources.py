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


# ------------------------------------------------------------------ the Python packages: one direction, no circle
REPO = SRC.parent.parent
PACKAGES = ("common", "harness", "profiles", "validate", "reports", "fidelity")
# what each package may import of the repository (docs/ARCHITECTURE.md: data and imports flow one way)
MAY_IMPORT = {"common": set(), "profiles": {"common"}, "reports": {"common"},
              "validate": {"common", "profiles"}, "harness": {"common", "profiles"},
              "fidelity": {"common", "profiles", "harness", "validate", "reports"}}


def python_graph(root: Path = REPO) -> dict[str, set[str]]:
    """module -> the repository modules it imports, at any depth of its code (function-level imports included)."""
    import ast
    g: dict[str, set[str]] = {}
    for pkg in PACKAGES:
        for f in sorted((root / pkg).rglob("*.py")):
            parts = list(f.relative_to(root).with_suffix("").parts)
            mod = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            deps: set[str] = set()
            for node in ast.walk(ast.parse(f.read_text())):
                names = [node.module] if isinstance(node, ast.ImportFrom) and node.module and not node.level else \
                    [a.name for a in node.names] if isinstance(node, ast.Import) else []
                for n in names:
                    if n.split(".")[0] in PACKAGES:
                        deps.add(n)
                        if isinstance(node, ast.ImportFrom):  # `from pkg import module`
                            deps |= {f"{n}.{a.name}" for a in node.names
                                     if (root / n.replace(".", "/") / f"{a.name}.py").exists()}
            g[mod] = deps - {mod}
    return g


def test_python_import_graph_finds_a_planted_circle(tmp_path):
    for pkg in PACKAGES:
        (tmp_path / pkg).mkdir()
    (tmp_path / "harness" / "a.py").write_text("def f():\n    from harness.b import x\n")
    (tmp_path / "harness" / "b.py").write_text("from harness import a\nx = 1\n")
    g = python_graph(tmp_path)
    assert cycle(g) == ["harness.a", "harness.b", "harness.a"]


def test_python_packages_have_no_import_circle():
    g = python_graph()
    assert {"harness.run", "harness.dlio", "harness.workload", "profiles.compare"} <= set(g), sorted(g)
    assert cycle(g) is None, f"import circle: {' -> '.join(cycle(g))}"


def test_python_imports_flow_one_way():
    bad = sorted(f"{m} imports {d}" for m, deps in python_graph().items() for d in deps
                 if d.split(".")[0] != m.split(".")[0] and d.split(".")[0] not in MAY_IMPORT[m.split(".")[0]])
    assert not bad, bad
