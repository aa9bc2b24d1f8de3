"""The kernel's modules form no include circle: each module (x.c + x.h) only depends on modules below it. The Python
packages import one way, with no circle, and no Python or kernel C function grows over 80 lines."""
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
PACKAGES = ("common", "harness", "profiles", "validate", "reports", "fidelity", "store")
# what each package may import of the repository (docs/ARCHITECTURE.md: data and imports flow one way)
MAY_IMPORT = {"common": set(), "profiles": {"common"}, "reports": {"common"},
              "validate": {"common", "profiles"}, "harness": {"common", "profiles"},
              "fidelity": {"common", "profiles", "harness", "validate", "reports"},
              "store": {"common"}}  # the run store reads run directories through common.rundir only


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


# ------------------------------------------------------------------ the Python functions: one job each, <= 80 lines
MAX_FUNCTION_LINES = 80
FUNCTION_DIRS = PACKAGES + ("scripts", "bench/perf")
# "path::function": why it cannot be split into named steps. Empty: every function could be.
LONG_FUNCTIONS_ALLOWED: dict[str, str] = {}


def long_functions(root: Path = REPO, limit: int = MAX_FUNCTION_LINES) -> dict[str, int]:
    """'path::function' -> its lines (def line to last line, nested functions counted in their parent too), for every
    function of the Python packages, scripts/ and bench/perf/ longer than limit."""
    import ast
    out: dict[str, int] = {}
    for d in FUNCTION_DIRS:
        for f in sorted((root / d).rglob("*.py")):
            for node in ast.walk(ast.parse(f.read_text())):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    n = node.end_lineno - node.lineno + 1
                    if n > limit:
                        out[f"{f.relative_to(root).as_posix()}::{node.name}"] = n
    return out


def test_long_function_finder_finds_a_planted_long_function(tmp_path):
    for d in FUNCTION_DIRS:
        (tmp_path / d).mkdir(parents=True)
    body = "".join(f"    x{i} = {i}\n" for i in range(79))
    (tmp_path / "reports" / "a.py").write_text(f"def ok():\n{body}\n\ndef too_long():\n{body}    x = 0\n")
    method = "".join("    " + line for line in body.splitlines(keepends=True))
    (tmp_path / "bench" / "perf" / "b.py").write_text(f"class C:\n    def m(self):\n{method}        return\n")
    assert long_functions(tmp_path) == {"reports/a.py::too_long": 81, "bench/perf/b.py::m": 81}


def test_no_python_function_over_80_lines():
    found = long_functions()
    too_long = {k: n for k, n in found.items() if k not in LONG_FUNCTIONS_ALLOWED}
    assert not too_long, f"split into named steps, one job each (or allow with a reason): {too_long}"
    stale = set(LONG_FUNCTIONS_ALLOWED) - set(found)
    assert not stale, f"allowed but no longer over {MAX_FUNCTION_LINES} lines: remove {stale}"



# ------------------------------------------------------------------ the kernel's C functions: one job each, <= 80 lines
# "bench/src/file.c::function": why it is not split into named steps (yet). Empty: every function is within the limit.
C_LONG_FUNCTIONS_ALLOWED: dict[str, str] = {}
C_NOT_CODE = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)  # comments, literals


def _blank(m: re.Match) -> str:
    """The match as spaces, its newlines kept (line numbers stay true)."""
    return re.sub(r"[^\n]", " ", m.group())


def c_long_functions(root: Path = REPO, limit: int = MAX_FUNCTION_LINES) -> dict[str, int]:
    """'bench/src/file.c::function' -> its lines (the line naming it to its closing brace) for every function defined in
    bench/src/*.c longer than limit. A crude scan, enough for this code: comments, strings, character literals and
    preprocessor lines blanked, then a brace at depth 0 whose text since the last ';' or '}' ends with a ')' opens a
    function body (an initializer's '= {' does not: data tables are not functions)."""
    out: dict[str, int] = {}
    for f in sorted((root / "bench" / "src").glob("*.c")):
        text = re.sub(r"^[ \t]*#[^\n]*", _blank, C_NOT_CODE.sub(_blank, f.read_text()), flags=re.M)
        depth, start, head = 0, 0, None
        for i, ch in enumerate(text):
            if ch == "{":
                if depth == 0:
                    m = re.search(r"(\w+)\s*\([^;{}]*\)$", text[start:i].rstrip())
                    head = (m.group(1), text.count("\n", 0, start + m.start(1)) + 1) if m else None
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0:
                    n = text.count("\n", 0, i) + 2 - head[1] if head else 0
                    if n > limit:
                        out[f"{f.relative_to(root).as_posix()}::{head[0]}"] = n
                    start, head = i + 1, None
            elif ch == ";" and depth == 0:
                start = i + 1
    return out


def test_c_long_function_finder_finds_a_planted_long_function(tmp_path):
    (tmp_path / "bench" / "src").mkdir(parents=True)
    def body(n: int) -> str:  # n lines, each with a brace in a comment
        return "".join(f"    x += {i}; /* {{ */\n" for i in range(n))
    (tmp_path / "bench" / "src" / "a.c").write_text(
        "static const int T[] = {\n" + "".join(f"    {i},\n" for i in range(100)) + "};\n"  # a table: not a function
        f"static int ok(int x)\n{{\n{body(77)}}}\n\n"  # 80 lines
        f"int too_long(int x,\n             const char *s)\n{{\n    if (x) {{\n        s = \"}}\";\n    }}\n"
        f"{body(74)}}}\n")  # 81 lines, a brace in a string
    assert c_long_functions(tmp_path) == {"bench/src/a.c::too_long": 81}


def test_no_c_function_over_80_lines():
    found = c_long_functions()
    too_long = {k: n for k, n in found.items() if k not in C_LONG_FUNCTIONS_ALLOWED}
    assert not too_long, f"split into named steps, one job each (or allow with a reason): {too_long}"
    stale = set(C_LONG_FUNCTIONS_ALLOWED) - set(found)
    assert not stale, f"allowed but no longer over {MAX_FUNCTION_LINES} lines: remove {stale}"

# ------------------------------------------------------------------ inside reports/: one flow, down once
# read the directory (rundir) -> rows (tables) -> blocks (sections; paper on top of them; figures draws) -> files (doc)
REPORTS_MAY_IMPORT = {
    "reports": set(),
    "reports.rundir": set(),
    "reports.tables": {"reports.rundir"},
    "reports.doc": set(),
    "reports.figures": {"reports.doc"},
    "reports.sections": {"reports.rundir", "reports.tables", "reports.figures", "reports.doc"},
    "reports.paper": {"reports.rundir", "reports.tables", "reports.sections", "reports.figures", "reports.doc"},
    "reports.__main__": {"reports.rundir", "reports.sections", "reports.paper", "reports.doc"},
}


def reports_flow_breaks(g: dict[str, set[str]]) -> list[str]:
    """Each reports module's imports of reports/ that go against the flow (or a module the flow does not place)."""
    bad = []
    for m, deps in sorted(g.items()):
        if m.split(".")[0] != "reports":
            continue
        if m not in REPORTS_MAY_IMPORT:
            bad.append(f"{m}: not placed in REPORTS_MAY_IMPORT")
            continue
        bad += [f"{m} imports {d}" for d in sorted(deps) if d.startswith("reports.")
                and d not in REPORTS_MAY_IMPORT[m]]
    return bad


def test_reports_flow_finds_a_planted_back_call(tmp_path):
    for pkg in PACKAGES:
        (tmp_path / pkg).mkdir()
    (tmp_path / "reports" / "sections.py").write_text("from reports.tables import f3\n")
    (tmp_path / "reports" / "tables.py").write_text("def f3():\n    from reports import sections\n")
    (tmp_path / "reports" / "extra.py").write_text("")
    assert reports_flow_breaks(python_graph(tmp_path)) == ["reports.extra: not placed in REPORTS_MAY_IMPORT",
                                                           "reports.tables imports reports.sections"]


def test_reports_data_flows_one_way():
    g = python_graph()
    assert set(REPORTS_MAY_IMPORT) <= set(g), sorted(set(REPORTS_MAY_IMPORT) - set(g))
    assert not reports_flow_breaks(g), reports_flow_breaks(g)


def document_writers(root: Path = REPO) -> list[str]:
    """The reports modules that call doc.write (the one writer of report.md/.html/.tex, figures and tables)."""
    import ast
    out = []
    for f in sorted((root / "reports").glob("*.py")):
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "write" \
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == "doc":
                out.append(f.name)
                break
    return out


def test_reports_are_written_in_one_place(tmp_path):
    assert document_writers() == ["__main__.py"]   # run and paper reports alike: read -> build -> write, once
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "paper.py").write_text("from reports import doc\n\n\ndef render(d):\n"
                                                   "    doc.write(d, 't', [])\n")
    assert document_writers(tmp_path) == ["paper.py"]


# ------------------------------------------------------------------ docs/ARCHITECTURE.md names only what exists
ARCHITECTURE = REPO / "docs" / "ARCHITECTURE.md"


def _defines(text: str, name: str, c: bool) -> bool:
    """Does a source text define name: Python def/class/assignment; C array, typedef or function definition."""
    import re
    n = re.escape(name)
    pats = [rf"\b{n}\s*\[\]", rf"\}}\s*{n}\s*;", rf"(?m)^[A-Za-z_][^;\n]*\b{n}\s*\("] if c else \
        [rf"(?m)^\s*(def|class)\s+{n}\b", rf"(?m)^\s*{n}\s*(:[^=\n]*)?="]
    return any(re.search(p, text) for p in pats)


def architecture_breaks(page: Path = ARCHITECTURE, root: Path = REPO) -> list[str]:
    """What the page names that does not exist: a repository path (`dir/file`, `{a,b}` expanded; a bare `x.c`/`x.h`
    is bench/src/x), a `file::name` whose file does not define name, a `make target` no Makefile defines. Names with
    `<placeholder>` or `*` and paths inside a run directory (no such file in the repository) are not paths here."""
    import re
    text = page.read_text()
    make = "\n".join(f.read_text() for f in [root / "Makefile", *sorted((root / "mk").glob("*.mk"))])
    bad: list[str] = []
    for tok in sorted(set(re.findall(r"`([^`\n]+)`", text))):
        if tok.startswith("make "):
            target = tok.split()[1]
            if not re.search(rf"(?m)^{re.escape(target)}:", make):
                bad.append(f"`{tok}`: no make target {target}")
            continue
        path, _, name = tok.partition("::")
        if " " in path or "<" in path or "*" in path or not ("/" in path or re.fullmatch(r"[\w-]+\.[ch]", path)):
            continue
        if "/" not in path:
            path = f"bench/src/{path}"
        m = re.fullmatch(r"(.*)\{([^}]+)\}(.*)", path)
        for p in [m.group(1) + x + m.group(3) for x in m.group(2).split(",")] if m else [path]:
            f = root / p
            if not f.exists():
                bad.append(f"`{tok}`: no {p}")
            elif name and not _defines(f.read_text(), name, f.suffix in (".c", ".h")):
                bad.append(f"`{tok}`: {p} defines no {name}")
    return bad


def test_architecture_check_finds_planted_wrong_names(tmp_path):
    (tmp_path / "mk").mkdir()
    (tmp_path / "Makefile").write_text("build:\n\ttrue\n")
    (tmp_path / "bench" / "src").mkdir(parents=True)
    (tmp_path / "bench" / "src" / "dlio.c").write_text("static const dlio_entry_t DLIO_ENTRIES[] = {0};\n"
                                                      "/* DLIO_KEYS is mentioned, not defined */\n")
    (tmp_path / "harness").mkdir()
    (tmp_path / "harness" / "run.py").write_text("def plan():\n    pass\nSTEPS = 1\n")
    page = tmp_path / "A.md"
    page.write_text("`make build` `make bulid` `dlio.c` `vol.c` `harness/run.py::plan` `harness/run.py::STEPS` "
                    "`harness/run.py::launch` `bench/src/dlio.c::DLIO_ENTRIES` `bench/src/dlio.c::DLIO_KEYS` "
                    "`harness/{run,sweep}.py` `runs/<id>/manifest.json` `tables/*.json` `harness/`\n")
    assert architecture_breaks(page, tmp_path) == [
        "`bench/src/dlio.c::DLIO_KEYS`: bench/src/dlio.c defines no DLIO_KEYS",
        "`harness/run.py::launch`: harness/run.py defines no launch",
        "`harness/{run,sweep}.py`: no harness/sweep.py",
        "`make bulid`: no make target bulid",
        "`vol.c`: no bench/src/vol.c"]


def test_architecture_names_only_what_exists():
    assert not architecture_breaks(), architecture_breaks()
