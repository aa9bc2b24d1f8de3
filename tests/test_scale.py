"""Validation that scales (issue 26 item 2; docs/scale.md): the streaming parsers give the tables the whole-trace
parsers gave, at any cut of the stream, and a planted divergence (a missing read, two opens swapped, an extra open)
fails the same check with the same detail as before. Every expectation is derived here from the planted trace
itself (where the divergence was put), never from the parser's output."""
from __future__ import annotations

import gzip
import json
import re
import shutil
from pathlib import Path

import pytest

from common.rundir import RunDir, loads_table
from profiles import dftracer
from profiles.dftracer import measures
from profiles.logvfd import records as logvfd  # the parse itself: its _MARGIN and _CHUNK are patched here
from validate.checks import validate

DATA = Path(__file__).resolve().parent / "data"
RUN_TINY = DATA / "run-tiny"
LOGVFD = DATA / "logvfd" / "kernel-rt0"   # 2 ranks, 12 opens each
# the DFTracer fixture's run root, and run-tiny's, whose launches the comparison classifies paths by
TRACE_ROOT, RUN_ROOT = "/tmp/hruns/unet3d-tiny-20261122-010153", "/tmp/h5runs2/unet3d-tiny-20261122-010853"
OPEN_LINE = re.compile(r"^\s*0-\s*8 \(\s*8 bytes\) \(H5FD_MEM_SUPER\) Allocated")  # the first record of an open


# ---------------------------------------------------------------- HDF5 Log VFD

def opens(text: str) -> list[list[str]]:
    """A rank's stderr as its opens, each the list of its lines (the test's own reading: every open starts with
    the signature probe's allocation); the lines before the first open are opens()[0] only if there are none."""
    out: list[list[str]] = []
    for line in text.splitlines(keepends=True):
        if OPEN_LINE.match(line) or not out:
            out.append([])
        out[-1].append(line)
    return out


def draw(o: list[str]) -> list[str]:
    return [x.split("(")[0].strip() for x in o if "H5FD_MEM_DRAW) Read" in x]


def whole_text_blocks(text: str) -> list[list[str]]:
    """The blocks as the parser before streaming made them: the regex over the whole text, split, normalized."""
    blocks, _ = logvfd.split_blocks(logvfd.parse(text))
    return [list(logvfd.normalize_block(b)) for b in blocks]


def rank_texts() -> dict[str, str]:
    return {r: p.read_text() for r, p in ((p.parent.name.split(".")[1], p)
                                          for p in sorted(LOGVFD.glob("1/rank.*/stderr")))}


@pytest.mark.parametrize("lines", [True, False])
@pytest.mark.parametrize("chunk,margin", [(5, 4096), (37, 200), (4096, 4096), (1 << 22, 4096)])
def test_streamed_log_vfd_records_are_the_whole_texts_at_any_cut(monkeypatch, chunk, margin, lines):
    """Every capture, glued and not, three times over: the records streamed in pieces of `chunk` characters are the
    regex's over the whole text, in order; the table's blocks are the whole-text blocks. Also with every line end
    replaced (one line of ~10^5 characters: the stream is then cut only after records far from a piece's end)."""
    monkeypatch.setattr(logvfd, "_MARGIN", margin)
    for p in sorted((DATA / "logvfd").glob("*/1/rank.*/stderr")):
        text = p.read_text(errors="replace") * 3
        text = text if lines else text.replace("\n", "#")
        got = list(logvfd._stream_records(text[i:i + chunk] for i in range(0, len(text), chunk)))
        assert got == logvfd.parse(text), p
        t = logvfd.rank_table_stream(text[i:i + chunk] for i in range(0, len(text), chunk))
        assert t["blocks"] == whole_text_blocks(text) and t["records"] == len(got), p


def test_compact_table_reads_back_as_the_blocks():
    t = logvfd.parse_dir(LOGVFD)
    text = json.dumps(logvfd.compact(t))
    assert "blocks" not in json.loads(text)["ranks"]["0"]
    assert loads_table(text) == t
    assert loads_table(json.dumps(t)) == t  # a table stored before (blocks written out) reads as it did


def swap_at(os_: list[list[str]]) -> int:
    """The first open from #2 on whose raw read differs from the next one's (swapping them changes the order)."""
    return next(i for i in range(2, len(os_) - 1) if draw(os_[i]) != draw(os_[i + 1]))


def plant(kind: str, text: str) -> tuple[str, int, int]:
    """(the stream with the divergence, the first open whose block differs from the original's, opens after)"""
    os_ = opens(text)
    if kind == "missing_read":
        i = 5
        k = next(j for j, x in enumerate(os_[i]) if "H5FD_MEM_DRAW) Read" in x)
        os_[i] = os_[i][:k] + os_[i][k + 1:]
        return "".join(map("".join, os_)), i, len(os_)
    if kind == "swapped":
        i = swap_at(os_)
        os_[i], os_[i + 1] = os_[i + 1], os_[i]
        return "".join(map("".join, os_)), i, len(os_)
    if kind == "extra_open":
        i = swap_at(os_)  # open i again right after itself: open i+1 is then a copy of i, unlike the original's
        os_.insert(i + 1, list(os_[i]))
        return "".join(map("".join, os_)), i + 1, len(os_)
    raise ValueError(kind)


def tiny_run(tmp_path: Path) -> Path:
    run = tmp_path / "run"
    shutil.copytree(RUN_TINY, run)
    (run / "verdict.json").unlink()
    return run


def put_logvfd(run: Path, side: str, texts: dict[str, str], tmp_path: Path) -> None:
    """Per-rank streams -> the launch's table as the harness stores it (collect: compact)."""
    d = tmp_path / f"ranks-{side}"
    for r, text in texts.items():
        (d / "1" / f"rank.{r}").mkdir(parents=True, exist_ok=True)
        (d / "1" / f"rank.{r}" / "stderr").write_text(text)
    RunDir(run).write_table(f"logvfd-rt0-{side}.json", json.dumps(logvfd.compact(logvfd.parse_dir(d))))


@pytest.mark.parametrize("kind", ["none", "missing_read", "swapped", "extra_open"])
def test_planted_log_vfd_divergence_fails_the_sequence_check_at_its_open(tmp_path, monkeypatch, kind):
    """Both sides the kernel's capture, rank 0 of one side with a planted divergence, its stream read in 64-character
    pieces: logvfd.sequence.rt0.rank0 fails at the planted open with the blocks the whole-text parse gives there
    (the detail the check printed before streaming); rank 1 and the control (nothing planted) pass."""
    monkeypatch.setattr(logvfd, "_CHUNK", 64)
    texts = rank_texts()
    run = tiny_run(tmp_path)
    put_logvfd(run, "dlio", texts, tmp_path)
    if kind == "none":
        planted, at, n = texts["0"], None, len(opens(texts["0"]))
    else:
        planted, at, n = plant(kind, texts["0"])
    put_logvfd(run, "kernel", {**texts, "0": planted}, tmp_path)
    rows = {c["name"]: c for c in validate(run)["checks"]}
    r0, r1 = rows["logvfd.sequence.rt0.rank0"], rows["logvfd.sequence.rt0.rank1"]
    assert r1["status"] == "pass"
    if at is None:
        assert r0["status"] == "pass" and r0["detail"] == f"{n} blocks identical in order"
        return
    want, got = whole_text_blocks(texts["0"]), whole_text_blocks(planted)
    assert len(got) == n and want[:at] == got[:at] and want[at] != got[at]
    assert r0["status"] == "fail"
    assert r0["detail"] == f"first difference at open #{at}: DLIO {want[at]} | kernel {got[at]}"
    assert (r0["expected"], r0["observed"]) == (len(want), n)


# ---------------------------------------------------------------- DFTracer

def trace_lines(side: str) -> dict[str, list[str]]:
    return {p.name[:-len(".gz")].replace(f"{side}-", ""): gzip.open(p, "rt").read().replace(TRACE_ROOT, RUN_ROOT)
            .splitlines(keepends=True) for p in sorted((DATA / "dftracer").glob(f"{side}-*.pfw.gz"))}


def put_dftracer(run: Path, side: str, files: dict[str, list[str]], tmp_path: Path) -> Path:
    d = tmp_path / f"dft-{side}"
    d.mkdir()
    for name, lines in files.items():
        (d / name).write_text("".join(lines))
    t = dftracer.parse(d, side, Path(f"{RUN_ROOT}/{side}/data"))
    RunDir(run).write_table(f"dftracer-timeline-{side}.json", t.pop("timeline"))
    RunDir(run).write_table(f"dftracer-{side}.json", t)
    return d


def data_line(lines: list[str], call: str, skip: int = 0) -> int:
    hits = [i for i, x in enumerate(lines) if f'"name":"{call}"' in x and f"{RUN_ROOT}/kernel/data/" in x]
    return hits[skip]


def fname(line: str) -> str:
    return json.loads(line.strip().rstrip(","))["args"]["fname"].split("/data/", 1)[1]


@pytest.mark.parametrize("kind", ["none", "missing_read", "extra_open"])
def test_planted_dftracer_divergence_fails_per_file_naming_the_file(tmp_path, kind):
    """The kernel's trace with one data-file pread removed, or one open written twice: dftracer.per_file fails with
    one file differing, the one planted, in the field planted; the control passes."""
    run = tiny_run(tmp_path)
    put_dftracer(run, "dlio", trace_lines("dlio"), tmp_path)
    files = trace_lines("kernel")
    name = sorted(files)[0]
    lines = files[name]
    if kind == "missing_read":
        i = data_line(lines, "pread64", 3)
        f, field = fname(lines[i]), "reads"
        del lines[i]
    elif kind == "extra_open":
        i = data_line(lines, "open64", 2)
        f, field = fname(lines[i]), "opens"
        lines.insert(i + 1, lines[i])
    put_dftracer(run, "kernel", files, tmp_path)
    row = next(c for c in validate(run)["checks"] if c["name"] == "dftracer.per_file")
    if kind == "none":
        assert row["status"] == "pass", row
        return
    assert row["status"] == "fail" and row["detail"].startswith("1 files differ; first: "), row
    first = row["detail"].split("first: ", 1)[1]
    assert f"'file': '{f}'" in first and f"'field': '{field}'" in first


def test_swapped_opens_change_the_process_order_and_nothing_else(tmp_path):
    """Two data-file opens of one process with their start times swapped: the per-file table is unchanged (a
    multiset), the process's open sequence (what dftracer.batches orders) has the two files swapped."""
    files = trace_lines("kernel")
    name = sorted(files)[0]
    lines = files[name]
    i, j = data_line(lines, "open64", 0), data_line(lines, "open64", 1)
    a, b = (json.loads(lines[k].strip().rstrip(",")) for k in (i, j))
    assert a["pid"] == b["pid"] and fname(lines[i]) != fname(lines[j])
    d0, d1 = tmp_path / "orig", tmp_path / "swapped"
    for d, ls in ((d0, lines), (d1, [*lines])):
        d.mkdir()
        if d == d1:
            ls[i] = ls[i].replace(f'"ts":"{a["ts"]}"', f'"ts":"{b["ts"]}"')
            ls[j] = ls[j].replace(f'"ts":"{b["ts"]}"', f'"ts":"{a["ts"]}"')
        for n, x in files.items():
            (d / n).write_text("".join(ls if n == name else x))
    data = Path(f"{RUN_ROOT}/kernel/data")
    t0, t1 = dftracer.parse(d0, "kernel", data), dftracer.parse(d1, "kernel", data)
    assert t0["files"] == t1["files"]
    fi, fj = fname(lines[i]), fname(lines[j])
    seq0 = [s for r in t0["process_opens"].values() for s in r]
    seq1 = [s for r in t1["process_opens"].values() for s in r]
    # the process's list: its first opens of fi and fj trade places, every other list as it was
    swapped = []
    for s in seq0:
        s = list(s)
        if fi in s and fj in s:
            p, q = s.index(fi), s.index(fj)
            s[p], s[q] = s[q], s[p]
        swapped.append(s)
    assert seq1 != seq0 and seq1 == swapped


# ---------------------------------------------------------------- bounded timeline and figures

def test_a_long_timeline_lane_keeps_every_sth_event_and_its_exact_counts(monkeypatch):
    """A lane over LANE_EVENTS keeps every s-th event (s a power of two) in trace order, at most LANE_EVENTS, and the
    lane's whole count, count per kind and seconds per kind; a lane under the limit keeps all, with no 'sampled'."""
    monkeypatch.setattr(measures, "LANE_EVENTS", 10)
    kinds = ["pread", "open", "close", "compute"]
    ev = [{"rank": 0, "pid": "7", "name": kinds[i % 4], "ts": 100.0 + i, "dur": 0.5 if i % 4 == 0 else 0.25}
          for i in range(100)]
    t = dftracer.Timeline()
    for e in ev:
        t.add(e)
    t.add({"rank": 1, "pid": "8", "name": "pread", "ts": 100.0, "dur": 1.0})
    long, short = t.result()["lanes"]
    s = long["sampled"]
    assert s["events"] == 100 and s["counts"] == {"close": 25, "compute": 25, "open": 25, "read": 25}
    assert s["seconds"] == {"close": 6.25, "compute": 6.25, "open": 6.25, "read": 12.5}
    # the smallest power of two s with ceil(100 / s) <= 10
    assert s["every"] == 16 and [e["t"] for e in long["events"]] == [float(i) for i in range(0, 100, 16)]
    assert "sampled" not in short and len(short["events"]) == 1


def test_the_report_draws_a_bounded_part_of_a_lane_and_says_so():
    from profiles.dftracer import report as figures

    lane = {"label": "rank 0 pid 7", "events": [{"t": i, "d": 0.1, "kind": "read"} for i in range(5000)]}
    shown, label = figures.thin(lane)
    assert len(shown) <= figures.LANE_POINTS and shown[0]["t"] == 0
    assert label == f"rank 0 pid 7 ({len(shown)} of 5000 events)"
    small = {"label": "x", "events": lane["events"][:10], "sampled": {"events": 640}}
    assert figures.thin(small) == (small["events"], "x (10 of 640 events)")  # the trace table's own sampling counted
    assert figures.thin({"label": "y", "events": lane["events"][:10]}) == (lane["events"][:10], "y")
