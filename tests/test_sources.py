"""The kernel's modules form no include circle and no symbol circle (each object file references only the modules
below it). Every Python folder imports one way, with no circle (function-level imports seen too), and no Python or
kernel C function grows over 80 lines (over 60: listed as a warning)."""
import os
import re
import shutil
import subprocess
import warnings
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "bench" / "src"


def module_graph(src: Path = SRC) -> dict[str, set[str]]:
    g: dict[str, set[str]] = {}
    for f in src.glob("*.[ch]"):
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


# ------------------------------------------------------------------ the kernel's objects: no symbol circle
# An include shows what a module may use, not what it does: run.c and prefetch.c once referenced each other (a
# function one way, the data symbol LOADER_ASYNC_PREFETCH the other) with no include circle. The objects of the
# build say it: each object's undefined symbols, resolved to the object that defines them, are its module's edges.
BUILD = Path(os.environ.get("H5DLIO_BIN") or SRC.parent.parent / "build" / "h5dlio").resolve().parent


def object_modules(build: Path) -> dict[str, Path]:
    """'src/run' -> its object, for every C object CMake built under build (src/, tools/, tests/ of bench/: the
    object's path without CMake's `CMakeFiles/<target>.dir/` part, `.c.o` dropped)."""
    out = {}
    for o in sorted(build.rglob("CMakeFiles/*.dir/**/*.c.o")):
        rel = o.relative_to(build).parts
        i = rel.index("CMakeFiles")
        out["/".join(rel[:i] + rel[i + 2:])[: -len(".c.o")]] = o
    return out


def symbol_graph(objects: dict[str, Path]) -> dict[str, set[str]]:
    """module -> the modules defining a symbol it references (nm: 'U' or a weak 'w' reference; a definition is any
    global symbol type but U: code T, data D/B/R/C, weak W/V). A symbol several objects define (main) resolves to
    each of them but the referrer."""
    defs: dict[str, set[str]] = {}
    refs: dict[str, set[str]] = {}
    for mod, o in objects.items():
        nm = subprocess.run(["nm", "-P", str(o)], capture_output=True, text=True, check=True).stdout
        refs[mod] = set()
        for line in nm.splitlines():
            name, kind = line.split()[:2]
            if kind in ("U", "w"):
                refs[mod].add(name)
            elif kind.isupper():
                defs.setdefault(name, set()).add(mod)
    return {m: {d for s in rs for d in defs.get(s, ()) if d != m} for m, rs in refs.items()}


def _cc() -> str:
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("mpicc")
    assert cc, "no C compiler on PATH (the kernel's build needs one)"
    return cc


def test_symbol_graph_finds_a_planted_circle_the_includes_miss(tmp_path):
    (tmp_path / "src").mkdir()
    obj = tmp_path / "CMakeFiles" / "core.dir" / "src"
    obj.mkdir(parents=True)
    sources = {"a": "int b_fn(void);\nconst int A_TABLE[2] = {1, 2};\nint a_fn(void) { return b_fn() + 1; }\n",
               "b": "extern const int A_TABLE[2];\nint c_fn(void);\nint b_fn(void) { return A_TABLE[1] + c_fn(); }\n",
               "c": "int c_fn(void) { return 3; }\n"}
    for name, text in sources.items():
        (tmp_path / "src" / f"{name}.c").write_text(text)
        subprocess.run([_cc(), "-c", "-o", str(obj / f"{name}.c.o"), str(tmp_path / "src" / f"{name}.c")], check=True)
    assert cycle(module_graph(tmp_path / "src")) is None  # no #include at all: the include check sees nothing
    g = symbol_graph(object_modules(tmp_path))
    assert g == {"src/a": {"src/b"}, "src/b": {"src/a", "src/c"}, "src/c": set()}
    assert cycle(g) == ["src/a", "src/b", "src/a"]  # b -> a through the data symbol A_TABLE alone


def test_kernel_objects_have_no_symbol_circle():
    assert (BUILD / "CMakeFiles").is_dir(), f"{BUILD}: no CMake build beside H5DLIO_BIN (make build)"
    objects = object_modules(BUILD)
    want = {f"src/{f.stem}" for f in SRC.glob("*.c")} | {f"tools/{f.stem}" for f in (SRC.parent / "tools").glob("*.c")}
    assert want <= set(objects), f"not built under {BUILD} (make build): {sorted(want - set(objects))}"
    stale = sorted(m for m in want if objects[m].stat().st_mtime < (SRC.parent / f"{m}.c").stat().st_mtime)
    assert not stale, f"objects older than their source under {BUILD} (make build first): {stale}"
    g = symbol_graph(objects)
    assert "src/prefetch" in g["src/main"] and "src/run" in g["src/prefetch"], "the graph lost its known edges"
    assert cycle(g) is None, f"symbol circle: {' -> '.join(cycle(g))}"
    assert not g["src/util"], f"util.c is the bottom layer, it uses {g['src/util']}"


# ------------------------------------------------------------------ every Python folder: one direction, no circle
REPO = SRC.parent.parent
PACKAGES = ("common", "harness", "profiles", "validate", "reports", "store", "pipeline", "fidelity")
# every folder of Python the repository holds: the packages, then the programs and records on top of them
FOLDERS = PACKAGES + ("scripts", "bench/perf", "bench/results", "tests")
# what each folder may import of the repository (docs/ARCHITECTURE.md: data and imports flow one way)
# reports/ may import the profiles' registry package (profiles/__init__.py: the declarations a profile makes for the
# report), never a profile's own package: test_profile_names_stay_in_their_package_and_the_registry holds that
MAY_IMPORT = {"common": set(), "profiles": {"common"}, "reports": {"common", "profiles"},
              "validate": {"common", "profiles"}, "harness": {"common", "profiles"},
              "store": {"common"},  # the run store reads run directories through common.rundir only
              # run -> validate -> report in one process: above the three it calls (pipeline/__init__.py says why)
              # (and profiles: make audit's contract rows are the strace profile's, profiles/strace/audit.py)
              "pipeline": {"common", "profiles", "harness", "validate", "reports", "store"},
              "fidelity": {"common", "profiles", "harness", "validate", "reports", "pipeline"},
              "scripts": set(),  # make's helpers (make help, the DLIO venv): nothing of the repository
              "bench.perf": {"common", "profiles", "harness", "validate"},  # on top: measures what the pipeline runs
              "bench.results": {"common", "profiles", "harness", "validate"},  # the scripts a result was made with
              "tests": {f.replace("/", ".") for f in FOLDERS}}
ROOTS = {f.split("/")[0] for f in FOLDERS}  # the first names an import of the repository starts with


def folder_of(mod: str) -> str:
    """The folder (dotted, as in MAY_IMPORT) a module belongs to: the longest of FOLDERS it is inside."""
    return max((f.replace("/", ".") for f in FOLDERS if f"{mod}.".startswith(f.replace("/", ".") + ".")), key=len,
               default=mod.split(".")[0])


def _imports(f: Path, root: Path) -> set[str]:
    """The repository modules f imports anywhere in its code (function-level imports included): `pkg.mod`, the
    submodules of `from pkg import mod`, and a bare `import x` of a sibling file x.py (tests/, a results folder)."""
    import ast
    here = ".".join(f.parent.relative_to(root).parts)
    deps: set[str] = set()
    for node in ast.walk(ast.parse(f.read_text())):
        names = [node.module] if isinstance(node, ast.ImportFrom) and node.module and not node.level else \
            [a.name for a in node.names] if isinstance(node, ast.Import) else []
        for n in names:
            if n.split(".")[0] not in ROOTS and (f.parent / f"{n.split('.')[0]}.py").exists():
                n = f"{here}.{n}"  # a sibling module, imported by its bare name (the folder is on sys.path)
            elif n.split(".")[0] not in ROOTS:
                continue
            deps.add(n)
            if isinstance(node, ast.ImportFrom):  # `from pkg import module`
                pkg = root / n.replace(".", "/")
                deps |= {f"{n}.{a.name}" for a in node.names
                         if (pkg / f"{a.name}.py").exists() or (pkg / a.name / "__init__.py").exists()}
    return deps


def python_graph(root: Path = REPO) -> dict[str, set[str]]:
    """module -> the repository modules it imports, at any depth of its code, for every Python file of FOLDERS (a
    results script is a node named by its path, dots for slashes: it is run, not imported)."""
    g: dict[str, set[str]] = {}
    for folder in FOLDERS:
        for f in sorted((root / folder).rglob("*.py")):
            parts = list(f.relative_to(root).with_suffix("").parts)
            mod = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            g[mod] = _imports(f, root) - {mod}
    return g


def _folders(root: Path) -> None:
    for folder in FOLDERS:
        (root / folder).mkdir(parents=True, exist_ok=True)


def test_python_import_graph_finds_a_planted_circle(tmp_path):
    _folders(tmp_path)
    (tmp_path / "harness" / "a.py").write_text("def f():\n    from harness.b import x\n")
    (tmp_path / "harness" / "b.py").write_text("from harness import a\nx = 1\n")
    # bench/perf's report <-> scale, as it was: scale's markdown imported report's table inside the function
    (tmp_path / "bench" / "perf" / "report.py").write_text("from bench.perf import plots, scale\n")
    (tmp_path / "bench" / "perf" / "scale.py").write_text("def markdown(sec):\n    from bench.perf.report import "
                                                         "table\n    return table\n")
    (tmp_path / "bench" / "perf" / "plots.py").write_text("")
    g = python_graph(tmp_path)
    assert g["bench.perf.scale"] == {"bench.perf.report"}
    assert cycle(g) == ["bench.perf.report", "bench.perf.scale", "bench.perf.report"]
    del g["bench.perf.scale"]
    assert cycle(g) == ["harness.a", "harness.b", "harness.a"]


def test_python_import_graph_sees_sibling_imports_and_results_scripts(tmp_path):
    _folders(tmp_path)
    (tmp_path / "tests" / "kernel.py").write_text("import test_a\n")
    (tmp_path / "tests" / "test_a.py").write_text("from kernel import run\nimport numpy\n")
    day = tmp_path / "bench" / "results" / "2026-01-01-x"
    day.mkdir()
    (day / "summarize.py").write_text("def main():\n    from validate.checks import checks\n")
    (tmp_path / "profiles" / "echo").mkdir()   # a profile package: `from profiles import echo` is an edge to it
    (tmp_path / "profiles" / "echo" / "__init__.py").write_text("from profiles.echo.parse import parse\n")
    (tmp_path / "profiles" / "echo" / "parse.py").write_text("def parse():\n    from profiles import echo\n")
    g = python_graph(tmp_path)
    assert g["profiles.echo.parse"] == {"profiles", "profiles.echo"}
    assert cycle(g) == ["profiles.echo", "profiles.echo.parse", "profiles.echo"]
    (tmp_path / "profiles" / "echo" / "parse.py").write_text("def parse():\n    pass\n")
    g = python_graph(tmp_path)
    assert cycle(g) == ["tests.kernel", "tests.test_a", "tests.kernel"]
    assert g["bench.results.2026-01-01-x.summarize"] == {"validate.checks"}
    assert folder_of("bench.results.2026-01-01-x.summarize") == "bench.results"


def test_python_folders_have_no_import_circle():
    g = python_graph()
    assert {"harness.run", "harness.dlio", "harness.workload", "profiles.shared.paths", "bench.perf.report",
            "bench.perf.scale", "tests.kernel"} <= set(g), sorted(g)
    assert sum(m.startswith("bench.results.") for m in g) == len(list((REPO / "bench" / "results").rglob("*.py")))
    assert cycle(g) is None, f"import circle: {' -> '.join(cycle(g))}"


def one_way_breaks(g: dict[str, set[str]]) -> list[str]:
    """Each import of another folder that folder's MAY_IMPORT does not allow."""
    return sorted(f"{m} imports {d}" for m, deps in g.items() for d in deps
                  if folder_of(d) != folder_of(m) and folder_of(d) not in MAY_IMPORT[folder_of(m)])


def test_one_way_check_finds_a_planted_climb(tmp_path):
    _folders(tmp_path)
    (tmp_path / "profiles" / "p.py").write_text("def f():\n    from validate import checks\n")
    (tmp_path / "bench" / "perf" / "x.py").write_text("from fidelity import matrix\nfrom bench.perf import y\n")
    (tmp_path / "bench" / "perf" / "y.py").write_text("from harness.run import OTHER\n")
    assert one_way_breaks(python_graph(tmp_path)) == ["bench.perf.x imports fidelity",
                                                      "profiles.p imports validate"]


def test_python_imports_flow_one_way():
    assert not one_way_breaks(python_graph()), one_way_breaks(python_graph())



def unchecked_python(files: list[str], makefile_text: str) -> list[str]:
    """What escapes the Python checks: a tracked .py file in no folder of FOLDERS (the import test's), and a folder
    of FOLDERS `make lint`'s ruff line does not name."""
    lint = next(ln for ln in makefile_text.splitlines() if "ruff check" in ln).split()
    return sorted({f for f in files if not any(f.startswith(d + "/") for d in FOLDERS)} |
                  {f"make lint: {d}" for d in FOLDERS if d not in lint})


def test_unchecked_python_finds_a_planted_gap():
    make = "lint:\n\t@ruff check " + " ".join(d for d in FOLDERS if d != "bench/results") + "\n"
    assert unchecked_python(["harness/run.py", "tools/x.py", "bench/results/d/s.py"], make) == [
        "make lint: bench/results", "tools/x.py"]


def test_every_python_file_is_linted_and_in_the_import_test():
    files = subprocess.run(["git", "ls-files", "*.py"], cwd=REPO, capture_output=True, text=True, check=True)
    assert files.stdout, "git ls-files named no Python file"
    gaps = unchecked_python(files.stdout.split(), (REPO / "Makefile").read_text())
    assert not gaps, gaps

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


# ------------------------------------------------------------------ over 60 lines: listed, not failed
# 80 is the cap; a function near it is one change away from a split made in a hurry. Those over 60 are listed as a
# warning (pytest's warnings summary, in every run of this file) so the split is planned, not forced.
SOFT_FUNCTION_LINES = 60


class LongFunctionWarning(UserWarning):
    """Functions over SOFT_FUNCTION_LINES lines (not an error: the cap is MAX_FUNCTION_LINES)."""


def warn_long_functions(root: Path = REPO) -> list[str]:
    """Every Python and kernel C function over SOFT_FUNCTION_LINES lines, longest first, as 'path::name: n lines';
    warned as one LongFunctionWarning when there are any."""
    found = {**long_functions(root, SOFT_FUNCTION_LINES), **c_long_functions(root, SOFT_FUNCTION_LINES)}
    listed = [f"{k}: {n} lines" for k, n in sorted(found.items(), key=lambda kv: (-kv[1], kv[0]))]
    if listed:
        warnings.warn(LongFunctionWarning(f"{len(listed)} functions over {SOFT_FUNCTION_LINES} lines (the cap is "
                                          f"{MAX_FUNCTION_LINES}; split before it):\n  " + "\n  ".join(listed)),
                      stacklevel=2)
    return listed


def test_soft_limit_lists_a_planted_function_over_60_lines(tmp_path):
    for d in FUNCTION_DIRS:
        (tmp_path / d).mkdir(parents=True, exist_ok=True)
    (tmp_path / "bench" / "src").mkdir(parents=True, exist_ok=True)
    body = "".join(f"    x{i} = {i}\n" for i in range(59))
    (tmp_path / "harness" / "a.py").write_text(f"def sixty():\n{body}\n\ndef sixty_one():\n{body}    x = 0\n")
    c_body = "".join(f"    x += {i};\n" for i in range(59))
    (tmp_path / "bench" / "src" / "b.c").write_text(f"int f(int x)\n{{\n{c_body}    return x;\n}}\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        listed = warn_long_functions(tmp_path)
    assert listed == ["bench/src/b.c::f: 63 lines", "harness/a.py::sixty_one: 61 lines"]  # 1+1+59+1+1, 1+59+1
    assert [type(w.message) for w in caught] == [LongFunctionWarning] and "b.c::f: 63" in str(caught[0].message)
    (tmp_path / "harness" / "a.py").write_text(f"def sixty():\n{body}")
    (tmp_path / "bench" / "src" / "b.c").unlink()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert warn_long_functions(tmp_path) == [] and not caught


def test_functions_over_60_lines_are_listed():
    listed = warn_long_functions()
    assert all(int(x.rsplit(": ", 1)[1].split()[0]) > SOFT_FUNCTION_LINES for x in listed)

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


# ------------------------------------------------------------------ the run directory's names: spelled in one place
def _sources_but_the_contract(root: Path):
    """(path relative to root, parsed module) of every product Python file but common/rundir.py, the contract."""
    import ast
    for d in FUNCTION_DIRS:
        for f in sorted((root / d).rglob("*.py")):
            rel = f.relative_to(root).as_posix()
            if rel != "common/rundir.py":
                yield rel, ast.parse(f.read_text())


def run_name_literals(root: Path = REPO) -> list[str]:
    """'path:line: "name"' for every Python string constant equal to a run-directory name of the catalogue
    (common.rundir.RUN_NAMES: manifest.json, verdict.json, tables, report, ...) in the product folders (the
    packages, scripts/, bench/perf/) outside common/rundir.py, which spells them. The rule: a product file names a
    run directory's file or folder through the catalogue's constant, never as a literal (a rename or a new schema
    is one edit). Out of it: tests/ (a test states the layout it expects, by hand) and bench/results/ (dated scripts
    of a measurement, kept as they ran); the side names (SIDES: "dlio", "kernel") are also the programs' names
    everywhere and are not held to it; a name inside a longer string (a message, an f-string's text) is prose."""
    import ast

    from common.rundir import RUN_NAMES
    out = []
    for rel, tree in _sources_but_the_contract(root):
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in RUN_NAMES:
                out.append(f'{rel}:{node.lineno}: "{node.value}"')
    return out


def test_run_name_finder_names_a_planted_literal(tmp_path):
    for d in FUNCTION_DIRS:
        (tmp_path / d).mkdir(parents=True)
    (tmp_path / "reports" / "a.py").write_text('from common.rundir import MANIFEST\n\n'
                                               'ok = MANIFEST\nmsg = "no manifest.json here"\n'
                                               'bad = run / "manifest.json"\n')
    (tmp_path / "common" / "rundir.py").write_text('MANIFEST = "manifest.json"\n')
    (tmp_path / "bench" / "results").mkdir(parents=True)
    (tmp_path / "bench" / "results" / "s.py").write_text('x = "tables"\n')  # a dated script: out of the rule
    assert run_name_literals(tmp_path) == ['reports/a.py:5: "manifest.json"']


def test_no_literal_run_directory_name_outside_the_catalogue():
    found = run_name_literals()
    assert not found, f"name these through common.rundir's constants: {found}"


# ---------------------------------------------------------------- one reader (and writer) of a run directory

RUN_FILE_NAMES = ("MANIFEST", "VERDICT", "TABLES")    # common.rundir's constants naming a run's shared files
RUN_PATHS = ("manifest_path", "verdict_path", "tables")   # RunDir's paths to them
FILE_OPS = {"read_text", "read_bytes", "open", "write_text", "write_bytes", "glob", "rglob", "iterdir", "unlink"}
NOT_FILE_CALLS = {"str", "repr", "print", "relpath"}   # a call given RunDir's path that does not touch the file

# Files that still reach a run's manifest.json, verdict.json or tables/ without RunDir, and why (the list only
# shrinks: the test fails when a listed file no longer does).
RUN_FILES_ALLOWED: dict[str, str] = {
    "bench/perf/validation.py": "the validation-cost bench prepares a synthetic copy of a run: deletes and seeds "
                                "tables/ and verdict.json between timed steps, run by the measured tree",
}


def _run_path_root(node):
    """The expression a path is built from: a / b / c -> a."""
    import ast
    while isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        node = node.left
    return node


def _names(node) -> str | None:
    import ast
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None


def run_file_access(root: Path = REPO) -> list[str]:
    """'path:line: what' for every place in the product folders outside common/rundir.py that reaches a run's
    manifest.json, verdict.json or tables/ itself: a path built with their constant (x / MANIFEST), or a file
    operation (read, open, write, glob, unlink) on RunDir's path to them (rd.verdict_path.read_text()), or that
    path handed to a function (open, write_json_atomic, a reader of the module's own).
    Asking whether one exists (rd.verdict_path.exists()) is not reading it."""
    import ast
    out = []
    for rel, tree in _sources_but_the_contract(root):
        for node in ast.walk(tree):
            hit = None
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and \
                    _names(node.right) in RUN_FILE_NAMES:
                hit = f"/ {_names(node.right)}"
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                    node.func.attr in FILE_OPS and _names(_run_path_root(node.func.value)) in RUN_PATHS:
                hit = f".{_names(_run_path_root(node.func.value))}...{node.func.attr}()"
            elif isinstance(node, ast.Call) and _names(node.func) not in NOT_FILE_CALLS and \
                    any(_names(_run_path_root(a)) in RUN_PATHS for a in node.args):
                hit = f"{_names(node.func)}(<a run file>)"  # (open, write_json_atomic, a reader of its own)
            if hit:
                out.append(f"{rel}:{node.lineno}: {hit}")
    return out


def test_run_file_finder_names_planted_reads(tmp_path):
    for d in FUNCTION_DIRS:
        (tmp_path / d).mkdir(parents=True, exist_ok=True)
    (tmp_path / "fidelity" / "a.py").write_text(
        "from common.rundir import MANIFEST, RunDir\n"
        "ok = RunDir(run).manifest\nok2 = RunDir(run).verdict_path.exists()\n"
        "bad = json.loads((run / MANIFEST).read_text())\n"
        "bad2 = rd.verdict_path.read_text()\n"
        "write_json_atomic(rd.verdict_path, v)\nprint(rd.manifest_path)\n"
        "names = list(rd.tables.glob('*.json'))\n")
    (tmp_path / "common" / "rundir.py").write_text("x = (path / MANIFEST).read_text()\n")  # the one reader
    found = run_file_access(tmp_path)
    assert sorted(x.split(": ")[0] for x in found) == [f"fidelity/a.py:{n}" for n in (4, 5, 6, 8)]


def test_run_files_are_read_and_written_through_rundir_only():
    by_file: dict[str, list[str]] = {}
    for x in run_file_access():
        by_file.setdefault(x.split(":")[0], []).append(x)
    new = [x for f, xs in by_file.items() if f not in RUN_FILES_ALLOWED for x in xs]
    assert not new, f"read and write a run's manifest, verdict and tables through common.rundir.RunDir: {new}"
    paid = sorted(set(RUN_FILES_ALLOWED) - set(by_file))
    assert not paid, f"no longer reaches a run's files itself: remove from RUN_FILES_ALLOWED: {paid}"


def missing_members(cls: type, protocol: type) -> list[str]:
    """The members protocol declares (its annotations and methods) that instances of cls do not have as class
    attributes, properties or attributes set by __init__ (read from its source: `self.<name> =`)."""
    import inspect
    declared = set(getattr(protocol, "__annotations__", {})) | {
        n for n, v in vars(protocol).items() if callable(v) and not n.startswith("_")}
    set_in_init = set()
    for k in cls.__mro__:
        if k is not object and "__init__" in vars(k):
            set_in_init |= set(re.findall(r"self\.(\w+)\s*(?::[^=]*)?=", inspect.getsource(vars(k)["__init__"])))
    return sorted(n for n in declared if not hasattr(cls, n) and n not in set_in_init)


def test_the_profile_views_are_satisfied_by_rundir_and_its_readers(tmp_path):
    from common.rundir import RunDir
    from profiles import ReportView, RunView
    from reports.rundir import RunData
    from validate.checks import Run
    assert issubclass(Run, RunDir) and issubclass(RunData, RunDir)
    assert missing_members(Run, RunView) == []
    assert missing_members(RunData, ReportView) == []
    # negative control: a reader without the report's links does not satisfy the report's view
    assert missing_members(RunDir, ReportView) == ["link"]


# ---------------------------------------------------------------- a profile's name stays in its package

# Files outside profiles/ that still name a profile, and why (issue 38 item 1: each entry is a debt, and the test
# fails when a file listed here no longer names one, so the list only shrinks).
PROFILE_NAMES_ALLOWED: dict[str, str] = {
    "common/rundir.py": "the catalogue names tables/timing.json, the launches' times validate's nodes.* and runtime.* "
                        "and the report read",
    "pipeline/audit.py": "make audit replays a results leaf under the strace profile alone and has its tables judged "
                         "by profiles/strace/audit.py (docs/audit.md)",
    "bench/perf/validation.py": "the validation-cost benchmark parses the Log VFD's and DFTracer's traces, named in "
                                "one table (LOGVFD, DFTRACER), also on saved copies of older revisions that have no "
                                "registry or not this one; for this tree it checks profiles.KNOWN has both",
    "bench/perf/scale.py": "the scale benchmark takes the kernel's file order from its openat calls under strace, "
                           "found by the system-call profile's own lookup (strace_binary), for the same-order loop",
}


def profile_name_uses(root: Path = REPO, known: tuple[str, ...] | None = None) -> list[str]:
    """Every place outside profiles/ (and the dated bench/results scripts) that names a profile: an import of
    profiles.<name>, a string literal that is the name, or starts with "<name>." or "<name>-" (a step, a row, a
    table), the first text part of an f-string included."""
    import ast

    if known is None:
        from profiles import KNOWN
        known = tuple(KNOWN)
    mods = {f"profiles.{k}" for k in known}

    def named(text: str) -> bool:
        return any(text == k or text.startswith((f"{k}.", f"{k}-")) for k in known)
    out = []
    for d in FUNCTION_DIRS:
        if d == "profiles":
            continue
        for f in sorted((root / d).rglob("*.py")):
            rel = f.relative_to(root).as_posix()
            for node in ast.walk(ast.parse(f.read_text())):
                hit = None
                if isinstance(node, ast.ImportFrom) and node.module:
                    full = {node.module} | {f"{node.module}.{a.name}" for a in node.names}
                    hit = next((m for m in sorted(full) if ".".join(m.split(".")[:2]) in mods), None)
                elif isinstance(node, ast.Import):
                    hit = next((a.name for a in node.names if ".".join(a.name.split(".")[:2]) in mods), None)
                elif isinstance(node, ast.Constant) and isinstance(node.value, str) and named(node.value):
                    hit = repr(node.value)
                if hit:
                    out.append((rel, node.lineno, hit))
    return [f"{rel}:{n}: {hit}" for rel, n, hit in sorted(out)]


def test_profile_name_finder_names_planted_uses(tmp_path):
    for d in FUNCTION_DIRS:
        (tmp_path / d).mkdir(parents=True, exist_ok=True)
    (tmp_path / "validate" / "a.py").write_text(
        'from profiles import registry\nfrom profiles.echo import SHARED\nimport profiles.echo.parse\n'
        'msg = "echoes are fine"\nt = f"echo-{side}.json"\nrow = "echo.per_file"\nname = "echo"\n')
    (tmp_path / "profiles" / "echo.py").write_text('name = "echo"\n')
    (tmp_path / "reports" / "b.py").write_text('from profiles import echo\n')
    assert profile_name_uses(tmp_path, ("echo",)) == [
        "reports/b.py:1: profiles.echo", "validate/a.py:2: profiles.echo", "validate/a.py:3: profiles.echo.parse",
        "validate/a.py:5: 'echo-'", "validate/a.py:6: 'echo.per_file'", "validate/a.py:7: 'echo'"]


def test_profile_names_stay_in_their_package_and_the_registry():
    found = profile_name_uses()
    by_file: dict[str, list[str]] = {}
    for x in found:
        by_file.setdefault(x.split(":", 1)[0], []).append(x)
    new = [x for f, xs in by_file.items() if f not in PROFILE_NAMES_ALLOWED for x in xs]
    assert not new, ("a profile is named outside its package (declare it on the Profile: options, covers, claims, "
                     f"kernel_only; docs/ARCHITECTURE.md): {new}")
    paid = sorted(set(PROFILE_NAMES_ALLOWED) - set(by_file))
    assert not paid, f"no longer names a profile: remove from PROFILE_NAMES_ALLOWED: {paid}"
