"""An example of the API, type-checked by the tests (`mypy --strict examples/summary.py`):
what a session holds, whether it is valid, and its cost by model.

    python examples/summary.py SESSION.jsonl
"""

import sys
from typing import Dict, List, Optional

import pi_session


def describe(path: str) -> List[str]:
    out: List[str] = []
    try:
        session = pi_session.open(path)
    except pi_session.PiSessionError as e:
        return [f"{path}: {e.code}: {e}"]
    context: pi_session.Context = session.context()
    out.append(f"{len(context['messages'])} messages on the branch pi resumes")
    model: Optional[Dict[str, object]] = context["model"]
    if model is not None:
        out.append(f"model: {model.get('provider')}/{model.get('modelId')}")
    info = session.info()
    if info is not None:
        out.append(f"first message: {info['firstMessage'][:60]!r}, {info['messageCount']} messages")
    roots: List[pi_session.TreeNode] = session.tree()
    out.append(f"{len(roots)} root(s), {len(session.entries())} entries")
    report: pi_session.ValidateReport = pi_session.validate([path])
    for file in report["files"]:
        verdict = file.get("verdict")
        if verdict is not None:
            out.append(f"strict: {verdict['strict']}, pi resumes it: {verdict['piResumes']}")
        codes = sorted({str(d["code"]) for d in file["diagnostics"]})
        out.append(f"diagnostics: {', '.join(codes) or 'none'}")
    usage: pi_session.StatsReport = pi_session.stats(path, by="model", since="2026-01-01")
    for group in usage["groups"]:
        cost = group["usage"]["cost"]
        out.append(f"{group['name']}: {group['messages']} messages, ${cost or 0:.4f}")
    tables = pi_session.tables(path)
    out.append(f"{tables['messages'].num_rows} message rows")
    return out


def main() -> None:
    for path in sys.argv[1:]:
        print("\n".join(describe(path)))


if __name__ == "__main__":
    main()
