"""Put on PYTHONPATH of DLIO's launches only when asked (`python -m harness run --dlio-quiet-index-map`,
`make validate DLIO_QUIET_MAP=1`; docs/scale-record.md): it shortens the text of DLIO's sample index map, nothing else.

DLIO formats its rank's whole sample -> (file, sample) map into a debug message at every sample it reads, whether
debug messages are logged or not (an f-string argument: DLIO 2.0.0 `reader/reader_handler.py:115`; the map is a dict
built by `utils/config.py:352-365` `get_global_map_index`, one entry per sample of the rank). Each read
then costs time in proportion to the rank's samples: measured here, 148,000 files on 2 ranks trained at ~6 samples/s
per rank (an epoch would take ~3.7 h), against ~370 at 10,000 files. Giving the map a short text removes that cost
and changes no read: the map's keys, values and lookups are DLIO's own (a dict subclass), and only its text is
shorter. DLIO 3.x (f6796ed) formats it too (`reader_handler.py:109`) but its map is a VirtualIndexMap whose text is
already short (`utils/config.py:41-105`): the module leaves anything but a dict alone. It patches
`get_global_map_index` as DLIO's config module is imported, in every DLIO process (reader processes included: each
starts Python with the same PYTHONPATH)."""
import importlib.abc
import importlib.machinery
import sys

TARGET = "dlio_benchmark.utils.config"


class QuietIndexMap(dict):
    """DLIO's index map with a short text (its contents unchanged)."""

    def __repr__(self):
        return f"<DLIO index map: {len(self)} samples; its text shortened by h5dlio's harness>"

    __str__ = __repr__

    def __format__(self, spec):
        return repr(self)


def _quiet(result):
    if isinstance(result, dict):
        return QuietIndexMap(result)
    if isinstance(result, tuple) and result and isinstance(result[0], dict):  # 3.x: (map, local sample sum)
        return (QuietIndexMap(result[0]),) + result[1:]
    return result


def _patch(module):
    cls = getattr(module, "ConfigArguments", None)
    original = getattr(cls, "get_global_map_index", None)
    if original is None:
        print(f"h5dlio: {TARGET} has no ConfigArguments.get_global_map_index: the index map's text is not "
              "shortened", file=sys.stderr)
        return

    def get_global_map_index(self, *args, **kwargs):
        return _quiet(original(self, *args, **kwargs))

    cls.get_global_map_index = get_global_map_index


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != TARGET:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            _patch(module)

        spec.loader.exec_module = exec_module
        return spec


sys.meta_path.insert(0, _Finder())
