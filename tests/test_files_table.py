"""tables/files-<profile>.json stays bounded at field scale (issue 26: validate's memory at 10^6 files): the rows
listed, the summary of every file, the scatter's pairs and the differences' counts, each against numbers written
here by hand, with planted divergences beyond the listed rows that must still show."""
from profiles import FAIL, PASS
from profiles.shared.files import Differences, FileRows, explained
from reports.sections import _difference_tables
from reports.tables import file_rows, file_summary

FIELDS = ("opens", "closes", "reads", "bytes")
STAT = "file-status probe"


def row(nbytes=6608, reads=9):
    return {"opens": 1, "closes": 1, "reads": reads, "bytes": nbytes, "sizes": {4096: 1, 512: 3}}


def filled(n=10_000, plant_at=()):
    t = FileRows(FIELDS)
    for i in range(n):
        name = f"train/{i:06d}.hdf5"
        t.add(name, row(), row(nbytes=4096) if i in plant_at else row())
    t.add("train/zz-only-kernel.hdf5", None, row())
    return t.table(differences=[])


def test_identical_files_are_counted_not_listed():
    tab = filled()
    assert tab["summary"] == {"files": 10_001, "identical": 10_000, "only_dlio": 0, "only_kernel": 1, "differ": 0,
                              "listed": 201}
    assert len(tab["rows"]) == 200 * 2 + 1  # both sides of the first 200, the kernel's row of the one-sided file
    assert sorted(map(tuple, tab["pairs"])) == [(0, 6608, False, 1), (6608, 6608, True, 10_000)]


def test_a_difference_past_the_listed_rows_is_listed_and_counted():
    """the negative control: file 9,000 of 10,000 planted (the kernel read 4,096 bytes, not 6,608)"""
    tab = filled(plant_at={9000})
    assert tab["summary"]["differ"] == 1 and tab["summary"]["identical"] == 9_999
    got = {r["side"]: r["bytes"] for r in tab["rows"] if r["file"] == "train/009000.hdf5"}
    assert got == {"dlio": 6608, "kernel": 4096}
    assert [6608, 4096, False, 1] in tab["pairs"]
    rows, points = file_rows(tab, FIELDS)
    assert rows[0][0] == "train/009000.hdf5" and rows[0][-1] == "NO"  # what differs comes first in the report
    assert sum(p["n"] for p in points) == 10_001
    assert file_summary(tab, rows) == tab["summary"]


def test_differing_rows_are_bounded_too():
    t = FileRows(FIELDS, listed=10, differing=50)
    for i in range(1000):
        t.add(f"f{i:04d}", row(), row(nbytes=1))
    tab = t.table(differences=[])
    assert tab["summary"]["differ"] == 1000 and tab["summary"]["listed"] == 50


def stat_diffs(n, unclassified=0):
    d = Differences()
    for i in range(n):
        d.append({"file": f"train/{i:06d}.hdf5", "field": "lstat", "dlio": 1, "kernel": 0, "class": STAT})
    for i in range(unclassified):
        d.append({"file": f"odd{i}", "field": "lseek", "dlio": 1, "kernel": 0, "class": None})
    return d


def test_classified_differences_are_counted_past_the_first_20():
    d = stat_diffs(5000)
    assert len(d) == 20 and d.dropped == 4980 and d.counts() == [["lstat", STAT, 5000]]
    r = explained("dftracer", list(d), d.dropped)
    assert r["status"] == PASS and r["detail"].startswith("5000 non-data differences")
    tab = FileRows(FIELDS).table(differences=d)
    classes, listed = _difference_tables("dftracer", tab, len(d) + d.dropped)
    assert classes.rows == [[STAT, "5000"]]
    assert len(listed.rows) == 20 and "the first 20 of 5000" in listed.caption


def test_an_unclassified_difference_is_always_listed_and_fails():
    """the negative control: 3 unexplained calls after 5,000 explained ones"""
    d = stat_diffs(5000, unclassified=3)
    assert len(d) == 23 and sum(x["class"] is None for x in d) == 3
    assert explained("dftracer", list(d), d.dropped)["status"] == FAIL
    classes, _ = _difference_tables("dftracer", FileRows(FIELDS).table(differences=d), len(d) + d.dropped)
    assert classes.rows == [[STAT, "5000"], ["UNEXPLAINED", "3"]]
