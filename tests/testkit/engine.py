"""The trials of one cell, as the engine runs a cell job (``run_cells`` with that cell alone)."""
from experiments.engine.trials import run_cells


def run_one_cell(spec, cell, **options):
    """One table: the trials of ``cell`` (``options``: those of :func:`run_cells`)."""
    return run_cells(spec, [cell], **options)[cell.id]
