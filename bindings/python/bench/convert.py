"""How the answers of `Session` become Python objects, measured: only the JSON text the library
writes (`bytes`, no objects), `json.loads` of it, and the text parsed in Rust and built as
Python objects by the binding ("direct", what the module does). Best of REPEAT runs each, the
ways alternating.

    python bench/convert.py SESSION.jsonl [REPEAT] [--cpu]

(`pi-session gen --size 100MB --seed 1 > /tmp/x.jsonl`; use a release build of the module.)
"""

import sys
import time

import pi_session

CPU = "--cpu" in sys.argv


def best(f, repeat):
    """The best wall-clock time of `repeat` runs (with `--cpu`, the CPU time of the calling
    thread: steadier on a busy machine, but blind to the work of other threads)."""
    clock = time.thread_time if CPU else time.perf_counter
    times = []
    for _ in range(repeat):
        t = clock()
        try:
            f()
        except RecursionError:
            return None
        times.append(clock() - t)
    return min(times)


def shown(t):
    return "RecursionError" if t is None else f"{t:.3f} s"


def main():
    args = [a for a in sys.argv[1:] if a != "--cpu"]
    path = args[0]
    repeat = int(args[1]) if len(args) > 1 else 3
    t = time.perf_counter()
    s = pi_session.open(path)
    print(f"open: {time.perf_counter() - t:.3f} s")
    answers = {
        "context": s.context,
        "llm": s.llm,
        "tree": s.tree,
        "info": s.info,
        "entries": s.entries,
    }
    # The ways alternate, run after run, so that a busy machine slows them alike.
    results = {}
    for name, f in answers.items():
        for _ in range(repeat):
            for how in ("text", "loads", "direct"):
                pi_session._set_conversion(how)
                t = best(f, 1)
                old = results.get((name, how), float("inf"))
                results[(name, how)] = None if t is None or old is None else min(old, t)
    for name, f in answers.items():
        if results[(name, "loads")] is None:
            continue
        pi_session._set_conversion("loads")
        same = f()
        pi_session._set_conversion("direct")
        assert f() == same, f"{name}: the two conversions differ"
    print(f"{'answer':10} {'text only':>16} {'json.loads':>16} {'direct (kept)':>16}")
    for name in answers:
        times = [shown(results[(name, how)]) for how in ("text", "loads", "direct")]
        print(f"{name:10} " + " ".join(f"{t:>16}" for t in times))
    pi_session._set_conversion("direct")


if __name__ == "__main__":
    main()
