#!/usr/bin/python3
"""An agent in the power-cut VM (tests/powercut.rs): it lists the notices the daemon holds
("listed TITLE", one line each, then "listed-end"), then, with AGENT=post, posts notices one at a
time on cmux's v1 protocol (`notify TITLE|BODY`) and writes "ack TITLE" for each `OK`, only once
the `OK` has arrived: what the host reads before the cut was acknowledged before it.
Usage: agent.py BOOT post|list"""
import json
import os
import random
import socket
import sys
import time

BOOT, MODE = sys.argv[1], sys.argv[2]
PATH = os.path.join(os.environ["XDG_RUNTIME_DIR"], "cmux-tray", "cmux.sock")


def say(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def connect():
    while True:
        try:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(PATH)
            return s, s.makefile("rb")
        except OSError:
            time.sleep(0.05)


conn, replies = connect()
conn.sendall(b'{"id":1,"method":"notification.list","params":{"limit":5000}}\n')
answer = json.loads(replies.readline())
for n in answer["result"]["notifications"]:
    say("listed " + n["title"])
say("listed-end")
if MODE != "post":
    sys.exit(0)
n = 0
while True:
    n += 1
    title = f"agent b{BOOT} n{n}"
    conn.sendall(f"notify {title}|a turn is done\n".encode())
    reply = replies.readline().strip()
    if reply != b"OK":
        say(f"refused {title}: {reply!r}")
        sys.exit(1)
    say("ack " + title)
    time.sleep(random.uniform(0.0, 0.15))
