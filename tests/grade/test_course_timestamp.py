"""Does nbgrader's timestamp.txt in a student's folder get read without following a link or waiting on a FIFO?"""
import os

from autograder.grade.output.course import TIMESTAMP_NAME, read_timestamp


def test_a_regular_timestamp_is_read(tmp_path):
    (tmp_path / TIMESTAMP_NAME).write_text("2026-11-30 12:00:00.000000 UTC\n")
    got = read_timestamp(tmp_path)
    assert got is not None and (got.year, got.month, got.day, got.hour) == (2026, 11, 30, 12)


def test_a_linked_timestamp_is_not_followed(tmp_path):
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("2026-11-30 12:00:00.000000 UTC\n")  # a valid time: only the link can hide it
    folder = tmp_path / "submission"
    folder.mkdir()
    os.symlink(elsewhere, folder / TIMESTAMP_NAME)
    assert read_timestamp(folder) is None


def test_a_fifo_timestamp_does_not_hang_the_grader(tmp_path):
    os.mkfifo(tmp_path / TIMESTAMP_NAME)  # opening it for reading would block without O_NONBLOCK
    assert read_timestamp(tmp_path) is None
