"""The one atomic file writer of the experiments (docs/design.md §9: partial files never survive)."""
import gzip

import pytest

from experiments.engine.atomic import write_atomically, write_text_atomically


def test_a_failed_write_leaves_neither_the_file_nor_a_temporary_behind(tmp_path):
    def fail(stream):
        stream.write(b"half a file")
        raise RuntimeError("killed")

    with pytest.raises(RuntimeError, match="killed"):
        write_atomically(tmp_path / "out" / "table.csv", fail)
    assert list((tmp_path / "out").iterdir()) == []


def test_a_gz_path_is_compressed_with_a_fixed_header_so_equal_contents_give_equal_bytes(tmp_path):
    for name in ("a.csv.gz", "b.csv.gz"):
        write_text_atomically("x,y\n1,2\n", tmp_path / name)
    assert (tmp_path / "a.csv.gz").read_bytes() == (tmp_path / "b.csv.gz").read_bytes()
    assert gzip.decompress((tmp_path / "a.csv.gz").read_bytes()) == b"x,y\n1,2\n"


def test_a_written_file_replaces_the_old_one_and_is_readable_by_everyone(tmp_path):
    path = tmp_path / "page.html"
    path.write_text("old")
    write_text_atomically("new \u03c1", path)
    assert path.read_text(encoding="utf-8") == "new \u03c1"
    assert path.stat().st_mode & 0o777 == 0o644
