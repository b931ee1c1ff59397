"""Runs a command on a pseudo-terminal and plays a script on it, as a person at a terminal would.

usage: python3 pty-session.py SCRIPT_JSON COMMAND...

SCRIPT_JSON is a list of steps: {"write": TEXT} types TEXT (a "\\u0003" is Ctrl-C, "\\r" is Enter);
{"wait": REGEX} waits until the output since the previous wait matches REGEX (at most "timeout" seconds,
default 120); terminal control sequences (cursor moves, erasing) are left out of the output. Prints one JSON object: {"segments": [output read by each wait], "rest": output after the
last wait, "status": the exit status, or null when it was still running, "failed": a wait that timed out}.
"""

import json
import os
import pty
import re
import select
import subprocess
import sys
import time

CONTROL = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def main() -> None:
    steps = json.loads(sys.argv[1])
    leader, follower = pty.openpty()
    child = subprocess.Popen(sys.argv[2:], stdin=follower, stdout=follower, stderr=follower, start_new_session=True)
    os.close(follower)
    segments: list[str] = []
    pending = ""
    failed = None

    def read(seconds: float) -> bool:
        nonlocal pending
        ready, _, _ = select.select([leader], [], [], seconds)
        if not ready:
            return True
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the child closed the terminal
            return False
        if not chunk:
            return False
        pending += CONTROL.sub("", chunk.decode("utf-8", errors="replace"))
        return True

    for step in steps:
        if "write" in step:
            os.write(leader, step["write"].encode())
            continue
        deadline = time.monotonic() + step.get("timeout", 120)
        pattern = re.compile(step["wait"], re.S)
        while not pattern.search(pending):
            if time.monotonic() > deadline or not read(0.1):
                failed = step["wait"]
                break
        if failed is not None:
            break
        segments.append(pending)
        pending = ""
    status = None
    try:
        status = child.wait(timeout=5 if failed else 60)
    except subprocess.TimeoutExpired:
        child.kill()
    while read(0.1) and len(pending) < 1 << 16:
        if child.poll() is not None and not select.select([leader], [], [], 0)[0]:
            break
    print(json.dumps({"segments": segments, "rest": pending, "status": status, "failed": failed}))


main()
