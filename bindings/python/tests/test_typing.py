"""The type stubs (`pi_session.pyi`, shipped with `py.typed`): mypy --strict accepts the
example, and the stubs name what the module has."""

import inspect
import subprocess
import sys
from pathlib import Path

import pytest

import pi_session

HERE = Path(__file__).resolve().parent.parent


def test_mypy_strict_on_the_example_and_the_stubs() -> None:
    pytest.importorskip("mypy")
    files = [str(HERE / "examples" / "summary.py"), str(HERE / "pi_session.pyi")]
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--cache-dir", "/dev/null", *files],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_mypy_catches_a_misuse(tmp_path: Path) -> None:
    pytest.importorskip("mypy")
    bad = tmp_path / "bad.py"
    bad.write_text("import pi_session\npi_session.open(42)\npi_session.open('x').context()['nope']\n")
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--cache-dir", "/dev/null", str(bad)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1
    assert 'Argument 1 to "open" has incompatible type "int"' in done.stdout
    assert '"Context" has no key "nope"' in done.stdout


def test_the_stubs_name_what_the_module_has() -> None:
    stub = (HERE / "pi_session.pyi").read_text()
    public = {n for n in dir(pi_session) if not n.startswith("_") and n != "pi_session"}
    for name in public:
        assert f"def {name}(" in stub or f"class {name}" in stub, name
    for cls in (pi_session.Session, pi_session.SessionWriter):
        for name, _ in inspect.getmembers(cls):
            if not name.startswith("_"):
                assert f"def {name}(" in stub, f"{cls.__name__}.{name}"
