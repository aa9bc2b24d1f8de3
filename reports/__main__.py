"""python -m reports DIR: render DIR/report/{report.md, report.html, figures/*.png} from a run directory (made by
`python -m harness run`) or a paper directory (made by `make paper`), and print the report's path last.

Exit status: 0 rendered, 2 DIR is not a run or paper directory."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from common.rundir import REPORT
from reports import doc, paper, sections
from reports.rundir import NotARunDir, PaperData, load


def setup_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument("run_dir", type=Path, help="a run directory (manifest.json) or a paper directory (paper.json)")
    p.add_argument("--out", type=Path, default=None, help="report folder (default: DIR/report)")


def render(run_dir: Path, out: Path | None = None) -> Path:
    """Render one run or paper directory; returns the report.md path. Raises NotARunDir. The one flow of reports/:
    read the directory (rundir) -> its sections' blocks (sections, paper; rows from tables) -> the files (doc)."""
    src = load(run_dir)
    if isinstance(src, PaperData):
        for r in src.runs:  # each run's own full report, linked from the paper's comparison table
            doc.write(r.path / REPORT, *sections.build(r))
        out = out or run_dir / REPORT
        return doc.write(out, *paper.build(src, out))
    src.report_dir = out or run_dir / REPORT
    return doc.write(src.report_dir, *sections.build(src))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m reports", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    setup_parser(p)
    a = p.parse_args(argv)
    try:
        md = render(a.run_dir, a.out)
    except NotARunDir as e:
        print(f"reports: error: {e}", file=sys.stderr)
        return 2
    print(f"reports: {md.with_name('report.html')} (figures in {md.parent / 'figures'})")
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
