"""The page's building blocks as HTML: data tables (formatted, scrolling, foldable, or as one card
per row) and figures (embedded PNG with its print size and links to the full-size PNG and PDF)."""
from __future__ import annotations

import base64
import math
import os
import re
import struct
import urllib.parse
from pathlib import Path

import pandas as pd
from markupsafe import Markup, escape
from pandas.io.formats.style import Styler

from ...engine.config import format_value

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
METRES_PER_INCH = 0.0254
# Figures are shown at their print size, where a CSS inch is 96 px (matplotlib's 10 pt text at
# 13.3 px, the size of the page's table text).
CSS_PX_PER_INCH = 96
# A text column with a longer entry wraps at a minimum width (CSS class long-text), so that the
# browser does not squeeze it to one word per line beside the other columns; shorter text does
# not wrap (a wide table scrolls inside its box instead).
LONG_TEXT_CHARS = 40


def _cell(value) -> tuple[str, str]:
    """(text, css class) of a table cell: numbers with 4 significant digits, right-aligned."""
    value = value.item() if hasattr(value, "item") else value
    if isinstance(value, (bool,)) or str(value) in {"True", "False"}:
        return str(value), "text"
    if isinstance(value, (int,)) or (isinstance(value, float) and not math.isnan(value) and float(value).is_integer()
                                     and abs(value) < 1e15):
        return format_value(value), ""
    if isinstance(value, float):
        return ("" if math.isnan(value) else f"{value:.4g}"), ""
    return str(value), "text"


def table_html(frame: pd.DataFrame, *, name: str, caption: str | None = None, row_classes=None) -> Markup:
    """``frame`` as pandas' HTML table in a horizontally scrolling box (``scroll-box``: the box fits
    the page, a wide table scrolls inside it): cells formatted by ``_cell`` (escaped), text cells
    and the headers of non-numeric columns left-aligned, columns holding text longer than
    ``LONG_TEXT_CHARS`` marked ``long-text`` (wrapped at a minimum width instead of one word per
    line; shorter text is not wrapped), ``row_classes`` (a CSS class per row, or "") on every
    cell of its row. ``name`` makes the table's id, unique on the page; pandas would otherwise
    draw a random one and the page would change from run to run."""
    frame = frame.reset_index(drop=True)  # Styler's cell classes align on a unique index
    classes = pd.DataFrame(_cell_classes(frame, row_classes), index=frame.index, columns=frame.columns, dtype=object)
    text_columns = [column for column in frame.columns
                    if not pd.api.types.is_numeric_dtype(frame[column]) or pd.api.types.is_bool_dtype(frame[column])]
    styler = (Styler(frame, uuid=re.sub(r"\W", "_", name), cell_ids=False)
              .hide(axis="index")
              .format(lambda value: escape(_cell(value)[0]))
              .format_index(escape="html", axis=1)
              .set_td_classes(classes)
              .set_table_styles({column: [{"selector": "th", "props": "text-align: left"}]
                                 for column in text_columns}, overwrite=False))
    if caption:
        styler = styler.set_caption(escape(caption))  # pandas inserts captions unescaped
    return Markup('<div class="scroll-box">\n') + Markup(styler.to_html()) + Markup("</div>\n")


def _cell_classes(frame: pd.DataFrame, row_classes) -> list[list[str]]:
    """Per row, per cell: its CSS classes (``_cell``'s, ``long-text`` in a column with text longer than
    ``LONG_TEXT_CHARS``, the row's class)."""
    row_classes = list(row_classes) if row_classes is not None else [""] * len(frame)
    long_text = {column for column in frame.columns
                 if max((len(_cell(value)[0]) for value in frame[column]), default=0) > LONG_TEXT_CHARS}
    return [[" ".join(filter(None, (_cell(value)[1], "long-text" if column in long_text else "", row_class)))
             for column, value in zip(frame.columns, row)]
            for row, row_class in zip(frame.itertuples(index=False), row_classes)]


def card_table(frame: pd.DataFrame, *, name: str, row_classes=None, narrow_only: bool = False) -> Markup:
    """``frame`` as a table whose rows the page shows as cards, one field per column with the
    column's name before it (each cell's ``data-label``) and the first column as the card's title:
    for a table too wide for the page. CSS class ``cards`` (cards at every width) or, with
    ``narrow_only``, ``cards-when-narrow`` (a table where the page is wide enough). Cells formatted
    and classed as in ``table_html`` (``row_classes`` on every cell of its row), in a ``scroll-box``
    like every table; id ``T_<name>``, as ``table_html`` names its tables."""
    frame = frame.reset_index(drop=True)
    head = Markup("").join(Markup('<th scope="col">{}</th>').format(column) for column in frame.columns)
    rows = []
    for row, classes in zip(frame.itertuples(index=False), _cell_classes(frame, row_classes)):
        cells = [Markup('<td class="{}" data-label="{}">{}</td>').format(
                    " ".join(filter(None, ("card-title" if index == 0 else "", css))), column, _cell(value)[0])
                 for index, (column, value, css) in enumerate(zip(frame.columns, row, classes))]
        rows.append(Markup("<tr>") + Markup("").join(cells) + Markup("</tr>\n"))
    kind = "cards-when-narrow" if narrow_only else "cards"
    return (Markup('<div class="scroll-box">\n<table id="T_{}" class="{}">\n<thead><tr>{}</tr></thead>\n<tbody>\n')
            .format(re.sub(r"\W", "_", name), kind, head)
            + Markup("").join(rows) + Markup("</tbody>\n</table>\n</div>\n"))


def folded_table(frame: pd.DataFrame, *, name: str, summary: str, caption: str | None = None,
                 row_classes=None) -> Markup:
    """A long table folded away: ``<details class="folded">`` whose one-line ``<summary>`` (text,
    escaped) gives the counts a reader needs without opening it, e.g. "128 settings; 128 of 128
    within the target"; inside, ``table_html`` of the other arguments."""
    table = table_html(frame, name=name, caption=caption, row_classes=row_classes)
    return Markup('<details class="folded"><summary>{}</summary>\n{}</details>\n').format(summary, table)


def plural(count: int, noun: str) -> str:
    """``1 setting``, ``2 settings``."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def png_geometry(data: bytes, *, name="PNG") -> tuple[int, int, float | None]:
    """(width, height, dots per inch) of a PNG from its IHDR and pHYs chunks; the resolution is
    None when the file records none (or no unit). ``name`` names the file in the error."""
    if data[:8] != PNG_SIGNATURE or data[12:16] != b"IHDR":
        raise ValueError(f"{name} is not a PNG file")
    width, height = struct.unpack(">II", data[16:24])
    position = 8
    while position + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[position:position + 8])
        if kind == b"pHYs":
            x_per_unit, _, unit = struct.unpack(">IIB", data[position + 8:position + 17])
            return width, height, (x_per_unit * METRES_PER_INCH if unit == 1 and x_per_unit else None)
        if kind == b"IDAT":  # pHYs comes before the image data
            break
        position += 12 + length
    return width, height, None


def figure_entry(path, title: str, *, page_dir, caption: str = "") -> dict:
    """A figure of the page: its title, the PNG embedded (base64), its pixel size and its print
    size in CSS px (a CSS inch is 96 px; a PNG that records no resolution counts as 96 dpi, as
    browsers show it), an anchor id, and links to the full-size PNG and the PDF beside it,
    relative to ``page_dir`` (the directory the page is written to)."""
    path = Path(path)
    pdf = path.with_suffix(".pdf")
    if not pdf.is_file():
        raise ValueError(f"figure {path} has no PDF beside it ({pdf} is missing): the page links to both")
    data = path.read_bytes()
    width, height, dpi = png_geometry(data, name=f"figure {path}")
    return {"title": title, "caption": caption, "anchor": f"figure-{path.stem}",
            "png": base64.b64encode(data).decode("ascii"),
            "width": width, "height": height, "print_width": round(width * CSS_PX_PER_INCH / (dpi or CSS_PX_PER_INCH)),
            "png_link": _relative_link(path, page_dir), "pdf_link": _relative_link(pdf, page_dir)}


def _relative_link(path: Path, page_dir) -> str:
    """The href of ``path`` from a page in ``page_dir`` (POSIX separators, percent-encoded)."""
    return urllib.parse.quote(Path(os.path.relpath(path, page_dir)).as_posix())
