"""Writing figures: matplotlib's Agg backend, loaded when first drawn, and every image through the one
output writer (io.output: a temporary beside the target, renamed over it; never one of the inputs)."""

from __future__ import annotations

from pathlib import Path

from ..errors import MedoptError
from ..io.output import output_file
from ..io.paths import check_output_file

IMAGE_SUFFIXES = (".png", ".pdf")


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def check_image_outputs(outputs, what: str = "-o", *, inputs=()) -> None:
    """Refuse, before any work, image files that are not .png / .pdf, cannot be written, or are one of
    ``inputs`` (or another of ``outputs``)."""
    for number, output in enumerate(outputs):
        if Path(output).suffix.lower() not in IMAGE_SUFFIXES:
            raise MedoptError(f"{output}: plots are written as .png or .pdf")
        check_output_file(output, what, inputs=[inputs, list(outputs[:number])], binary=True)


def _save(figure, outputs, *, inputs=()) -> None:
    check_image_outputs(outputs, inputs=inputs)
    try:
        for output in outputs:
            with output_file(output, "-o", inputs=inputs, binary=True, compress=False) as handle:
                figure.savefig(handle, dpi=150, bbox_inches="tight", format=Path(output).suffix.lower()[1:])
    finally:
        _pyplot().close(figure)


def save_pages(figures, outputs, *, inputs=()) -> None:
    """Several figures as the pages of each .pdf of ``outputs`` (through the one writer, as :func:`_save`)."""
    from matplotlib.backends.backend_pdf import PdfPages

    check_image_outputs(outputs, inputs=inputs)
    try:
        for output in outputs:
            if Path(output).suffix.lower() != ".pdf":
                raise MedoptError(f"{output}: several pages are written to a .pdf only")
            with output_file(output, "-o", inputs=inputs, binary=True, compress=False) as handle:
                with PdfPages(handle) as document:
                    for figure in figures:
                        document.savefig(figure, bbox_inches="tight")
    finally:
        for figure in figures:
            _pyplot().close(figure)
