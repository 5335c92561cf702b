"""Shared paths and helpers of the binding's tests.

The corpus is the repository's `conformance/`; the command-line tool, where a test compares
with it, is `$PI_SESSION_BIN` or the workspace's `target/{release,ci-release,debug}/pi-session` (those tests
are skipped without it).
"""

import json
import os
import re
import shutil
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest

ROOT = Path(__file__).resolve().parents[3]
CASES = ROOT / "conformance" / "cases"
VALIDATE_CASES = ROOT / "conformance" / "validate"
DOCS_TABLES = ROOT / "docs" / "tables.md"

# The corpus's default pi is the documented format's, 0.73.1 (conformance/FORMAT.md).
CORPUS_PI = "0.73"


def case_meta(case: Path) -> Dict[str, Any]:
    meta: Dict[str, Any] = json.loads((case / "case.json").read_text())
    return meta


def case_params(cases: List[Path], ops: Any, default_ops: Any) -> List[Any]:
    """One pytest parameter `(case, op)` per case and each op of its `ops` (default
    `default_ops`) that is in `ops`, named `<area>/<case>:<op>`."""
    out = []
    for case in cases:
        for op in case_meta(case).get("ops", default_ops):
            if op in ops:
                out.append(pytest.param(case, op, id=f"{case.parent.name}/{case.name}:{op}"))
    return out


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def cli() -> Optional[Path]:
    given = os.environ.get("PI_SESSION_BIN")
    if given:
        return Path(given)
    for profile in ("release", "ci-release", "debug"):
        candidate = ROOT / "target" / profile / "pi-session"
        if candidate.is_file():
            return candidate
    found = shutil.which("pi-session")
    return Path(found) if found else None


@pytest.fixture
def pi_session_bin() -> Path:
    found = cli()
    if found is None:
        pytest.skip("no pi-session binary (cargo build -p pi-session, or set PI_SESSION_BIN)")
    return found


# Deep values: `json.loads` and `==` both recurse, and give up (RecursionError) about a thousand
# levels down, where trees of long sessions and the corpus's deep cases go. Such values are
# compared as token streams, made without recursion.

_TOKEN = re.compile(
    r'\s*(?:(?P<s>"(?:[^"\\]|\\.)*")|(?P<p>[\[\]{}:,])|(?P<l>true|false|null)|(?P<n>-?[0-9][0-9.eE+-]*))'
)
_LITERALS = {"true": True, "false": False, "null": None}


def json_tokens(text: str) -> List[Any]:
    """The tokens of a JSON text: punctuation, ("s", string), ("l", literal), ("n", number)."""
    out: List[Any] = []
    pos = 0
    text = text.rstrip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        assert m is not None, f"not JSON at {pos}: {text[pos:pos + 40]!r}"
        pos = m.end()
        if m.group("s") is not None:
            out.append(("s", json.loads(m.group("s"))))
        elif m.group("p") is not None:
            out.append(m.group("p"))
        elif m.group("l") is not None:
            out.append(("l", _LITERALS[m.group("l")]))
        else:
            out.append(("n", json.loads(m.group("n"))))
    return out


class _Punct(str):
    pass


def value_tokens(value: Any) -> List[Any]:
    """The tokens `json.dumps(value)` would have, made without recursion."""
    out: List[Any] = []
    work: List[Any] = [value]
    while work:
        item = work.pop()
        if isinstance(item, _Punct):
            out.append(str(item))
        elif isinstance(item, dict):
            seq: List[Any] = [_Punct("{")]
            for i, (k, v) in enumerate(item.items()):
                if i:
                    seq.append(_Punct(","))
                seq += [("s", k), _Punct(":"), v]
            seq.append(_Punct("}"))
            work.extend(reversed(seq))
        elif isinstance(item, list):
            seq = [_Punct("[")]
            for i, v in enumerate(item):
                if i:
                    seq.append(_Punct(","))
                seq.append(v)
            seq.append(_Punct("]"))
            work.extend(reversed(seq))
        elif isinstance(item, tuple):
            out.append(item)
        elif isinstance(item, str):
            out.append(("s", item))
        elif item is None or isinstance(item, bool):
            out.append(("l", item))
        else:
            out.append(("n", item))
    return out


def same_json(actual: Any, expected_file: Path) -> bool:
    """Whether `actual` is the JSON value of `expected_file`, at any depth."""
    text = expected_file.read_text(encoding="utf-8")
    try:
        return bool(actual == json.loads(text))
    except RecursionError:
        return value_tokens(actual) == json_tokens(text)
