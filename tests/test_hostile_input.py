"""Hostile and broken input from outside a session's fields: file names and paths that
carry escape sequences, output targets that are devices, symlinks or pipes, two writers
on one log, inputs that never end, model files that loop, exit or hide a NUL byte. Each
is refused in one line or handled cleanly; nothing reaches the terminal unescaped and no
file is replaced that the user did not mean.

The commands run in-process through `kinspect.cli.main` (a subprocess each would cost a
second apiece), except where the process itself is what is tested.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import unicodedata
from dataclasses import replace
from pathlib import Path

import pytest
from synthetic import synthetic_session

from kinspect import cli
from kinspect.core.errors import KinspectError, SessionError, shown
from kinspect.core.session.format.log import LiveLog
from kinspect.core.store import load, output_path, save, write_text
from kinspect.inductor.launch import modelfile
from kinspect.inductor.launch.modelfile import ModelFileError, load_model_file
from kinspect.tui.text import literal

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "samples"
OSC = "\x1b]0;PWN\x1b\\\x1b]52;c;SGVsbG8=\x1b\\"
"""Sets the window title and writes the clipboard, each ended by ESC \\ (which Rich keeps)."""


def kinspect(capsys, *args: str | os.PathLike[str]) -> tuple[int, str, str]:
    code = cli.main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err


def error_line(code: int, err: str) -> str:
    assert code == 2, err
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("kinspect: error: "), err
    return lines[0]


# ---------------------------------------------------------------- terminal injection


def test_shown_escapes_every_control_format_and_separator_character():
    hidden = [c for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) in ("Cc", "Cf", "Zl", "Zp")]
    assert [hex(c) for c in hidden if shown(chr(c)) == chr(c)] == []
    assert shown(f"a{OSC}b\u202ec\u200bd") == "a\\x1b]0;PWN\\x1b\\\\x1b]52;c;SGVsbG8=\\x1b\\b\\u202ec\\u200bd"
    assert shown("tab\tline\n") == "tab\\x09line\\x0a"
    assert shown("tab\tline\n", lines=True) == literal("tab\tline\n") == "tab\tline\n"
    assert shown("µs × ▶ é") == "µs × ▶ é"


def test_rank_file_names_reach_the_terminal_escaped(tmp_path, capsys):
    job = tmp_path / "job"
    job.mkdir()
    for rank in (0, 1):
        shutil.copy(SAMPLES / f"ddp.rank{rank}.session.json", job / f"m{OSC}.rank{rank}.session.json")
    code, out, err = kinspect(capsys, "explain", job)
    assert code == 0, err
    assert "\x1b" not in out and "\\x1b]0;PWN" in out


def test_an_error_naming_a_hostile_path_is_escaped(tmp_path, capsys):
    line = error_line(*kinspect(capsys, "explain", tmp_path / f"x{OSC}\u202e.json")[::2])
    assert "\x1b" not in line and "\u202e" not in line
    assert line.endswith("x\\x1b]0;PWN\\x1b\\\\x1b]52;c;SGVsbG8=\\x1b\\\\u202e.json: no such file")


def test_bidi_and_zero_width_characters_in_a_session_are_shown_escaped(tmp_path, capsys):
    s = synthetic_session(sites=1)
    site = s.sites[0]
    s.sites[0] = replace(site, op="mm\u202etxt.exe\u200b")
    path = tmp_path / "s.json"
    save(s, path)
    code, out, err = kinspect(capsys, "explain", path)
    assert code == 0, err
    assert "\u202e" not in out and "\u200b" not in out
    assert "mm\\u202etxt.exe\\u200b" in out


# ---------------------------------------------------------------- files replaced


def test_a_character_device_is_written_into_never_replaced(tmp_path, capsys):
    session = SAMPLES / "linear.session.json"
    line = error_line(*kinspect(capsys, "export", session, "--format", "perfetto", "-o", "/dev/full")[::2])
    assert line == "kinspect: error: cannot write /dev/full: No space left on device"
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)
    code, out, err = kinspect(capsys, "export", session, "--format", "perfetto", "-o", "/dev/null")
    assert code == 0, err
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_a_symlink_stays_a_link_and_a_file_keeps_its_mode(tmp_path, synthetic):
    real = tmp_path / "real.json"
    real.write_text("old")
    real.chmod(0o600)
    link = tmp_path / "link.json"
    link.symlink_to(real.name)
    save(synthetic, link)
    assert link.is_symlink() and os.readlink(link) == real.name
    assert stat.S_IMODE(real.stat().st_mode) == 0o600
    assert load(real).sites[0].name == synthetic.sites[0].name
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.json", "real.json"]


def test_a_pipe_is_written_into(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    reader = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE, text=True)
    write_text(fifo, "through the pipe\n")
    assert reader.communicate(timeout=10)[0] == "through the pipe\n"
    assert stat.S_ISFIFO(fifo.stat().st_mode)


def test_a_socket_or_a_dangling_link_is_refused(tmp_path):
    dangling = tmp_path / "gone.md"
    dangling.symlink_to(tmp_path / "nowhere.md")
    with pytest.raises(KinspectError, match="is a symlink to .*nowhere.md, which does not exist"):
        output_path(dangling)
    import socket

    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(tmp_path / "sock"))
        with pytest.raises(KinspectError, match="is not a regular file \\(a socket\\); kinspect does not replace it"):
            output_path(tmp_path / "sock")
    finally:
        sock.close()


@pytest.mark.parametrize("fmt", ["md", "perfetto", "json"])
def test_an_export_onto_its_own_session_is_refused_and_the_session_kept(tmp_path, capsys, fmt):
    session = tmp_path / "S.json"
    session.write_bytes((SAMPLES / "linear.session.json").read_bytes())
    before = session.read_bytes()
    line = error_line(*kinspect(capsys, "export", session, "--format", fmt, "-o", session)[::2])
    assert line == (f"kinspect: error: {session}: is {session}, which this command reads; kinspect does not "
                    "replace it: name another file")
    link = tmp_path / "link.json"
    link.symlink_to(session.name)  # the same file by another name
    error_line(*kinspect(capsys, "export", link, "--format", fmt, "-o", session)[::2])
    assert session.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["S.json", "link.json"]


def test_an_export_or_a_plot_onto_a_read_only_file_is_refused(tmp_path, capsys):
    locked = tmp_path / "report.md"
    locked.write_text("mine\n")
    locked.chmod(0o444)
    line = error_line(*kinspect(capsys, "export", SAMPLES / "linear.session.json", "--format", "md",
                                "-o", locked)[::2])
    assert line == (f"kinspect: error: {locked}: is read-only; kinspect does not replace it (make it writable, "
                    "or name another file)")
    assert locked.read_text() == "mine\n" and stat.S_IMODE(locked.stat().st_mode) == 0o444


def test_a_plot_or_a_ranks_export_onto_its_input_is_refused(tmp_path, capsys):
    session = tmp_path / "S.png"  # a session may have any name
    session.write_bytes((SAMPLES / "linear.session.json").read_bytes())
    line = error_line(*kinspect(capsys, "plot", session, "-o", session)[::2])
    assert "which this command reads; kinspect does not replace it" in line
    ranks = [tmp_path / f"ddp.rank{r}.session.json" for r in (0, 1)]
    for r, path in enumerate(ranks):
        path.write_bytes((SAMPLES / f"ddp.rank{r}.session.json").read_bytes())
    line = error_line(*kinspect(capsys, "export", tmp_path, "--format", "perfetto", "-o", ranks[1])[::2])
    assert "which this command reads; kinspect does not replace it" in line
    assert ranks[1].read_bytes() == (SAMPLES / "ddp.rank1.session.json").read_bytes()


def test_a_folder_where_the_reports_image_would_go_leaves_the_report_without_it(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    (tmp_path / "report.map.png").mkdir()
    code, out, err = kinspect(capsys, "export", SAMPLES / "linear.session.json", "--format", "md",
                              "-o", tmp_path / "report.md")
    assert code == 0, err
    assert err == f"kinspect: no decision-map image: {tmp_path / 'report.map.png'}: is a directory; give a file name\n"
    assert "map.png" not in (tmp_path / "report.md").read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.map.png", "report.md"]


def test_a_failed_report_leaves_no_image_behind(tmp_path, capsys, monkeypatch):
    pytest.importorskip("matplotlib")
    real_replace = os.replace

    def full_disk(src, dst):
        if str(dst).endswith("report.md"):
            raise OSError(28, "No space left on device")
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", full_disk)
    line = error_line(*kinspect(capsys, "export", SAMPLES / "linear.session.json", "--format", "md",
                                "-o", tmp_path / "report.md")[::2])
    assert line.endswith("report.md: No space left on device")
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------- two writers on one log


def test_a_second_writer_on_a_log_is_refused_naming_the_first(tmp_path):
    path = tmp_path / "m.session.jsonl"
    s = synthetic_session(sites=1)
    first = LiveLog(path, s)
    first.site(s.sites[0])
    with pytest.raises(SessionError, match=f"process {os.getpid()} is recording into this log"):
        LiveLog(path, s)
    first.close()
    assert load(path).sites[0].name == s.sites[0].name  # the refused writer cut nothing off
    LiveLog(path, s).close()  # once the first has closed, the log is free


# ---------------------------------------------------------------- inputs that never end


def test_non_regular_inputs_are_refused(tmp_path, capsys):
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    for path, kind in (("/dev/zero", "character device"), (fifo, "pipe")):
        line = error_line(*kinspect(capsys, "explain", path)[::2])
        assert line == f"kinspect: error: {path}: is not a regular file (a {kind}); kinspect reads files"
    line = error_line(*kinspect(capsys, "advise", SAMPLES / "linear.py", "--range", "B=2..100", "--workload", fifo)[::2])
    assert line == f"kinspect: error: --workload {fifo}: is not a regular file (a pipe); kinspect reads files"


@pytest.mark.parametrize("points", ["1000000000", "-5", "0"])
def test_points_out_of_range_are_refused_before_the_model_or_the_gpu(capsys, points):
    for command in (["advise", "no-such-model.py", "--range", "B=2..100"], ["sweep", "no-such-model.py", "--range", "B=2..100"]):
        line = error_line(*kinspect(capsys, *command, "--points", points)[::2])
        assert line == f"kinspect: error: --points {points}: takes 1 to 4,096"


def test_a_5000_digit_range_is_one_line(capsys):
    line = error_line(*kinspect(capsys, "sweep", "no-such-model.py", "--range", "B=2.." + "9" * 5000)[::2])
    assert "need 1 <= LO <= HI <= 2**62" in line and len(line) < 200


@pytest.mark.parametrize("content", ["B=" + "9" * 5000, "B=100 x" + "9" * 5000, "B=" + "9" * 19])
def test_a_5000_digit_size_or_count_in_a_workload_file_is_one_line(tmp_path, capsys, content):
    workload = tmp_path / "w.txt"
    workload.write_text(f"B=64\n{content}\n")
    line = error_line(*kinspect(capsys, "advise", SAMPLES / "linear.py", "--range", "B=2..100", "--workload",
                                workload)[::2])
    assert line.startswith(f"kinspect: error: {workload.name}:2: sizes and counts are at most 2**62; got '99999")
    assert len(line) < 250


@pytest.mark.parametrize("args", [["record", "m.py", "--hints", "64," + "9" * 5000],
                                  ["advise", "m.py", "--range", "B=2..100", "9" * 5000]])
def test_a_5000_digit_word_on_the_command_line_is_one_short_line(capsys, args):
    try:
        code = cli.main(args)
    except SystemExit as e:  # argparse's own refusal
        code = e.code
    line = error_line(code, capsys.readouterr().err)
    assert len(line) < 400 and "characters" in line


# ---------------------------------------------------------------- model files


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("class Stop(BaseException):\n    pass\n\n\nraise Stop('out of here')\n", "m.py:5: Stop while loading: out of here"),
        ("import os\nos._exit(7)\n", 'm.py:2: called os._exit(7) while loading; move what runs the script under `if __name__ == "__main__":`'),
        ("x = 1\n\0y = 2\n", "m.py:2: holds a NUL byte: not Python source (a binary file?)"),
    ],
)
def test_a_model_file_that_escapes_loading_is_one_line(tmp_path, source, message):
    path = tmp_path / "m.py"
    path.write_text(source)
    with pytest.raises(ModelFileError) as err:
        load_model_file(path)
    assert str(err.value) == message


@pytest.mark.parametrize("body, error", [("1 + " * 200_000 + "1", "RecursionError"), ("-" * 1_000_000 + "1", "MemoryError")],
                         ids=["a long sum", "a million minus signs"])
@pytest.mark.parametrize("command", [[], ["explain"], ["record"]])
def test_a_model_file_too_deep_for_pythons_parser_is_one_line(tmp_path, capsys, monkeypatch, body, error, command):
    """With a library it imports missing and a recording beside it, the commands read its
    imports before anything else (this was the traceback)."""
    from kinspect.commands import inspect, recording

    monkeypatch.setattr(recording, "cuda_available", lambda: False)
    monkeypatch.setattr(inspect, "_run", lambda source: pytest.fail("the inspector started"))
    path = tmp_path / "m.py"
    path.write_text(f"import no_such_library_here\nx = {body}\n")
    (tmp_path / "m.session.json").write_bytes((SAMPLES / "linear.session.json").read_bytes())
    line = error_line(*kinspect(capsys, *command, path)[::2])
    assert error in line and line.startswith("kinspect: error: m.py")


def test_a_model_file_that_loops_at_import_is_stopped(tmp_path, monkeypatch):
    path = tmp_path / "m.py"
    path.write_text("while True:\n    pass\n")
    monkeypatch.setattr(modelfile, "IMPORT_LIMIT_S", 0.3)
    with pytest.raises(ModelFileError, match="m.py: still loading after 0.3 s: does it loop at import?"):
        load_model_file(path)


@pytest.mark.parametrize("number, said", [(9, "SIGKILL"), (40, "signal 40")])
def test_a_model_whose_check_process_dies_by_a_signal_says_so(tmp_path, number, said):
    import threading

    from kinspect.commands.recording import check_model_file

    path = tmp_path / "m.py"
    path.write_text(f"import os\nos.kill(os.getpid(), {number})\n")
    with pytest.raises(KinspectError, match=rf"m.py: loading it killed its process \({said}\)$"):
        check_model_file(path, threading.Event())


# ---------------------------------------------------------------- typed keys


@pytest.mark.parametrize(("text", "message"), [
    (",".join(["(1,)"] * 70), "a key has at most 64 tensors"),
    ("(" + ",".join(["2"] * 20) + ",)", "tensor 0 has more than 16 dims"),
])
def test_a_typed_key_beyond_the_format_limits_is_refused(text, message):
    from kinspect.core.dispatch.shapes import parse_shape

    with pytest.raises(KinspectError, match=message):
        parse_shape(text)


@pytest.mark.parametrize("shape", [[], ["--shape", "B=1000 N=64"]])
def test_explain_json_of_extreme_timings_is_strict_json_and_warns_of_nothing(tmp_path, capsys, shape):
    from dataclasses import replace

    s = synthetic_session(sites=1, variants=3, events=10, seed=1)
    extreme = {0: 1e308, 1: 1e-300}
    s.measurements = [replace(m, median_us=extreme[m.variant], p20_us=extreme[m.variant], p80_us=extreme[m.variant])
                      if m.variant in extreme else m for m in s.measurements]
    save(s, tmp_path / "s.json")
    code, out, err = kinspect(capsys, "explain", tmp_path / "s.json", "--json", *shape)
    assert (code, err) == (0, "")  # no RuntimeWarning from numpy either
    json.loads(out, parse_constant=lambda c: pytest.fail(f"{c} in explain --json"))


def test_explain_json_is_strict_json(capsys):
    code, out, err = kinspect(capsys, "explain", SAMPLES / "linear.session.json", "--shape", "B=100", "--json")
    assert code == 0, err
    json.loads(out, parse_constant=lambda c: pytest.fail(f"{c} in explain --json"))
