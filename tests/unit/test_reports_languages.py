"""Console and Markdown reports with text in any script: wide CJK characters, right-to-left
and combining characters keep the table's columns aligned and its rows intact."""

from __future__ import annotations

import io

from rich.cells import cell_len
from rich.console import Console

import vera
from vera.render._console import Column, print_table
from vera.render._markdown import render_markdown

WHITEBOX = "the console's tables, panels and progress"

ROWS = [
    ["日本語のサンプル", "0.750", "8"],
    ["中文样本", "1.000", "8"],
    ["한국어 샘플", "0.500", "8"],
    ["عربي", "0.250", "4"],
    ["e\u0301te\u0301 (combining)", "0.900", "2"],
]


def test_console_tables_align_wide_and_combining_characters() -> None:
    buffer = io.StringIO()
    out = Console(file=buffer, width=100, force_terminal=False, color_system=None)
    columns = [Column("group"), Column("faithfulness"), Column("samples")]
    print_table(out, "By language", columns, ROWS)
    lines = [line for line in buffer.getvalue().splitlines() if line.strip()][1:]
    assert len(lines) == len(ROWS) + 4  # top rule, header, header rule, rows, bottom rule
    widths = {cell_len(line) for line in lines}
    assert len(widths) == 1, lines  # every row as wide as the frame, in terminal cells
    for row in ROWS:
        assert any(row[0] in line for line in lines)


def test_markdown_keeps_cjk_text_and_table_rows_whole() -> None:
    report = vera.evaluate(vera.load_dataset("multilingual"), group_by=["language"])
    text = render_markdown(report)
    assert "### VERA · multilingual" in text
    tables = [line for line in text.splitlines() if line.startswith("|")]
    assert tables
    columns = {line.count("|") - line.count("\\|") for line in tables[:3]}
    assert len(columns) == 1  # header, rule and rows have the same number of cells
