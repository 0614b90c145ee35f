"""Imports point one way: frame -> calibration -> vision -> rules -> service.

Checked from the source text with ``ast`` so that a forbidden import fails
here even when it is inside a function.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PROJECT_PACKAGES = {"rules", "vision", "calibration", "service", "tools"}

# What each package may import from the project (besides itself).
ALLOWED = {
    "rules": set(),
    "calibration": {"rules.board"},
    "vision": {"rules.board", "calibration"},
}


def _project_imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        found.update(n for n in names if n.split(".")[0] in PROJECT_PACKAGES)
    return found


def _allowed(package: str, imported: str) -> bool:
    if imported.split(".")[0] == package:
        return True
    return any(imported == a or imported.startswith(a + ".") for a in ALLOWED[package])


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_package_imports_only_what_flows_into_it(package: str) -> None:
    offenders = []
    for path in sorted((ROOT / package).rglob("*.py")):
        for imported in sorted(_project_imports(path)):
            if not _allowed(package, imported):
                offenders.append(f"{path.relative_to(ROOT)} imports {imported}")
    assert offenders == []
