"""The package's extras install what the docs' Python examples import.

A user who runs ``pip install './python[EXTRA]'`` as the docs say and then an
example of the docs must not meet an ImportError: every module a ``python``
block of the docs imports is the standard library's, timeaware's own, or
installed by an extra (directly, or as a dependency of the framework the extra
installs: TRL brings torch and transformers).
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
DOCS = [REPO / "README.md", REPO / "python" / "README.md", *sorted((REPO / "docs").glob("*.md")),
        *sorted((REPO / "examples").glob("*/README.md"))]
BLOCK = re.compile(r"```python\n(.*?)```", re.S)
IMPORT = re.compile(r"^\s*(?:from\s+([\w.]+)\s+import|import\s+([\w.]+))", re.M)

# Modules a framework an extra lists brings with it.
BROUGHT_BY = {"torch": "trl", "transformers": "trl", "accelerate": "trl"}


def requirement_name(req: str) -> str:
    return re.split(r"[<>=!~\[; ]", req, maxsplit=1)[0].strip().lower()


def extras() -> dict[str, set[str]]:
    project = tomllib.loads((REPO / "python" / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return {name: {requirement_name(r) for r in reqs} for name, reqs in project["optional-dependencies"].items()}


def doc_imports() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for doc in DOCS:
        for block in BLOCK.findall(doc.read_text(encoding="utf-8")):
            for a, b in IMPORT.findall(block):
                found.setdefault((a or b).split(".")[0], set()).add(str(doc.relative_to(REPO)))
    return found


def test_every_doc_import_is_installed_by_an_extra():
    provided = set().union(*extras().values())
    names = set(extras())
    missing = {}
    for module, docs in doc_imports().items():
        if module in sys.stdlib_module_names or module == "timeaware":
            continue
        if module in provided or BROUGHT_BY.get(module) in names:
            continue
        missing[module] = sorted(docs)
    assert not missing, f"modules the docs import that no extra installs: {missing}"


def test_the_docs_imports_are_found():
    # The check above reads real imports: the README's quickstarts import datasets and trl.
    imports = doc_imports()
    assert {"datasets", "trl", "asyncio"} <= set(imports)


def test_the_trl_extra_installs_what_the_quickstart_loads_with():
    # The README's DPO quickstart loads the pairs with datasets, which reads Parquet with pyarrow.
    assert {"trl", "datasets", "pyarrow"} <= extras()["trl"]
    assert {"datasets", "pyarrow"} <= extras()["data"]


def test_the_openenv_client_example_needs_only_the_openenv_extra():
    # docs/openenv.md installs timeaware[openenv] and then runs its client
    # example, which reads the synth rows with pyarrow.
    doc = (REPO / "docs" / "openenv.md").read_text(encoding="utf-8")
    assert "pip install 'timeaware[openenv] @ ./python'" in doc
    client = next(b for b in BLOCK.findall(doc) if "TimeawareEnvClient" in b)
    needed = {(a or b).split(".")[0] for a, b in IMPORT.findall(client)} - set(sys.stdlib_module_names) - {"timeaware"}
    assert needed <= extras()["openenv"] | {"openenv"}, needed - extras()["openenv"]
