#!/usr/bin/python3
"""The door runner's bookkeeping (tests/vm/doors/run calls it):

  tally.py results COLLECTED TESTFILE RESULTS   per-test outcome of one run; last line COUNTS p f s
  tally.py events EVENTS                        a refusal event per door?; last line COUNTS ok missing
  tally.py groups COLLECTED [BATCH]             control runs: DOORS|MARK-EXPRESSION|PROGRAMS, each
                                                for BATCH door groups (default 1); DOORS is
                                                GROUP,GROUP,... and a GROUP is DOOR+DOOR...
  tally.py control COLLECTED RESULTS DOORS      did each test of the run's groups go red?; COUNTS red green
  tally.py links                                {program: {link_id, prog_id}} of the pinned links
  tally.py wait-protected TIMEOUT               wait for the gateway to be up and listed protected
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import doorlib  # noqa: E402


def norm(nodeid):
    """test_x.py::name whatever the rootdir pytest chose."""
    path, sep, rest = nodeid.partition("::")
    return os.path.basename(path) + sep + rest


def load_collected(path):
    with open(path) as f:
        return [{"nodeid": norm(t["nodeid"]), "doors": t["doors"]} for t in json.load(f)]


def load_results(path):
    """nodeid -> passed | failed | error | skipped"""
    out = {}
    try:
        with open(path) as f:
            lines = f.readlines()
    except FileNotFoundError:
        return out
    for line in lines:
        try:
            r = json.loads(line)
        except ValueError:
            continue
        n = norm(r["nodeid"])
        prev = out.get(n)
        if r["outcome"] == "failed":
            out[n] = "failed" if r["when"] == "call" else "error"
        elif r["outcome"] == "skipped":
            if prev not in ("failed", "error"):
                out[n] = "skipped"
        elif r["outcome"] == "passed" and prev is None:
            out[n] = "passed"
    return out


def cmd_results(collected, testfile, results):
    tests = [t for t in load_collected(collected) if t["nodeid"].startswith(testfile + "::")]
    res = load_results(results)
    p = f = s = 0
    for t in tests:
        o = res.get(t["nodeid"], "not run")
        if o == "passed":
            p += 1
        elif o == "skipped":
            s += 1
            print(f"SKIPPED {t['nodeid']}")
        else:
            f += 1
            print(f"FAILED ({o}) {t['nodeid']}")
    print(f"COUNTS {p} {f} {s}")


def cmd_events(path):
    hooks = {}
    lost = 0
    with open(path) as f:
        for line in f:
            try:
                e = json.loads(line)
            except ValueError:
                continue
            if "lost" in e:
                lost += int(e.get("count", 0))
                continue
            h = e.get("hook")
            hooks[h] = hooks.get(h, 0) + 1
    ok = missing = 0
    for door in doorlib.DOORS:
        n = hooks.get(door, 0)
        if n:
            ok += 1
            print(f"events: door {door}: {n} refusal event(s)")
        else:
            missing += 1
            print(f"events: FAILED: no event for door {door}")
    others = {h: n for h, n in hooks.items() if h not in doorlib.DOORS}
    if others:
        print(f"events: other hooks seen: {others}")
    if lost:
        print(f"events: {lost} event(s) lost (ring buffer full)")
    print(f"COUNTS {ok} {missing}")


def groups_of(collected):
    """Distinct door sets of the in-session tests, in door order."""
    order = list(doorlib.DOORS)
    sets = []
    for t in collected:
        if not t["nodeid"].startswith("test_in_session.py::") or not t["doors"]:
            continue
        s = tuple(sorted(t["doors"], key=order.index))
        if s not in sets:
            sets.append(s)
    sets.sort(key=lambda s: (order.index(s[0]), len(s), [order.index(d) for d in s]))
    return sets


def group_expr(s):
    """The tests whose doors are exactly the group s."""
    return " and ".join([f"door_{d}" for d in s] + [f"not door_{d}" for d in doorlib.DOORS if d not in s])


def cmd_groups(collected, batch="1"):
    """One control run per BATCH groups: their doors' programs all removed
    at once, their tests all run. Every test still has to go red without
    the guard; batching only spares the runs' fixed cost (reloading the
    guard, starting pytest under emulation)."""
    groups = groups_of(load_collected(collected))
    n = max(1, int(batch))
    for i in range(0, len(groups), n):
        chunk = groups[i:i + n]
        expr = " or ".join(f"({group_expr(s)})" for s in chunk)
        progs = []
        for s in chunk:
            for d in s:
                for p in doorlib.DOORS[d]:
                    if p not in progs:
                        progs.append(p)
        print(f"{','.join('+'.join(s) for s in chunk)}|{expr}|{' '.join(progs)}")


def cmd_control(collected, results, doors):
    wants = [tuple(g.split("+")) for g in doors.split(",")]
    order = list(doorlib.DOORS)
    tests = [t for t in load_collected(collected)
             if t["nodeid"].startswith("test_in_session.py::")
             and tuple(sorted(t["doors"], key=order.index)) in wants]
    res = load_results(results)
    red = green = 0
    for t in tests:
        own = "+".join(sorted(t["doors"], key=order.index))
        o = res.get(t["nodeid"], "not run")
        if o in ("failed", "error"):
            red += 1
            print(f"control: {t['nodeid']} went red without door {own}" +
                  (" (fixture error)" if o == "error" else ""))
        else:
            green += 1
            print(f"control: FAILED: {t['nodeid']} {o} without door {own}, so it does not test it")
    # Results for tests outside the group mean the selection was wrong.
    names = {t["nodeid"] for t in tests}
    for n in res:
        if n not in names:
            print(f"control: note: {n} ran in the {doors} group but is not marked for it")
    print(f"COUNTS {red} {green}")


def cmd_links():
    out = {}
    pin_dir = doorlib.PIN_DIR
    try:
        names = sorted(os.listdir(pin_dir))
    except OSError:
        names = []
    for name in names:
        if not name.startswith("link_"):
            continue
        r = subprocess.run(["bpftool", "link", "show", "pinned", os.path.join(pin_dir, name), "-j"],
                           capture_output=True, text=True)
        try:
            info = json.loads(r.stdout)
        except ValueError:
            continue
        out[name[len("link_"):]] = {"link_id": info.get("id"), "prog_id": info.get("prog_id")}
    print(json.dumps(out))


def cmd_wait_protected(timeout):
    gw, why = doorlib.wait_gateway(timeout=float(timeout), live=True)
    if not gw:
        print(f"gateway not up and protected after {timeout}s: {why}")
        return 1
    w = doorlib.watcher_pid()
    if not w or not doorlib.proc_stat(w):
        print("the policy watcher is not running")
        return 1
    print(f"gateway {gw.pid} up and protected; watcher {w}")
    return 0


def main(argv):
    cmd, args = argv[1], argv[2:]
    if cmd == "results":
        return cmd_results(*args)
    if cmd == "events":
        return cmd_events(*args)
    if cmd == "groups":
        return cmd_groups(*args)
    if cmd == "control":
        return cmd_control(*args)
    if cmd == "links":
        return cmd_links()
    if cmd == "wait-protected":
        return cmd_wait_protected(*args)
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv) or 0)
