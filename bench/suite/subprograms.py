"""The benchmark programs the suite calls but does not own: bench/iosched
(experiment 3, and its memory line), bench/sendpath (5), bench/orc (7).

Each is built with `go build` into .tools/bin/bench-NAME, its -h is read to
learn which flags it takes (only those are passed), and it is run once with
a time limit. Its stdout (the program's own table) is kept verbatim for the
report; a program that is missing, does not build, fails or runs out of time
is recorded as "not run: <reason>".
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time

import lib


def _build(name: str, log_dir) -> tuple[str | None, str | None]:
    src = lib.REPO / "bench" / name
    if not (src / "main.go").exists():
        return None, f"bench/{name} does not exist yet"
    out = lib.BIN / f"bench-{name}"
    p = subprocess.run(["go", "build", "-o", str(out), f"./bench/{name}"], cwd=lib.REPO, capture_output=True,
                       text=True, timeout=600)
    (log_dir / f"build-{name}.log").write_text(p.stdout + p.stderr)
    if p.returncode != 0:
        first = next((ln for ln in (p.stderr or "").splitlines() if ln.strip() and not ln.startswith("#")), "")
        return None, f"bench/{name} does not build ({first.strip()[:200]})"
    return str(out), None


def _flags(binary: str) -> set[str]:
    p = subprocess.run([binary, "-h"], capture_output=True, text=True, timeout=30, cwd=lib.REPO)
    return set(re.findall(r"^\s+-([\w-]+)", p.stdout + p.stderr, re.M))


def run_program(name: str, wanted: list[tuple[str, str | None]], timeout: float, log_dir) -> dict:
    """Builds and runs bench/NAME with the wanted flags it supports."""
    res = {"program": f"bench/{name}", "status": "not run"}
    started = time.monotonic()
    try:
        binary, why = _build(name, log_dir)
    except subprocess.TimeoutExpired:
        binary, why = None, "build timed out"
    if binary is None:
        res["status"] = f"not run: {why}"
        return res
    flags = _flags(binary)
    args, dropped = [], []
    for flag, value in wanted:
        if flag not in flags:
            dropped.append(flag)
            continue
        args += [f"-{flag}"] + ([value] if value is not None else [])
    res["args"] = args
    res["flags_not_supported"] = dropped
    res["command"] = " ".join([f"go run ./bench/{name}"] + args)
    err_path = log_dir / f"{name}.stderr.log"
    lib.log(f"{name}: {res['command']} (time limit {timeout:.0f} s)")
    with open(err_path, "w") as err:
        p = subprocess.Popen([binary, *args], cwd=lib.REPO, stdout=subprocess.PIPE, stderr=err, text=True,
                             start_new_session=True, preexec_fn=lib._die_with_parent,
                             env={**os.environ, "AWS_EC2_METADATA_DISABLED": "true"})
        lib.PGIDS.append(p.pid)
        try:
            out, _ = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            # The program and whatever it started (its own process group).
            os.killpg(p.pid, signal.SIGTERM)
            try:
                out, _ = p.communicate(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                out, _ = p.communicate()
            lib.PGIDS.remove(p.pid)
            res["status"] = f"not run: timed out after {timeout:.0f} s (the suite's limit for it)"
            res["stdout"] = out
            res["stderr_tail"] = lib.tail(err_path, 3000)
            res["seconds"] = time.monotonic() - started
            return res
    lib.PGIDS.remove(p.pid)
    res["stdout"] = out
    res["stderr_tail"] = lib.tail(err_path, 3000)
    res["seconds"] = time.monotonic() - started
    if p.returncode != 0:
        last = [ln for ln in res["stderr_tail"].splitlines() if ln.strip()]
        res["status"] = f"not run: exited with status {p.returncode} ({last[-1][:200] if last else 'no output'})"
    else:
        res["status"] = "ok"
    lib.log(f"{name}: {res['status']} in {res['seconds']:.0f} s")
    return res
