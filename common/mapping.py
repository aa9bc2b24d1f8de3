"""Nested mappings (DLIO workloads, manifests) read by dotted key."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def dotted_get(mapping: Mapping, path: str, default: Any = None) -> Any:
    """mapping["a"]["b"]["c"] for path "a.b.c"; default when a key is missing or a level is not a mapping."""
    node: Any = mapping
    for key in path.split("."):
        if not isinstance(node, Mapping) or key not in node:
            return default
        node = node[key]
    return node
