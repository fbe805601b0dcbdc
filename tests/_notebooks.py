"""The example notebooks as a reader gets them: executed by a real Jupyter kernel (nbclient,
ipykernel) and exported to HTML by nbconvert, as ``jupyter nbconvert --execute --to html`` does."""

from __future__ import annotations

import os
from pathlib import Path

import _deadlines as deadlines

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"
#: one notebook per journey
JOURNEYS = ("evaluate", "compare_and_brief", "failures", "counterfactual")
PLOTLY_MIMETYPE = "application/vnd.plotly.v1+json"


def execute(name: str, folder: Path):
    """The notebook ``examples/<name>.ipynb`` run in a fresh kernel (working directory ``folder``),
    this checkout first on the kernel's ``PYTHONPATH``."""
    import nbclient
    import nbformat

    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    return run_in_kernel(nbformat.read(EXAMPLES / f"{name}.ipynb", as_version=4), folder)


def run_in_kernel(nb, folder: Path, attempts: int = 3):
    """``nb`` executed by nbclient in a new ``python3`` kernel whose working directory is ``folder``.

    The kernel talks over Unix sockets in ``folder`` (no TCP port another process of the suite could take
    between the choice and the bind). A kernel that exits before answering its first message, before any
    cell ran, is started again up to ``attempts`` times in all; the last failure names the kernel's stderr."""
    import nbclient
    from traitlets.config import Config

    config = Config({"KernelManager": {"transport": "ipc", "ip": str(folder / "kernel")}})
    for attempt in range(1, attempts + 1):
        log = folder / f"kernel-stderr-{attempt}.txt"
        with log.open("w", encoding="utf-8") as stderr:
            try:
                nbclient.NotebookClient(nb, timeout=int(deadlines.SUBPROCESS), kernel_name="python3", config=config,
                                        resources={"metadata": {"path": str(folder)}}).execute(stderr=stderr)
                return nb
            except RuntimeError as error:
                if "before replying to kernel_info" not in str(error) or attempt == attempts:
                    stderr.flush()
                    raise RuntimeError(f"{error}; the kernel's stderr: {log.read_text(encoding='utf-8')[-2000:]}") from error


def export_html(nb, path: Path) -> Path:
    """``nb`` exported by nbconvert's HTML exporter (its default template) to ``path``."""
    from nbconvert import HTMLExporter

    body, _ = HTMLExporter().from_notebook_node(nb)
    path.write_text(body, encoding="utf-8")
    return path


def outputs(cell) -> dict:
    """Every mimetype a code cell's outputs hold (its last output's value of each)."""
    out = {}
    for o in cell.get("outputs", []):
        out.update(o.get("data", {}))
    return out


def figure_cells(nb) -> list:
    return [c for c in nb.cells if c.cell_type == "code" and PLOTLY_MIMETYPE in outputs(c)]
